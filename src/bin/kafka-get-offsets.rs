//! The `kafka-get-offsets` tool; everything lives in `kafkit::cli::get_offsets`.

fn main() -> std::process::ExitCode {
    kafkit::cli::get_offsets::main()
}
