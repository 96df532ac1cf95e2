//! Ctrl-C (SIGINT) and SIGTERM: set a flag the tools poll, so they can flush, commit and print
//! their final lines before exiting with 130. A second signal exits with 130 at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A flag that becomes true on SIGINT or SIGTERM.
#[derive(Clone, Debug)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// Installs the handlers. If that fails the default handlers stay (the process just dies).
    pub fn install() -> Interrupt {
        let flag = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // A second signal ends the process at once, should the first one's orderly exit be
            // stuck (a JoinGroup waiting for a slow group, a broker that stopped answering).
            // Registered first, so that it sees the flag as the previous signal left it.
            let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&flag));
            let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
        }
        Interrupt(flag)
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
