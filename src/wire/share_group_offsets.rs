//! DescribeShareGroupOffsets at v1, which the kafka-protocol crate does not know: only v1's
//! answer carries a partition's lag (KIP-1226, Kafka 4.3). The request is v0's layout under
//! either number; the answer is read here, field by field, with every length from the wire
//! bounded by the bytes that are there.

use kafka_protocol::messages::DescribeShareGroupOffsetsRequest;
use kafka_protocol::protocol::buf::{ByteBuf, ByteBufMut};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, VersionRange};

/// DescribeShareGroupOffsets at v0 or v1. The crate knows only v0, but only v1's answer has the
/// lag (KIP-1226, Kafka 4.3). A v1 request has exactly v0's fields, so the crate's request is
/// written in v0's layout under either number; the answer, which differs, is read by
/// [`ShareGroupOffsetsResponse`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShareGroupOffsetsRequest(pub DescribeShareGroupOffsetsRequest);

impl Message for ShareGroupOffsetsRequest {
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 1 };
    const DEPRECATED_VERSIONS: Option<VersionRange> = None;
}

impl Encodable for ShareGroupOffsetsRequest {
    fn encode<B: ByteBufMut>(&self, buf: &mut B, _version: i16) -> anyhow::Result<()> {
        self.0.encode(buf, 0)
    }

    fn compute_size(&self, _version: i16) -> anyhow::Result<usize> {
        self.0.compute_size(0)
    }
}

impl HeaderVersion for ShareGroupOffsetsRequest {
    fn header_version(_version: i16) -> i16 {
        // Flexible from v0: request header v2.
        DescribeShareGroupOffsetsRequest::header_version(0)
    }
}

/// The answer to [`ShareGroupOffsetsRequest`], v0 or v1 (Kafka's
/// `DescribeShareGroupOffsetsResponse.json`; flexible from v0, so compact strings and arrays and
/// tagged fields everywhere). Tagged fields and topic ids are read past: nothing uses them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShareGroupOffsetsResponse {
    pub throttle_time_ms: i32,
    pub groups: Vec<ShareGroupOffsetsGroup>,
}

/// One group's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShareGroupOffsetsGroup {
    pub group_id: String,
    pub topics: Vec<ShareGroupOffsetsTopic>,
    pub error_code: i16,
    pub error_message: Option<String>,
}

/// One topic of a group's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShareGroupOffsetsTopic {
    pub topic_name: String,
    pub partitions: Vec<ShareGroupOffsetsPartition>,
}

/// One partition: where the group stands in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShareGroupOffsetsPartition {
    pub partition_index: i32,
    /// -1 when the group has not initialized the partition.
    pub start_offset: i64,
    /// -1 when unknown.
    pub leader_epoch: i32,
    /// v1 only: -1 when unknown, and at v0.
    pub lag: i64,
    pub error_code: i16,
    pub error_message: Option<String>,
}

impl Message for ShareGroupOffsetsResponse {
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 1 };
    const DEPRECATED_VERSIONS: Option<VersionRange> = None;
}

impl HeaderVersion for ShareGroupOffsetsResponse {
    fn header_version(_version: i16) -> i16 {
        // Flexible from v0: response header v1.
        1
    }
}

impl Decodable for ShareGroupOffsetsResponse {
    fn decode<B: ByteBuf>(buf: &mut B, version: i16) -> anyhow::Result<Self> {
        // The crate's field decoders are private to it: the fields are read here with `Buf`.
        let throttle_time_ms = buf.try_get_i32()?;
        let groups = compact_array(buf, |buf| {
            let group_id = compact_string(buf)?.unwrap_or_default();
            let topics = compact_array(buf, |buf| {
                let topic_name = compact_string(buf)?.unwrap_or_default();
                buf.try_get_bytes(16)?; // topic id
                let partitions = compact_array(buf, |buf| read_partition(buf, version))?;
                skip_tagged_fields(buf)?;
                Ok(ShareGroupOffsetsTopic {
                    topic_name,
                    partitions,
                })
            })?;
            let error_code = buf.try_get_i16()?;
            let error_message = compact_string(buf)?;
            skip_tagged_fields(buf)?;
            Ok(ShareGroupOffsetsGroup {
                group_id,
                topics,
                error_code,
                error_message,
            })
        })?;
        skip_tagged_fields(buf)?;
        Ok(ShareGroupOffsetsResponse {
            throttle_time_ms,
            groups,
        })
    }
}

/// One partition of a DescribeShareGroupOffsets answer at `version`.
fn read_partition<B: ByteBuf>(
    buf: &mut B,
    version: i16,
) -> anyhow::Result<ShareGroupOffsetsPartition> {
    let partition_index = buf.try_get_i32()?;
    let start_offset = buf.try_get_i64()?;
    let leader_epoch = buf.try_get_i32()?;
    // Lag sits between the leader epoch and the error code, from v1 on.
    let lag = if version >= 1 { buf.try_get_i64()? } else { -1 };
    let error_code = buf.try_get_i16()?;
    let error_message = compact_string(buf)?;
    skip_tagged_fields(buf)?;
    Ok(ShareGroupOffsetsPartition {
        partition_index,
        start_offset,
        leader_epoch,
        lag,
        error_code,
        error_message,
    })
}

/// An unsigned varint (at most 5 bytes for 32 bits).
fn unsigned_varint<B: ByteBuf>(buf: &mut B) -> anyhow::Result<u32> {
    let mut value: u32 = 0;
    for i in 0..5 {
        let byte = buf.try_get_u8()?;
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    anyhow::bail!("unsigned varint longer than 5 bytes")
}

/// A compact nullable string: its length plus one as an unsigned varint (0: null), then UTF-8.
fn compact_string<B: ByteBuf>(buf: &mut B) -> anyhow::Result<Option<String>> {
    match unsigned_varint(buf)? {
        0 => Ok(None),
        n => {
            let bytes = buf.try_get_bytes(n as usize - 1)?;
            Ok(Some(String::from_utf8(bytes.to_vec())?))
        }
    }
}

/// A compact array (not nullable): its length plus one as an unsigned varint, then each item.
fn compact_array<B: ByteBuf, T>(
    buf: &mut B,
    mut item: impl FnMut(&mut B) -> anyhow::Result<T>,
) -> anyhow::Result<Vec<T>> {
    let n = unsigned_varint(buf)?;
    if n == 0 {
        anyhow::bail!("null array where the schema has none");
    }
    // Not trusting the count for the allocation: a corrupt one would reserve gigabytes.
    let mut items = Vec::with_capacity((n as usize - 1).min(1024));
    for _ in 1..n {
        items.push(item(buf)?);
    }
    Ok(items)
}

/// Reads past a flexible struct's tagged fields (a count, then tag, size and bytes of each).
fn skip_tagged_fields<B: ByteBuf>(buf: &mut B) -> anyhow::Result<()> {
    for _ in 0..unsigned_varint(buf)? {
        unsigned_varint(buf)?; // tag
        let size = unsigned_varint(buf)?;
        buf.try_get_bytes(size as usize)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::{decode_response, encode_request};
    use bytes::Bytes;
    use kafka_protocol::messages::GroupId;
    use kafka_protocol::messages::describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup;
    use kafka_protocol::protocol::StrBytes;

    #[test]
    fn share_group_offsets_v1_request_is_v0_layout_under_v1() {
        let request =
            ShareGroupOffsetsRequest(DescribeShareGroupOffsetsRequest::default().with_groups(
                vec![DescribeShareGroupOffsetsRequestGroup::default()
                .with_group_id(GroupId(StrBytes::from_static_str("g")))
                .with_topics(None)],
            ));
        let v1 = encode_request(&request, 1, 3, "c").unwrap();
        let v0 = encode_request(&request, 0, 3, "c").unwrap();
        // Same bytes but the version in the header (after size and key).
        assert_eq!(&v1[..6], &v0[..6]);
        assert_eq!((v0[7], v1[7]), (0, 1));
        assert_eq!(&v1[8..], &v0[8..]);
        #[rustfmt::skip]
        assert_eq!(&v1[8 + 4 + 3 + 1..], &[
            2,                      // one group
            2, b'g',                // group id
            0,                      // topics: null (all)
            0,                      // group tags
            0,                      // request tags
        ]);
    }

    #[rustfmt::skip]
    fn response(lag: &[u8]) -> Vec<u8> {
        let mut frame = vec![
            0, 0, 0, 5,             // correlation id
            0,                      // response header tags
            0, 0, 0, 0,             // throttle time
            2,                      // one group
            2, b'g',                // group id
            2,                      // one topic
            2, b't',                // topic name
        ];
        frame.extend([7; 16]);      // topic id
        frame.extend([
            2,                      // one partition
            0, 0, 0, 1,             // partition index
            0, 0, 0, 0, 0, 0, 0, 42, // start offset
            0, 0, 0, 3,             // leader epoch
        ]);
        frame.extend(lag);
        frame.extend([
            0, 0,                   // error code
            0,                      // error message: null
            1, 9, 1, 0xff,          // a tagged field (tag 9, one byte), read past
            0,                      // topic tags
            0, 0,                   // group error code
            0,                      // group error message: null
            0,                      // group tags
            0,                      // response tags
        ]);
        frame
    }

    #[test]
    fn share_group_offsets_response_reads_lag_from_v1() {
        let frame = Bytes::from(response(&[0, 0, 0, 0, 0, 0, 0, 17]));
        let r = decode_response::<ShareGroupOffsetsRequest>(frame, 1, 5).unwrap();
        let g = &r.groups[0];
        assert_eq!(
            (g.group_id.as_str(), g.error_code, g.error_message.clone()),
            ("g", 0, None)
        );
        let t = &g.topics[0];
        assert_eq!(t.topic_name, "t");
        assert_eq!(
            t.partitions,
            vec![ShareGroupOffsetsPartition {
                partition_index: 1,
                start_offset: 42,
                leader_epoch: 3,
                lag: 17,
                error_code: 0,
                error_message: None,
            }]
        );
        let frame = Bytes::from(response(&[]));
        let r = decode_response::<ShareGroupOffsetsRequest>(frame, 0, 5).unwrap();
        let p = &r.groups[0].topics[0].partitions[0];
        assert_eq!((p.start_offset, p.lag), (42, -1));
    }
}
