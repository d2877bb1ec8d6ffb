//! `apps_std_fopen`, `_flen`, `_fread`, `_fwrite`, `_fclose`, `_frename`, `_fremove`, `_mkdir`, `_fileExists`:
//! the HLOS file system the PD reaches by reverse RPC, here the real file system (relative paths from the shell's
//! current directory). Only descriptors these calls opened are accepted, so a library cannot read, write or close
//! the shell's own stdin and stdout. Errors are the errno, as the HLOS side answers them; a null path is EINVAL
//! where the HLOS side says so (rename, remove, mkdir), else EFAULT (AEE_EBADPARM, the same number). Every call is
//! one event of `--restart-after` (`pd::events`), counted before the call looks at its arguments.

use super::{c_string, EFAULT, EINVAL};
use crate::pd::events;
use crate::pd::loader::{PathBuffer, PATH_BYTES};
use crate::pd::system;
use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicI32, Ordering};
use lpai_direct_skel::platform::linux_user as linux;

/// errno: bad file descriptor.
const EBADF: i32 = 9;
/// errno: too many open files.
const EMFILE: i32 = 24;
/// errno: file name too long.
const ENAMETOOLONG: i32 = 36;
/// Files open at once.
const MAX_FILES: usize = 16;

/// The descriptors `apps_std_fopen` handed out; -1 marks a free slot.
static OPEN: [AtomicI32; MAX_FILES] = [const { AtomicI32::new(-1) }; MAX_FILES];

/// How many files `apps_std_fopen` opened that `apps_std_fclose` has not closed.
pub fn files_open() -> u32 {
    OPEN.iter().filter(|slot| slot.load(Ordering::Relaxed) >= 0).count() as u32
}

fn is_open(file: c_int) -> bool {
    file >= 0 && OPEN.iter().any(|slot| slot.load(Ordering::Relaxed) == file)
}

/// A library's path argument with its NUL, on the shell's stack: `Err(if_null)` for a null pointer, ENAMETOOLONG
/// for a path that does not fit.
///
/// # Safety
/// `name` must be null or NUL-terminated.
unsafe fn path_argument(name: *const c_char, if_null: c_int) -> Result<PathBuffer, c_int> {
    // SAFETY: the caller passes a NUL-terminated string (null is tolerated).
    let Some(name) = (unsafe { c_string(name.cast(), PATH_BYTES) }) else { return Err(if_null) };
    if name.len() >= PATH_BYTES - 1 {
        return Err(ENAMETOOLONG);
    }
    PathBuffer::join(b"", name).ok_or(EINVAL)
}

/// 0 for `Ok`, the errno for `Err`.
fn status(result: Result<(), c_int>) -> c_int {
    result.err().unwrap_or(0)
}

/// `int apps_std_fopen(const char* name, const char* mode, apps_std_FILE* file)`: 0, 2 when the file does not
/// exist, else the errno. Modes "r" and "rb" read; "w" and "wb" create or truncate (0644); "a" and "ab" create
/// (0644) or append to the end.
///
/// # Safety
/// `name` and `mode` must be null or NUL-terminated; `file` null or writable.
pub unsafe extern "C" fn apps_std_fopen(name: *const c_char, mode: *const c_char, file: *mut c_int) -> c_int {
    events::event();
    // SAFETY: the caller passes a NUL-terminated mode (null is tolerated).
    let Some(mode) = (unsafe { c_string(mode.cast(), 16) }) else { return EFAULT };
    if file.is_null() {
        return EFAULT;
    }
    // SAFETY: as for the mode.
    let path = match unsafe { path_argument(name, EFAULT) } {
        Ok(path) => path,
        Err(errno) => return errno,
    };
    let flags = match mode {
        b"r" | b"rb" => linux::O_RDONLY,
        b"w" | b"wb" => linux::O_WRONLY | linux::O_CREAT | linux::O_TRUNC,
        b"a" | b"ab" => linux::O_WRONLY | linux::O_CREAT | linux::O_APPEND,
        _ => return EINVAL,
    };
    let fd = match system::open(path.with_nul(), flags | linux::O_CLOEXEC, 0o644) {
        Ok(fd) => fd,
        Err(errno) => return errno,
    };
    let recorded = OPEN.iter().any(|slot| slot.compare_exchange(-1, fd, Ordering::Relaxed, Ordering::Relaxed).is_ok());
    if !recorded {
        let _ = system::close(fd);
        return EMFILE;
    }
    // SAFETY: a non-null out-pointer from the caller.
    unsafe { file.write(fd) };
    0
}

/// `int apps_std_flen(apps_std_FILE file, uint64_t* length)`: the file's size, its position unchanged.
///
/// # Safety
/// `length` must be null or writable.
pub unsafe extern "C" fn apps_std_flen(file: c_int, length: *mut u64) -> c_int {
    events::event();
    if !is_open(file) {
        return EBADF;
    }
    if length.is_null() {
        return EFAULT;
    }
    let size = system::seek(file, 0, linux::SEEK_CUR).and_then(|position| {
        let end = system::seek(file, 0, linux::SEEK_END)?;
        system::seek(file, position as i64, linux::SEEK_SET).map(|_| end)
    });
    match size {
        Ok(size) => {
            // SAFETY: a non-null out-pointer from the caller.
            unsafe { length.write(size) };
            0
        }
        Err(errno) => errno,
    }
}

/// `int apps_std_fread(apps_std_FILE file, unsigned char* buffer, int length, int* read, int* end)`: reads up
/// to `length` bytes; `*end` is 1 when the file ended before that.
///
/// # Safety
/// `buffer` must be null or hold `length` writable bytes; `read` and `end` null or writable.
pub unsafe extern "C" fn apps_std_fread(
    file: c_int,
    buffer: *mut u8,
    length: c_int,
    read: *mut c_int,
    end: *mut c_int,
) -> c_int {
    events::event();
    if !is_open(file) {
        return EBADF;
    }
    let Ok(length) = usize::try_from(length) else { return EINVAL };
    if read.is_null() || end.is_null() || (buffer.is_null() && length > 0) {
        return EFAULT;
    }
    let mut filled = 0usize;
    let mut ended = false;
    while filled < length {
        // SAFETY: the caller's buffer holds `length` bytes; this reads into the part not filled yet.
        let rest = unsafe { core::slice::from_raw_parts_mut(buffer.add(filled), length - filled) };
        match system::read(file, rest) {
            Ok(0) => {
                ended = true;
                break;
            }
            Ok(count) => filled += count,
            Err(errno) => return errno,
        }
    }
    // SAFETY: non-null out-pointers from the caller.
    unsafe {
        read.write(filled as c_int);
        end.write(c_int::from(ended));
    }
    0
}

/// `int apps_std_fwrite(apps_std_FILE file, const unsigned char* buffer, int length, int* written, int* end)`:
/// writes all `length` bytes (`*written` = `length`, `*end` = 0) or answers the errno.
///
/// # Safety
/// `buffer` must be null or hold `length` readable bytes; `written` and `end` null or writable.
pub unsafe extern "C" fn apps_std_fwrite(
    file: c_int,
    buffer: *const u8,
    length: c_int,
    written: *mut c_int,
    end: *mut c_int,
) -> c_int {
    events::event();
    if !is_open(file) {
        return EBADF;
    }
    let Ok(count) = usize::try_from(length) else { return EINVAL };
    if written.is_null() || end.is_null() || (buffer.is_null() && count > 0) {
        return EFAULT;
    }
    let bytes: &[u8] = match count {
        0 => &[],
        // SAFETY: the caller's buffer holds `length` readable bytes.
        _ => unsafe { core::slice::from_raw_parts(buffer, count) },
    };
    if let Err(errno) = system::write_all(file, bytes) {
        return errno;
    }
    // SAFETY: non-null out-pointers from the caller.
    unsafe {
        written.write(length);
        end.write(0);
    }
    0
}

/// `int apps_std_fclose(apps_std_FILE file)`.
pub extern "C" fn apps_std_fclose(file: c_int) -> c_int {
    events::event();
    let Some(slot) = OPEN.iter().find(|slot| file >= 0 && slot.load(Ordering::Relaxed) == file) else { return EBADF };
    slot.store(-1, Ordering::Relaxed);
    system::close(file).err().unwrap_or(0)
}

/// `int apps_std_frename(const char* oldname, const char* newname)`: renames a file (replacing one at
/// `newname`) or a directory; EINVAL for a null name.
///
/// # Safety
/// `old` and `new` must be null or NUL-terminated.
pub unsafe extern "C" fn apps_std_frename(old: *const c_char, new: *const c_char) -> c_int {
    events::event();
    // SAFETY: the caller passes NUL-terminated strings (null is tolerated).
    let paths = unsafe { path_argument(old, EINVAL).and_then(|old| Ok((old, path_argument(new, EINVAL)?))) };
    status(paths.and_then(|(old, new)| system::rename(old.with_nul(), new.with_nul())))
}

/// `int apps_std_fremove(const char* name)`: removes a file or an empty directory, as C's `remove`; EINVAL for
/// a null name.
///
/// # Safety
/// `name` must be null or NUL-terminated.
pub unsafe extern "C" fn apps_std_fremove(name: *const c_char) -> c_int {
    events::event();
    // SAFETY: the caller passes a NUL-terminated string (null is tolerated).
    let path = unsafe { path_argument(name, EINVAL) };
    status(path.and_then(|path| match system::unlink(path.with_nul(), 0) {
        Err(linux::EISDIR) => system::unlink(path.with_nul(), linux::AT_REMOVEDIR),
        result => result,
    }))
}

/// `int apps_std_mkdir(const char* name, int mode)`: creates a directory (EEXIST when the name exists, ENOENT
/// when its parent does not); EINVAL for a null name.
///
/// # Safety
/// `name` must be null or NUL-terminated.
pub unsafe extern "C" fn apps_std_mkdir(name: *const c_char, mode: c_int) -> c_int {
    events::event();
    // SAFETY: the caller passes a NUL-terminated string (null is tolerated).
    let path = unsafe { path_argument(name, EINVAL) };
    status(path.and_then(|path| system::mkdir(path.with_nul(), mode & 0o7777)))
}

/// `int apps_std_fileExists(const char* path, bool* exists)`: 0 with `*exists` 1 when a file or directory of
/// that name exists, 0 when not (or the path cannot be looked at); EFAULT (AEE_EBADPARM) for a null pointer.
///
/// # Safety
/// `path` must be null or NUL-terminated; `exists` null or one writable byte.
#[allow(non_snake_case)]
pub unsafe extern "C" fn apps_std_fileExists(path: *const c_char, exists: *mut u8) -> c_int {
    events::event();
    // SAFETY: the caller passes a NUL-terminated string (null is tolerated).
    let path = match unsafe { path_argument(path, EFAULT) } {
        Ok(path) => path,
        Err(errno) => return errno,
    };
    if exists.is_null() {
        return EFAULT;
    }
    match system::exists(path.with_nul()) {
        Ok(found) => {
            // SAFETY: a non-null out-pointer from the caller.
            unsafe { exists.write(u8::from(found)) };
            0
        }
        Err(errno) => errno,
    }
}
