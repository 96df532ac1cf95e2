//! Writing read messages as Kafka's generated JSON converters do, printed as Jackson prints a
//! node tree: no spaces, strings with Jackson's escapes, bytes as padded base64, UUIDs as
//! Kafka's unpadded URL-safe base64.

use base64::Engine;

use super::{Dflt, Field, Message, Ty, Value, default_of};
use crate::cli::jackson::write_string;
use crate::kafka::java_number::java_double;
use crate::kafka::uuid::uuid_to_string;

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// The JSON of `value`, a read `message`, written for `version`.
pub fn to_json(message: &Message, value: &Value, version: i16) -> String {
    let mut out = String::new();
    write_struct(&mut out, message.fields, value, version);
    out
}

fn write_struct(out: &mut String, fields: &[Field], value: &Value, version: i16) {
    let Value::Struct(slots) = value else {
        out.push_str("null");
        return;
    };
    out.push('{');
    let mut first = true;
    for (f, slot) in fields.iter().zip(slots) {
        let Some(v) = slot else { continue };
        if !f.in_version(version) || (f.tagged_in(version) && is_default(f, v, version)) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_string(out, f.name);
        out.push(':');
        write_value(out, &f.ty, v, version);
    }
    out.push('}');
}

/// Whether a tagged field holds its default (then Kafka leaves it out).
fn is_default(f: &Field, v: &Value, version: i16) -> bool {
    match (f.default_value(), v) {
        (Dflt::Struct, Value::Struct(slots)) => {
            let Ty::Struct(fields) = f.ty else {
                return false;
            };
            fields.iter().zip(slots).all(|(inner, slot)| match slot {
                Some(v) if inner.in_version(version) => *v == default_of(inner),
                _ => true,
            })
        }
        _ => *v == default_of(f),
    }
}

fn write_value(out: &mut String, ty: &Ty, v: &Value, version: i16) {
    match (ty, v) {
        (_, Value::Int(i)) => out.push_str(&i.to_string()),
        (_, Value::Json(text)) => out.push_str(text),
        (_, Value::Float(x)) => out.push_str(&java_double(*x)),
        (_, Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        (_, Value::Str(s)) => write_string(out, s),
        (_, Value::Bytes(b)) => write_string(out, &BASE64.encode(b)),
        (_, Value::Uuid(u)) => write_string(out, &uuid_to_string(u)),
        (Ty::Array(element), Value::Array(items)) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, element, item, version);
            }
            out.push(']');
        }
        (Ty::Struct(fields), v @ Value::Struct(_)) => write_struct(out, fields, v, version),
        _ => out.push_str("null"),
    }
}
