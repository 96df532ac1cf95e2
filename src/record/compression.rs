//! The four compression codecs of Kafka record batches, in both directions.
//!
//! Bytes match what Kafka's Java client reads and writes: gzip streams, snappy in the xerial
//! framing (plain snappy blocks are read too), the LZ4 frame format with independent 64 KiB
//! blocks, and zstd frames.

use std::io::{Read, Write};

use super::RecordError;

/// Compression of a record batch (attribute bits 0-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compression {
    #[default]
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

/// The xerial snappy stream header: magic, then version 1 and compatible version 1.
const XERIAL_HEADER: [u8; 16] = [
    0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
];
/// Uncompressed bytes per xerial snappy block, as Kafka's Java client writes them.
const XERIAL_BLOCK: usize = 32 * 1024;

impl Compression {
    /// All codecs, in id order.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The codec with this attribute id.
    pub fn from_id(id: i16) -> Result<Self, RecordError> {
        Ok(match id {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            other => return Err(RecordError::UnknownCodec(other)),
        })
    }

    /// The codec's attribute id.
    pub fn id(self) -> i16 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// Kafka's name for the codec (`none`, `gzip`, `snappy`, `lz4`, `zstd`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// Parses Kafka's codec names, case-insensitively; `uncompressed` also means none.
    pub fn from_name(name: &str) -> Option<Self> {
        let lower = name.trim().to_ascii_lowercase();
        match lower.as_str() {
            "none" | "uncompressed" => Some(Compression::None),
            _ => Compression::ALL.into_iter().find(|c| c.name() == lower),
        }
    }

    /// Compresses `data` as a whole (the records section of a batch).
    pub fn compress(self, data: &[u8]) -> Result<Vec<u8>, RecordError> {
        let fail = |e: &dyn std::fmt::Display| RecordError::Compression {
            codec: self.name(),
            message: e.to_string(),
        };
        match self {
            Compression::None => Ok(data.to_vec()),
            Compression::Gzip => {
                let mut enc = flate2::write::GzEncoder::new(
                    Vec::with_capacity(data.len() / 2),
                    flate2::Compression::default(),
                );
                enc.write_all(data).map_err(|e| fail(&e))?;
                enc.finish().map_err(|e| fail(&e))
            }
            Compression::Snappy => {
                let mut out = Vec::with_capacity(data.len() / 2 + 32);
                out.extend_from_slice(&XERIAL_HEADER);
                let mut enc = snap::raw::Encoder::new();
                for chunk in data.chunks(XERIAL_BLOCK) {
                    let block = enc.compress_vec(chunk).map_err(|e| fail(&e))?;
                    out.extend_from_slice(&(block.len() as u32).to_be_bytes());
                    out.extend_from_slice(&block);
                }
                Ok(out)
            }
            Compression::Lz4 => {
                let info = lz4_flex::frame::FrameInfo::new()
                    .block_size(lz4_flex::frame::BlockSize::Max64KB)
                    .block_mode(lz4_flex::frame::BlockMode::Independent);
                let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(
                    info,
                    Vec::with_capacity(data.len() / 2),
                );
                enc.write_all(data).map_err(|e| fail(&e))?;
                enc.finish().map_err(|e| fail(&e))
            }
            Compression::Zstd => zstd::bulk::compress(data, 3).map_err(|e| fail(&e)),
        }
    }

    /// Decompresses a batch's records section, refusing output larger than `limit` bytes.
    pub fn decompress(self, data: &[u8], limit: usize) -> Result<Vec<u8>, RecordError> {
        let fail = |e: &dyn std::fmt::Display| RecordError::Compression {
            codec: self.name(),
            message: e.to_string(),
        };
        let mut out = Vec::new();
        let read_all = |reader: &mut dyn Read, out: &mut Vec<u8>| -> Result<(), RecordError> {
            let n = reader
                .take(limit as u64 + 1)
                .read_to_end(out)
                .map_err(|e| fail(&e))?;
            if n > limit {
                return Err(fail(&format!("decompressed size exceeds {limit} bytes")));
            }
            Ok(())
        };
        match self {
            Compression::None => out.extend_from_slice(data),
            Compression::Gzip => read_all(&mut flate2::read::MultiGzDecoder::new(data), &mut out)?,
            Compression::Snappy => out = snappy_decompress(data, limit).map_err(|e| fail(&e))?,
            Compression::Lz4 => read_all(&mut lz4_flex::frame::FrameDecoder::new(data), &mut out)?,
            Compression::Zstd => {
                let mut dec = zstd::stream::read::Decoder::new(data).map_err(|e| fail(&e))?;
                read_all(&mut dec, &mut out)?
            }
        }
        Ok(out)
    }
}

/// Reads snappy in the xerial framing, or a single plain snappy block.
fn snappy_decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut dec = snap::raw::Decoder::new();
    let check = |len: usize, total: usize| {
        if total + len > limit {
            Err(format!("decompressed size exceeds {limit} bytes"))
        } else {
            Ok(())
        }
    };
    if !data.starts_with(&XERIAL_HEADER[..8]) {
        let len = snap::raw::decompress_len(data).map_err(|e| e.to_string())?;
        check(len, 0)?;
        return dec.decompress_vec(data).map_err(|e| e.to_string());
    }
    let mut out = Vec::new();
    let mut pos = XERIAL_HEADER.len();
    while pos < data.len() {
        let Some(len_bytes) = data.get(pos..pos + 4) else {
            return Err("truncated xerial block length".into());
        };
        let len = u32::from_be_bytes(len_bytes.try_into().expect("4 bytes")) as usize;
        pos += 4;
        let Some(block) = data.get(pos..pos + len) else {
            return Err("truncated xerial block".into());
        };
        pos += len;
        let n = snap::raw::decompress_len(block).map_err(|e| e.to_string())?;
        check(n, out.len())?;
        let start = out.len();
        out.resize(start + n, 0);
        dec.decompress(block, &mut out[start..])
            .map_err(|e| e.to_string())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for codec in Compression::ALL {
            let packed = codec.compress(&data).unwrap();
            assert_eq!(
                codec.decompress(&packed, data.len()).unwrap(),
                data,
                "{codec:?}"
            );
        }
    }

    #[test]
    fn decompression_limit_is_enforced() {
        let data = vec![7u8; 100_000];
        for codec in &Compression::ALL[1..] {
            let packed = codec.compress(&data).unwrap();
            assert!(codec.decompress(&packed, 1000).is_err(), "{codec:?}");
        }
    }

    #[test]
    fn names_and_ids() {
        for codec in Compression::ALL {
            assert_eq!(Compression::from_id(codec.id()).unwrap(), codec);
            assert_eq!(Compression::from_name(codec.name()), Some(codec));
        }
        assert_eq!(Compression::from_name("GZIP"), Some(Compression::Gzip));
        assert_eq!(Compression::from_name("brotli"), None);
        assert!(Compression::from_id(5).is_err());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let junk = [0xde, 0xad, 0xbe, 0xef, 1, 2, 3];
        for codec in &Compression::ALL[1..] {
            assert!(codec.decompress(&junk, 1 << 20).is_err(), "{codec:?}");
        }
    }
}
