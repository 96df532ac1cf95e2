//! Warnings the embedded log raises while it works (a torn tail cut back), kept until the tool
//! prints them: library code never prints, and the writer that cuts may run on a thread of its
//! own, so they wait here, in order, for [`drain`].

use std::sync::Mutex;

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records a warning.
pub(crate) fn push(warning: String) {
    let mut warnings = WARNINGS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    warnings.push(warning);
}

/// The warnings raised since the last call, oldest first.
pub fn drain() -> Vec<String> {
    let mut warnings = WARNINGS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    std::mem::take(&mut *warnings)
}
