//! `HAP_perf_get_qtimer_count`: the aDSP's 19.2 MHz QTimer, from CLOCK_MONOTONIC.

use crate::pd::system;

/// `uint64 HAP_perf_get_qtimer_count(void)`.
#[allow(non_snake_case)]
pub extern "C" fn HAP_perf_get_qtimer_count() -> u64 {
    let (seconds, nanoseconds) = system::monotonic();
    lpai_pd_shell::qtimer::ticks(seconds, nanoseconds)
}
