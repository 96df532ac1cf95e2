//! The `kafka-delete-records` tool; everything lives in `kafkit::cli::delete_records`.

fn main() -> std::process::ExitCode {
    kafkit::cli::delete_records::main()
}
