//! The Hexagon bench executable: skel calls between marker functions, for `scripts/bench.sh` to count the
//! packets qemu-hexagon executes for them. Exit status 0 when every call succeeded.
#![no_std]
#![no_main]

use core::sync::atomic::AtomicU32;
use lpai_direct_skel::platform::linux_user::exit;

/// Which marker ran last; the two markers store different values so the linker cannot fold them into one.
static MARK: AtomicU32 = AtomicU32::new(0);

/// Marks the start of a measured batch (its address is looked up by the bench script).
#[no_mangle]
#[inline(never)]
pub extern "C" fn lpai_bench_begin() {
    // SAFETY: a volatile store to this program's own static, which the optimizer must keep.
    unsafe { core::ptr::write_volatile(MARK.as_ptr(), 1) };
}

/// Marks the end of a measured batch.
#[no_mangle]
#[inline(never)]
pub extern "C" fn lpai_bench_end() {
    // SAFETY: as above.
    unsafe { core::ptr::write_volatile(MARK.as_ptr(), 2) };
}

#[no_mangle]
extern "C" fn lpai_program_main() -> ! {
    // Opaque to the optimizer, so the markers stay real calls to real symbols.
    let begin = core::hint::black_box(lpai_bench_begin as extern "C" fn());
    let end = core::hint::black_box(lpai_bench_end as extern "C" fn());
    let ok = lpai_direct_skel::testing::bench::skel_calls(begin, end, 10);
    exit(if ok { 0 } else { 1 })
}
