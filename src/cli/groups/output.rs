//! `--output text|json|table` for `--list`, `--describe` and `--reset-offsets`.
//!
//! - `text` (the default): Kafka's own output, byte for byte.
//! - `json`: one pretty-printed JSON document on stdout per command (two-space indent, a final
//!   newline); numbers are JSON numbers, missing values `null`, field names camelCase. The
//!   shapes are documented on the structs that build them ([`super::list`],
//!   [`super::describe`], [`super::reset`]) and in the README.
//! - `table`: aligned ASCII tables for people (comfy-table, built without terminal support, so
//!   never coloured), with lag totals per topic and per group in the offsets view.
//!
//! State notices (`has no active members`, ...) and warnings stay on stderr in every format.
//! `--output` with `--export` (the CSV plan) is a usage error, as is `json` or `table` with an
//! action that has no structured result (`--delete`, `--delete-offsets`, `--validate-regex`).

use comfy_table::{CellAlignment, Table};
use serde::Serialize;

use super::emit;
use super::options::Action;
use crate::cli::{CliError, usage};

/// The accepted `--output` values, for help and completions.
pub(super) const FORMATS: [&str; 3] = ["text", "json", "table"];

/// How results are written: the tools' shared `--output` formats.
pub(crate) use crate::cli::OutputFormat as Format;

/// Parses `--output` and checks it against the action (usage errors, exit 2).
pub(super) fn format_from(
    output: Option<&str>,
    export: bool,
    action: Action,
) -> Result<Format, CliError> {
    let Some(value) = output else {
        return Ok(Format::Text);
    };
    let format = match value {
        "text" => Format::Text,
        "json" => Format::Json,
        "table" => Format::Table,
        other => {
            return usage(format!(
                "Invalid value '{other}' for option --output; valid values are: {}",
                FORMATS.join(", ")
            ));
        }
    };
    if export {
        return usage("Option \"[output]\" can't be used with option \"[export]\"");
    }
    if format != Format::Text
        && !matches!(
            action,
            Action::List | Action::Describe | Action::ResetOffsets
        )
    {
        return usage(format!(
            "--output {value} is not supported with --{}; it applies to --list, --describe and --reset-offsets",
            action.flag()
        ));
    }
    Ok(format)
}

/// Writes `doc` as one pretty-printed JSON document and a newline.
pub(super) fn json<T: Serialize>(doc: &T) -> Result<(), CliError> {
    let mut text = serde_json::to_string_pretty(doc)
        .map_err(|e| CliError::Runtime(anyhow::Error::from(e).context("cannot encode JSON")))?;
    text.push('\n');
    emit(&text)
}

/// A plain ASCII table with `header`; the columns in `right` are right-aligned (numbers).
pub(super) fn table(header: &[&str], right: &[usize]) -> Table {
    let mut t = crate::cli::new_table(header);
    for &i in right {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// A table's text with a final newline.
pub(super) fn render(t: &Table) -> String {
    format!("{t}\n")
}

/// A JSON-less cell: the value, or `-` when missing.
pub(super) fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_plain_ascii() {
        let mut t = table(&["A", "N"], &[1]);
        t.add_row(vec!["x".to_string(), "10".to_string()]);
        t.add_row(vec!["yy".to_string(), "5".to_string()]);
        assert_eq!(
            render(&t),
            "+----+----+\n| A  |  N |\n+=========+\n| x  | 10 |\n| yy |  5 |\n+----+----+\n"
        );
    }
}
