//! The audio module's load stack: memory of its own on which the backend's libraries are opened and a model loaded,
//! and later freed ([`super::model::Loading`], [`super::model::Freeing`]), so that SPF's container thread, which SPF
//! sizes from the module's STACK_SIZE, never carries the vendor libraries' start-up and tear-down code (x86
//! libQnnHtp's load alone takes about 24 KiB; what libQnnLpai's takes only a device can tell, hence the
//! configuration's `load_stack=`).
//!
//! [`LoadStack::run`] moves the calling thread onto the stack for one job and back (`switch`: a few instructions
//! of assembly per architecture, which call the job's runner directly, so the stack check of the module's Hexagon
//! build, `lpai-stack-check --capi-module`, still follows the job's own code from the entry point that starts it).
//! The stack is painted before each job, and the deepest byte the job touched is its measured use. Below the stack
//! is a guard: on the aDSP the Hexagon FRAMELIMIT register (a frame allocated below it faults), on the host an
//! inaccessible page; a job that reaches the last [`RESERVE`] bytes is reported as having exhausted the stack.

use crate::platform::Memory;

/// The bytes at the bottom of the stack a job must leave untouched; one that reaches them exhausted the stack.
pub const RESERVE: usize = 256;
/// The byte the stack is painted with before each job.
const PAINT: u8 = 0x5C;
/// The alignment of the stack's top: the strictest of the ABIs (x86_64 and aarch64: 16; Hexagon: 8).
const TOP_ALIGNMENT: usize = 16;
/// Room for the host's guard page, which must be whole and page-aligned inside the block.
#[cfg(not(target_arch = "hexagon"))]
const GUARD_ROOM: usize = 2 * host_guard::PAGE_BYTES;
#[cfg(target_arch = "hexagon")]
const GUARD_ROOM: usize = 0;

/// A load stack of a chosen size, from the PD heap.
pub struct LoadStack {
    memory: Memory,
    /// Where the stack's lowest byte is, from the block's start (above the host's guard page).
    base: usize,
    /// Its usable bytes, from `base` up.
    bytes: usize,
}

impl LoadStack {
    /// A stack of `bytes` usable bytes (rounded down to a multiple of 16); `None` when the PD heap cannot give it.
    pub fn allocate(bytes: usize) -> Option<LoadStack> {
        let bytes = bytes - bytes % TOP_ALIGNMENT;
        #[cfg_attr(target_arch = "hexagon", allow(unused_mut))]
        let mut memory = Memory::allocate(bytes.checked_add(GUARD_ROOM)?)?;
        #[cfg(not(target_arch = "hexagon"))]
        let base = host_guard::protect(&mut memory)?;
        #[cfg(target_arch = "hexagon")]
        let base = 0;
        Some(LoadStack { memory, base, bytes })
    }

    /// Its usable bytes.
    pub fn size(&self) -> usize {
        self.bytes
    }

    /// Runs `job` on this stack; answers the bytes it used, or `Err` with them when it reached the last
    /// [`RESERVE`] bytes (the stack is too small: what lies below may have been overwritten).
    pub fn run<J: Job>(&mut self, job: &mut J) -> Result<usize, usize> {
        let bytes = self.bytes;
        let lowest = self.memory.as_ptr().cast::<u8>().as_ptr().wrapping_add(self.base);
        // SAFETY: the stack's `bytes` from `base` lie inside the block (`allocate`), owned by this value alone and
        // accessible (the host's guard page is below `base`); nothing else borrows them meanwhile (`&mut self`).
        let stack = unsafe { core::slice::from_raw_parts_mut(lowest, bytes) };
        stack.fill(PAINT);
        let range = stack.as_mut_ptr_range();
        // SAFETY: `range` is the stack, used by nothing else during the job, its top 16-aligned on the host
        // (`base` is page-aligned and `bytes` a multiple of 16) and 8-aligned on Hexagon (the PD heap's blocks are);
        // `job` lives through the call.
        unsafe { switch::run(job, range.end, range.start) };
        // SAFETY: as above; the job is over.
        let untouched = untouched(unsafe { core::slice::from_raw_parts(lowest, bytes) });
        #[cfg(not(target_arch = "hexagon"))]
        DEEPEST_USE.fetch_max(bytes - untouched, core::sync::atomic::Ordering::Relaxed);
        match untouched < RESERVE {
            false => Ok(bytes - untouched),
            true => Err(bytes - untouched),
        }
    }
}

#[cfg(not(target_arch = "hexagon"))]
impl Drop for LoadStack {
    fn drop(&mut self) {
        host_guard::release(&mut self.memory, self.base);
    }
}

/// The most any job used of its load stack in this process (host builds only: what the tests report).
#[cfg(not(target_arch = "hexagon"))]
static DEEPEST_USE: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// The most any job used of its load stack so far in this process (host builds only).
#[cfg(not(target_arch = "hexagon"))]
pub fn deepest_use() -> usize {
    DEEPEST_USE.load(core::sync::atomic::Ordering::Relaxed)
}

/// Painted bytes at the bottom of `stack`: the ones no job touched.
fn untouched(stack: &[u8]) -> usize {
    stack.iter().position(|&byte| byte != PAINT).unwrap_or(stack.len())
}

/// What runs on the load stack: a model's load, or its free ([`super::model`]).
pub trait Job {
    /// Does the job.
    fn run(&mut self);
}

/// The job's runner, which [`switch::run`] calls on the load stack: one per kind of job, so the stack check
/// follows each from the entry points that start it.
///
/// # Safety
/// `job` is a live job that nothing else uses during the call.
unsafe extern "C" fn run_job<J: Job>(job: *mut J) {
    // SAFETY: the caller's promise.
    if let Some(job) = unsafe { job.as_mut() } {
        job.run();
    }
}

/// The move onto the stack and back, per architecture, in the body of an ordinary function (which the stack check
/// measures by its `.stack_sizes` record): the stack pointer kept in a register the callee keeps (on Hexagon also
/// FRAMELIMIT and LR, in r16 to r18), set to the stack's top (on Hexagon FRAMELIMIT to its lowest byte), the job's
/// runner called directly, the thread's own stack pointer restored. Every register the runner may change is
/// clobbered.
mod switch {
    use super::{run_job, Job};

    /// Runs `job` with the stack pointer at `top` and, on Hexagon, FRAMELIMIT at `limit`.
    ///
    /// # Safety
    /// `[limit, top)` is writable memory used by nothing else during the call, `top` 16-aligned (8 on Hexagon);
    /// `job` is live.
    #[cfg(all(not(miri), target_arch = "x86_64"))]
    #[inline(never)]
    pub unsafe fn run<J: Job>(job: &mut J, top: *mut u8, limit: *mut u8) {
        let _ = limit;
        // SAFETY: the caller's promise; rsp is restored before the block ends, and the old stack's red zone is
        // left alone (the call pushes onto the new stack).
        unsafe {
            core::arch::asm!(
                "mov r12, rsp",
                "mov rsp, rsi",
                "call {run}",
                "mov rsp, r12",
                run = sym run_job::<J>,
                inout("rdi") job as *mut J => _,
                inout("rsi") top => _,
                out("r12") _,
                clobber_abi("C"),
            )
        }
    }

    /// See the x86_64 `run`.
    ///
    /// # Safety
    /// As for the x86_64 `run`.
    #[cfg(all(not(miri), target_arch = "aarch64"))]
    #[inline(never)]
    pub unsafe fn run<J: Job>(job: &mut J, top: *mut u8, limit: *mut u8) {
        let _ = limit;
        // SAFETY: the caller's promise; sp is restored before the block ends.
        unsafe {
            core::arch::asm!(
                "mov x20, sp",
                "mov sp, x1",
                "bl {run}",
                "mov sp, x20",
                run = sym run_job::<J>,
                inout("x0") job as *mut J => _,
                inout("x1") top => _,
                out("x20") _,
                clobber_abi("C"),
            )
        }
    }

    /// See the x86_64 `run`.
    ///
    /// # Safety
    /// As for the x86_64 `run`.
    #[cfg(all(not(miri), target_arch = "hexagon"))]
    #[inline(never)]
    pub unsafe fn run<J: Job>(job: &mut J, top: *mut u8, limit: *mut u8) {
        // SAFETY: the caller's promise; SP, FRAMELIMIT and LR are restored before the block ends.
        unsafe {
            core::arch::asm!(
                "r16 = r29",
                "r17 = framelimit",
                "r18 = r31",
                "r29 = r1",
                "framelimit = r2",
                "call {run}",
                "r29 = r16",
                "framelimit = r17",
                "r31 = r18",
                run = sym run_job::<J>,
                inout("r0") job as *mut J => _, inout("r1") top => _, inout("r2") limit => _,
                out("r3") _, out("r4") _, out("r5") _, out("r6") _, out("r7") _, out("r8") _, out("r9") _,
                out("r10") _, out("r11") _, out("r12") _, out("r13") _, out("r14") _, out("r15") _,
                out("r16") _, out("r17") _, out("r18") _, out("r28") _,
                out("p0") _, out("p1") _, out("p2") _, out("p3") _,
            )
        }
    }

    /// Under Miri, which runs no assembly: the job on the thread's own stack.
    ///
    /// # Safety
    /// `job` is live.
    #[cfg(miri)]
    pub unsafe fn run<J: Job>(job: &mut J, _top: *mut u8, _limit: *mut u8) {
        // SAFETY: forwarded.
        unsafe { run_job(job) }
    }
}

/// The host's guard page below the stack, so a job that outgrows it faults there instead of overwriting the heap.
#[cfg(not(target_arch = "hexagon"))]
mod host_guard {
    use crate::platform::Memory;
    use core::ffi::c_void;

    /// The page size the guard assumes (x86_64 and aarch64 Linux with 4 KiB pages; on larger pages the guard covers
    /// part of one, which `mprotect` refuses, and the stack is refused with it).
    pub const PAGE_BYTES: usize = 4096;
    const PROT_NONE: i32 = 0;
    const PROT_READ_WRITE: i32 = 3;

    extern "C" {
        fn mprotect(address: *mut c_void, length: usize, protection: i32) -> i32;
    }

    /// Makes the first whole page of `memory` inaccessible; answers where the stack starts (the page after it).
    pub fn protect(memory: &mut Memory) -> Option<usize> {
        let start = memory.as_ptr().cast::<u8>().as_ptr();
        let guard = (start as usize).next_multiple_of(PAGE_BYTES) - start as usize;
        // SAFETY: a whole page inside the block (GUARD_ROOM leaves room for it), which this stack alone owns.
        let protected = unsafe { mprotect(start.wrapping_add(guard).cast(), PAGE_BYTES, PROT_NONE) };
        (protected == 0).then_some(guard + PAGE_BYTES)
    }

    /// Makes the guard page accessible again before the block goes back to the heap.
    pub fn release(memory: &mut Memory, base: usize) {
        let page = memory.as_ptr().cast::<u8>().as_ptr().wrapping_add(base - PAGE_BYTES);
        // SAFETY: the page `protect` made inaccessible, still owned by this stack.
        unsafe { mprotect(page.cast(), PAGE_BYTES, PROT_READ_WRITE) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job that descends `levels` calls, each writing a 512-byte frame, and notes where its first frame was.
    struct Probe {
        levels: usize,
        frame: usize,
    }

    /// Descends `levels` more calls; answers a sum the optimiser cannot fold away.
    #[inline(never)]
    fn descend(levels: usize) -> usize {
        let pad = core::hint::black_box([levels as u8; 512]);
        match levels {
            0 => usize::from(pad[0]),
            _ => descend(levels - 1) + usize::from(pad[511]),
        }
    }

    impl Job for Probe {
        fn run(&mut self) {
            let local = core::hint::black_box(0u8);
            self.frame = &local as *const u8 as usize;
            core::hint::black_box(descend(self.levels));
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs assembly and mprotect")]
    fn a_job_runs_on_the_load_stack_and_its_deepest_byte_is_measured_again_each_run() {
        let mut stack = LoadStack::allocate(64 * 1024 + 8).unwrap();
        assert_eq!(stack.size(), 64 * 1024, "rounded down to the top's alignment");
        let lowest = stack.memory.as_ptr().cast::<u8>().as_ptr() as usize + stack.base;
        let mut probe = Probe { levels: 16, frame: 0 };
        let used = stack.run(&mut probe).unwrap();
        assert!((lowest..lowest + stack.size()).contains(&probe.frame), "the job's frame is on the load stack");
        assert!((16 * 512..32 * 1024).contains(&used), "{used} bytes for 16 frames of 512 bytes");
        // Repainted: a shallower job is measured by what it touched.
        let mut probe = Probe { levels: 1, frame: 0 };
        let less = stack.run(&mut probe).unwrap();
        assert!(less < used, "{less} bytes after {used}");
        assert!(deepest_use() >= used);
    }

    #[test]
    fn the_untouched_bytes_are_the_paint_at_the_bottom() {
        assert_eq!(untouched(&[PAINT, PAINT, 0, PAINT]), 2);
        assert_eq!(untouched(&[PAINT; 4]), 4);
        assert_eq!(untouched(&[1, PAINT]), 0);
    }
}
