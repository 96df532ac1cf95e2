//! The `kafka-server-start` tool; everything lives in `kafkit::cli::server_start`.

fn main() -> std::process::ExitCode {
    kafkit::cli::server_start::main()
}
