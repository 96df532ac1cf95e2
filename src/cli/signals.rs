//! SIGINT (Ctrl-C), SIGTERM and SIGHUP: set a flag the tools poll, so they can flush, commit
//! and print their final lines before exiting as Kafka's tools do for that signal: 128 plus
//! its number (130, 143, 129). A second signal exits with that status at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use super::CliError;

/// The signals that end a tool in order.
const SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

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
        for sig in SIGNALS {
            // A second signal ends the process at once, should the first one's orderly exit be
            // stuck (a JoinGroup waiting for a slow group, a broker that stopped answering).
            // Registered first, so that it sees the flag as the previous signal left it.
            let _ = signal_hook::flag::register_conditional_shutdown(
                sig,
                exit_status(sig).into(),
                Arc::clone(&set),
            );
            let _ = signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize);
            let _ = signal_hook::flag::register(sig, Arc::clone(&set));
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
