//! The `kafka-dump-log` tool; everything lives in `kafkit::cli::dump_log`.

fn main() -> std::process::ExitCode {
    kafkit::cli::dump_log::main()
}
