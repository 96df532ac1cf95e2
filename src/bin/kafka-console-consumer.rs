//! The `kafka-console-consumer` tool; everything lives in `kafkit::cli::consumer`.

fn main() -> std::process::ExitCode {
    kafkit::cli::consumer::main()
}
