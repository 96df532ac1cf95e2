//! The `kafka-producer-perf-test` tool; everything lives in `kafkit::cli::producer_perf`.

fn main() -> std::process::ExitCode {
    kafkit::cli::producer_perf::main()
}
