//! The `reset_plan` target: `kafka-consumer-groups --reset-offsets --from-file` plans, parsed
//! as the tool parses them; a plan that parses, exported as `--export` writes it, parses back
//! the same.

use crate::cli::groups::plan_file::{export, parse};

/// First byte: bit 0 set means exactly one `--group` (named `g`) was given, which allows the
/// three-column form. The rest is the file, read lossily as UTF-8 as the tool reads it.
pub fn reset_plan(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let single = (mode & 1 != 0).then_some("g");
    let Ok(plans) = parse(&text, single) else {
        return;
    };
    // Kafka splits the file into lines before reading its CSV, so a group or topic with a line
    // break in it cannot come back, quoted or not (a topic name cannot hold one anyway).
    let line_break = plans
        .iter()
        .any(|(g, plan)| g.contains('\n') || plan.keys().any(|(t, _)| t.contains('\n')));
    if line_break {
        return;
    }
    let exported = export(&plans, false);
    assert_eq!(
        parse(&exported, None).as_ref(),
        Ok(&plans),
        "exported as {exported:?}"
    );
    if let [(group, _)] = plans.iter().collect::<Vec<_>>()[..] {
        let group = group.as_str();
        let exported = export(&plans, true);
        assert_eq!(
            parse(&exported, Some(group)).as_ref(),
            Ok(&plans),
            "exported as {exported:?}"
        );
    }
}
