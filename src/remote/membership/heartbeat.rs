//! The heartbeat thread of a group member on a cluster, the same for both group protocols.
//!
//! Heartbeats come from a thread of their own with its own connection to the coordinator, as
//! Java's consumer has a heartbeat thread: a consumer blocked on a slow standard output stays in
//! the group. The thread owns the plumbing: the interval, a wake-up and stop through a
//! `Condvar`, the state it shares with the consumer's thread, and the connection to the
//! coordinator (opened again after a failure or when the coordinator changes). The protocol
//! supplies what differs, through [`Beats`]: which heartbeat to send next, and what its answer
//! means. The thread only records what the coordinator says; the consumer's own thread acts on
//! it at its next poll.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::remote::coordinator::Coordinator;
use crate::remote::net::connection::{ClientConfig, Connection, connect_broker};
use crate::wire::api::Api;

/// The coordinator a heartbeat goes to.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    pub node_id: i32,
    pub host: String,
    pub port: i32,
}

impl From<&Coordinator> for Node {
    fn from(c: &Coordinator) -> Node {
        Node {
            node_id: c.node_id,
            host: c.host.clone(),
            port: c.port,
        }
    }
}

/// What the connection to the coordinator should become after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Link {
    Keep,
    /// The coordinator moved or failed: connect afresh for the next heartbeat.
    Drop,
}

/// One protocol's heartbeats: the state the consumer's thread and the heartbeat thread share,
/// which says what to send and takes in the answers. Called with the state locked.
pub(super) trait Beats: Send + 'static {
    /// The heartbeat request.
    type Request: Api;

    /// How long to wait between heartbeats.
    fn interval(&self) -> Duration;

    /// Whether to send the next heartbeat now rather than at the interval.
    fn urgent(&self) -> bool {
        false
    }

    /// The next heartbeat and the coordinator to send it to; `None`: not now (not a member,
    /// or waiting for the consumer's thread to act).
    fn next(&mut self) -> Option<(Node, Self::Request)>;

    /// Takes in the answer from `node` to `request`; `None`: no answer (a lost connection or
    /// a timeout), after which the thread connects afresh anyway.
    fn answer(
        &mut self,
        node: &Node,
        request: &Self::Request,
        answer: Option<<Self::Request as Api>::Response>,
    ) -> Link;
}

/// The shared state with the thread's stop flag.
#[derive(Debug)]
pub(super) struct Shared<S> {
    beats: S,
    stop: bool,
}

impl<S> Deref for Shared<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.beats
    }
}

impl<S> DerefMut for Shared<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.beats
    }
}

type Cell<S> = (Mutex<Shared<S>>, Condvar);

/// The heartbeat thread and the state it shares with the consumer's thread.
#[derive(Debug)]
pub(super) struct Heartbeat<S> {
    shared: Arc<Cell<S>>,
    thread: Option<JoinHandle<()>>,
}

impl<S: Beats> Heartbeat<S> {
    /// Starts the thread, connecting to coordinators with `config`.
    pub fn start(beats: S, config: ClientConfig) -> Heartbeat<S> {
        let shared = Arc::new((Mutex::new(Shared { beats, stop: false }), Condvar::new()));
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("heartbeat".to_string())
            .spawn(move || beat_until_stopped(&theirs, &config))
            .ok();
        Heartbeat { shared, thread }
    }
}

impl<S> Heartbeat<S> {
    /// The shared state, locked.
    pub fn state(&self) -> MutexGuard<'_, Shared<S>> {
        lock(&self.shared)
    }

    /// Wakes the thread, to check [`Beats::urgent`] now.
    pub fn wake(&self) {
        self.shared.1.notify_all();
    }

    /// Stops the thread and waits for it (at most one heartbeat's round trip).
    pub fn stop(&mut self) {
        self.state().stop = true;
        self.wake();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl<S> Drop for Heartbeat<S> {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lock<S>(shared: &Cell<S>) -> MutexGuard<'_, Shared<S>> {
    // The thread never panics while holding the lock; a poisoned lock still holds the state.
    shared.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// The heartbeat thread: one heartbeat per interval (or at once when urgent) while the protocol
/// has one to send, until stopped.
fn beat_until_stopped<S: Beats>(shared: &Cell<S>, config: &ClientConfig) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let mut conn: Option<(i32, Connection)> = None;
    loop {
        let (node, request) = {
            let guard = lock(shared);
            let interval = guard.interval();
            let (mut guard, _) = shared
                .1
                .wait_timeout_while(guard, interval, |s| !s.stop && !s.urgent())
                .unwrap_or_else(|e| e.into_inner());
            if guard.stop {
                return;
            }
            match guard.next() {
                Some(next) => next,
                None => continue,
            }
        };
        let answer = runtime.block_on(send(&mut conn, &node, &request, config));
        if answer.is_none() {
            conn = None;
        }
        if lock(shared).answer(&node, &request, answer) == Link::Drop {
            conn = None;
        }
    }
}

/// Sends `request` to `node`, connecting first unless `conn` is to it already; `None` when no
/// answer came.
async fn send<R: Api>(
    conn: &mut Option<(i32, Connection)>,
    node: &Node,
    request: &R,
    config: &ClientConfig,
) -> Option<R::Response> {
    if conn.as_ref().is_none_or(|(id, _)| *id != node.node_id) {
        let opened = connect_broker(node.node_id, &node.host, node.port, config).await;
        *conn = opened.ok().map(|c| (node.node_id, c));
    }
    let (_, c) = conn.as_mut()?;
    let version = c.version::<R>().ok()?;
    c.send(request, version).await.ok()
}
