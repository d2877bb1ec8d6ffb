//! A stand-in for libadsprpc.so, so the FastRPC transport's own code (dlopen, symbols, URI, unsigned PD,
//! rpcmem, invoke) runs on a machine with no DSP: each call is checked the way the real library would see it
//! and handed to the lpai-direct skel in this process. Set `FAKE_ADSPRPC_LOG` to a file to record the calls.
//!
//! Control names (`ITRANSPORT_PREFIX` + `createstaticpd:audiopd`, `createstaticpd:sensorspd` or `attachguestos`,
//! then `&_dom=<domain>` and an optional `&_session=N`) are accepted and recorded like any open, and answer a
//! control handle that needs no skel; set `FAKE_ADSPRPC_REFUSE_CONTROL` to an AEE code (decimal or `0x` hex) to
//! have every control open refused with it. Anything else that is not the skel's URI is refused (AEE_EBADPARM).

use lpai_direct::codec::{call_close, call_open, RemoteArg, Scalars};
use lpai_direct_skel::entry::lpai_direct_skel_handle_invoke;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::io::Write;

/// The invoke symbol and module version every URI must name.
const URI_PREFIX: &str = "file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=";
/// AEE_EBADPARM as the host library reports it (no DSP offset).
const BAD_PARAMETER: c_int = 0xE;
/// FastRPC's ITRANSPORT_PREFIX (quic/fastrpc inc/remote.h): a name that starts with it is a control request.
const ITRANSPORT_PREFIX: &str = "'\":;./\\";
/// The control requests the stand-in knows.
const CONTROL_REQUESTS: [&str; 3] = ["createstaticpd:audiopd", "createstaticpd:sensorspd", "attachguestos"];
/// The domains a name may give.
const DOMAINS: [&str; 5] = ["adsp", "mdsp", "sdsp", "cdsp", "cdsp1"];
/// Control handles carry this tag in their top 16 bits ("CT"); the skel's handles carry "LP" there.
const CONTROL_HANDLE: u64 = 0x4354 << 48;

fn record(line: &str) {
    if let Some(path) = std::env::var_os("FAKE_ADSPRPC_LOG") {
        if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(file, "{line}");
        }
    }
}

/// `remote_handle64_open(uri, &handle)`.
///
/// # Safety
/// `uri` NUL-terminated, `handle` writable.
#[no_mangle]
pub unsafe extern "C" fn remote_handle64_open(uri: *const c_char, handle: *mut u64) -> c_int {
    // SAFETY: the caller's promise.
    let uri = unsafe { CStr::from_ptr(uri) };
    let text = uri.to_string_lossy();
    record(&format!("open {text}"));
    if let Some(control) = text.strip_prefix(ITRANSPORT_PREFIX) {
        return open_control(control, handle);
    }
    if !text.starts_with(URI_PREFIX) {
        return BAD_PARAMETER;
    }
    // SAFETY: `call_open` passes exactly the arguments OPEN_SCALARS describes.
    match call_open(uri, |scalars, args| unsafe { lpai_direct_skel_handle_invoke(0, scalars, args) }) {
        Ok(opened) => {
            // SAFETY: the caller's promise: `handle` is writable.
            unsafe { *handle = opened };
            0
        }
        Err(status) => status,
    }
}

/// A control open: a known request on a known domain (and session), or refused as the environment says.
fn open_control(control: &str, handle: *mut u64) -> c_int {
    let Some((request, rest)) = control.split_once("&_dom=") else { return BAD_PARAMETER };
    let (domain, session) = match rest.split_once("&_session=") {
        Some((domain, session)) => (domain, Some(session)),
        None => (rest, None),
    };
    let known = CONTROL_REQUESTS.contains(&request) && DOMAINS.contains(&domain);
    if !known || session.is_some_and(|n| n.parse::<u32>().is_err()) {
        return BAD_PARAMETER;
    }
    if let Some(code) = std::env::var("FAKE_ADSPRPC_REFUSE_CONTROL").ok().filter(|code| !code.is_empty()) {
        let parsed = match code.strip_prefix("0x") {
            Some(hex) => c_int::from_str_radix(hex, 16),
            None => code.parse::<c_int>(),
        };
        return parsed.unwrap_or(BAD_PARAMETER);
    }
    // SAFETY: the caller's promise: `handle` is writable.
    unsafe {
        *handle = CONTROL_HANDLE | CONTROL_REQUESTS.iter().position(|known| *known == request).unwrap_or(0) as u64
    };
    0
}

/// `remote_handle64_invoke(handle, sc, args)`.
///
/// # Safety
/// `args` as `sc` describes.
#[no_mangle]
pub unsafe extern "C" fn remote_handle64_invoke(handle: u64, sc: u32, args: *mut RemoteArg) -> c_int {
    record(&format!("invoke method {} sc {sc:#010x}", Scalars::of(sc).method));
    // SAFETY: forwarded.
    unsafe { lpai_direct_skel_handle_invoke(handle, sc, args) }
}

/// `remote_handle64_close(handle)`.
#[no_mangle]
pub extern "C" fn remote_handle64_close(handle: u64) -> c_int {
    if handle >> 48 == CONTROL_HANDLE >> 48 {
        record("close control");
        return 0;
    }
    record("close");
    // SAFETY: `call_close` passes the one input handle CLOSE_SCALARS describes.
    call_close(handle, |scalars, args| unsafe { lpai_direct_skel_handle_invoke(0, scalars, args) })
}

/// `remote_session_control(request, data, length)`: records unsigned-PD requests.
///
/// # Safety
/// `data` valid for `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn remote_session_control(request: u32, data: *mut c_void, length: u32) -> c_int {
    if request == 2 && length == 8 && !data.is_null() {
        // SAFETY: {int domain; int enable}.
        let [domain, enable] = unsafe { data.cast::<[c_int; 2]>().read_unaligned() };
        record(&format!("unsigned pd domain {domain} enable {enable}"));
        return 0;
    }
    BAD_PARAMETER
}

/// `rpcmem_alloc(heap, flags, size)`.
#[no_mangle]
pub extern "C" fn rpcmem_alloc(heap: c_int, flags: u32, size: c_int) -> *mut c_void {
    record(&format!("rpcmem_alloc heap {heap} flags {flags} size {size}"));
    let layout = std::alloc::Layout::from_size_align(size.max(1) as usize + 16, 16);
    let Ok(layout) = layout else { return std::ptr::null_mut() };
    // SAFETY: a non-zero layout; the size is kept in front of the block for rpcmem_free.
    unsafe {
        let block = std::alloc::alloc(layout);
        if block.is_null() {
            return block.cast();
        }
        block.cast::<usize>().write(layout.size());
        block.add(16).cast()
    }
}

/// `rpcmem_free(pointer)`.
///
/// # Safety
/// `pointer` from `rpcmem_alloc`.
#[no_mangle]
pub unsafe extern "C" fn rpcmem_free(pointer: *mut c_void) {
    record("rpcmem_free");
    if pointer.is_null() {
        return;
    }
    // SAFETY: rpcmem_alloc put the block's size 16 bytes before the pointer it returned.
    unsafe {
        let block = pointer.cast::<u8>().sub(16);
        let size = block.cast::<usize>().read();
        std::alloc::dealloc(block, std::alloc::Layout::from_size_align_unchecked(size, 16));
    }
}
