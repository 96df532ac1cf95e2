//! One client connection: frames are read in order and answered in order (Kafka also handles
//! one request per connection at a time, so responses never overtake each other). On shutdown
//! an idle connection closes at once and a busy one after its current requests.
//!
//! Produce requests are pipelined: once one's batches are queued for their appends, the next
//! request is read while its fsync runs, so a client with several produces in flight (Kafka's
//! clients send up to five) has them share fsync rounds instead of waiting one round each.
//! Any other request first waits for the produces before it, so it sees their data, as it
//! would on Kafka. At most [`MAX_PIPELINED`] produces and [`PIPELINED_BYTES`] of them wait.
//!
//! A client that sends requests but does not read the answers holds at most those, plus one
//! response (and its share of the fetch budget) in memory: the next request is read only once
//! that response is written. One that reads nothing of a response for [`WRITE_STALL`] has
//! given up on it (a client times a request out well before) and is disconnected.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::watch;

use super::broker::Broker;
use super::dispatch::{self, Later, Outcome};
use crate::wire::frame::check_size;

/// Kafka's default `socket.request.max.bytes`: the largest request accepted.
const MAX_REQUEST_BYTES: usize = 104_857_600;

/// How long a response may wait for its client to read any of it.
const WRITE_STALL: Duration = Duration::from_secs(60);

/// How many produces of one connection may wait for their appends at once: Kafka's clients
/// send at most five (`max.in.flight.requests.per.connection`).
const MAX_PIPELINED: usize = 5;

/// How many bytes of requests those produces may hold before the next request waits for them.
const PIPELINED_BYTES: usize = 16 << 20;

/// How much is read from the socket at a time, at least.
const READ_CHUNK: usize = 64 * 1024;

/// Serves a connection until the client closes it, it breaks the protocol, or the server stops.
pub async fn serve(broker: Arc<Broker>, stream: TcpStream, mut stopping: watch::Receiver<bool>) {
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "unknown peer".to_string(), |a| a.to_string());
    let host = stream
        .peer_addr()
        .map_or_else(|_| String::new(), |a| a.ip().to_string());
    let _ = stream.set_nodelay(true);
    let (read, write) = stream.into_split();
    let mut frames = Frames {
        read,
        buffer: BytesMut::with_capacity(READ_CHUNK),
    };
    let mut answers = Answers {
        broker: &broker,
        peer: &peer,
        write,
        waiting: VecDeque::new(),
        waiting_bytes: 0,
    };
    loop {
        let room = answers.waiting.len() < MAX_PIPELINED && answers.waiting_bytes < PIPELINED_BYTES;
        let frame = tokio::select! {
            biased;
            outcome = answers.first(), if !answers.waiting.is_empty() => {
                if !answers.answer_first(outcome).await {
                    return;
                }
                continue;
            }
            frame = frames.next(), if room => frame,
            // Mapped to (): the guard it returns must not live across an await.
            () = async { drop(stopping.wait_for(|s| *s).await) } => {
                answers.answer_all().await;
                return;
            }
        };
        let frame = match frame {
            Ok(Some(frame)) => frame,
            Ok(None) => {
                // The client may still read the answers of what it sent before it closed.
                answers.answer_all().await;
                return;
            }
            Err(why) => {
                answers.answer_all().await;
                broker
                    .log
                    .warn(&format!("Closing the connection from {peer}: {why}"));
                return;
            }
        };
        let produce = dispatch::is_produce(&frame);
        // Anything but a produce sees the data of the produces before it.
        if !produce && !answers.answer_all().await {
            return;
        }
        let size = frame.len();
        match dispatch::handle(&broker, frame, &host).await {
            Outcome::Later(later) if produce => answers.wait_for(later, size),
            outcome => {
                if !answers.answer_all().await || !answers.answer(outcome).await {
                    return;
                }
            }
        }
        let stop = *stopping.borrow();
        if stop {
            answers.answer_all().await;
            return;
        }
    }
}

/// The connection's writing side, with the produces waiting for their appends, oldest first.
struct Answers<'a> {
    broker: &'a Broker,
    peer: &'a str,
    write: OwnedWriteHalf,
    waiting: VecDeque<(Later, usize)>,
    /// The request bytes of those produces.
    waiting_bytes: usize,
}

impl Answers<'_> {
    fn wait_for(&mut self, later: Later, size: usize) {
        self.waiting.push_back((later, size));
        self.waiting_bytes += size;
    }

    /// The outcome of the oldest waiting produce; cancelling this loses nothing. Only called
    /// while one waits.
    async fn first(&mut self) -> Outcome {
        match self.waiting.front_mut() {
            Some((later, _)) => later.0.as_mut().await,
            None => std::future::pending().await,
        }
    }

    /// Sends the oldest waiting produce's `outcome` and forgets it; `false`: the connection
    /// is done.
    async fn answer_first(&mut self, outcome: Outcome) -> bool {
        if let Some((_, size)) = self.waiting.pop_front() {
            self.waiting_bytes -= size;
        }
        self.answer(outcome).await
    }

    /// Answers every waiting produce, in order; `false`: the connection is done.
    async fn answer_all(&mut self) -> bool {
        while !self.waiting.is_empty() {
            let outcome = self.first().await;
            if !self.answer_first(outcome).await {
                return false;
            }
        }
        true
    }

    /// Sends an outcome (waiting for it first if it is still under way); `false`: the
    /// connection is done (closed by the client, stalled, or by the outcome itself).
    async fn answer(&mut self, mut outcome: Outcome) -> bool {
        loop {
            match outcome {
                Outcome::Later(later) => outcome = later.0.await,
                Outcome::Reply(bytes, held) => {
                    let written = write_or_stall(&mut self.write, &bytes).await;
                    drop(held);
                    return match written {
                        Ok(()) => true,
                        Err(Some(why)) => {
                            self.close(&why);
                            false
                        }
                        Err(None) => false,
                    };
                }
                Outcome::Silent => return true,
                Outcome::Close(why) => {
                    self.close(&why);
                    return false;
                }
            }
        }
    }

    fn close(&self, why: &str) {
        self.broker
            .log
            .warn(&format!("Closing the connection from {}: {why}", self.peer));
    }
}

/// Writes `bytes` whole. `Err(None)`: the client went away; `Err(Some(why))`: it read nothing
/// of the response for [`WRITE_STALL`].
async fn write_or_stall(write: &mut OwnedWriteHalf, bytes: &[u8]) -> Result<(), Option<String>> {
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

/// Request frames from the socket. What was read stays in `buffer` until a whole frame is
/// there, so [`Frames::next`] may be cancelled without losing a byte.
struct Frames {
    read: OwnedReadHalf,
    buffer: BytesMut,
}

impl Frames {
    /// The next request frame without its size prefix; `None` at a clean end of stream.
    async fn next(&mut self) -> Result<Option<Bytes>, String> {
        loop {
            if self.buffer.len() >= 4 {
                let prefix = [
                    self.buffer[0],
                    self.buffer[1],
                    self.buffer[2],
                    self.buffer[3],
                ];
                let size = check_size(prefix, MAX_REQUEST_BYTES).map_err(|_| {
                    format!(
                        "a request of {} bytes is larger than socket.request.max.bytes ({MAX_REQUEST_BYTES}) or negative (is this a Kafka client?)",
                        i32::from_be_bytes(prefix)
                    )
                })?;
                if self.buffer.len() >= 4 + size {
                    self.buffer.advance(4);
                    return Ok(Some(self.buffer.split_to(size).freeze()));
                }
                self.buffer
                    .reserve((4 + size - self.buffer.len()).max(READ_CHUNK));
            } else {
                self.buffer.reserve(READ_CHUNK);
            }
            match self.read.read_buf(&mut self.buffer).await {
                // The client closed between requests (or within a size prefix, as before).
                Ok(0) if self.buffer.len() < 4 => return Ok(None),
                Ok(0) => return Err("the client closed the connection within a request".into()),
                Ok(_) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}
