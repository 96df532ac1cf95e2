//! One client connection: frames are read one at a time and answered in order (Kafka also
//! handles one request per connection at a time, so responses never overtake each other). On
//! shutdown an idle connection closes at once and a busy one after its current request.
//!
//! A client that sends requests but does not read the answers holds one response (and its
//! share of the fetch budget) in memory, no more: the next request is read only once that
//! response is written. One that reads nothing of a response for [`WRITE_STALL`] has given up
//! on it (a client times a request out well before) and is disconnected.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::broker::Broker;
use super::dispatch::{self, Outcome};
use crate::wire::frame::check_size;

/// Kafka's default `socket.request.max.bytes`: the largest request accepted.
const MAX_REQUEST_BYTES: usize = 104_857_600;

/// How long a response may wait for its client to read any of it.
const WRITE_STALL: Duration = Duration::from_secs(60);

/// Serves a connection until the client closes it, it breaks the protocol, or the server stops.
pub async fn serve(broker: Arc<Broker>, stream: TcpStream, mut stopping: watch::Receiver<bool>) {
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "unknown peer".to_string(), |a| a.to_string());
    let host = stream
        .peer_addr()
        .map_or_else(|_| String::new(), |a| a.ip().to_string());
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::with_capacity(64 * 1024, read);
    loop {
        let frame = tokio::select! {
            frame = read_frame(&mut read) => frame,
            _ = stopping.wait_for(|s| *s) => return,
        };
        let frame = match frame {
            Ok(Some(frame)) => frame,
            Ok(None) => return,
            Err(why) => {
                broker
                    .log
                    .warn(&format!("Closing the connection from {peer}: {why}"));
                return;
            }
        };
        match dispatch::handle(&broker, frame, &host).await {
            Outcome::Reply(bytes, held) => {
                let written = write_or_stall(&mut write, &bytes).await;
                drop(held);
                match written {
                    Ok(()) => {}
                    Err(Some(why)) => {
                        broker
                            .log
                            .warn(&format!("Closing the connection from {peer}: {why}"));
                        return;
                    }
                    Err(None) => return,
                }
            }
            Outcome::Silent => {}
            Outcome::Close(why) => {
                broker
                    .log
                    .warn(&format!("Closing the connection from {peer}: {why}"));
                return;
            }
        }
        if *stopping.borrow() {
            return;
        }
    }
}

/// Writes `bytes` whole. `Err(None)`: the client went away; `Err(Some(why))`: it read nothing
/// of the response for [`WRITE_STALL`].
async fn write_or_stall(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    bytes: &[u8],
) -> Result<(), Option<String>> {
    let mut pos = 0;
    while pos < bytes.len() {
        match tokio::time::timeout(WRITE_STALL, write.write(&bytes[pos..])).await {
            Ok(Ok(0)) | Ok(Err(_)) => return Err(None),
            Ok(Ok(n)) => pos += n,
            Err(_) => {
                return Err(Some(format!(
                    "it read nothing of a {}-byte response for {} s",
                    bytes.len(),
                    WRITE_STALL.as_secs()
                )));
            }
        }
    }
    Ok(())
}

/// The next request frame without its size prefix; `None` at a clean end of stream.
async fn read_frame(
    read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> Result<Option<Bytes>, String> {
    let mut prefix = [0u8; 4];
    match read.read_exact(&mut prefix).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.to_string()),
    }
    let size = check_size(prefix, MAX_REQUEST_BYTES).map_err(|_| {
        format!(
            "a request of {} bytes is larger than socket.request.max.bytes ({MAX_REQUEST_BYTES}) or negative (is this a Kafka client?)",
            i32::from_be_bytes(prefix)
        )
    })?;
    let mut body = vec![0u8; size];
    read.read_exact(&mut body)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(Bytes::from(body)))
}
