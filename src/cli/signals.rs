//! SIGINT (Ctrl-C), SIGTERM and SIGHUP: set a flag the tools poll, so they can flush, commit
//! and print their final lines before exiting as Kafka's tools do for that signal: 128 plus
//! its number (130, 143, 129). A second signal exits with that status at once, unless it comes
//! within `REPEAT_WINDOW` (500 ms) of the first: `timeout` signals its child and then its process
//! group, so a tool it runs gets the one request twice, and must still exit in order (Java's
//! tools ignore repeats while their shutdown hook runs).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use super::CliError;

/// The signals that end a tool in order.
const SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Signals this soon after the first are repeats of it, not a second request.
const REPEAT_WINDOW: Duration = Duration::from_millis(500);

/// A flag that becomes true on SIGINT, SIGTERM or SIGHUP, with the signal that set it.
#[derive(Clone, Debug)]
pub struct Interrupt {
    set: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl Interrupt {
    /// Installs the handlers. If that fails the default handlers stay (the process just dies).
    pub fn install() -> Interrupt {
        let set = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        // When the first signal came, in nanoseconds after `base`, plus one (0: none yet).
        let first = Arc::new(AtomicU64::new(0));
        let base = Instant::now();
        for sig in SIGNALS {
            let (set, signal, first) = (set.clone(), signal.clone(), first.clone());
            // Only atomics and the monotonic clock (clock_gettime, async-signal-safe) run in
            // the handler; `exit` is _exit(2).
            let action = move || {
                let now = u64::try_from(base.elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1;
                match first.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => {
                        signal.store(sig as usize, Ordering::SeqCst);
                        set.store(true, Ordering::SeqCst);
                    }
                    // A second request ends the process at once, should the first one's
                    // orderly exit be stuck (a JoinGroup waiting for a slow group, a broker
                    // that stopped answering).
                    Err(at) if now - at >= REPEAT_WINDOW.as_nanos() as u64 => {
                        signal_hook::low_level::exit(exit_status(sig).into())
                    }
                    Err(_) => {}
                }
            };
            // SAFETY: the action is async-signal-safe (see above). If registering fails, the
            // default handler stays (the process just dies).
            let _ = unsafe { signal_hook::low_level::register(sig, action) };
        }
        Interrupt { set, signal }
    }

    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::Relaxed)
    }

    /// The error that ends the run with the signal's exit status.
    pub fn error(&self) -> CliError {
        let sig = self.signal.load(Ordering::Relaxed) as i32;
        CliError::Interrupted(exit_status(if sig == 0 { SIGINT } else { sig }))
    }
}

/// The exit status for a signal, as a shell and the JVM report it: 128 plus its number.
fn exit_status(sig: i32) -> u8 {
    u8::try_from(128 + sig).unwrap_or(130)
}
