//! The skel's malformed-call fuzz (`lpai_direct_skel::testing::skel_fuzz`), run against the Hexagon skel `.so`
//! loaded by the PD shell under qemu-hexagon, through the qemu transport: every broken call gets its own AEE
//! refusal and `last_error` reason from the loaded `.so`, no host byte changes that the call could not write, and
//! the shell's canaries around every buffer stay intact.

mod common;

use lpai_direct::codec::RemoteArg;
use lpai_direct_skel::testing::skel_fuzz::{malformed_calls, SkelEntry};
use lpai_direct_stub::stub::fastrpc::{skel_uri, Domain};
use lpai_direct_stub::stub::{Qemu, QemuOptions, Transport};

/// The skel's entry points, reached through the qemu transport.
struct Through(Qemu);

impl SkelEntry for Through {
    fn open(&mut self) -> Option<u64> {
        self.0.open(&skel_uri(Domain::Adsp, None)).ok()
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        // SAFETY: forwarded from the caller: every non-null buffer is valid for its length.
        unsafe { self.0.invoke(handle, scalars, args) }
    }

    fn close(&mut self, handle: u64) -> i32 {
        self.0.close(handle)
    }
}

#[test]
fn malformed_calls_through_the_qemu_transport_get_their_refusals_and_touch_nothing() {
    let options = QemuOptions {
        skel: Some(common::virtual_adsp("liblpai_direct_skel.so")),
        shell: Some(common::virtual_adsp("lpai-pd-shell")),
        trace: None,
        ..QemuOptions::default()
    };
    let mut entry = Through(Qemu::start(&options).unwrap_or_else(|error| panic!("{error}")));
    assert!(malformed_calls(&mut entry), "the fuzz's log line above names the first mismatch");
    assert_eq!(entry.0.guard_violations(), 0, "the skel wrote outside its buffers in the shell");
    assert_eq!(entry.0.failure(), None);
}
