//! `--restart-after N`: the PD's event counter. Every Open, Invoke and Close request frame the shell serves and
//! every `apps_std_*` call is one event, counted in the order they happen; at the N-th the PD dies before doing
//! anything for it (exit [`EXIT_STATUS`] after the stderr line [`Death`] gives), as a PD restart would end it.

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};

/// The shell's exit status when the PD dies at its N-th event.
pub const EXIT_STATUS: i32 = 86;

/// Counts the PD's events and says when the PD dies. A static one serves the whole (single-threaded) shell.
pub struct EventCounter {
    /// N of `--restart-after N`; 0 when the PD never dies.
    limit: AtomicU32,
    /// Events counted so far (saturating).
    seen: AtomicU32,
}

impl EventCounter {
    /// A counter that never says die (until [`EventCounter::arm`]).
    pub const fn new() -> EventCounter {
        EventCounter { limit: AtomicU32::new(0), seen: AtomicU32::new(0) }
    }

    /// Makes the PD die at event `limit` (`None`: never), counting from the events seen so far.
    pub fn arm(&self, limit: Option<u32>) {
        self.limit.store(limit.unwrap_or(0), Ordering::Relaxed);
    }

    /// Counts one event; `Some(n)` when it is the n-th, the one the PD dies at (before doing anything for it).
    pub fn count(&self) -> Option<u32> {
        let seen = self.seen.load(Ordering::Relaxed).saturating_add(1);
        self.seen.store(seen, Ordering::Relaxed);
        let limit = self.limit.load(Ordering::Relaxed);
        (limit != 0 && seen == limit).then_some(seen)
    }

    /// Events counted so far.
    pub fn seen(&self) -> u32 {
        self.seen.load(Ordering::Relaxed)
    }
}

impl Default for EventCounter {
    fn default() -> Self {
        EventCounter::new()
    }
}

/// The end of the stderr line `lpai-pd-shell: <Death>` the shell writes as the PD dies at event `0`.
pub struct Death(pub u32);

impl fmt::Display for Death {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let event = self.0;
        write!(formatter, "the PD dies at event {event} (--restart-after {event}), as a PD restart would end it")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pd_dies_at_the_nth_event_only() {
        let counter = EventCounter::new();
        counter.arm(Some(3));
        assert_eq!([counter.count(), counter.count(), counter.count()], [None, None, Some(3)]);
        assert_eq!(counter.count(), None, "a shell that did not exit counts on");
        assert_eq!(counter.seen(), 4);
        let once = EventCounter::new();
        once.arm(Some(1));
        assert_eq!(once.count(), Some(1));
    }

    #[test]
    fn without_the_option_the_pd_never_dies() {
        let counter = EventCounter::default();
        assert!((0..10_000).all(|_| counter.count().is_none()));
        counter.arm(None);
        assert_eq!(counter.count(), None);
        assert_eq!(counter.seen(), 10_001);
    }

    #[test]
    fn the_line_names_the_event() {
        assert_eq!(
            std::format!("lpai-pd-shell: {}", Death(7)),
            "lpai-pd-shell: the PD dies at event 7 (--restart-after 7), as a PD restart would end it"
        );
        assert_eq!(EXIT_STATUS, 86);
    }
}
