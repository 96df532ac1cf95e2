//! `kafka-broker-api-versions`: the API versions each broker of a cluster supports, and the
//! version kafkit would use of each (Kafka's `BrokerApiVersionsCommand`).
//!
//! Kafka's output, per broker:
//!
//! ```text
//! 127.0.0.1:9092 (id: 1 rack: null isFenced: false) -> (
//!     Produce(0): 3 to 13 [usable: 12],
//!     ...
//! )
//! ```
//!
//! with a tab before each API. `usable` is kafkit's: the highest version its client speaks with
//! that broker, so it differs from Java's where the clients support different versions; an API
//! kafkit never sends is `[unusable: not used by kafkit]`. The embedded log has no broker: the
//! tool needs `--bootstrap-server` (or a command config or profile that names a cluster).

use std::io::Write;
use std::process::ExitCode;

use anyhow::anyhow;
use clap::{ArgMatches, Command};

use super::{CliError, closed_pipe_ok, connect_options, connection_args, run_tool};
use crate::client::brokers::{ApiUsability, ApiVersionSupport, BrokerNode};
use crate::client::{Client, ClientError};

/// The clap definition of `kafka-broker-api-versions`.
pub fn command() -> Command {
    let cmd = Command::new("kafka-broker-api-versions")
        .about("Print the API versions each broker of a cluster supports, and the version kafkit uses of each.")
        .arg(
            crate::cli::admin_config_arg("command config property file", "Property file containing configs to be passed to the admin client."),
        );
    connection_args(cmd)
}

/// Entry point of the `kafka-broker-api-versions` binary.
pub fn main() -> ExitCode {
    // Kafka prints a failure's message alone.
    run_tool(command(), "", run)
}

fn run(m: &ArgMatches) -> Result<(), CliError> {
    let options = connect_options(m, super::command_config(m)?.as_ref())?;
    // Without a cluster there is nothing to ask: the embedded log is not even opened.
    if options.bootstrap_servers.is_none() {
        return Err(CliError::Usage(ClientError::NoBroker.to_string()));
    }
    // The backend's connection errors suggest the embedded log, which cannot help here.
    let mut client = Client::open(&options).map_err(|e| match e.connection_summary() {
        Some(summary) => CliError::Runtime(anyhow!(summary)),
        None => e.into(),
    })?;
    let brokers = client.broker_api_versions()?;
    let mut out = std::io::stdout().lock();
    let mut failed = 0;
    for broker in &brokers {
        let node = node_text(&broker.node);
        match &broker.apis {
            Ok(apis) => {
                let text = format!("{node} -> {}\n", apis_text(apis));
                if let Err(e) = out.write_all(text.as_bytes()) {
                    return closed_pipe_ok(Err(e));
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("{node} -> ERROR: {e}");
            }
        }
    }
    if let Err(e) = out.flush() {
        return closed_pipe_ok(Err(e));
    }
    if failed > 0 {
        return Err(anyhow!(
            "the API versions of {failed} of {} brokers could not be read",
            brokers.len()
        )
        .into());
    }
    Ok(())
}

/// A broker as Java's `Node.toString()` prints it (metadata carries no fencing, hence false).
fn node_text(node: &BrokerNode) -> String {
    format!(
        "{}:{} (id: {} rack: {} isFenced: false)",
        node.host,
        node.port,
        node.id,
        node.rack.as_deref().unwrap_or("null")
    )
}

/// Kafka's `NodeApiVersions.toString(true)`: `(`, each API on a line of its own after a tab,
/// separated by commas, then `)` on a line of its own.
fn apis_text(apis: &[ApiVersionSupport]) -> String {
    let lines: Vec<String> = apis.iter().map(api_text).collect();
    format!("(\n\t{}\n)", lines.join(",\n\t"))
}

/// One API: `Name(key): min to max [usable: N]`, `UNKNOWN(key): min to max` for a key kafkit
/// does not know, `Name(key): UNSUPPORTED` for an API kafkit sends that the broker lacks.
fn api_text(api: &ApiVersionSupport) -> String {
    let name = match &api.name {
        Some(name) => format!("{name}({})", api.key),
        None => format!("UNKNOWN({})", api.key),
    };
    let Some((min, max)) = api.versions else {
        return format!("{name}: UNSUPPORTED");
    };
    let range = if min == max {
        min.to_string()
    } else {
        format!("{min} to {max}")
    };
    let usability = match api.usability {
        None => String::new(),
        Some(ApiUsability::Usable(v)) => format!(" [usable: {v}]"),
        Some(ApiUsability::NodeTooNew) => " [unusable: node too new]".to_string(),
        Some(ApiUsability::NodeTooOld) => " [unusable: node too old]".to_string(),
        Some(ApiUsability::NotUsed) => " [unusable: not used by kafkit]".to_string(),
    };
    format!("{name}: {range}{usability}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(
        key: i16,
        name: Option<&str>,
        versions: Option<(i16, i16)>,
        u: Option<ApiUsability>,
    ) -> ApiVersionSupport {
        ApiVersionSupport {
            key,
            name: name.map(str::to_string),
            versions,
            usability: u,
        }
    }

    #[test]
    fn kafka_layout() {
        let node = BrokerNode {
            id: 1,
            host: "127.0.0.1".into(),
            port: 9092,
            rack: None,
        };
        assert_eq!(
            node_text(&node),
            "127.0.0.1:9092 (id: 1 rack: null isFenced: false)"
        );
        let apis = [
            api(
                0,
                Some("Produce"),
                Some((0, 13)),
                Some(ApiUsability::Usable(12)),
            ),
            api(
                46,
                Some("ListPartitionReassignments"),
                Some((0, 0)),
                Some(ApiUsability::NotUsed),
            ),
            api(71, Some("GetTelemetrySubscriptions"), None, None),
            api(1000, None, Some((0, 2)), None),
            api(
                9,
                Some("OffsetFetch"),
                Some((1, 7)),
                Some(ApiUsability::NodeTooOld),
            ),
        ];
        assert_eq!(
            apis_text(&apis),
            "(\n\tProduce(0): 0 to 13 [usable: 12],\n\tListPartitionReassignments(46): 0 [unusable: not used by kafkit],\n\tGetTelemetrySubscriptions(71): UNSUPPORTED,\n\tUNKNOWN(1000): 0 to 2,\n\tOffsetFetch(9): 1 to 7 [unusable: node too old]\n)"
        );
    }
}
