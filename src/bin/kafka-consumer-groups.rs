//! The `kafka-consumer-groups` tool; everything lives in `kafkit::cli::groups`.

fn main() -> std::process::ExitCode {
    kafkit::cli::groups::main()
}
