//! The `kafka-broker-api-versions` tool; everything lives in `kafkit::cli::broker_api_versions`.

fn main() -> std::process::ExitCode {
    kafkit::cli::broker_api_versions::main()
}
