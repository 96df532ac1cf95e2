//! Reading a file a user names (a properties file, a JSON plan, a PEM store, a payload file)
//! whole, with a size limit: `/dev/zero`, or a log file given by mistake, ends in one clear line
//! instead of in the OOM killer.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The most a configuration, plan or certificate file may hold: Kafka's are kilobytes.
pub const CONFIG_FILE_LIMIT: u64 = 16 * 1024 * 1024;

/// Why a named file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("it holds more than {} MiB, the most kafkit reads from such a file", limit >> 20)]
    TooLarge { limit: u64 },
}

/// The whole of `path`, refused past `limit` bytes (only `limit` + 1 are ever read).
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    File::open(path)?.take(limit + 1).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_refuses_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'x'; 2 << 20]).unwrap();
        assert_eq!(read_limited(&path, 2 << 20).unwrap().len(), 2 << 20);
        let err = read_limited(&path, 1 << 20).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it holds more than 1 MiB, the most kafkit reads from such a file"
        );
        // An endless file is refused after the limit, not read to the end.
        let zero = read_limited(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(matches!(zero, ReadError::TooLarge { .. }));
        assert!(matches!(
            read_limited(&dir.path().join("missing"), 1),
            Err(ReadError::Io(_))
        ));
    }
}
