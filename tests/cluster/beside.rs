//! The cluster's tests beside the single-broker ones, in one process.
//!
//! libtest gives each test a thread until it ends, and the cluster's tests take turns, so a
//! cluster test waiting for its turn would hold a thread the others could use. Instead, in a
//! whole run, the first test in name order ([`start`], called by
//! `a_three_node_cluster_runs_its_tests_beside_the_others` in `tests/remote/main.rs`) starts a
//! runner thread that starts the cluster and runs every test of [`super::SCENARIOS`] in turn,
//! each on a thread named after it. The cluster tests themselves come last in name order
//! (`with_a_cluster::`); when libtest gets to one, [`Session::begin`](super::harness::Session)
//! asks [`ran_beside`], which waits for the runner's run of that test and passes on its
//! outcome: a failure there fails the test here, with the same message.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Condvar, Mutex, OnceLock, PoisonError, mpsc};

use super::SCENARIOS;

thread_local! {
    /// Set on the runner's threads: there a test runs its body.
    static ON_RUNNER: Cell<bool> = const { Cell::new(false) };
}

/// Whether the runner was started (in a whole run).
static STARTED: OnceLock<()> = OnceLock::new();

/// Each test's outcome once the runner has run it: `Err` holds its panic message.
static OUTCOMES: Mutex<Option<HashMap<&'static str, Result<(), String>>>> = Mutex::new(None);
static OUTCOME_ADDED: Condvar = Condvar::new();

/// Starts the runner; returns whether the cluster started (`Err`: why not), once it knows.
pub fn start() -> Result<String, String> {
    let (started, start) = mpsc::channel();
    if STARTED.set(()).is_err() {
        return Err("the runner was already started".to_string());
    }
    std::thread::Builder::new()
        .name("cluster runner".to_string())
        .spawn(move || {
            ON_RUNNER.with(|r| r.set(true));
            let _ = started.send(super::harness::cluster_bootstrap());
            for (name, test) in SCENARIOS {
                let run = std::thread::Builder::new()
                    .name(name.to_string())
                    .spawn(move || {
                        ON_RUNNER.with(|r| r.set(true));
                        test();
                    })
                    .expect("a thread for a cluster test");
                let outcome = run.join().map_err(|panic| {
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "the test panicked".to_string())
                });
                OUTCOMES
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(HashMap::new)
                    .insert(name, outcome);
                OUTCOME_ADDED.notify_all();
            }
        })
        .expect("a thread for the cluster runner");
    start
        .recv()
        .unwrap_or_else(|_| Err("the cluster runner died".to_string()))
}

/// For a cluster test called by libtest: `true` once the runner has run it and it passed (the
/// caller returns); a panic with the runner's message if it failed there. `false` when it
/// runs here: on the runner itself, or when the runner was not started (a filtered run).
pub fn ran_beside() -> bool {
    if ON_RUNNER.with(Cell::get) || STARTED.get().is_none() {
        return false;
    }
    let current = std::thread::current();
    let Some(name) = current.name() else {
        return false;
    };
    if !SCENARIOS.iter().any(|(n, _)| *n == name) {
        return false;
    }
    // The lock is let go before a failure panics, so that one failed test does not poison
    // it for the others.
    let mut outcomes = OUTCOMES.lock().unwrap_or_else(PoisonError::into_inner);
    let outcome = loop {
        if let Some(outcome) = outcomes.as_ref().and_then(|o| o.get(name)) {
            break outcome.clone();
        }
        outcomes = OUTCOME_ADDED
            .wait(outcomes)
            .unwrap_or_else(PoisonError::into_inner);
    };
    drop(outcomes);
    match outcome {
        Ok(()) => true,
        Err(message) => panic!("{message}"),
    }
}
