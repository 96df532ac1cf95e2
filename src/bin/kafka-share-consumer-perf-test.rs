//! The `kafka-share-consumer-perf-test` tool; everything lives in
//! `kafkit::cli::share_consumer_perf`.

fn main() -> std::process::ExitCode {
    kafkit::cli::share_consumer_perf::main()
}
