//! Reading the skel's profile after each stub call that runs QNN (the load, each execute, each direct-mode job)
//! when the run profiles: one readout per call, with when the call started and stopped, so the QNN profile log
//! has a record per call as ONNX Runtime's QNN execution provider writes it.

use crate::profile_log::Readout;
use anyhow::{anyhow, Result};
use lpai_direct_stub::stub::Stub;

/// The run's readouts, or none when it does not profile.
pub struct Readouts {
    /// Whether the run profiles (otherwise nothing is read).
    pub profiling: bool,
    /// The readouts so far, in call order.
    pub list: Vec<Readout>,
}

impl Readouts {
    /// No readout yet; `profiling` says whether any will be read.
    pub fn new(profiling: bool) -> Readouts {
        Readouts { profiling, list: Vec::new() }
    }

    /// Reads the profile of `context` for the call that ran from `started_us` to `stopped_us` (host monotonic
    /// microseconds), when the run profiles.
    pub fn read(&mut self, stub: &mut Stub, context: i32, started_us: u64, stopped_us: u64) -> Result<()> {
        if self.profiling {
            let events = stub.profile(context).map_err(|error| anyhow!("reading the profile: {error}"))?;
            self.list.push(Readout { events, started_us, stopped_us });
        }
        Ok(())
    }
}
