//! `--restart-after N`: the one event counter of the PD (`lpai_pd_shell::restart`), which the request loop counts
//! Open, Invoke and Close frames on and the `apps_std_*` services count their calls on.

use super::system;
use lpai_pd_shell::restart::{Death, EventCounter, EXIT_STATUS};

static EVENTS: EventCounter = EventCounter::new();

/// Records `--restart-after N` (`None`: the PD never dies) before anything is served.
pub fn configure(restart_after: Option<u32>) {
    EVENTS.arm(restart_after);
}

/// Counts one event; at the N-th the PD dies here, before anything is done for it: one stderr line, then the
/// process ends with status 86 at once (no reply, no cleanup), as a PD restart would end it.
pub fn event() {
    if let Some(event) = EVENTS.count() {
        crate::say!("lpai-pd-shell: {}", Death(event));
        system::exit(EXIT_STATUS);
    }
}
