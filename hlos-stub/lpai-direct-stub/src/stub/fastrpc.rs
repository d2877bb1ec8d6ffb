//! The FastRPC transport: libadsprpc.so / libcdsprpc.so loaded at run time, the skel opened by URI on a DSP
//! domain, calls through `remote_handle64_invoke`, and rpcmem buffers for zero-copy inputs and outputs.
//!
//! The audio and sensors PDs are static PDs the system creates: code that lives in them is loaded by that PD
//! (see docs/src/on-a-device.md). By default ([`Pd::User`]) this transport opens the skel in a dynamic user PD on the chosen
//! domain, signed or unsigned; with another [`Pd`] it first opens the FastRPC control name that attaches this
//! process to that PD (`ITRANSPORT_PREFIX "createstaticpd:audiopd&_dom=adsp"`, ...), then the skel URI.

pub use super::address::{control_name, skel_uri, Domain, FastRpcOptions, Pd, ITRANSPORT_PREFIX};
use super::first_contact::{self, SkelSearch};
use super::transport::{IoBuffer, Transport};
use libloading::Library;
use lpai_direct::aee;
use lpai_direct::codec::RemoteArg;
use std::ffi::{c_int, c_void, CStr, CString};
use std::ptr::NonNull;
use std::sync::Arc;

/// FastRPC `remote_session_control` request that allows an unsigned PD on a domain.
const DSPRPC_CONTROL_UNSIGNED_MODULE: u32 = 2;
/// FastRPC `remote_handle_control` request that asks the library about a DSP (`remote_dsp_capability`).
const DSPRPC_GET_DSP_INFO: u32 = 2;
/// `remote_dsp_capability` attribute: whether the domain exists on this device.
const DOMAIN_SUPPORT: u32 = 0;
/// rpcmem heap id of the system heap.
const RPCMEM_HEAP_ID_SYSTEM: c_int = 25;
/// rpcmem flag: cached memory.
const RPCMEM_FLAG_CACHED: u32 = 1;

type OpenFn = unsafe extern "C" fn(*const std::ffi::c_char, *mut u64) -> c_int;
type InvokeFn = unsafe extern "C" fn(u64, u32, *mut RemoteArg) -> c_int;
type CloseFn = unsafe extern "C" fn(u64) -> c_int;
type SessionControlFn = unsafe extern "C" fn(u32, *mut c_void, u32) -> c_int;
type HandleControlFn = unsafe extern "C" fn(u32, *mut c_void, u32) -> c_int;
type RpcmemAllocFn = unsafe extern "C" fn(c_int, u32, c_int) -> *mut c_void;
type RpcmemFreeFn = unsafe extern "C" fn(*mut c_void);

/// FastRPC through a dynamically loaded libadsprpc / libcdsprpc.
pub struct FastRpc {
    options: FastRpcOptions,
    library_name: String,
    open: OpenFn,
    invoke: InvokeFn,
    close: CloseFn,
    session_control: Option<SessionControlFn>,
    handle_control: Option<HandleControlFn>,
    rpcmem: Option<(RpcmemAllocFn, RpcmemFreeFn)>,
    /// The control handle that attached this process to a PD other than the user PD, once opened. The wire doc
    /// (quic/fastrpc) does not say whether it may be closed once the skel is open, so it stays open for the
    /// transport's life and is closed on drop, after the skel handle (a `Stub` closes its handle before dropping
    /// its transport).
    control: Option<u64>,
    /// Why the last call failed, when this side can say more than its code: a refused control open, a skel the
    /// DSP loader did not load, a PD restart.
    refusal: Option<String>,
    // The function pointers above come from it; each rpcmem buffer holds a clone, so the library stays loaded
    // until the transport and every buffer it handed out are gone.
    library: Arc<Library>,
}

/// Why FastRPC could not be used.
#[derive(Debug, thiserror::Error)]
#[error("FastRPC is not available: tried {tried}")]
pub struct Unavailable {
    /// Each library tried, with why it failed.
    pub tried: String,
}

impl FastRpc {
    /// Loads the first FastRPC library that exists and exports the handle API.
    pub fn load(options: FastRpcOptions) -> Result<FastRpc, Unavailable> {
        let defaults = options.domain.libraries().map(String::from);
        let candidates = if options.libraries.is_empty() { defaults.to_vec() } else { options.libraries.clone() };
        let mut tried = Vec::new();
        for name in &candidates {
            match Self::from_library(name, &options) {
                Ok(fastrpc) => return Ok(fastrpc),
                Err(why) => tried.push(format!("{name} ({why})")),
            }
        }
        Err(Unavailable { tried: tried.join(", ") })
    }

    fn from_library(name: &str, options: &FastRpcOptions) -> Result<FastRpc, String> {
        // SAFETY: loading the platform's FastRPC library runs its initialisers, which is how it is meant to be used.
        let library = unsafe { Library::new(name) }.map_err(|error| error.to_string())?;
        // SAFETY: the symbols have the signatures FastRPC's remote.h declares; they stay valid while `library` lives.
        unsafe {
            let symbol = |symbol: &[u8]| -> Result<*mut c_void, String> {
                library
                    .get::<*mut c_void>(symbol)
                    .map(|s| *s)
                    .map_err(|_| format!("no {}", String::from_utf8_lossy(&symbol[..symbol.len() - 1])))
            };
            let open = std::mem::transmute::<*mut c_void, OpenFn>(symbol(b"remote_handle64_open\0")?);
            let invoke = std::mem::transmute::<*mut c_void, InvokeFn>(symbol(b"remote_handle64_invoke\0")?);
            let close = std::mem::transmute::<*mut c_void, CloseFn>(symbol(b"remote_handle64_close\0")?);
            let session_control = symbol(b"remote_session_control\0")
                .ok()
                .map(|s| std::mem::transmute::<*mut c_void, SessionControlFn>(s));
            let handle_control =
                symbol(b"remote_handle_control\0").ok().map(|s| std::mem::transmute::<*mut c_void, HandleControlFn>(s));
            let rpcmem = match (symbol(b"rpcmem_alloc\0"), symbol(b"rpcmem_free\0")) {
                (Ok(alloc), Ok(free)) => Some((
                    std::mem::transmute::<*mut c_void, RpcmemAllocFn>(alloc),
                    std::mem::transmute::<*mut c_void, RpcmemFreeFn>(free),
                )),
                _ => None,
            };
            Ok(FastRpc {
                options: options.clone(),
                library_name: name.to_string(),
                open,
                invoke,
                close,
                session_control,
                handle_control,
                rpcmem,
                control: None,
                refusal: None,
                library: Arc::new(library),
            })
        }
    }

    /// The library in use.
    pub fn library_name(&self) -> &str {
        &self.library_name
    }

    /// The URI this transport opens.
    pub fn uri(&self) -> CString {
        skel_uri(self.options.domain, self.options.session)
    }

    /// Whether the library says the domain exists on this device (`remote_handle_control(DSPRPC_GET_DSP_INFO)`
    /// with DOMAIN_SUPPORT); `Err` with the code when it cannot say.
    pub fn domain_supported(&self) -> Result<bool, i32> {
        let Some(control) = self.handle_control else { return Err(aee::EUNSUPPORTED as i32) };
        // remote_dsp_capability: {u32 domain; u32 attribute_ID; u32 capability}.
        let mut capability = [self.options.domain.id() as u32, DOMAIN_SUPPORT, 0];
        // SAFETY: a 12-byte remote_dsp_capability, as DSPRPC_GET_DSP_INFO expects.
        match unsafe { control(DSPRPC_GET_DSP_INFO, capability.as_mut_ptr().cast(), 12) } {
            0 => Ok(capability[2] != 0),
            status => Err(status),
        }
    }

    /// The options this transport was made with.
    pub fn options(&self) -> &FastRpcOptions {
        &self.options
    }
}

impl Transport for FastRpc {
    fn name(&self) -> &'static str {
        "fastrpc"
    }

    fn place(&self) -> String {
        self.options.domain.uri_name().to_string()
    }

    fn open(&mut self, uri: &CStr) -> Result<u64, i32> {
        self.refusal = None;
        if self.options.unsigned_pd {
            let Some(control) = self.session_control else {
                return Err(-1);
            };
            let mut request = [self.options.domain.id(), 1];
            // SAFETY: {int domain; int enable}, 8 bytes, as DSPRPC_CONTROL_UNSIGNED_MODULE expects.
            let status = unsafe { control(DSPRPC_CONTROL_UNSIGNED_MODULE, request.as_mut_ptr().cast(), 8) };
            if status != 0 {
                return Err(status);
            }
        }
        if self.control.is_none() {
            let options = &self.options;
            if let Some(name) = control_name(options.pd, options.domain, options.session) {
                let mut control = 0u64;
                // SAFETY: a NUL-terminated name and a valid out-pointer.
                match unsafe { (self.open)(name.as_ptr(), &mut control) } {
                    0 => self.control = Some(control),
                    status => {
                        let shown = name.to_string_lossy();
                        self.refusal = Some(first_contact::control_refusal(options.pd, options.domain, &shown));
                        return Err(status);
                    }
                }
            }
        }
        let mut handle = 0u64;
        // SAFETY: a NUL-terminated URI and a valid out-pointer.
        match unsafe { (self.open)(uri.as_ptr(), &mut handle) } {
            0 => Ok(handle),
            status => {
                // A static PD's refusal shows at the first open on its domain, not at the control open.
                let static_pd = self.options.pd != Pd::User
                    && matches!(status as u32, aee::EBADPERMS | aee::ERPC | aee::ECONNREFUSED);
                self.refusal = Some(match static_pd {
                    true => {
                        let name = control_name(self.options.pd, self.options.domain, self.options.session);
                        let shown = name.map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
                        first_contact::control_refusal(self.options.pd, self.options.domain, &shown)
                    }
                    false => {
                        let search = SkelSearch::run(self.options.domain, self.options.pd);
                        first_contact::open_failure(status as u32, &self.options, &search)
                    }
                });
                Err(status)
            }
        }
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        // SAFETY: forwarded from the caller.
        let status = unsafe { (self.invoke)(handle, scalars, args) };
        if let Some(restart) = first_contact::invoke_failure(status as u32, self.options.domain) {
            self.refusal = Some(restart);
        }
        status
    }

    fn close(&mut self, handle: u64) -> i32 {
        // SAFETY: a handle this transport opened.
        unsafe { (self.close)(handle) }
    }

    fn failure(&self) -> Option<String> {
        self.refusal.clone()
    }

    fn skel_source(&self) -> String {
        SkelSearch::run(self.options.domain, self.options.pd).skel_source()
    }

    fn skel_search(&self) -> Option<SkelSearch> {
        Some(SkelSearch::run(self.options.domain, self.options.pd))
    }

    fn buffer(&mut self, bytes: usize) -> IoBuffer {
        let Some((alloc, free)) = self.rpcmem else {
            return IoBuffer::heap(bytes);
        };
        let Ok(size) = c_int::try_from(bytes.max(1)) else {
            return IoBuffer::heap(bytes);
        };
        // SAFETY: rpcmem_alloc(heap, flags, size) returns shared memory or null.
        let memory = unsafe { alloc(RPCMEM_HEAP_ID_SYSTEM, RPCMEM_FLAG_CACHED, size) };
        let library = Arc::clone(&self.library);
        // The closure owns a clone of the library: `free` stays loaded even after the transport is dropped.
        let release = move |pointer: *mut u8| {
            let _library = &library;
            // SAFETY: `pointer` came from this library's rpcmem_alloc, and `library` keeps `free` loaded.
            unsafe { free(pointer.cast()) };
        };
        match NonNull::new(memory.cast::<u8>()) {
            // SAFETY: rpcmem gave `bytes` bytes that stay valid until rpcmem_free.
            Some(pointer) => unsafe {
                pointer.as_ptr().write_bytes(0, bytes);
                IoBuffer::shared(pointer, bytes, Box::new(release))
            },
            None => IoBuffer::heap(bytes),
        }
    }
}

impl Drop for FastRpc {
    fn drop(&mut self) {
        if let Some(control) = self.control.take() {
            // SAFETY: the control handle this transport opened; the library is still loaded (`self.library`).
            unsafe { (self.close)(control) };
        }
    }
}
