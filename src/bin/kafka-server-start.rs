//! The `kafka-server-start` tool; everything lives in `kafkit::cli::server_start`.

/// A request claiming billions of elements must not abort the server (see the module).
#[global_allocator]
static ALLOCATOR: kafkit::server::alloc::ReserveHuge = kafkit::server::alloc::ReserveHuge;

fn main() -> std::process::ExitCode {
    kafkit::cli::server_start::main()
}
