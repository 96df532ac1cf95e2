//! The `kafka-console-share-consumer` tool; everything lives in `kafkit::cli::share_consumer`.

fn main() -> std::process::ExitCode {
    kafkit::cli::share_consumer::main()
}
