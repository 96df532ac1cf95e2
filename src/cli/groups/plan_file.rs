//! The reset plan CSV of `--export` and `--from-file`: `topic,partition,offset` when exactly one
//! `--group` is given, else `group,topic,partition,offset`; no header, `,` separators, fields
//! quoted with `"` when they hold a separator, quote, line break or edge white space.

use std::collections::BTreeMap;

use super::java_split;
use crate::client::groups::TopicPartition;

/// New offsets per group.
pub(crate) type Plans = BTreeMap<String, BTreeMap<TopicPartition, i64>>;

const SHAPE_3: &str = "topic,partition,offset";
const SHAPE_4: &str = "group,topic,partition,offset";

/// Parses a plan file as Kafka does: if exactly one `--group` is given (`single`) and the first
/// line has 3 columns, every line is `topic,partition,offset` for that group; otherwise every
/// line is `group,topic,partition,offset`. Lines are split on `\n` (a `\r` before it is
/// dropped); trailing blank lines are ignored. Errors name the line and what is wrong.
pub(crate) fn parse(text: &str, single: Option<&str>) -> Result<Plans, String> {
    let lines: Vec<&str> = java_split(text, '\n')
        .into_iter()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut plans = Plans::new();
    if lines.iter().all(|l| l.is_empty()) {
        return Ok(plans);
    }
    // With one --group, a first line of three columns (or two: no offset) is that group's
    // plan, even when a value in it is bad: the error then names the right shape.
    let three = single.filter(|_| {
        record(lines[0], 3).is_ok()
            || split_fields(lines[0]).is_ok_and(|f| f.len() == 3 || f.len() == 2)
    });
    for (i, line) in lines.iter().enumerate() {
        let shape = if three.is_some() { SHAPE_3 } else { SHAPE_4 };
        let fields = record(line, if three.is_some() { 3 } else { 4 })
            .map_err(|why| format!("line {} (\"{line}\"): {why}; expected {shape}", i + 1))?;
        let (group, rest) = match three {
            Some(g) => (g.to_string(), &fields[..]),
            None => (fields[0].clone(), &fields[1..]),
        };
        plans.entry(group).or_default().insert(
            (rest[0].clone(), rest[1].parse().unwrap_or(0)),
            rest[2].parse().unwrap_or(0),
        );
    }
    Ok(plans)
}

/// Splits one line into exactly `n` fields whose last two are an int partition and a long offset.
/// A `topic,partition` line (no offset column) stands for offset 0, as Kafka's CSV reader fills
/// the missing last column with the number's default.
fn record(line: &str, n: usize) -> Result<Vec<String>, String> {
    let mut fields = split_fields(line)?;
    if n == 3 && fields.len() == 2 {
        fields.push("0".to_string());
    }
    if fields.len() != n {
        return Err(format!("{} columns", fields.len()));
    }
    let partition = fields[n - 2].trim().to_string();
    if partition.parse::<i32>().is_err() {
        return Err(format!("partition '{}' is not an int", fields[n - 2]));
    }
    let offset = fields[n - 1].trim().to_string();
    if offset.parse::<i64>().is_err() {
        return Err(format!("offset '{}' is not a long", fields[n - 1]));
    }
    fields[n - 2] = partition;
    fields[n - 1] = offset;
    Ok(fields)
}

/// CSV fields of one line, with `"` quoting and `""` escapes.
fn split_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            (false, ',') => {
                fields.push(std::mem::take(&mut field));
                was_quoted = false;
            }
            (false, _) if was_quoted => return Err("text after a closing quote".to_string()),
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err("unterminated quote".to_string());
    }
    fields.push(field);
    Ok(fields)
}

/// `--export`: one record per line, 3 columns for a single `--group`, else 4.
pub(crate) fn export(plans: &Plans, single: bool) -> String {
    let mut text = String::new();
    for (group, plan) in plans {
        for ((topic, partition), offset) in plan {
            if !single {
                text.push_str(&quote(group));
                text.push(',');
            }
            text.push_str(&format!("{},{partition},{offset}\n", quote(topic)));
        }
    }
    text
}

fn quote(field: &str) -> String {
    let needs = field.contains([',', '"', '\n', '\r'])
        || field.starts_with([' ', '\t', '#'])
        || field.ends_with([' ', '\t']);
    if needs {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(t: &str, p: i32) -> TopicPartition {
        (t.to_string(), p)
    }

    #[test]
    fn a_missing_offset_is_zero() {
        let p = parse("t,0\nt,1,7\n", Some("g")).unwrap();
        assert_eq!(p["g"], BTreeMap::from([(tp("t", 0), 0), (tp("t", 1), 7)]));
    }

    #[test]
    fn three_and_four_columns() {
        let p = parse("t,0,5\nt,1,7\n\n", Some("g")).unwrap();
        assert_eq!(p["g"], BTreeMap::from([(tp("t", 0), 5), (tp("t", 1), 7)]));
        let p = parse("a,t,0,5\r\n\"b,c\",t,1,7\n", Some("a")).unwrap();
        assert_eq!(p["a"], BTreeMap::from([(tp("t", 0), 5)]));
        assert_eq!(p["b,c"], BTreeMap::from([(tp("t", 1), 7)]));
        assert!(parse("", Some("g")).unwrap().is_empty());
        let err = parse("t,0,5\nt,x,5\n", Some("g")).unwrap_err();
        assert_eq!(
            err,
            "line 2 (\"t,x,5\"): partition 'x' is not an int; expected topic,partition,offset"
        );
        let err = parse("t,0,5\n", None).unwrap_err();
        assert_eq!(
            err,
            "line 1 (\"t,0,5\"): 3 columns; expected group,topic,partition,offset"
        );
        assert!(parse("g,t,0,9999999999999999999\n", None).is_err());
        assert!(parse("\"g,t,0,1\n", None).is_err());
        assert!(parse("t,0,1\n\nt,1,1\n", Some("g")).is_err());
    }

    #[test]
    fn export_round_trips() {
        let plans = Plans::from([
            (
                "g".to_string(),
                BTreeMap::from([(tp("t", 0), 5), (tp("t", 1), 0)]),
            ),
            ("odd,\"id\"".to_string(), BTreeMap::from([(tp("u", 2), 3)])),
        ]);
        let text = export(&plans, false);
        assert_eq!(text, "g,t,0,5\ng,t,1,0\n\"odd,\"\"id\"\"\",u,2,3\n");
        assert_eq!(parse(&text, None).unwrap(), plans);
        let single = Plans::from([("g".to_string(), plans["g"].clone())]);
        assert_eq!(parse(&export(&single, true), Some("g")).unwrap(), single);
    }
}
