//! The `kafka-configs` tool; everything lives in `kafkit::cli::configs`.

fn main() -> std::process::ExitCode {
    kafkit::cli::configs::main()
}
