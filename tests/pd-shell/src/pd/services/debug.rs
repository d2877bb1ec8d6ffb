//! `HAP_debug_v2`, behind FARF: the dsp crate's qemu implementation, one `adsp[<level>] <file>: <message>` line on
//! stderr per call (the message is the format, `%` doubled, no variadic arguments: `lpai_direct::farf`). Message
//! records are put in words; with `--raw-log` a line is printed as a device's log carries it, a record left as its
//! `lpai:` line (a long one's `lpai+` lines first), for `lpai-net-run render-log` to put in words.

pub use lpai_direct_skel::platform::pd_services::HAP_debug_v2;

/// Records `--raw-log` before any library is loaded.
pub fn configure_log(raw: bool) {
    lpai_direct_skel::platform::pd_services::print_log_raw(raw);
}
