//! `libadsprpc.so` of the virtual device (test infrastructure, built for aarch64 by `scripts/virtual-device.sh`,
//! never staged or shipped): FastRPC's handle API with the rules of the real library and driver as quic/fastrpc
//! shows them ([`device`]), every skel carried to a PD of the virtual aDSP (the PD shell under qemu-hexagon), and the
//! faults the device can be told to have ([`faults`]). Also the virtual device's test signature ([`sign`]) and the
//! seccomp filter it runs proot under ([`seccomp`]).

pub mod device;
pub mod faults;
pub mod names;
pub mod rpcmem;
pub mod seccomp;
pub mod sign;

use lpai_direct::aee;
use lpai_direct::codec::RemoteArg;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The device, made on the first call from this process's environment.
static DEVICE: Mutex<Option<Result<device::Device, faults::BadSetting>>> = Mutex::new(None);

/// The `remote_session_control` request that asks for an unsigned PD.
const DSPRPC_CONTROL_UNSIGNED_MODULE: u32 = 2;
/// The `remote_session_control` request that sets the PD threads' priority and stack.
const FASTRPC_THREAD_PARAMS: u32 = 1;
/// The `remote_handle_control` request that sets the latency QoS.
const DSPRPC_CONTROL_LATENCY: u32 = 1;
/// The `remote_handle_control` request that asks about a DSP.
const DSPRPC_GET_DSP_INFO: u32 = 2;

/// Runs `work` on the device; a bad `LPAI_VD_*` setting answers AEE_EBADPARM after saying why once.
fn with_device(work: impl FnOnce(&mut device::Device) -> c_int) -> c_int {
    let mut device: MutexGuard<'_, _> = DEVICE.lock().unwrap_or_else(PoisonError::into_inner);
    let made = device.get_or_insert_with(|| {
        faults::Settings::from(|name| std::env::var(name).ok()).map(device::Device::new).inspect_err(|bad| {
            eprintln!("virtual device: {}", bad.0);
        })
    });
    match made {
        Ok(device) => work(device),
        Err(_) => aee::EBADPARM as c_int,
    }
}

/// `int remote_handle64_open(const char* name, remote_handle64* handle)`.
///
/// # Safety
/// `name` null or NUL-terminated, `handle` null or writable.
#[no_mangle]
pub unsafe extern "C" fn remote_handle64_open(name: *const c_char, handle: *mut u64) -> c_int {
    if name.is_null() || handle.is_null() {
        return aee::EBADPARM as c_int;
    }
    // SAFETY: a NUL-terminated name (the caller's promise).
    let name = unsafe { CStr::from_ptr(name) };
    with_device(|device| match device.open(name) {
        Ok(opened) => {
            if let Some(opened) = opened {
                // SAFETY: a writable handle (the caller's promise).
                unsafe { *handle = opened };
            }
            0
        }
        Err(status) => status as c_int,
    })
}

/// `int remote_handle64_invoke(remote_handle64 handle, uint32_t sc, remote_arg* args)`.
///
/// # Safety
/// `args` as `sc` describes, every buffer valid for its length.
#[no_mangle]
pub unsafe extern "C" fn remote_handle64_invoke(handle: u64, scalars: u32, args: *mut RemoteArg) -> c_int {
    // SAFETY: forwarded from the caller.
    with_device(|device| unsafe { device.invoke(handle, scalars, args) } as c_int)
}

/// `int remote_handle64_close(remote_handle64 handle)`.
#[no_mangle]
pub extern "C" fn remote_handle64_close(handle: u64) -> c_int {
    with_device(|device| device.close(handle) as c_int)
}

/// `int remote_session_control(uint32_t request, void* data, uint32_t length)`: the unsigned-PD request (`{int
/// domain; int enable}`) and thread parameters (accepted); others AEE_EUNSUPPORTED.
///
/// # Safety
/// `data` null or valid for `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn remote_session_control(request: u32, data: *mut c_void, length: u32) -> c_int {
    match request {
        DSPRPC_CONTROL_UNSIGNED_MODULE if length == 8 && !data.is_null() => {
            // SAFETY: {int domain; int enable}, 8 bytes (checked).
            let [domain, enable] = unsafe { data.cast::<[c_int; 2]>().read_unaligned() };
            with_device(|device| device.unsigned_module(domain, enable != 0) as c_int)
        }
        FASTRPC_THREAD_PARAMS if length == 12 && !data.is_null() => 0,
        DSPRPC_CONTROL_UNSIGNED_MODULE | FASTRPC_THREAD_PARAMS => aee::EBADPARM as c_int,
        _ => aee::EUNSUPPORTED as c_int,
    }
}

/// `int remote_handle_control(uint32_t request, void* data, uint32_t length)`: DSPRPC_GET_DSP_INFO with a
/// `{uint32 domain; uint32 attribute_ID; uint32 capability}` and the latency QoS; others AEE_EUNSUPPORTED.
///
/// # Safety
/// `data` null or valid for `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn remote_handle_control(request: u32, data: *mut c_void, length: u32) -> c_int {
    match request {
        DSPRPC_GET_DSP_INFO if length == 12 && !data.is_null() => {
            // SAFETY: a 12-byte remote_dsp_capability (checked).
            let mut capability = unsafe { data.cast::<[u32; 3]>().read_unaligned() };
            capability[2] = device::Device::capability(capability[0], capability[1]);
            // SAFETY: as above.
            unsafe { data.cast::<[u32; 3]>().write_unaligned(capability) };
            0
        }
        DSPRPC_CONTROL_LATENCY if length == 8 && !data.is_null() => 0,
        DSPRPC_GET_DSP_INFO | DSPRPC_CONTROL_LATENCY => aee::EBADPARM as c_int,
        _ => aee::EUNSUPPORTED as c_int,
    }
}

/// `int remote_handle64_control(remote_handle64 handle, uint32_t request, void* data, uint32_t length)`: as
/// [`remote_handle_control`].
///
/// # Safety
/// As for [`remote_handle_control`].
#[no_mangle]
pub unsafe extern "C" fn remote_handle64_control(_handle: u64, request: u32, data: *mut c_void, length: u32) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { remote_handle_control(request, data, length) }
}
