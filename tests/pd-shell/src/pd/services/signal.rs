//! `qurt_signal_init/set/wait_timed/clear`: the dsp crate's qemu implementation (the signals word of a
//! `qurt_signal_t`; the virtual aDSP has one thread, so a wait on an unset signal is refused loudly, never hung).

pub use lpai_direct_skel::platform::pd_services::{
    qurt_signal_clear, qurt_signal_init, qurt_signal_set, qurt_signal_wait_timed,
};
