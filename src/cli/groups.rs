//! `kafka-consumer-groups`: not ready yet; consumer groups on the embedded log come next.

use std::process::ExitCode;

use clap::{ArgMatches, Command};

use super::{CliError, connection_args, run_tool};

/// The clap definition of `kafka-consumer-groups` (a placeholder until groups land).
pub fn command() -> Command {
    connection_args(
        Command::new("kafka-consumer-groups")
            .about("List, describe, delete and reset consumer groups (not available yet).")
            .allow_external_subcommands(false)
            .arg(
                clap::Arg::new("args")
                    .num_args(0..)
                    .trailing_var_arg(true)
                    .allow_hyphen_values(true)
                    .hide(true),
            ),
    )
}

/// Entry point of the `kafka-consumer-groups` binary.
pub fn main() -> ExitCode {
    run_tool(command(), "Error: ", run)
}

fn run(_m: &ArgMatches) -> Result<(), CliError> {
    Err(anyhow::anyhow!(
        "kafka-consumer-groups is not available in this kafkit version yet; consumer groups on the embedded log are coming in the next release"
    )
    .into())
}
