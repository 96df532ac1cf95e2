//! TEMPORARY stub: replaced by the partition-log branch.
use super::Result;
use std::path::Path;
#[derive(Clone, Debug, Default)]
pub struct PartitionConfig {
    pub segment_bytes: u64,
    pub segment_ms: i64,
    pub retention_ms: i64,
    pub retention_bytes: i64,
    pub index_interval_bytes: u64,
    pub segment_index_bytes: u64,
}
pub struct AppendResult {
    pub base_offset: i64,
    pub next_offset: i64,
}
pub struct Snapshot {
    pub log_start_offset: i64,
    pub log_end_offset: i64,
}
pub struct PartitionLog;
impl PartitionLog {
    pub fn create(_dir: &Path) -> Result<()> {
        todo!()
    }
    pub fn open(_dir: &Path) -> Result<PartitionLog> {
        todo!()
    }
    pub fn append(&self, _b: &mut [u8], _c: &PartitionConfig) -> Result<AppendResult> {
        todo!()
    }
    pub fn snapshot(&self) -> Result<Snapshot> {
        todo!()
    }
    pub fn read(&self, _s: &Snapshot, _o: i64, _m: usize) -> Result<Vec<u8>> {
        todo!()
    }
    pub fn offset_for_timestamp(&self, _s: &Snapshot, _t: i64) -> Result<Option<i64>> {
        todo!()
    }
    pub fn apply_retention(&self, _c: &PartitionConfig) -> Result<()> {
        todo!()
    }
    pub fn size_bytes(&self) -> Result<u64> {
        todo!()
    }
}
