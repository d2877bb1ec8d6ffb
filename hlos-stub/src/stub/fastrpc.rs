//! The FastRPC transport: libadsprpc.so / libcdsprpc.so loaded at run time, the skel opened by URI on a DSP
//! domain, calls through `remote_handle64_invoke`, and rpcmem buffers for zero-copy inputs and outputs.
//!
//! The audio and sensors PDs are static PDs the system creates: code that lives in them is loaded by that PD
//! (see the README); this transport opens a dynamic user PD on the chosen domain, signed or unsigned.

use super::names::{self, Named, UnknownName};
use super::transport::{IoBuffer, Transport};
use libloading::Library;
use lpai_direct::codec::RemoteArg;
use std::ffi::{c_int, c_void, CStr, CString};
use std::ptr::NonNull;
use std::str::FromStr;
use std::sync::Arc;

/// FastRPC `remote_session_control` request that allows an unsigned PD on a domain.
const DSPRPC_CONTROL_UNSIGNED_MODULE: u32 = 2;
/// rpcmem heap id of the system heap.
const RPCMEM_HEAP_ID_SYSTEM: c_int = 25;
/// rpcmem flag: cached memory.
const RPCMEM_FLAG_CACHED: u32 = 1;

type OpenFn = unsafe extern "C" fn(*const std::ffi::c_char, *mut u64) -> c_int;
type InvokeFn = unsafe extern "C" fn(u64, u32, *mut RemoteArg) -> c_int;
type CloseFn = unsafe extern "C" fn(u64) -> c_int;
type SessionControlFn = unsafe extern "C" fn(u32, *mut c_void, u32) -> c_int;
type RpcmemAllocFn = unsafe extern "C" fn(c_int, u32, c_int) -> *mut c_void;
type RpcmemFreeFn = unsafe extern "C" fn(*mut c_void);

/// A DSP domain FastRPC can reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// The audio DSP (LPAI's home).
    Adsp,
    /// The modem DSP.
    Mdsp,
    /// The sensors DSP.
    Sdsp,
    /// The compute DSP.
    Cdsp,
    /// The second compute DSP.
    Cdsp1,
}

impl Named for Domain {
    const WHAT: &'static str = "domain";
    const ALL: &'static [Self] = &[Domain::Adsp, Domain::Mdsp, Domain::Sdsp, Domain::Cdsp, Domain::Cdsp1];

    /// The URI's `_dom` value.
    fn name(self) -> &'static str {
        match self {
            Domain::Adsp => "adsp",
            Domain::Mdsp => "mdsp",
            Domain::Sdsp => "sdsp",
            Domain::Cdsp => "cdsp",
            Domain::Cdsp1 => "cdsp1",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Domain::Adsp => "The audio DSP (LPAI's home)",
            Domain::Mdsp => "The modem DSP",
            Domain::Sdsp => "The sensors DSP",
            Domain::Cdsp => "The compute DSP",
            Domain::Cdsp1 => "The second compute DSP",
        }
    }
}

impl FromStr for Domain {
    type Err = UnknownName;
    fn from_str(given: &str) -> Result<Self, UnknownName> {
        names::parse(given)
    }
}

impl Domain {
    /// The URI's `_dom` value.
    pub fn uri_name(self) -> &'static str {
        self.name()
    }

    /// FastRPC's domain id.
    pub fn id(self) -> c_int {
        match self {
            Domain::Adsp => 0,
            Domain::Mdsp => 1,
            Domain::Sdsp => 2,
            Domain::Cdsp => 3,
            Domain::Cdsp1 => 4,
        }
    }

    /// Libraries to try, the domain's own first.
    pub fn libraries(self) -> [&'static str; 2] {
        match self {
            Domain::Cdsp | Domain::Cdsp1 => ["libcdsprpc.so", "libadsprpc.so"],
            _ => ["libadsprpc.so", "libcdsprpc.so"],
        }
    }
}

/// How to reach the DSP.
#[derive(Clone, Debug)]
pub struct FastRpcOptions {
    /// The domain.
    pub domain: Domain,
    /// FastRPC session on that domain (`&_session=N`), if not the default.
    pub session: Option<u32>,
    /// Ask for an unsigned PD before opening.
    pub unsigned_pd: bool,
    /// Libraries to try instead of the domain's defaults.
    pub libraries: Vec<String>,
}

impl Default for FastRpcOptions {
    fn default() -> Self {
        FastRpcOptions { domain: Domain::Adsp, session: None, unsigned_pd: false, libraries: Vec::new() }
    }
}

/// The skel URI for a domain (and session).
pub fn skel_uri(domain: Domain, session: Option<u32>) -> CString {
    let session = session.map(|n| format!("&_session={n}")).unwrap_or_default();
    let uri = format!(
        "file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom={}{session}",
        domain.uri_name()
    );
    CString::new(uri).unwrap_or_default()
}

/// FastRPC through a dynamically loaded libadsprpc / libcdsprpc.
pub struct FastRpc {
    options: FastRpcOptions,
    library_name: String,
    open: OpenFn,
    invoke: InvokeFn,
    close: CloseFn,
    session_control: Option<SessionControlFn>,
    rpcmem: Option<(RpcmemAllocFn, RpcmemFreeFn)>,
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
                rpcmem,
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
}

impl Transport for FastRpc {
    fn name(&self) -> &'static str {
        "fastrpc"
    }

    fn place(&self) -> String {
        self.options.domain.uri_name().to_string()
    }

    fn open(&mut self, uri: &CStr) -> Result<u64, i32> {
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
        let mut handle = 0u64;
        // SAFETY: a NUL-terminated URI and a valid out-pointer.
        match unsafe { (self.open)(uri.as_ptr(), &mut handle) } {
            0 => Ok(handle),
            status => Err(status),
        }
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        // SAFETY: forwarded from the caller.
        unsafe { (self.invoke)(handle, scalars, args) }
    }

    fn close(&mut self, handle: u64) -> i32 {
        // SAFETY: a handle this transport opened.
        unsafe { (self.close)(handle) }
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
