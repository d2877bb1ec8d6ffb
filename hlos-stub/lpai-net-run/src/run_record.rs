//! `OUTPUT_DIR/lpai_net_run.json`: what a run did, written by every run that passed the up-front checks (a run
//! that failed after them too, with its `error`), and what the net-run job answers. Later tools (profiling,
//! comparisons of the two modes) read the file; its field names are kept. The record also holds what only the
//! closing lines print (never written).

use crate::profile::Profile;
use crate::profile_files::Written;
use crate::times::Times;
use crate::whole;
use anyhow::{Context, Result};
use lpai_direct::qnn::lpai;
use lpai_direct_stub::stub::{Named, TransportKind};
use serde::{Serialize, Serializer};
use std::path::Path;

/// The record's file name in the output directory.
pub const FILE_NAME: &str = "lpai_net_run.json";

/// How the inferences reach the skel, written as `direct` or `traditional`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The skel runs the whole list in one `run_job` call (`--direct_mode`).
    Direct,
    /// One `execute` call per inference.
    Traditional,
}

impl Mode {
    /// The mode `--direct_mode` (or its absence) asks for.
    pub fn of(direct_mode: bool) -> Mode {
        if direct_mode {
            Mode::Direct
        } else {
            Mode::Traditional
        }
    }

    /// Its name, as the record writes it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Traditional => "traditional",
        }
    }
}

/// The record.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRecord {
    /// Direct or traditional.
    pub mode: Mode,
    /// The transport that carried the calls (`local`, `fastrpc`, `qemu`).
    #[serde(serialize_with = "transport_name")]
    pub transport: TransportKind,
    /// Inferences run.
    pub inferences: usize,
    /// Stub-to-skel calls in the whole run, open and close included.
    pub skel_calls: u32,
    /// What the run measured (its fields are the record's own).
    #[serde(flatten)]
    pub times: Times,
    /// Arena bytes the context uses at most.
    pub arena_high_water_bytes: usize,
    /// The first graph's LPAI memory pools: their sizes and the memory types they were placed in.
    pub lpai_memory: LpaiMemoryRecord,
    /// Why the run stopped, when it failed after its checks (the record then says what it did until then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The profile (`--profiling_level`, or the config file's level), made by [`crate::profile::of`] once the
    /// times are complete; absent when profiling was not asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// For the closing lines, not written: where the skel ran (for the local and qemu transports, which skel file).
    #[serde(skip)]
    pub skel_place: String,
    /// For the closing lines, not written: the graphs that ran, by name, comma-separated.
    #[serde(skip)]
    pub graph_names: String,
    /// For the closing lines, not written: the context arena's size in bytes.
    #[serde(skip)]
    pub arena_capacity_bytes: usize,
    /// For the closing lines, not written: a profiled run's QNN profile log and CSV, as written.
    #[serde(skip)]
    pub qnn_profile_files: Written,
}

/// A graph's LPAI scratch and persistent memory, as the record writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LpaiMemoryRecord {
    /// Scratch bytes (0 on a backend that is not LPAI).
    pub scratch_bytes: u32,
    /// The scratch memory's type (`"ddr"`, `"llc"`, `"tcm"`, `"psram"`).
    #[serde(serialize_with = "memory_type_name")]
    pub scratch_type: lpai::MemType,
    /// Persistent bytes (0 on a backend that is not LPAI).
    pub persistent_bytes: u32,
    /// The persistent memory's type.
    #[serde(serialize_with = "memory_type_name")]
    pub persistent_type: lpai::MemType,
}

impl LpaiMemoryRecord {
    /// Pools of no size yet, placed as `placement` says.
    pub fn placed(placement: lpai::MemoryPlacement) -> LpaiMemoryRecord {
        LpaiMemoryRecord {
            scratch_bytes: 0,
            scratch_type: placement.scratch,
            persistent_bytes: 0,
            persistent_type: placement.persistent,
        }
    }
}

/// Writes a memory type by its setting's name.
fn memory_type_name<S: Serializer>(memory: &lpai::MemType, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(memory.name().unwrap_or("undefined"))
}

impl RunRecord {
    /// The record of a run in `mode` over `transport` that has done nothing yet.
    pub fn new(mode: Mode, transport: TransportKind) -> RunRecord {
        RunRecord {
            mode,
            transport,
            inferences: 0,
            skel_calls: 0,
            times: Times::default(),
            arena_high_water_bytes: 0,
            error: None,
            profile: None,
            skel_place: String::new(),
            graph_names: String::new(),
            arena_capacity_bytes: 0,
            qnn_profile_files: Written::default(),
            lpai_memory: LpaiMemoryRecord::placed(lpai::MemoryPlacement::DEFAULT),
        }
    }
}

/// Writes a transport as its name.
fn transport_name<S: Serializer>(transport: &TransportKind, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(transport.name())
}

/// Writes the record into `output_dir`, whole or not at all.
pub fn write(output_dir: &Path, record: &RunRecord) -> Result<()> {
    std::fs::create_dir_all(output_dir).with_context(|| format!("cannot create {}", output_dir.display()))?;
    let text = serde_json::to_string_pretty(record)?;
    whole::write(&output_dir.join(FILE_NAME), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_serializes_without_its_absent_parts_and_a_record_without_one_has_no_profile_key() {
        let mut record = RunRecord::new(Mode::Direct, TransportKind::Local);
        record.times = Times {
            dsp_execute_us: vec![120, 100, 110],
            load_us: 5000,
            dsp_load_us: Some(4000),
            dsp_finalize_us: Some(1500),
            ..Times::default()
        };
        record.profile = Some(crate::profile::of(&record.times, None, &[]));
        let profile = record.profile.as_ref().unwrap();
        assert_eq!(profile.dsp_execute_us.map(|stats| (stats.p50, stats.max)), Some((110, 120)));
        let load = crate::profile::Load { host_us: 5000, dsp_us: Some(4000), dsp_finalize_us: Some(1500) };
        assert_eq!(profile.load, load);
        let json = serde_json::to_value(&record).unwrap();
        let mut keys: Vec<&String> = json["profile"].as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["dsp_execute_us", "events", "load", "percentile_method"]);
        assert_eq!(json["profile"]["percentile_method"], "nearest-rank");
        // No profile asked for: no `profile` key at all.
        let plain = serde_json::to_value(RunRecord::new(Mode::Direct, TransportKind::Local)).unwrap();
        assert!(plain.get("profile").is_none(), "{plain}");
    }

    #[test]
    fn the_record_writes_its_fields_flat_in_their_order_and_nothing_for_the_closing_lines() {
        let mut record = RunRecord::new(Mode::Traditional, TransportKind::Qemu);
        record.error = Some("stopped".into());
        record.skel_place = "the virtual aDSP".into();
        record.graph_names = "g".into();
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(
            text,
            "{\"mode\":\"traditional\",\"transport\":\"qemu\",\"inferences\":0,\"skel_calls\":0,\"dsp_execute_us\":[],\
             \"host_round_trip_us\":[],\"dsp_in_memory_us\":[],\"dsp_file_io_us\":[],\"load_us\":0,\"dsp_load_us\":null,\
             \"dsp_finalize_us\":null,\"arena_high_water_bytes\":0,\"lpai_memory\":{\"scratch_bytes\":0,\
             \"scratch_type\":\"ddr\",\"persistent_bytes\":0,\"persistent_type\":\"ddr\"},\"error\":\"stopped\"}"
        );
        assert_eq!(Mode::of(true).name(), "direct");
    }
}
