//! Wire framing: a request is `i32 size | RequestHeader | body`, a response is
//! `i32 size | ResponseHeader | body`. The kafka-protocol crate encodes headers and bodies; the
//! size prefix, header versions, the size limit and the layout of versions newer than the crate
//! (see `versions::layout_version`) are ours.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};

use super::api::Api;
use super::versions::layout_version;

/// Why a frame could not be built or read (the connection adds the address and API).
#[derive(Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Encoding failed (a field out of range for the version).
    Encode(String),
    /// The announced size is negative or over the limit.
    TooLarge(i64),
    /// The bytes do not decode as the expected response.
    Malformed(String),
}

/// Encodes one request frame, size prefix included.
pub fn encode_request<R: Api>(
    request: &R,
    version: i16,
    correlation_id: i32,
    client_id: &str,
) -> Result<BytesMut, FrameError> {
    let header = RequestHeader::default()
        .with_request_api_key(R::KEY)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_string(client_id.to_string())));
    let mut buf = BytesMut::with_capacity(64);
    // Placeholder for the size, patched below once the frame is complete.
    buf.put_i32(0);
    header
        .encode(&mut buf, R::header_version(version))
        .map_err(|e| FrameError::Encode(e.to_string()))?;
    request
        .encode(&mut buf, layout_version(R::KEY, version))
        .map_err(|e| FrameError::Encode(e.to_string()))?;
    let size = i32::try_from(buf.len() - 4)
        .map_err(|_| FrameError::Encode(format!("request of {} bytes", buf.len())))?;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Ok(buf)
}

/// Checks a frame's size prefix (a response's, or a request's on the server) against the limit;
/// returns the body length.
pub fn check_size(prefix: [u8; 4], limit: usize) -> Result<usize, FrameError> {
    let size = i32::from_be_bytes(prefix);
    match usize::try_from(size) {
        Ok(n) if n <= limit => Ok(n),
        _ => Err(FrameError::TooLarge(size.into())),
    }
}

/// Decodes a response frame (without its size prefix): checks the correlation id, then the body.
pub fn decode_response<R: Api>(
    mut frame: Bytes,
    version: i16,
    correlation_id: i32,
) -> Result<R::Response, FrameError> {
    let header = ResponseHeader::decode(
        &mut frame,
        <R::Response as HeaderVersion>::header_version(version),
    )
    .map_err(|e| FrameError::Malformed(format!("response header: {e}")))?;
    if header.correlation_id != correlation_id {
        // Requests are sent one at a time, so any other id means the stream is out of step.
        return Err(FrameError::Malformed(format!(
            "correlation id {} answers request {correlation_id}",
            header.correlation_id
        )));
    }
    let response = R::Response::decode(&mut frame, layout_version(R::KEY, version))
        .map_err(|e| FrameError::Malformed(format!("{e}")))?;
    Ok(response)
}

/// The error code at the start of an ApiVersions response body, read before decoding: on
/// UNSUPPORTED_VERSION (35) the broker writes the body in the v0 layout whatever was asked.
pub fn api_versions_error_code(frame: &Bytes) -> Option<i16> {
    // Response header v0 (a 4-byte correlation id), then the body's i16 error code.
    let mut b = frame.get(4..6)?;
    Some(b.get_i16())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse, MetadataRequest};

    #[test]
    fn api_versions_v3_request_golden_bytes() {
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("kafkit"))
            .with_client_software_version(StrBytes::from_static_str("0.1.0"));
        let frame = encode_request(&request, 3, 7, "kafkit").unwrap();
        #[rustfmt::skip]
        let expected: &[u8] = &[
            0, 0, 0, 31,            // size of everything after it
            // request header v2 (ApiVersions v3 is flexible)
            0, 18,                  // api key: ApiVersions
            0, 3,                   // api version
            0, 0, 0, 7,             // correlation id
            0, 6, b'k', b'a', b'f', b'k', b'i', b't', // client id: a classic i16-length string, even in v2
            0,                      // header tagged fields
            // body v3
            7, b'k', b'a', b'f', b'k', b'i', b't',    // compact string: length + 1
            6, b'0', b'.', b'1', b'.', b'0',
            0,                      // body tagged fields
        ];
        assert_eq!(&frame[..], expected);
    }

    #[test]
    fn metadata_v1_uses_header_v1() {
        // Null topics means all topics (the default, an empty array, means none).
        let all = MetadataRequest::default().with_topics(None);
        let frame = encode_request(&all, 1, 1, "c").unwrap();
        // size, key 3, version 1, correlation 1, client id "c", then the body (null array: -1).
        assert_eq!(
            &frame[..],
            &[
                0, 0, 0, 15, 0, 3, 0, 1, 0, 0, 0, 1, 0, 1, b'c', 0xff, 0xff, 0xff, 0xff
            ]
        );
    }

    #[test]
    fn size_limit() {
        assert_eq!(check_size([0, 0, 1, 0], 256), Ok(256));
        assert_eq!(
            check_size([0, 0, 1, 1], 256),
            Err(FrameError::TooLarge(257))
        );
        assert_eq!(check_size([0xff; 4], 256), Err(FrameError::TooLarge(-1)));
        // "HTTP" read as a size, as when pointed at a web server.
        assert!(check_size(*b"HTTP", 100 << 20).is_err());
    }

    #[test]
    fn api_versions_response_v3_and_correlation_check() {
        #[rustfmt::skip]
        let frame = Bytes::from_static(&[
            0, 0, 0, 9,             // correlation id (response header v0, even for v3)
            0, 0,                   // error code
            2,                      // compact array of 1
            0, 3, 0, 0, 0, 12, 0,   // Metadata 0..=12, no tags
            0, 0, 0, 0,             // throttle time
            0,                      // tagged fields
        ]);
        let r = decode_response::<ApiVersionsRequest>(frame.clone(), 3, 9).unwrap();
        assert_eq!(r.api_keys.len(), 1);
        assert_eq!((r.api_keys[0].api_key, r.api_keys[0].max_version), (3, 12));
        assert_eq!(api_versions_error_code(&frame), Some(0));
        let err = decode_response::<ApiVersionsRequest>(frame, 3, 10).unwrap_err();
        assert!(matches!(err, FrameError::Malformed(m) if m.contains("correlation id 9")));
    }

    #[test]
    fn unsupported_version_answer_is_read_as_v0() {
        #[rustfmt::skip]
        let frame = Bytes::from_static(&[
            0, 0, 0, 1,             // correlation id
            0, 35,                  // UNSUPPORTED_VERSION
            0, 0, 0, 1,             // classic array of 1
            0, 18, 0, 0, 0, 3,      // ApiVersions 0..=3
        ]);
        assert_eq!(api_versions_error_code(&frame), Some(35));
        let r: ApiVersionsResponse = decode_response::<ApiVersionsRequest>(frame, 0, 1).unwrap();
        assert_eq!(r.api_keys[0].max_version, 3);
    }
}
