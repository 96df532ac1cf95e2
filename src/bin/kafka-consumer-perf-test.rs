//! The `kafka-consumer-perf-test` tool; everything lives in `kafkit::cli::consumer_perf`.

fn main() -> std::process::ExitCode {
    kafkit::cli::consumer_perf::main()
}
