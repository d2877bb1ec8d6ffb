//! Self-tests of the platform layer: file services and their errors, the clock, log lines, memory, the vendor-calls
//! lock and tick conversion, on whichever platform the build has (host, qemu's Linux user mode).

use crate::platform::PARTIAL_PATH_BYTES;
use crate::platform::{partial_name, ticks_to_micros, Current, Hex, Line, Message, QnnError};
use crate::platform::{Platform, PlatformError, VendorCalls, LOG_LINE_BYTES, MAX_PATH_BYTES, NAME_TOO_LONG};
use core::ffi::CStr;
use lpai_direct::temporary::Token;

/// The token the file self-tests write under: its temporary names end `.0000beef.partial`.
const TOKEN: Token = Token::of(0xbeef);

/// 300 characters, longer than a log line.
const LONG_TEXT: &str = concat!(
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789",
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789",
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
);

/// A path the file self-tests use, NUL-terminated (see [`test_path`]).
type TestPath = heapless::Vec<u8, 600>;

/// `parts` joined and NUL-terminated (cut at 599 bytes, which no test path reaches by accident).
fn test_path(parts: &[&[u8]]) -> TestPath {
    let mut path = TestPath::new();
    for part in parts {
        for byte in part.iter() {
            if path.len() + 1 < path.capacity() {
                let _ = path.push(*byte);
            }
        }
    }
    let _ = path.push(0);
    path
}

/// The path as a C string (empty when it holds a NUL of its own).
fn c_path(path: &TestPath) -> &CStr {
    CStr::from_bytes_with_nul(path).unwrap_or(c"")
}

/// A directory name under `/tmp` no other process uses: the monotonic clock and the address of this call's frame.
fn fresh_test_directory() -> heapless::String<512> {
    let marker = 0u8;
    let address = core::ptr::addr_of!(marker) as usize;
    super::text(format_args!("/tmp/lpai-direct-platform-{}-{address}", Current::now_ticks()))
}

/// Removes a file or an empty directory a self-test made. Not a platform service (only the tests need it): std
/// on the host, a raw `unlinkat` under qemu.
fn remove_test_entry(path: &CStr) {
    #[cfg(not(target_arch = "hexagon"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
        let _ = std::fs::remove_file(path).or_else(|_| std::fs::remove_dir(path));
    }
    #[cfg(all(target_arch = "hexagon", feature = "linux-user"))]
    {
        use crate::platform::linux_user::{syscall, AT_FDCWD, AT_REMOVEDIR, SYS_UNLINKAT};
        for flags in [0, AT_REMOVEDIR] {
            // SAFETY: the path is NUL-terminated.
            if unsafe { syscall(SYS_UNLINKAT, AT_FDCWD, path.as_ptr() as i32, flags, 0) } == 0 {
                break;
            }
        }
    }
    #[cfg(all(target_arch = "hexagon", not(feature = "linux-user")))]
    let _ = path;
}

crate::self_tests! {
    fn file_service_errors_say_what_they_mean() {
        let full = crate::message!(PlatformError::Failed(28)).rendered();
        check!(full.as_str() == "failed with platform error 28 (no space left on device)");
        let too_large = crate::message!(PlatformError::Failed(27)).rendered();
        check!(too_large.as_str() == "failed with platform error 27 (file too large)");
        let unknown = crate::message!(PlatformError::Failed(4242)).rendered();
        check!(unknown.as_str() == "failed with platform error 4242");
    }

    fn monotonic_clock_moves_forward() {
        let first = Current::now_ticks();
        let mut later = first;
        for _ in 0..1_000_000 {
            later = Current::now_ticks();
            if later > first {
                break;
            }
        }
        check!(later > first);
        check!(Current::TICKS_PER_SECOND >= 1_000_000);
    }

    fn reads_a_whole_file_and_reports_its_size() {
        let path = c"/proc/self/exe";
        let size = Current::file_size(path);
        check!(matches!(size, Ok(n) if n > 4));
        let mut head = [0u8; 4];
        check!(Current::read_file(path, &mut head) == Err(PlatformError::TooLarge { needed: size.unwrap_or(0) }));
        check!(Current::read_file(c"/no/such/file", &mut head) == Err(PlatformError::NotFound));
    }

    fn files_are_written_whole_into_new_directories() {
        let directory = fresh_test_directory();
        let directory = directory.as_str().as_bytes();
        let (top, file) = (test_path(&[directory]), test_path(&[directory, b"/out.raw"]));
        let partial = test_path(&[directory, b"/out.raw.0000beef.partial"]);
        let (missing_directory, missing) = (test_path(&[directory, b"/missing"]), test_path(&[directory, b"/missing/out.raw"]));
        let missing_partial = test_path(&[directory, b"/missing/out.raw.0000beef.partial"]);
        let deeper = test_path(&[directory, b"/missing/deeper"]);
        let (top, file, partial) = (c_path(&top), c_path(&file), c_path(&partial));
        let (missing_directory, missing, missing_partial) =
            (c_path(&missing_directory), c_path(&missing), c_path(&missing_partial));

        check!(Current::create_directory(top) == Ok(()));
        check!(Current::create_directory(top) == Ok(()));
        let mut read = [0u8; 64];
        let first: &[u8] = b"the first content, the longer one";
        check!(Current::write_file(file, &TOKEN, first) == Ok(()));
        check!(Current::file_size(file) == Ok(first.len() as u64));
        check!(Current::read_file(file, &mut read).ok().and_then(|length| read.get(..length)) == Some(first));
        check!(Current::write_file(file, &TOKEN, b"short") == Ok(()));
        check!(Current::read_file(file, &mut read).ok().and_then(|length| read.get(..length)) == Some(&b"short"[..]));
        check!(Current::file_size(partial) == Err(PlatformError::NotFound));
        check!(Current::write_file(file, &TOKEN, b"") == Ok(()));
        check!(Current::file_size(file) == Ok(0));

        // A rename that fails (a directory is in the way) removes the partial file and leaves the directory.
        let (taken, inside) = (test_path(&[directory, b"/taken"]), test_path(&[directory, b"/taken/inside.raw"]));
        let taken_partial = test_path(&[directory, b"/taken.0000beef.partial"]);
        let (taken, inside, taken_partial) = (c_path(&taken), c_path(&inside), c_path(&taken_partial));
        check!(Current::create_directory(taken) == Ok(()));
        check!(Current::write_file(inside, &TOKEN, b"kept") == Ok(()));
        check!(matches!(Current::write_file(taken, &TOKEN, b"refused"), Err(PlatformError::Failed(_))));
        check!(Current::file_size(taken_partial) == Err(PlatformError::NotFound));
        check!(Current::file_size(inside) == Ok(4));
        // A file is in the way of a directory.
        check!(Current::create_directory(file).is_err());

        check!(Current::write_file(missing, &TOKEN, b"lost") == Err(PlatformError::NotFound));
        check!(Current::append_file(missing, b"lost") == Err(PlatformError::NotFound));
        check!(Current::file_size(missing) == Err(PlatformError::NotFound));
        check!(Current::file_size(missing_partial) == Err(PlatformError::NotFound));
        check!(Current::file_size(missing_directory) == Err(PlatformError::NotFound));
        check!(Current::create_directory(c_path(&deeper)) == Err(PlatformError::NotFound));

        // Appending creates the file, then adds to its end; each append is closed before it answers.
        let record = test_path(&[directory, b"/record.bin"]);
        let record = c_path(&record);
        check!(Current::append_file(record, b"first ") == Ok(()));
        check!(Current::append_file(record, b"") == Ok(()));
        check!(Current::append_file(record, b"second") == Ok(()));
        let appended = Current::read_file(record, &mut read).ok().and_then(|length| read.get(..length));
        check!(appended == Some(&b"first second"[..]));
        check!(Current::append_file(top, b"refused").is_err());

        for entry in [record, inside, taken, file, top] {
            remove_test_entry(entry);
        }
        check!(Current::file_size(top) == Err(PlatformError::NotFound));
    }

    fn paths_longer_than_the_limit_are_refused() {
        let directory = fresh_test_directory();
        let directory = directory.as_str().as_bytes();
        let top = test_path(&[directory]);
        let top = c_path(&top);
        check!(Current::create_directory(top) == Ok(()));
        // `<directory>/./././.../f` (or `ff`): exactly MAX_PATH_BYTES with its NUL, each component short.
        let mut longest = TestPath::new();
        let _ = longest.extend_from_slice(directory);
        let _ = longest.push(b'/');
        while (MAX_PATH_BYTES - 1).saturating_sub(longest.len()) > 2 {
            let _ = longest.extend_from_slice(b"./");
        }
        while longest.len() < MAX_PATH_BYTES - 1 {
            let _ = longest.push(b'f');
        }
        let _ = longest.push(0);
        check!(longest.len() == MAX_PATH_BYTES);
        let longest_path = c_path(&longest);
        check!(Current::write_file(longest_path, &TOKEN, b"fits") == Ok(()));
        check!(Current::file_size(longest_path) == Ok(4));
        remove_test_entry(longest_path);

        // One byte more (the name `fg` or `ffg`): refused before any file is made.
        let mut too_long = longest.clone();
        let _ = too_long.pop();
        let _ = too_long.extend_from_slice(b"g\0");
        check!(too_long.len() == MAX_PATH_BYTES + 1);
        let too_long = c_path(&too_long);
        check!(Current::write_file(too_long, &TOKEN, b"refused") == Err(NAME_TOO_LONG));
        check!(Current::create_directory(too_long) == Err(NAME_TOO_LONG));
        let mut buffer = [0u8; PARTIAL_PATH_BYTES];
        check!(Current::append_file(too_long, b"refused") == Err(NAME_TOO_LONG));
        check!(partial_name(too_long, &TOKEN, &mut buffer) == Err(NAME_TOO_LONG));
        let longest_partial = partial_name(longest_path, &TOKEN, &mut buffer).ok().map(CStr::to_bytes);
        let whole = |name: &[u8]| name.len() == PARTIAL_PATH_BYTES - 1 && name.ends_with(b"f.0000beef.partial");
        check!(longest_partial.is_some_and(whole));
        check!(Current::file_size(too_long) == Err(PlatformError::NotFound));
        remove_test_entry(top);
        check!(Current::file_size(top) == Err(PlatformError::NotFound));
    }

    fn a_message_is_a_record_of_its_id_and_values_and_renders_in_its_words() {
        let line = crate::message!(Message::QnnCallFailed, "graphExecute", QnnError(6038), 6038u32);
        // MESSAGE, the id, TEXT (12 bytes), QNN_ERROR (two LEB128 bytes), UNSIGNED (two), END: no words.
        check!(line.record().len() == 1 + 3 + 14 + 3 + 3 + 1);
        check!(line.rendered().as_str() == "graphExecute failed: QNN_GRAPH_ERROR_EARLY_TERMINATION (6038)");
        let numbers = crate::message!(Message::Dotted, u64::MAX, i64::MIN, -7i32).rendered();
        check!(numbers.as_str() == "18446744073709551615.-9223372036854775808.-7");
        let hex = crate::message!(Message::Dotted, Hex::padded(0x408u32, 4), Hex::of(0u32), true).rendered();
        check!(hex.as_str() == "0x0408.0x0.true");
    }

    fn a_line_too_long_for_its_record_is_cut_and_renders_with_dots() {
        let long = crate::message!(Message::StepFailed, LONG_TEXT, LONG_TEXT);
        check!(long.record().len() <= LOG_LINE_BYTES);
        let text = long.rendered();
        check!(text.as_str().len() <= LOG_LINE_BYTES && text.as_str().ends_with("..."));
        // Text that must be cut keeps whole characters: a two-byte character at the edge is left out whole.
        let mut cut = Line::new();
        cut.text(LONG_TEXT.get(..LOG_LINE_BYTES - 6).unwrap_or(""));
        cut.text("é");
        let rendered = cut.rendered();
        check!(rendered.as_str().ends_with("...") && !rendered.as_str().contains('é'));
        crate::say!(&mut cut, Message::Dotted, 1u32, 2u32, 3u32);
        check!(cut.record().len() <= LOG_LINE_BYTES);
    }

    fn memory_can_be_reserved_written_and_returned() {
        let memory = Current::allocate(1 << 16);
        check!(memory.is_ok());
        if let Ok(memory) = memory {
            check!((memory.as_ptr() as usize).is_multiple_of(8));
            // SAFETY: the allocation holds 1 << 16 bytes.
            unsafe { memory.as_ptr().add((1 << 16) - 1).write(7) };
            // SAFETY: exactly what allocate gave; unused afterwards.
            unsafe { Current::release(memory, 1 << 16) };
        }
    }

    fn vendor_calls_lock_can_be_taken_again_after_release() {
        drop(VendorCalls::lock());
        let again = VendorCalls::lock();
        drop(again);
    }

    fn ticks_convert_to_micros_without_overflow() {
        check!(ticks_to_micros(0) == 0);
        check!(ticks_to_micros(Current::TICKS_PER_SECOND) == 1_000_000);
        check!(ticks_to_micros(u64::MAX) > 0);
        // Exactly floor(ticks × 10^6 / ticks per second), as the 128-bit product gives it.
        let mut ticks = 1u64;
        while ticks < u64::MAX / 3 {
            for probe in [ticks - 1, ticks, ticks + 1, ticks.wrapping_mul(7) / 5] {
                let exact = u128::from(probe) * 1_000_000 / u128::from(Current::TICKS_PER_SECOND);
                check!(u128::from(ticks_to_micros(probe)) == exact.min(u128::from(u64::MAX)));
            }
            ticks = ticks * 3 + 1;
        }
    }
}
