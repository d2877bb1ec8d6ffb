//! What a run measured, in microseconds: the times of its record (`lpai_net_run.json`, whose fields of the same
//! names they are), from which its profile, its Chrome trace and the printed table are made.

use serde::Serialize;

/// Now on the host's monotonic clock (`CLOCK_MONOTONIC`, the clock C++'s steady clock reads on Linux), in
/// microseconds: the start and stop times of the QNN profile log's records.
pub fn monotonic_us() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    if status != 0 {
        return 0;
    }
    (now.tv_sec as u64).saturating_mul(1_000_000).saturating_add(now.tv_nsec as u64 / 1_000)
}

/// A run's times.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Times {
    /// Each inference's execute time on the DSP clock.
    pub dsp_execute_us: Vec<u64>,
    /// Traditional mode: each inference's round trip as the host saw it (inputs sent, outputs back); empty in direct
    /// mode.
    pub host_round_trip_us: Vec<u64>,
    /// Direct mode: each inference's in-memory span on the DSP clock (input conversion, execute, output conversion;
    /// at least its execute time); empty in traditional mode and from a skel that records none.
    pub dsp_in_memory_us: Vec<u64>,
    /// Direct mode: each inference's file I/O on the DSP clock (reading its inputs, writing its results); empty when
    /// `dsp_in_memory_us` is.
    pub dsp_file_io_us: Vec<u64>,
    /// The context load as the host saw it (the `load` call).
    pub load_us: u64,
    /// Direct mode: the load on the DSP clock, as the skel measured it.
    pub dsp_load_us: Option<u64>,
    /// Direct mode: the graph's graphFinalize on the DSP clock (part of the load).
    pub dsp_finalize_us: Option<u64>,
    /// Direct mode: the job's file I/O that ran while an execution was in flight (asynchronous execution), on the
    /// DSP clock; not written in traditional mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsp_file_io_hidden_us: Option<u64>,
}
