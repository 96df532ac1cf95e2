//! `kafka-server-start` as a user runs it: started on a free port over a temporary log
//! directory (in this process through `kafkit::server::serve`, or as a process where the test
//! needs one: signals, kill -9, its memory and open files), then used by clients that are not
//! ours (kcat, the Java tools from the Kafka 4.3.1 jars) and by our own tools, over the network
//! and through `--log-dir` at once.
//!
//! - `lifecycle`: the ready line, refusals (port in use, second server, bad property), signals.
//! - `clients`: kcat and the Java tools produce and consume; one log, two ways in.
//! - `compaction`: the server's cleaner thread on what kcat writes; keyless records refused.
//! - `durability`: kill -9 loses nothing that was acknowledged.
//! - `hostile`: malformed and hostile requests close their own connection only.
//! - `raw_requests`: requests made by hand: malformed batches refused and nothing stored,
//!   Kafka's limits, unknown partitions' commits, clients that never read their answers.
//! - `languages`: kafka-python, kafkajs and franz-go.
//! - `same_answers`: our tools print the same through the server as on its directory.
//! - `groups`: consumer groups over the network, offsets shared with the directory.
//! - `consumer_protocol`: groups of the new consumer protocol (KIP-848), assigned by the server.
//! - `perf`: the perf-test tools, ours and Kafka's.
//! - `apps`: applications built on compacted topics: a Kafka Streams word count restored from
//!   its changelog, a Kafka Connect worker resuming a file source from its stored offsets.
//! - `transactions`: Java's and librdkafka's transactional producers, read_committed readers,
//!   fencing, kill -9 mid-transaction, Kafka Streams exactly-once.

#[path = "../common/mod.rs"]
mod common;

mod apps;
mod clients;
mod compaction;
mod consumer_protocol;
mod durability;
mod groups;
mod hostile;
mod languages;
mod lifecycle;
mod perf;
mod raw_requests;
mod same_answers;
mod share;
mod transactions;

// The servers of these tests mostly run in this process: with the allocator the
// kafka-server-start binary has, so that hostile requests meet the same server.
#[global_allocator]
static ALLOCATOR: kafkit::server::alloc::ReserveHuge = kafkit::server::alloc::ReserveHuge;
