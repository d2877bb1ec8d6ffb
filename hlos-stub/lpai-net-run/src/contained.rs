//! Running vendor code that may crash on bad input in a child process of its own: the child is forked after the
//! vendor library was loaded (so it only calls functions already resolved, no `dlopen`), does the work, sends its
//! answer back through a pipe as JSON and exits; the parent reports a child killed by a signal, one that exits
//! without an answer, or one that runs past a time limit (it is then killed), instead of dying with it.

use anyhow::{anyhow, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::Read as _;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::time::{Duration, Instant};

/// How contained work ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome<T> {
    /// The child answered this.
    Answered(T),
    /// The child was killed by this signal.
    Crashed(i32),
    /// The child ran past the time limit and was killed.
    TimedOut(Duration),
    /// The child exited with this status and no answer.
    Exited(i32),
    /// The child could not be started or waited for, or its answer could not be read: why.
    Broken(String),
}

/// Runs `work` in a forked child, at most `time_limit`, and answers how it ended.
///
/// # Safety
/// The child has only the thread that forked it: a lock another thread of this process held at the fork stays
/// held there for good, over state that may be half-changed, and taking it deadlocks the child or reads that state
/// (undefined behaviour). POSIX allows only async-signal-safe calls in the child of a multi-threaded process; the
/// child here runs `work`, then allocates to encode its answer and writes it. The C library's own fork handlers take
/// the allocator's and stdio's locks around the fork (glibc, musl and bionic do), so those are free in the child;
/// every other lock `work` takes (the vendor library's own, above all) must be one no other thread can hold when
/// this function forks. The caller must see to it, most simply by calling it before the process starts any thread
/// (a transport that starts threads, the qemu one, is created after the reads that use this).
pub(crate) unsafe fn run<T: Serialize + DeserializeOwned>(
    time_limit: Duration,
    work: impl FnOnce() -> T,
) -> Outcome<T> {
    let mut ends = [0i32; 2];
    // SAFETY: a valid out-array of two descriptors.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Outcome::Broken(format!("cannot create a pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned here only.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
    // SAFETY: the caller's promise: no other thread holds a lock the child takes; the child below only runs
    // `work`, encodes and writes its answer and `_exit`s.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Outcome::Broken(format!("cannot fork: {}", std::io::Error::last_os_error()));
    }
    if child == 0 {
        drop(reader);
        let answer = serde_json::to_vec(&work()).unwrap_or_default();
        let mut file = std::fs::File::from(writer);
        let written = std::io::Write::write_all(&mut file, &answer).is_ok();
        // SAFETY: ends the child without running the parent's exit handlers or destructors.
        unsafe { libc::_exit(if written { 0 } else { 1 }) };
    }
    drop(writer);
    let read = read_until(reader, time_limit);
    let timed_out = read.as_ref().is_ok_and(Option::is_none);
    if timed_out {
        // SAFETY: our own child, not yet reaped.
        unsafe { libc::kill(child, libc::SIGKILL) };
    }
    let mut status = 0;
    // SAFETY: our own child and a valid out-pointer.
    while unsafe { libc::waitpid(child, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Outcome::Broken(format!("cannot wait for the child process: {}", std::io::Error::last_os_error()));
        }
    }
    if timed_out {
        return Outcome::TimedOut(time_limit);
    }
    if libc::WIFSIGNALED(status) {
        return Outcome::Crashed(libc::WTERMSIG(status));
    }
    let bytes = match read {
        Ok(bytes) => bytes.unwrap_or_default(),
        Err(error) => return Outcome::Broken(format!("{error:#}")),
    };
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    if code != 0 || bytes.is_empty() {
        return Outcome::Exited(code);
    }
    match serde_json::from_slice(&bytes) {
        Ok(answer) => Outcome::Answered(answer),
        Err(error) => Outcome::Broken(format!("the child process answered garbage: {error}")),
    }
}

/// Reads the pipe to its end; `None` when the time limit passed first.
fn read_until(reader: OwnedFd, time_limit: Duration) -> Result<Option<Vec<u8>>> {
    let deadline = Instant::now() + time_limit;
    let descriptor = reader.as_raw_fd();
    let mut file = std::fs::File::from(reader);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        let mut poll = libc::pollfd { fd: descriptor, events: libc::POLLIN, revents: 0 };
        let milliseconds = i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1);
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, milliseconds) };
        if ready < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(anyhow!("cannot wait for the child process's answer: {error}"));
        }
        if ready == 0 {
            continue;
        }
        match file.read(&mut chunk) {
            Ok(0) => return Ok(Some(bytes)),
            Ok(count) => bytes.extend_from_slice(&chunk[..count]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(anyhow!("cannot read the child process's answer: {error}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_secs(20);

    /// [`run`] from a test: the harness runs other tests on other threads, but these children only allocate, sleep
    /// and write, and the C library's fork handlers leave the allocator's and stdio's locks free in them.
    fn contained<T: Serialize + DeserializeOwned>(time_limit: Duration, work: impl FnOnce() -> T) -> Outcome<T> {
        // SAFETY: as said above: no lock another thread may hold is taken in the child.
        unsafe { run(time_limit, work) }
    }

    #[test]
    fn an_answer_comes_back_and_an_error_too() {
        assert_eq!(contained(LIMIT, || Ok::<_, String>(vec![1u8, 2, 3])), Outcome::Answered(Ok(vec![1, 2, 3])));
        assert_eq!(contained(LIMIT, || Err::<u32, _>("no".to_string())), Outcome::Answered(Err("no".to_string())));
        let big = vec![7u8; 300_000];
        assert_eq!(contained(LIMIT, || big.clone()), Outcome::Answered(big));
    }

    #[test]
    fn a_crash_a_silent_exit_and_a_hang_are_reported_not_shared() {
        let crashed = contained::<u32>(LIMIT, || {
            let nowhere = std::hint::black_box(std::ptr::null_mut::<u8>());
            // SAFETY: none: this (child) process faults on purpose, as a vendor reader does on a corrupt binary.
            unsafe { nowhere.write_volatile(1) };
            0
        });
        assert_eq!(crashed, Outcome::Crashed(libc::SIGSEGV));
        let exited = contained::<u32>(LIMIT, || {
            // SAFETY: ends this (child) process at once.
            unsafe { libc::_exit(3) }
        });
        assert_eq!(exited, Outcome::Exited(3));
        let short = Duration::from_millis(200);
        let hung = contained::<u32>(short, || loop {
            std::thread::sleep(Duration::from_secs(1));
        });
        assert_eq!(hung, Outcome::TimedOut(short));
    }
}
