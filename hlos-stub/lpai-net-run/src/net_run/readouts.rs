//! Reading the skel's profile after each stub call that runs QNN (the load, each execute, each direct-mode job)
//! when the run profiles: one readout per call, with when the call started and stopped, so the QNN profile log
//! has a record per call as ONNX Runtime's QNN execution provider writes it. Profiling never fails a run: a read
//! that fails is one warning line, and that call has no readout. The readouts held are bounded, however long the
//! run (`--duration`): the first (the load's) and the latest [`WINDOW`] - 1; the ones between are counted, not kept.

use crate::profile_log::Readout;
use lpai_direct_stub::stub::Stub;
use std::collections::VecDeque;
use std::fmt::Display;

/// Most readouts a run holds.
pub const WINDOW: usize = 1024;

/// The run's readouts, or none when it does not profile.
pub struct Readouts {
    /// Whether the run profiles (otherwise nothing is read).
    pub profiling: bool,
    /// The first readout, kept whatever follows.
    first: Option<Readout>,
    /// The latest readouts after the first, at most [`WINDOW`] - 1, in call order.
    latest: VecDeque<Readout>,
    /// Readouts read and dropped to keep the window.
    left_out: usize,
}

/// What a run's readouts came to: the ones held, in call order, and how many were left out between the first and
/// the rest.
#[derive(Debug, Default, PartialEq)]
pub struct Held {
    /// The readouts held, in call order.
    pub list: Vec<Readout>,
    /// How many readouts were read and not held.
    pub left_out: usize,
}

impl Readouts {
    /// No readout yet; `profiling` says whether any will be read.
    pub fn new(profiling: bool) -> Readouts {
        Readouts { profiling, first: None, latest: VecDeque::new(), left_out: 0 }
    }

    /// Reads the profile of `context` for the call (`what`, for the warning) that ran from `started_us` to
    /// `stopped_us` (host monotonic microseconds), when the run profiles; a failure is one warning line.
    pub fn read(&mut self, stub: &mut Stub, context: i32, what: impl Display, (started_us, stopped_us): (u64, u64)) {
        if !self.profiling {
            return;
        }
        match stub.profile(context) {
            Ok(events) => self.keep(Readout { events, started_us, stopped_us }),
            Err(error) => eprintln!(
                "lpai-net-run: warning: reading the profile after {what} failed, the profile files leave that call \
                 out: {error}"
            ),
        }
    }

    /// Holds `readout`, dropping the oldest after the first when the window is full.
    fn keep(&mut self, readout: Readout) {
        if self.first.is_none() {
            self.first = Some(readout);
            return;
        }
        if self.latest.len() + 1 >= WINDOW {
            self.latest.pop_front();
            self.left_out += 1;
        }
        self.latest.push_back(readout);
    }

    /// The readouts held and how many were left out.
    pub fn into_held(self) -> Held {
        let list = self.first.into_iter().chain(self.latest).collect();
        Held { list, left_out: self.left_out }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readout(at: u64) -> Readout {
        Readout { events: Vec::new(), started_us: at, stopped_us: at + 1 }
    }

    #[test]
    fn a_long_run_holds_the_first_readout_and_the_latest_window() {
        let mut readouts = Readouts::new(true);
        for at in 0..3 {
            readouts.keep(readout(at));
        }
        let held = readouts.into_held();
        assert_eq!(
            (held.list.iter().map(|readout| readout.started_us).collect::<Vec<_>>(), held.left_out),
            (vec![0, 1, 2], 0)
        );
        let mut readouts = Readouts::new(true);
        let calls = 3 * WINDOW as u64 + 5;
        for at in 0..calls {
            readouts.keep(readout(at));
            assert!(readouts.latest.len() < WINDOW, "the window is bounded");
        }
        let held = readouts.into_held();
        let starts: Vec<u64> = held.list.iter().map(|readout| readout.started_us).collect();
        assert_eq!(starts.len(), WINDOW);
        assert_eq!((starts[0], starts[1], starts[WINDOW - 1]), (0, calls - WINDOW as u64 + 1, calls - 1));
        assert_eq!(held.left_out, calls as usize - WINDOW);
    }
}
