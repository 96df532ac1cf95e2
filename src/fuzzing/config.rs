//! The `command_config` target: `--command-config` files (Java properties) applied to the
//! client's settings as `Client::open` applies them, and `sasl.jaas.config` texts.
//!
//! Round trips: a parsed properties file written again the way Java's `Properties.store`
//! writes one reads back the same, and a parsed JAAS entry written again (values quoted) reads
//! back the same.

use crate::cli::properties::{Properties, parse_java_properties};
use crate::remote::ClientConfig;
use crate::remote::net::jaas;
use crate::remote::net::sasl::Credentials;

/// First byte: bit 0 clear, the rest is a properties file; set, a `sasl.jaas.config` value.
/// Invalid UTF-8 is read as the tools read files, lossily.
pub fn command_config(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if mode & 1 == 0 {
        properties(&text);
    } else {
        jaas_config(&text);
    }
}

fn properties(text: &str) {
    let props = parse_java_properties(text);
    let stored = store(&props);
    assert_eq!(
        parse_java_properties(&stored),
        props,
        "written as {stored:?}"
    );
    let mut config = ClientConfig::default();
    for (name, value) in &props {
        // Client::open stops at the first bad one; carrying on reaches more settings.
        let _ = config.set(name, value);
    }
    let security = &config.security;
    if security.protocol.sasl() {
        let _ = Credentials::from_security(security);
    }
    // The TLS settings are checked too unless they name files, which could be anything
    // (a FIFO would block the fuzzer).
    if security.truststore_location.is_none() && security.keystore_location.is_none() {
        let _ = security.prepare();
    }
    if let Some(text) = props.get("sasl.jaas.config") {
        jaas_config(text);
    }
}

/// Writes properties as Java's `Properties.store` does: `key=value` lines, with `\`, the
/// separators, comment starts, control characters and a value's leading space escaped, and
/// everything outside printable ASCII as `\uXXXX` UTF-16 units.
fn store(props: &Properties) -> String {
    let mut out = String::new();
    for (key, value) in props {
        escape(key, true, &mut out);
        out.push('=');
        escape(value, false, &mut out);
        out.push('\n');
    }
    out
}

fn escape(s: &str, is_key: bool, out: &mut String) {
    for (i, c) in s.chars().enumerate() {
        match c {
            ' ' if is_key || i == 0 => out.push_str("\\ "),
            '\\' | '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
        }
    }
}

/// A JAAS entry that parses is written again with every value quoted and escaped, and reads
/// back the same.
fn jaas_config(text: &str) {
    let Ok(entry) = jaas::parse(text) else {
        return;
    };
    let mut written = format!("{} {}", entry.module, entry.flag);
    for (key, value) in entry.options() {
        let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
        written.push_str(&format!(" {key}=\"{quoted}\""));
    }
    written.push(';');
    let again = jaas::parse(&written).expect("a written JAAS entry parses");
    assert_eq!(
        (&again.module, &again.flag, again.options()),
        (&entry.module, &entry.flag, entry.options())
    );
}
