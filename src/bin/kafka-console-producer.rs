//! The `kafka-console-producer` tool; everything lives in `kafkit::cli::producer`.

fn main() -> std::process::ExitCode {
    kafkit::cli::producer::main()
}
