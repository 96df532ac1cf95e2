//! `kafka-topics --repair` (kafkit's own action, embedded log only): what was cut and set aside
//! in each partition, in text (one line per partition), JSON or a table.

use std::io::Write;

use crate::cli::{CliError, OutputFormat, new_table};
use crate::client::topics::PartitionRepair;

/// One partition's outcome as a sentence.
fn sentence(topic: &str, r: &PartitionRepair) -> String {
    let mut parts = Vec::new();
    if let Some(from) = &r.adopted_from {
        parts.push(format!(
            "its partition.metadata named topic id {from} and now names this topic's"
        ));
    }
    if r.metadata_restored {
        parts.push(
            "its partition.metadata, missing or without a topic id, was written again".to_string(),
        );
    }
    match &r.report.cut {
        None => parts.push("every batch checked out".to_string()),
        Some(cut) => parts.push(format!(
            "cut back to offset {} at byte {} of {} ({}); set aside: {}",
            cut.offset,
            cut.position,
            cut.path.display(),
            cut.reason,
            names(r)
        )),
    }
    format!("Partition {topic}-{}: {}.", r.partition, parts.join("; "))
}

fn names(r: &PartitionRepair) -> String {
    let names: Vec<String> = r
        .report
        .set_aside
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    names.join(", ")
}

/// Prints the outcome of repairing `topic` in the chosen format.
pub(super) fn write_repairs(
    topic: &str,
    repairs: &[PartitionRepair],
    format: OutputFormat,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let text = match format {
        OutputFormat::Text => repairs
            .iter()
            .map(|r| sentence(topic, r) + "\n")
            .collect::<String>(),
        OutputFormat::Json => {
            let partitions: Vec<_> = repairs
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "partition": r.partition,
                        "adoptedFromTopicId": r.adopted_from,
                        "metadataRestored": r.metadata_restored,
                        "cut": r.report.cut.as_ref().map(|c| serde_json::json!({
                            "offset": c.offset,
                            "file": c.path.display().to_string(),
                            "position": c.position,
                            "reason": c.reason,
                        })),
                        "setAside": r.report.set_aside.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                    })
                })
                .collect();
            format!(
                "{}\n",
                serde_json::json!({ "topic": topic, "partitions": partitions })
            )
        }
        OutputFormat::Table => {
            let mut table = new_table(&["TOPIC", "PARTITION", "CUT AT OFFSET", "SET ASIDE"]);
            for r in repairs {
                let cut = r.report.cut.as_ref().map(|c| c.offset.to_string());
                table.add_row(vec![
                    topic.to_string(),
                    r.partition.to_string(),
                    cut.unwrap_or_else(|| "-".into()),
                    names(r),
                ]);
            }
            format!("{table}\n")
        }
    };
    out.write_all(text.as_bytes())
        .map_err(anyhow::Error::from)?;
    Ok(())
}
