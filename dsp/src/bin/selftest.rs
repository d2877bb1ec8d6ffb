//! The Hexagon self-test executable: runs every dsp self-test under qemu-hexagon and prints
//! `N passed, M failed`; the exit status is 1 when any failed.
#![no_std]
#![no_main]

use core::fmt::Write;
use lpai_direct_skel::platform::linux_user::{exit, write_all};
use lpai_direct_skel::testing;

fn print(args: core::fmt::Arguments<'_>) {
    let mut line = heapless::String::<512>::new();
    let _ = line.write_fmt(args);
    write_all(1, line.as_bytes());
}

#[no_mangle]
extern "C" fn lpai_program_main() -> ! {
    let summary = testing::run_all(|test, result| match result {
        Ok(()) => print(format_args!("test {} ... ok\n", test.name)),
        Err(failure) => print(format_args!("test {} ... FAILED\n    {failure}\n", test.name)),
    });
    print(format_args!("{} passed, {} failed\n", summary.passed, summary.failed));
    exit(if summary.failed == 0 { 0 } else { 1 })
}
