//! Kafka's UUIDs (topic ids, member ids, directory ids) as text: Kafka's `Uuid.toString()`
//! prints the 16 bytes as URL-safe base64 without padding, 22 characters. The one place that
//! converts between the bytes and that text, for every layer that stores, sends or prints one.

use base64::Engine;

/// The alphabet and padding Kafka's `Uuid` uses (Java's `Base64.getUrlEncoder().withoutPadding()`).
const TEXT: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Kafka's `Uuid.toString()` of the id's 16 bytes.
pub fn uuid_to_string(bytes: &[u8; 16]) -> String {
    TEXT.encode(bytes)
}

/// The 16 bytes of an id in Kafka's text form; an error for anything that is not 22
/// characters of unpadded URL-safe base64 encoding exactly 16 bytes.
pub fn uuid_from_string(text: &str) -> Result<[u8; 16], String> {
    let bytes = TEXT
        .decode(text)
        .map_err(|e| format!("{text:?} is not a base64url UUID: {e}"))?;
    <[u8; 16]>::try_from(bytes).map_err(|b| format!("{text:?} is {} bytes, a UUID is 16", b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let bytes: [u8; 16] = std::array::from_fn(|i| (i * 17 + 250) as u8);
        let text = uuid_to_string(&bytes);
        assert_eq!(text.len(), 22);
        assert_eq!(uuid_from_string(&text), Ok(bytes));
        // The URL-safe alphabet: '-' and '_', never '+' or '/'.
        assert_eq!(uuid_to_string(&[0xff; 16]), "_____________________w");
        assert_eq!(uuid_from_string("_____________________w"), Ok([0xff; 16]));
    }

    #[test]
    fn the_zero_id() {
        assert_eq!(uuid_to_string(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(uuid_from_string("AAAAAAAAAAAAAAAAAAAAAA"), Ok([0; 16]));
    }

    #[test]
    fn anything_else_is_an_error() {
        for bad in [
            "",
            "not base64!",
            "AAAAAAAAAAAAAAAAAAAAAA==", // padded
            "AAAAAAAAAAAAAAAAAAAAA",    // 21 characters
            "AAAAAAAAAAAAAAAAAAAAAAAA", // 18 bytes
            "+AAAAAAAAAAAAAAAAAAAAA",   // the standard alphabet
        ] {
            assert!(uuid_from_string(bad).is_err(), "{bad}");
        }
    }
}
