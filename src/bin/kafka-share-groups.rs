//! The `kafka-share-groups` tool; everything lives in `kafkit::cli::share_groups`.

fn main() -> std::process::ExitCode {
    kafkit::cli::share_groups::main()
}
