//! `kafka-delete-records`: deletes the records of partitions below an offset (Kafka's
//! `DeleteRecordsCommand`), through the client API, so the embedded log and a cluster take the
//! same path.
//!
//! Output, as Kafka's:
//!
//! ```text
//! Executing records delete operation
//! Records delete operation completed:
//! partition: orders-0<TAB>low_watermark: 10
//! partition: orders-9<TAB>error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: ...
//! ```
//!
//! (`<TAB>` a tab) with the partitions sorted as `topic-partition` text (Kafka: hash-map order). A partition
//! that failed keeps Kafka's `error:` line on stdout, and the run then exits 1 with one more
//! line on stderr (Kafka exits 0). An offset of -1 means the high watermark.

mod offset_json;

use std::process::ExitCode;

use anyhow::{Context, anyhow};
use clap::{ArgMatches, Command};

use super::{CliError, connection_args, emit, open_client, run_tool, usage, validate_bootstrap};

/// The clap definition of `kafka-delete-records`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-delete-records")
        .about("Delete the records of the given partitions below the given offsets.")
        .arg(crate::cli::value_option(
            "offset-json-file",
            "Offset json file path",
            "REQUIRED: The JSON file with the offset per partition: {\"partitions\": [{\"topic\": \"foo\", \"partition\": 1, \"offset\": 1}], \"version\": 1}. An offset of -1 means the high watermark.",
            "Options",
        ).value_hint(clap::ValueHint::FilePath))
        .arg(crate::cli::admin_config_arg(
            "command config property file path",
            "A property file containing configs to be passed to Admin Client.",
        ));
    connection_args(cmd)
}

/// Entry point of the `kafka-delete-records` binary.
pub fn main() -> ExitCode {
    // Kafka prints a failure's message alone.
    run_tool(command(), "", run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    if let Some(servers) = m.get_one::<String>("bootstrap-server") {
        validate_bootstrap(servers)?;
    }
    let Some(path) = m.get_one::<String>("offset-json-file") else {
        return usage("Missing required argument \"[offset-json-file]\"");
    };
    let command_config = super::command_config(m)?;
    // Kafka reads the file as UTF-8, replacing what is not.
    let bytes = crate::files::read_limited(path.as_ref(), crate::files::CONFIG_FILE_LIMIT)
        .with_context(|| format!("Unable to read file {path}"))?;
    let offsets = offset_json::parse(&String::from_utf8_lossy(&bytes)).map_err(|e| anyhow!(e))?;
    let mut client = open_client(m, command_config.as_ref())?;
    emit("Executing records delete operation\n")?;
    let answers = client.delete_records(&offsets)?;
    // Kafka's TopicPartition text, "topic-partition", sorted as text.
    let mut rows: Vec<(String, String)> = answers
        .into_iter()
        .map(|((topic, partition), answer)| {
            let outcome = match answer {
                Ok(low_watermark) => format!("low_watermark: {low_watermark}"),
                Err(e) => format!("error: {}", super::exceptions::of_error(&e)),
            };
            (format!("{topic}-{partition}"), outcome)
        })
        .collect();
    rows.sort();
    let mut text = String::from("Records delete operation completed:\n");
    for (tp, outcome) in &rows {
        text.push_str(&format!("partition: {tp}\t{outcome}\n"));
    }
    emit(&text)?;
    let failed = rows
        .iter()
        .filter(|(_, o)| o.starts_with("error: "))
        .count();
    if failed > 0 {
        return Err(anyhow!(
            "the records of {failed} of {} partition(s) could not be deleted (see above)",
            rows.len()
        )
        .into());
    }
    Ok(())
}
