//! The `kafka-topics` tool; everything lives in `kafkit::cli::topics`.

fn main() -> std::process::ExitCode {
    kafkit::cli::topics::main()
}
