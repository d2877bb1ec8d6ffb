//! `HAP_debug_v2`, behind FARF: the dsp crate's qemu implementation, one `adsp[<level>] <file>: <message>` line on
//! stderr per call (the message is the format, `%` doubled, no variadic arguments: `lpai_direct::farf`).

pub use lpai_direct_skel::platform::pd_services::HAP_debug_v2;
