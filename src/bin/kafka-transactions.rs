//! The `kafka-transactions` tool; everything lives in `kafkit::cli::transactions`.

fn main() -> std::process::ExitCode {
    kafkit::cli::transactions::main()
}
