//! Hexagon Linux user-mode platform (qemu-hexagon): raw `trap0` syscalls, no libc, no dynamic loader.

use super::{Level, LibraryHandle, Line, Platform, PlatformError, Woken};
use core::arch::asm;
use core::ffi::{c_void, CStr};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};
use lpai_direct::temporary::Token;

// The process entry of a static qemu-hexagon program: align the stack and call the program's
// `extern "C" fn lpai_program_main(initial_stack: *const u32) -> !` (the self-test, the bench and the PD shell
// each define one; the initial stack holds argc, then the argv pointers). A program that needs no arguments
// may declare no parameter.
core::arch::global_asm!(
    ".globl _start",
    ".type _start, @function",
    "_start:",
    "  r0 = r29",
    "  r29 = and(r29, #-8)",
    "  call lpai_program_main",
);

/// The qemu-hexagon implementation of [`Platform`].
pub struct LinuxUser;

/// The vendor-calls lock as a futex word: 0 free, 1 held, 2 held with sleepers.
static VENDOR_FUTEX: AtomicU32 = AtomicU32::new(0);

// Linux syscall numbers and constants of the generic (asm-generic) table qemu-hexagon implements. Public, with
// the syscall wrappers below, for the other qemu programs (the PD shell) that need more services than the
// platform layer offers.
/// `mkdirat(dirfd, path, mode)`.
pub const SYS_MKDIRAT: u32 = 34;
/// `unlinkat(dirfd, path, flags)`.
pub const SYS_UNLINKAT: u32 = 35;
/// `renameat(old dirfd, old path, new dirfd, new path)` (Hexagon keeps it beside `renameat2`).
pub const SYS_RENAMEAT: u32 = 38;
/// `faccessat(dirfd, path, mode)`.
pub const SYS_FACCESSAT: u32 = 48;
/// `openat(dirfd, path, flags, mode)`.
pub const SYS_OPENAT: u32 = 56;
/// `close(fd)`.
pub const SYS_CLOSE: u32 = 57;
/// `_llseek` on 32-bit Linux: (fd, offset high, offset low, *result, whence).
pub const SYS_LLSEEK: u32 = 62;
/// `read(fd, buffer, length)`.
pub const SYS_READ: u32 = 63;
/// `write(fd, buffer, length)`.
pub const SYS_WRITE: u32 = 64;
/// `exit_group(status)`.
pub const SYS_EXIT_GROUP: u32 = 94;
/// `futex(word, operation, value, timeout)`.
pub const SYS_FUTEX: u32 = 98;
/// Futex operation: sleep while the word holds the value (process-private).
pub const FUTEX_WAIT_PRIVATE: i32 = 128;
/// Futex operation: wake up to `value` sleepers (process-private).
pub const FUTEX_WAKE_PRIVATE: i32 = 129;
/// `clock_gettime(clock, *timespec)` with a 32-bit `timespec` (two `i32` words).
pub const SYS_CLOCK_GETTIME: u32 = 113;
/// `munmap(address, length)`.
pub const SYS_MUNMAP: u32 = 215;
/// `mmap2`: the offset is counted in 4096-byte pages.
pub const SYS_MMAP2: u32 = 222;
/// `mprotect(address, length, protection)`.
pub const SYS_MPROTECT: u32 = 226;
/// Page protection bits of `mmap2` and `mprotect`.
pub const PROT_READ: i32 = 1;
/// See [`PROT_READ`].
pub const PROT_WRITE: i32 = 2;
/// See [`PROT_READ`].
pub const PROT_EXEC: i32 = 4;
/// Readable and writable pages.
pub const PROT_READ_WRITE: i32 = PROT_READ | PROT_WRITE;
/// `MAP_PRIVATE | MAP_ANONYMOUS`.
pub const MAP_PRIVATE_ANONYMOUS: i32 = 0x22;
/// `openat`'s directory argument for paths relative to the current directory.
pub const AT_FDCWD: i32 = -100;
/// `openat` flags: read only.
pub const O_RDONLY: i32 = 0;
/// `openat` flags: write only.
pub const O_WRONLY: i32 = 1;
/// `openat` flags: create the file if it does not exist.
pub const O_CREAT: i32 = 0o100;
/// `openat` flags: truncate an existing file.
pub const O_TRUNC: i32 = 0o1000;
/// `openat` flags: every write goes to the end of the file.
pub const O_APPEND: i32 = 0o2000;
/// `openat` flags: close the descriptor on `execve`.
pub const O_CLOEXEC: i32 = 0o2000000;
/// `openat` flags: fail unless the path is a directory.
pub const O_DIRECTORY: i32 = 0o200000;
/// `unlinkat` flags: remove a directory (an empty one) instead of a file.
pub const AT_REMOVEDIR: i32 = 0x200;
/// `faccessat` mode: whether the path exists at all.
pub const F_OK: i32 = 0;
/// errno: no such file or directory.
pub const ENOENT: i32 = 2;
/// errno: input/output error (also: a write that wrote nothing).
pub const EIO: i32 = 5;
/// errno: the name exists already.
pub const EEXIST: i32 = 17;
/// errno: the path is a directory.
pub const EISDIR: i32 = 21;
/// `_llseek` whence: from the start.
pub const SEEK_SET: i32 = 0;
/// `_llseek` whence: from the current position.
pub const SEEK_CUR: i32 = 1;
/// `_llseek` whence: from the end.
pub const SEEK_END: i32 = 2;
/// `clock_gettime`'s monotonic clock.
pub const CLOCK_MONOTONIC: i32 = 1;

/// Issues a Linux syscall with up to six arguments; returns the result, `-errno` on failure.
///
/// # Safety
/// As for [`syscall5`].
pub unsafe fn syscall6(number: u32, a0: i32, a1: i32, a2: i32, a3: i32, a4: i32, a5: i32) -> i32 {
    let result: i32;
    // SAFETY: as in `syscall5`.
    unsafe {
        asm!("trap0(#1)", in("r6") number, inlateout("r0") a0 => result, in("r1") a1, in("r2") a2, in("r3") a3,
             in("r4") a4, in("r5") a5, options(nostack));
    }
    result
}

/// Issues a Linux syscall with up to five arguments; returns the result, `-errno` on failure.
///
/// # Safety
/// The arguments must be valid for the syscall `number` (pointers to live memory of the right size).
pub unsafe fn syscall5(number: u32, a0: i32, a1: i32, a2: i32, a3: i32, a4: i32) -> i32 {
    let result: i32;
    // SAFETY: trap0(#1) is the Linux syscall gate under qemu-hexagon; the caller vouches for the arguments.
    unsafe {
        asm!("trap0(#1)", in("r6") number, inlateout("r0") a0 => result, in("r1") a1, in("r2") a2, in("r3") a3,
             in("r4") a4, options(nostack));
    }
    result
}

/// Issues a Linux syscall with up to four arguments; returns the result, `-errno` on failure.
///
/// # Safety
/// As for [`syscall5`].
pub unsafe fn syscall(number: u32, a0: i32, a1: i32, a2: i32, a3: i32) -> i32 {
    // SAFETY: the caller vouches for the arguments.
    unsafe { syscall5(number, a0, a1, a2, a3, 0) }
}

/// Writes bytes to a file descriptor, retrying short writes.
pub fn write_all(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`.
        let written = unsafe { syscall(SYS_WRITE, fd, bytes.as_ptr() as i32, bytes.len() as i32, 0) };
        if written <= 0 {
            return;
        }
        bytes = bytes.get(written as usize..).unwrap_or(&[]);
    }
}

/// Takes a futex lock word (0 free, 1 held, 2 held with sleepers), sleeping in the kernel while another thread
/// holds it: it never spins.
pub fn futex_lock(word: &AtomicU32) {
    if word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok() {
        return;
    }
    // Contended: mark sleepers and sleep until the holder wakes us.
    while word.swap(2, Ordering::Acquire) != 0 {
        // SAFETY: FUTEX_WAIT on a live word; returns at once if the word no longer holds 2.
        unsafe { syscall(SYS_FUTEX, word.as_ptr() as i32, FUTEX_WAIT_PRIVATE, 2, 0) };
    }
}

/// Releases a lock word taken with [`futex_lock`], waking one sleeper if there is one.
pub fn futex_unlock(word: &AtomicU32) {
    if word.swap(0, Ordering::Release) == 2 {
        // SAFETY: FUTEX_WAKE of one sleeper on a live word.
        unsafe { syscall(SYS_FUTEX, word.as_ptr() as i32, FUTEX_WAKE_PRIVATE, 1, 0) };
    }
}

/// Ends the process with `status`.
pub fn exit(status: i32) -> ! {
    loop {
        // SAFETY: exit_group takes one integer and does not return.
        unsafe { syscall(SYS_EXIT_GROUP, status, 0, 0, 0) };
    }
}

/// A syscall's `-errno` result as a [`PlatformError`] (ENOENT is `NotFound`), any other result as `Ok`.
fn checked(result: i32) -> Result<i32, PlatformError> {
    match result {
        result if result == -ENOENT => Err(PlatformError::NotFound),
        -4095..=-1 => Err(PlatformError::Failed(-result)),
        result => Ok(result),
    }
}

struct File(i32);

impl File {
    fn open(path: &CStr) -> Result<File, PlatformError> {
        File::open_with(path, O_RDONLY | O_CLOEXEC, 0)
    }

    fn open_with(path: &CStr, flags: i32, mode: i32) -> Result<File, PlatformError> {
        // SAFETY: the path is NUL-terminated.
        checked(unsafe { syscall(SYS_OPENAT, AT_FDCWD, path.as_ptr() as i32, flags, mode) }).map(File)
    }

    fn write_all(&self, mut bytes: &[u8]) -> Result<(), PlatformError> {
        while !bytes.is_empty() {
            let length = i32::try_from(bytes.len()).unwrap_or(i32::MAX);
            // SAFETY: writes at most `length` bytes of `bytes`.
            let written = checked(unsafe { syscall(SYS_WRITE, self.0, bytes.as_ptr() as i32, length, 0) })?;
            let written = usize::try_from(written).ok().filter(|&written| written > 0);
            bytes = written.and_then(|written| bytes.get(written..)).ok_or(PlatformError::Failed(EIO))?;
        }
        Ok(())
    }

    /// Closes the descriptor, answering what `close` says (a late write error shows here).
    fn close(self) -> Result<(), PlatformError> {
        let fd = self.0;
        core::mem::forget(self);
        // SAFETY: closes the descriptor this value owned; `forget` keeps `drop` from closing it again.
        checked(unsafe { syscall(SYS_CLOSE, fd, 0, 0, 0) }).map(drop)
    }

    fn size(&self) -> Result<u64, PlatformError> {
        let mut end = 0u64;
        let mut start = 0u64;
        // SAFETY: _llseek on an open descriptor, writing the 64-bit position into `end`.
        let to_end = unsafe { syscall5(SYS_LLSEEK, self.0, 0, 0, &mut end as *mut u64 as i32, SEEK_END) };
        // SAFETY: as above, back to the start.
        let to_start = unsafe { syscall5(SYS_LLSEEK, self.0, 0, 0, &mut start as *mut u64 as i32, SEEK_SET) };
        if to_end < 0 || to_start < 0 {
            return Err(PlatformError::Failed(-to_end.min(to_start)));
        }
        Ok(end)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: closes the descriptor this value owns.
        unsafe { syscall(SYS_CLOSE, self.0, 0, 0, 0) };
    }
}

impl Platform for LinuxUser {
    const TICKS_PER_SECOND: u64 = 1_000_000_000;

    fn now_ticks() -> u64 {
        let mut time = [0i32; 2];
        // SAFETY: a 32-bit timespec is two i32 words.
        let result = unsafe { syscall(SYS_CLOCK_GETTIME, CLOCK_MONOTONIC, time.as_mut_ptr() as i32, 0, 0) };
        if result != 0 {
            return 0;
        }
        (time[0] as u32 as u64) * 1_000_000_000 + time[1] as u32 as u64
    }

    fn log(level: Level, line: &Line) {
        write_all(2, b"lpai-direct[");
        write_all(2, level.name().as_bytes());
        write_all(2, b"]: ");
        // The qemu programs are tests and tools, never a device artifact: they carry the table and render.
        write_all(2, line.rendered().as_str().as_bytes());
        write_all(2, b"\n");
    }

    fn file_size(path: &CStr) -> Result<u64, PlatformError> {
        File::open(path)?.size()
    }

    fn read_file(path: &CStr, buffer: &mut [u8]) -> Result<usize, PlatformError> {
        let file = File::open(path)?;
        super::read_whole(file.size()?, buffer, |rest| {
            // SAFETY: reads at most `rest.len()` bytes into `rest`.
            let read = unsafe { syscall(SYS_READ, file.0, rest.as_mut_ptr() as i32, rest.len() as i32, 0) };
            if read < 0 {
                return Err(PlatformError::Failed(-read));
            }
            Ok(read as usize)
        })
    }

    fn create_directory(path: &CStr) -> Result<(), PlatformError> {
        super::check_path_length(path)?;
        // SAFETY: the path is NUL-terminated.
        match checked(unsafe { syscall(SYS_MKDIRAT, AT_FDCWD, path.as_ptr() as i32, 0o755, 0) }) {
            Err(PlatformError::Failed(EEXIST)) => {
                // Fine when what exists is a directory.
                let directory = File::open_with(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
                directory.map_err(|_| PlatformError::Failed(EEXIST))?.close()
            }
            result => result.map(drop),
        }
    }

    fn write_file(path: &CStr, token: &Token, bytes: &[u8]) -> Result<(), PlatformError> {
        super::write_through_partial(
            path,
            token,
            bytes,
            |partial, bytes| {
                let file = File::open_with(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)?;
                let written = file.write_all(bytes);
                let closed = file.close();
                written.and(closed)
            },
            |partial, path| {
                // SAFETY: both paths are NUL-terminated.
                let result =
                    unsafe { syscall(SYS_RENAMEAT, AT_FDCWD, partial.as_ptr() as i32, AT_FDCWD, path.as_ptr() as i32) };
                checked(result).map(drop)
            },
            |partial| {
                // SAFETY: the path is NUL-terminated.
                unsafe { syscall(SYS_UNLINKAT, AT_FDCWD, partial.as_ptr() as i32, 0, 0) };
            },
        )
    }

    fn append_file(path: &CStr, bytes: &[u8]) -> Result<(), PlatformError> {
        super::check_path_length(path)?;
        let file = File::open_with(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)?;
        let written = file.write_all(bytes);
        let closed = file.close();
        written.and(closed)
    }

    fn open_library(_path: &CStr) -> Result<LibraryHandle, PlatformError> {
        Err(PlatformError::Unsupported)
    }

    fn find_symbol(_library: &LibraryHandle, _name: &CStr) -> Option<NonNull<c_void>> {
        None
    }

    unsafe fn close_library(_library: &LibraryHandle) {}

    fn allocate(bytes: usize) -> Result<NonNull<u8>, PlatformError> {
        let length = i32::try_from(bytes.max(1)).map_err(|_| PlatformError::Failed(12))?;
        // SAFETY: an anonymous private mapping touches no existing memory.
        let address = unsafe { syscall6(SYS_MMAP2, 0, length, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0) };
        if (-4095..0).contains(&address) {
            return Err(PlatformError::Failed(-address));
        }
        NonNull::new(address as usize as *mut u8).ok_or(PlatformError::Failed(12))
    }

    fn lock_vendor_calls() {
        futex_lock(&VENDOR_FUTEX);
    }

    unsafe fn unlock_vendor_calls() {
        futex_unlock(&VENDOR_FUTEX);
    }

    /// A word, 1 when set: a qemu program has one thread, so a backend notifies inside the call it was given.
    type Signal = AtomicU32;

    unsafe fn signal_init(signal: *mut AtomicU32) {
        // SAFETY: the caller's promise: valid and aligned.
        unsafe { signal.write(AtomicU32::new(0)) };
    }

    fn signal_set(signal: &AtomicU32) {
        signal.store(1, Ordering::Release);
    }

    fn signal_wait(signal: &AtomicU32, _micros: u64) -> Result<Woken, PlatformError> {
        if signal.swap(0, Ordering::Acquire) == 1 {
            return Ok(Woken::Set);
        }
        LinuxUser::log(
            Level::Error,
            &Line::of(
                "completion signal: waiting for a signal nobody set; this program has one thread, so it would never \
                 be set (a backend must notify inside graphExecuteAsync here): a bug, refused instead of hanging",
            ),
        );
        Err(PlatformError::Unsupported)
    }

    unsafe fn release(memory: NonNull<u8>, bytes: usize) {
        // SAFETY: the caller passes back exactly the mapping `allocate` made.
        unsafe { syscall(SYS_MUNMAP, memory.as_ptr() as i32, bytes.max(1) as i32, 0, 0) };
    }
}

/// Under qemu a panic prints its message and ends the process with status 101.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let mut line = heapless::String::<256>::new();
    let _ = core::fmt::Write::write_fmt(&mut line, format_args!("panic: {info}"));
    LinuxUser::log(Level::Error, &Line::of(line.as_str()));
    exit(101)
}
