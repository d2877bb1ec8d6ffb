//! `OUTPUT_DIR/lpai_net_run.json`: what a run did, written by every run that passed the up-front checks (a run
//! that failed after them too, with its `error`). Later
//! tools (profiling, comparisons of the two modes) read it; its field names are kept.

use crate::output;
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

/// The record's file name in the output directory.
pub const FILE_NAME: &str = "lpai_net_run.json";

/// The record.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunRecord {
    /// `direct` (the skel ran the list) or `traditional` (one execute call per inference).
    pub mode: &'static str,
    /// The transport (`local`, `fastrpc`, `qemu`).
    pub transport: String,
    /// Inferences run.
    pub inferences: usize,
    /// Stub-to-skel calls in the whole run, open and close included.
    pub skel_calls: u32,
    /// Each inference's execute time on the DSP clock, in microseconds.
    pub dsp_execute_us: Vec<u64>,
    /// Traditional mode: each inference's round trip as the host saw it (inputs sent, outputs back), in
    /// microseconds; empty in direct mode.
    pub host_round_trip_us: Vec<u64>,
    /// Direct mode: each inference's in-memory span on the DSP clock (input conversion, execute, output conversion;
    /// at least its execute time), in microseconds; empty in traditional mode and from a skel that records none.
    pub dsp_in_memory_us: Vec<u64>,
    /// Direct mode: each inference's file I/O on the DSP clock (reading its inputs, writing its results), in
    /// microseconds; empty when `dsp_in_memory_us` is.
    pub dsp_file_io_us: Vec<u64>,
    /// The context load as the host saw it (the `load` call), in microseconds.
    pub load_us: u64,
    /// Direct mode: the load on the DSP clock, as the skel measured it.
    pub dsp_load_us: Option<u64>,
    /// Direct mode: the graph's graphFinalize on the DSP clock (part of the load).
    pub dsp_finalize_us: Option<u64>,
    /// Arena bytes the context uses at most.
    pub arena_high_water_bytes: usize,
    /// Why the run stopped, when it failed after its checks (the record then says what it did until then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The profile (`--profiling_level`, or the config file's level), made by [`crate::profile::complete`];
    /// absent when profiling was not asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::Profile>,
}

/// Writes the record into `output_dir`, whole or not at all.
pub fn write(output_dir: &Path, record: &RunRecord) -> Result<()> {
    std::fs::create_dir_all(output_dir).with_context(|| format!("cannot create {}", output_dir.display()))?;
    let text = serde_json::to_string_pretty(record)?;
    output::write_whole(&output_dir.join(FILE_NAME), text.as_bytes())
}
