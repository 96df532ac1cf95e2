//! Java's `Double.toString` and `Float.toString`, the text Kafka shows for a floating-point
//! value wherever it prints one: the console consumer's `DoubleDeserializer` and
//! `FloatDeserializer`, a double in a config validator's message, a number Jackson echoes in
//! an error, a float field of a dumped record. One implementation, so that they all agree.
//!
//! Java prints the shortest digits that read back as the same value, in plain notation for
//! magnitudes in `[1e-3, 1e7)` (`0.5`, `100.0`) and as `d.dddE<n>` otherwise (`1.0E7`,
//! `1.5E-4`), always with a digit after the point; `NaN`, `Infinity`, `-Infinity`, `-0.0`.
//!
//! Known gap: when the shortest digits are a single one, Java picks the closest two-digit
//! decimal instead, which differs only for a few subnormals (`Double.MIN_VALUE` is `4.9E-324`
//! in Java, `5.0E-324` here).

/// Java's `Double.toString(v)`.
pub fn java_double(v: f64) -> String {
    java_text(v, &format!("{v:e}"))
}

/// Java's `Float.toString(v)`: the same layout, with the shortest digits of the `f32` (which
/// are fewer than those of the same value widened to `f64`).
pub fn java_float(v: f32) -> String {
    java_text(f64::from(v), &format!("{v:e}"))
}

/// Lays out `sci`, Rust's shortest round-trip digits of `v` in scientific form (`-1.2345e-7`),
/// as Java does.
fn java_text(v: f64, sci: &str) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let (mantissa, exp) = sci.split_once('e').expect("scientific format");
    let exp: i32 = exp.parse().expect("exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (1e-3..1e7).contains(&v.abs()) {
        // Where the decimal point falls among the digits (0 or less: before them all).
        let point = exp + 1;
        let (int, frac) = if point <= 0 {
            (
                "0".to_string(),
                format!("{}{digits}", "0".repeat((-point) as usize)),
            )
        } else if point as usize >= digits.len() {
            (
                format!("{digits}{}", "0".repeat(point as usize - digits.len())),
                String::new(),
            )
        } else {
            let (int, frac) = digits.split_at(point as usize);
            (int.to_string(), frac.to_string())
        };
        let frac = if frac.is_empty() { "0" } else { &frac };
        format!("{sign}{int}.{frac}")
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_java_prints_them() {
        for (v, java) in [
            (0.5, "0.5"),
            (1.0, "1.0"),
            (1.5, "1.5"),
            (2.0, "2.0"),
            (100.0, "100.0"),
            (1024.0, "1024.0"),
            (123.456, "123.456"),
            (123456.789, "123456.789"),
            (1234567.0, "1234567.0"),
            (1e7, "1.0E7"),
            (0.001, "0.001"),
            (-0.001, "-0.001"),
            (0.0001, "1.0E-4"),
            (1.5e-4, "1.5E-4"),
            (1.25e-4, "1.25E-4"),
            (-1.5e-5, "-1.5E-5"),
            (-2.5e-10, "-2.5E-10"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(java_double(v), java, "{v:e}");
        }
    }

    #[test]
    fn floats_print_their_own_shortest_digits() {
        assert_eq!(java_float(3.25), "3.25");
        // 0.1f widened to a double is 0.10000000149011612.
        assert_eq!(java_float(0.1), "0.1");
        assert_eq!(java_float(1e7), "1.0E7");
    }
}
