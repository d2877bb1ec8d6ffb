//! The Linux user-mode services the shell itself uses (through the dsp crate's raw syscalls): memory mappings,
//! files, output lines, the clock and futexes.

use core::fmt::{self, Write};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};
use lpai_direct_skel::platform::linux_user as linux;
use lpai_pd_shell::text::Text;

pub use linux::exit;

/// The system's page size (qemu-hexagon: 64 KiB), from the auxiliary vector.
static PAGE_SIZE: AtomicU32 = AtomicU32::new(4096);

/// The page size [`record_page_size`] found (4096 until then).
pub fn page_size() -> u32 {
    PAGE_SIZE.load(Ordering::Relaxed)
}

/// Finds AT_PAGESZ in the auxiliary vector after the environment on the initial stack.
///
/// # Safety
/// `initial_stack` must be the process's initial stack: argc, the argument pointers, a null, the environment
/// pointers, a null, then the auxiliary vector's (type, value) pairs up to AT_NULL.
pub unsafe fn record_page_size(initial_stack: *const u32) {
    const AT_NULL: u32 = 0;
    const AT_PAGESZ: u32 = 6;
    // SAFETY: the layout the caller promises; every read stays before the AT_NULL entry.
    unsafe {
        let mut word = initial_stack.add(1 + *initial_stack as usize + 1);
        while *word != 0 {
            word = word.add(1);
        }
        word = word.add(1);
        while *word != AT_NULL {
            if *word == AT_PAGESZ && (*word.add(1)).is_power_of_two() {
                PAGE_SIZE.store(*word.add(1), Ordering::Relaxed);
            }
            word = word.add(2);
        }
    }
}

/// `-errno` results of a syscall as a `Result` (the raw errno on failure).
fn checked(result: i32) -> Result<i32, i32> {
    match result {
        -4095..=-1 => Err(-result),
        value => Ok(value),
    }
}

/// An anonymous private read-write mapping, unmapped when dropped.
pub struct Mapping {
    address: NonNull<u8>,
    bytes: usize,
}

impl Mapping {
    /// Maps `bytes` zeroed bytes (at least one page); `Err(errno)` when the kernel refuses.
    pub fn new(bytes: usize) -> Result<Mapping, i32> {
        let length = i32::try_from(bytes.max(1)).map_err(|_| 12)?;
        // SAFETY: an anonymous private mapping at an address of the kernel's choice touches no existing memory.
        let result = unsafe {
            linux::syscall6(linux::SYS_MMAP2, 0, length, linux::PROT_READ_WRITE, linux::MAP_PRIVATE_ANONYMOUS, -1, 0)
        };
        let address = checked(result)?;
        let address = NonNull::new(address as u32 as usize as *mut u8).ok_or(12)?;
        Ok(Mapping { address, bytes: bytes.max(1) })
    }

    /// Takes back ownership of a mapping a [`Mapping`] was forgotten for (`core::mem::forget`).
    ///
    /// # Safety
    /// `address` and `bytes` must be exactly a forgotten mapping's, and nothing may use it afterwards except
    /// through the value answered.
    pub unsafe fn adopt(address: *mut u8, bytes: usize) -> Mapping {
        // A forgotten mapping's address is never null.
        Mapping { address: NonNull::new(address).unwrap_or(NonNull::dangling()), bytes }
    }

    /// The first byte.
    pub fn address(&self) -> *mut u8 {
        self.address.as_ptr()
    }

    /// How many bytes were asked for (at least one).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The whole mapping, to read (only for mappings whose pages all stay readable).
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping is `bytes` readable bytes that this value owns; writes need `&mut self`.
        unsafe { core::slice::from_raw_parts(self.address.as_ptr(), self.bytes) }
    }

    /// The whole mapping.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `bytes` readable and writable bytes that this value owns; `&mut self` makes the
        // borrow exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.address.as_ptr(), self.bytes) }
    }

    /// Gives the pages protection `protection` (PROT_* bits), from `offset` for `bytes`.
    ///
    /// # Safety
    /// No live reference may cover pages that lose read or write access.
    pub unsafe fn protect(&self, offset: usize, bytes: usize, protection: u32) -> Result<(), i32> {
        let end = offset.checked_add(bytes).filter(|&end| end <= self.bytes).ok_or(22)?;
        let start = self.address.as_ptr().wrapping_add(offset);
        // SAFETY: the range lies inside this mapping (checked above); the caller vouches for the references.
        let result =
            unsafe { linux::syscall(linux::SYS_MPROTECT, start as i32, (end - offset) as i32, protection as i32, 0) };
        checked(result).map(drop)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping this value owns; nothing refers to it after the owner is gone.
        unsafe { linux::syscall(linux::SYS_MUNMAP, self.address.as_ptr() as i32, self.bytes as i32, 0, 0) };
    }
}

/// Writes all of `bytes` to `fd`; `Err(errno)` when a write fails.
pub fn write_all(fd: i32, mut bytes: &[u8]) -> Result<(), i32> {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`.
        let written = unsafe { linux::syscall(linux::SYS_WRITE, fd, bytes.as_ptr() as i32, bytes.len() as i32, 0) };
        let written = checked(written)?;
        bytes = bytes.get(written as usize..).ok_or(5)?;
        if written == 0 {
            return Err(5);
        }
    }
    Ok(())
}

/// Reads what `fd` has, up to `buffer.len()` bytes; 0 at the end.
pub fn read(fd: i32, buffer: &mut [u8]) -> Result<usize, i32> {
    let length = buffer.len().min(i32::MAX as usize) as i32;
    // SAFETY: reads at most `length` bytes into `buffer`.
    let read = unsafe { linux::syscall(linux::SYS_READ, fd, buffer.as_mut_ptr() as i32, length, 0) };
    checked(read).map(|read| read as usize)
}

/// Opens the NUL-terminated `path` (relative to the current directory).
pub fn open(path: &[u8], flags: i32, mode: i32) -> Result<i32, i32> {
    if path.last() != Some(&0) {
        return Err(22);
    }
    // SAFETY: the path is NUL-terminated (checked above).
    checked(unsafe { linux::syscall(linux::SYS_OPENAT, linux::AT_FDCWD, path.as_ptr() as i32, flags, mode) })
}

/// The NUL-terminated `path` as a pointer argument; EINVAL without its NUL.
fn path_pointer(path: &[u8]) -> Result<i32, i32> {
    match path.last() {
        Some(0) => Ok(path.as_ptr() as i32),
        _ => Err(22),
    }
}

/// Creates the directory at the NUL-terminated `path` with `mode` (less the umask).
pub fn mkdir(path: &[u8], mode: i32) -> Result<(), i32> {
    let path = path_pointer(path)?;
    // SAFETY: the path is NUL-terminated (checked above).
    checked(unsafe { linux::syscall(linux::SYS_MKDIRAT, linux::AT_FDCWD, path, mode, 0) }).map(drop)
}

/// Renames `old` to `new` (both NUL-terminated), replacing a file at `new`.
pub fn rename(old: &[u8], new: &[u8]) -> Result<(), i32> {
    let (old, new) = (path_pointer(old)?, path_pointer(new)?);
    // SAFETY: both paths are NUL-terminated (checked above).
    checked(unsafe { linux::syscall(linux::SYS_RENAMEAT, linux::AT_FDCWD, old, linux::AT_FDCWD, new) }).map(drop)
}

/// Removes the file at the NUL-terminated `path`, or the directory with `flags` = AT_REMOVEDIR.
pub fn unlink(path: &[u8], flags: i32) -> Result<(), i32> {
    let path = path_pointer(path)?;
    // SAFETY: the path is NUL-terminated (checked above).
    checked(unsafe { linux::syscall(linux::SYS_UNLINKAT, linux::AT_FDCWD, path, flags, 0) }).map(drop)
}

/// Whether anything (file or directory) exists at the NUL-terminated `path`.
pub fn exists(path: &[u8]) -> Result<bool, i32> {
    let path = path_pointer(path)?;
    // SAFETY: the path is NUL-terminated (checked above).
    Ok(checked(unsafe { linux::syscall(linux::SYS_FACCESSAT, linux::AT_FDCWD, path, linux::F_OK, 0) }).is_ok())
}

/// Closes a descriptor.
pub fn close(fd: i32) -> Result<(), i32> {
    // SAFETY: close takes an integer; a wrong one fails with EBADF.
    checked(unsafe { linux::syscall(linux::SYS_CLOSE, fd, 0, 0, 0) }).map(drop)
}

/// Moves `fd`'s position (`_llseek`) and answers the new one.
pub fn seek(fd: i32, offset: i64, whence: i32) -> Result<u64, i32> {
    let mut position = 0u64;
    let (high, low) = ((offset >> 32) as i32, offset as i32);
    // SAFETY: `position` is a live u64 the kernel writes the result into.
    let result = unsafe { linux::syscall5(linux::SYS_LLSEEK, fd, high, low, &mut position as *mut u64 as i32, whence) };
    checked(result).map(|_| position)
}

/// The monotonic clock as (seconds, nanoseconds).
pub fn monotonic() -> (u64, u64) {
    let mut time = [0u32; 2];
    // SAFETY: a 32-bit timespec is two 32-bit words.
    let result =
        unsafe { linux::syscall(linux::SYS_CLOCK_GETTIME, linux::CLOCK_MONOTONIC, time.as_mut_ptr() as i32, 0, 0) };
    match result {
        0 => (u64::from(time[0]), u64::from(time[1])),
        _ => (0, 0),
    }
}

/// Writes one formatted line (cut at 2 KiB) and its newline to `fd` in a single write.
pub fn line(fd: i32, arguments: fmt::Arguments<'_>) {
    let mut text = Text::<2048>::new();
    let _ = text.write_fmt(arguments);
    let mut whole = [0u8; 2049];
    let length = text.as_bytes().len();
    whole[..length].copy_from_slice(text.as_bytes());
    whole[length] = b'\n';
    let _ = write_all(fd, &whole[..=length]);
}

/// One line on stderr.
#[macro_export]
macro_rules! say {
    ($($argument:tt)*) => { $crate::pd::system::line(2, format_args!($($argument)*)) };
}
