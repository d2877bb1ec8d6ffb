//! `qurt_mutex_lock` and `qurt_mutex_unlock`: the dsp crate's qemu implementation (a futex lock on word 1 of the
//! statically initialised `qurt_mutex_t`, never spinning), which the self-test executable links too.

pub use lpai_direct_skel::platform::pd_services::{qurt_mutex_lock, qurt_mutex_unlock};
