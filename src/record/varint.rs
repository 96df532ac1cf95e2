//! Zigzag varints (Kafka's `ByteUtils` varint/varlong), the same encoding protobuf uses.

use super::RecordError;

/// Appends `v` as a zigzag varint. For values in `i32` range the bytes equal Kafka's varint.
pub fn put_varlong(buf: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        buf.push((z as u8) | 0x80);
        z >>= 7;
    }
    buf.push(z as u8);
}

/// Appends `v` as a zigzag varint.
pub fn put_varint(buf: &mut Vec<u8>, v: i32) {
    put_varlong(buf, v as i64);
}

/// How many bytes `put_varlong(v)` writes.
pub fn varlong_size(v: i64) -> usize {
    let z = ((v << 1) ^ (v >> 63)) as u64;
    let bits = 64 - (z | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Reads a zigzag varlong at `*pos`, advancing it. At most 10 bytes.
#[inline]
pub fn get_varlong(buf: &[u8], pos: &mut usize) -> Result<i64, RecordError> {
    // Most fields of a record (deltas, lengths) take one or two bytes: decode those inline,
    // in the caller's loop. The last byte of the buffer takes the general path.
    match buf.get(*pos..*pos + 2) {
        Some(&[b, _]) if b < 0x80 => {
            *pos += 1;
            return Ok(unzigzag(b as u64));
        }
        Some(&[b0, b1]) if b1 < 0x80 => {
            *pos += 2;
            return Ok(unzigzag((b0 & 0x7f) as u64 | (b1 as u64) << 7));
        }
        _ => {}
    }
    get_varlong_long(buf, pos)
}

fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// [`get_varlong`] for three bytes or more, the buffer's last byte, and the errors.
#[inline(never)]
fn get_varlong_long(buf: &[u8], pos: &mut usize) -> Result<i64, RecordError> {
    let mut z: u64 = 0;
    let mut shift = 0;
    loop {
        let Some(&b) = buf.get(*pos) else {
            return Err(RecordError::Corrupt(
                "varint runs past the end of the data".into(),
            ));
        };
        *pos += 1;
        if shift == 63 && b > 1 {
            return Err(RecordError::Corrupt("varint is too long".into()));
        }
        z |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 63 {
            return Err(RecordError::Corrupt("varint is too long".into()));
        }
    }
    Ok(unzigzag(z))
}

/// A zigzag varint of at most three bytes at `*pos` (a value of 20 bits or less), advancing
/// it; `None` for a longer one or one cut short. No error is built: for hot paths that fall
/// back to [`get_varlong`] or [`get_varint`] (the record reader's fast path).
#[inline(always)]
pub fn get_short_varint(buf: &[u8], pos: &mut usize) -> Option<i64> {
    let b0 = *buf.get(*pos)? as u64;
    if b0 < 0x80 {
        *pos += 1;
        return Some(unzigzag(b0));
    }
    let b1 = *buf.get(*pos + 1)? as u64;
    if b1 < 0x80 {
        *pos += 2;
        return Some(unzigzag((b0 & 0x7f) | b1 << 7));
    }
    let b2 = *buf.get(*pos + 2)? as u64;
    if b2 < 0x80 {
        *pos += 3;
        return Some(unzigzag((b0 & 0x7f) | (b1 & 0x7f) << 7 | b2 << 14));
    }
    None
}

/// Reads a zigzag varint that must fit in an `i32`.
#[inline]
pub fn get_varint(buf: &[u8], pos: &mut usize) -> Result<i32, RecordError> {
    let v = get_varlong(buf, pos)?;
    i32::try_from(v).map_err(|_| RecordError::Corrupt(format!("varint {v} is out of int range")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_encodings() {
        let cases: &[(i64, &[u8])] = &[
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (63, &[0x7e]),
            (-64, &[0x7f]),
            (64, &[0x80, 0x01]),
            (300, &[0xd8, 0x04]),
        ];
        for (v, bytes) in cases {
            let mut buf = Vec::new();
            put_varlong(&mut buf, *v);
            assert_eq!(&buf, bytes, "encoding {v}");
            assert_eq!(varlong_size(*v), bytes.len());
            let mut pos = 0;
            assert_eq!(get_varlong(&buf, &mut pos).unwrap(), *v);
            assert_eq!(pos, bytes.len());
        }
    }

    #[test]
    fn truncated_and_overlong_are_errors() {
        let mut pos = 0;
        assert!(get_varlong(&[0x80], &mut pos).is_err());
        let mut pos = 0;
        assert!(get_varlong(&[0xff; 11], &mut pos).is_err());
        let mut buf = Vec::new();
        put_varlong(&mut buf, i64::from(i32::MAX) + 1);
        let mut pos = 0;
        assert!(get_varint(&buf, &mut pos).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(v in any::<i64>()) {
            let mut buf = Vec::new();
            put_varlong(&mut buf, v);
            prop_assert_eq!(buf.len(), varlong_size(v));
            let mut pos = 0;
            prop_assert_eq!(get_varlong(&buf, &mut pos).unwrap(), v);
        }
    }
}
