//! Kafka's UUIDs (topic ids, member ids, directory ids) as text: Kafka's `Uuid.toString()`
//! prints the 16 bytes as URL-safe base64 without padding, 22 characters. The one place that
//! converts between the bytes and that text, for every layer that stores, sends or prints one,
//! and the one that makes new ones.

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

/// A new id as Kafka's `Uuid.randomUuid()` makes one (topic ids, consumer-protocol member
/// ids), in its text: 16 random bytes with the version 4 bits, so never the zero id, and never
/// a text starting with '-' (it would read as an option on a command line).
pub fn random_uuid_string() -> String {
    loop {
        let mut bytes: [u8; 16] = rand::random();
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        let id = uuid_to_string(&bytes);
        if !id.starts_with('-') {
            return id;
        }
    }
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
    fn random_ids_look_like_javas() {
        for _ in 0..200 {
            let id = random_uuid_string();
            assert_eq!(id.len(), 22, "{id}");
            assert!(!id.starts_with('-'), "{id}");
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "{id}"
            );
            let bytes = uuid_from_string(&id).unwrap();
            assert_eq!(bytes[6] >> 4, 4, "{id}: version 4");
            assert_eq!(bytes[8] >> 6, 0b10, "{id}: the variant");
        }
        assert_ne!(random_uuid_string(), random_uuid_string());
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
