//! The request loop: the READY frame, then one reply frame per request frame (stdin to stdout) until stdin ends.
//! Every Open, Invoke and Close frame is one event of `--restart-after` (`pd::events`), counted before it is served.

use super::invoke::{Call, InvokeFunction, NoMemory};
use super::loader::Library;
use super::system::{self, Mapping};
use core::ffi::{c_char, c_int};
use lpai_direct::shell_frame::{self, FrameWriter, Request, ShellResources, READY};
use lpai_direct::shell_frame::{KIND_CLOSE, KIND_INVOKE, KIND_OPEN, KIND_RESOURCES};

type OpenFunction = unsafe extern "C" fn(*const c_char, *mut u64) -> c_int;
type CloseFunction = unsafe extern "C" fn(u64) -> c_int;

/// The loaded skel and its three entry points.
pub struct Skel {
    // Keeps the image mapped while the entry points are used.
    _library: Library,
    open: OpenFunction,
    close: CloseFunction,
    invoke: InvokeFunction,
}

impl Skel {
    /// Looks up the entry points with the loader's `dlsym`; `Err` names the first one missing.
    pub fn new(library: Library) -> Result<Skel, &'static str> {
        let find = |name: &'static str| library.symbol(name.as_bytes()).ok_or(name);
        let (open, close, invoke) =
            (find("lpai_direct_open")?, find("lpai_direct_close")?, find("lpai_direct_skel_handle_invoke")?);
        // SAFETY: each address is the skel's definition of that entry point, with the C signature the IDL gives
        // it (`lpai_direct_open(const char*, uint64_t*)`, `lpai_direct_close(uint64_t)`,
        // `lpai_direct_skel_handle_invoke(uint64_t, uint32_t, remote_arg*)`).
        unsafe {
            Ok(Skel {
                open: core::mem::transmute::<usize, OpenFunction>(open),
                close: core::mem::transmute::<usize, CloseFunction>(close),
                invoke: core::mem::transmute::<usize, InvokeFunction>(invoke),
                _library: library,
            })
        }
    }

    /// Writes READY and serves until stdin ends (0) or a frame is malformed (3, after one stderr line).
    pub fn serve(&self) -> i32 {
        if reply(|writer| writer.bytes(READY)).is_err() {
            return 3;
        }
        loop {
            let (body, length) = match read_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return 0,
                Err(problem) => {
                    crate::say!("lpai-pd-shell: {problem}");
                    return 3;
                }
            };
            let body = &body.as_slice()[..length];
            let Some(request) = Request::decode(body) else {
                describe_malformed(body);
                return 3;
            };
            if self.answer(&request).is_err() {
                return 3;
            }
        }
    }

    /// Makes the call a request asks for and writes its reply; `Err` after a stderr line.
    fn answer(&self, request: &Request<'_>) -> Result<(), ()> {
        if !matches!(request, Request::Resources) {
            super::events::event();
        }
        match *request {
            Request::Open { uri } => {
                let mut text =
                    Mapping::new(uri.len() + 1).map_err(|_| crate::say!("lpai-pd-shell: no memory for a URI"))?;
                text.as_mut_slice()[..uri.len()].copy_from_slice(uri);
                let mut handle = 0u64;
                // SAFETY: the skel's open entry point; a NUL-terminated URI (the mapping is zeroed past it) and a
                // writable handle.
                let status = unsafe { (self.open)(text.address().cast(), &mut handle) };
                reply(|writer| {
                    writer.u32(status as u32);
                    writer.u64(handle);
                })
            }
            Request::Close { handle } => {
                // SAFETY: the skel's close entry point, which takes any handle value.
                let status = unsafe { (self.close)(handle) };
                reply(|writer| writer.u32(status as u32))
            }
            Request::Resources => {
                let (heap_blocks, heap_bytes) = super::services::heap_in_use();
                let files = super::services::files_open();
                let libraries = super::libraries::loaded_count()
                    .ok_or_else(|| crate::say!("lpai-pd-shell: the dlopen table is in use"))?;
                let counts = ShellResources { heap_blocks, heap_bytes, files, libraries };
                reply(|writer| {
                    writer.u32(0);
                    counts.write(writer);
                })
            }
            Request::Invoke(invoke) => {
                let outputs = Call::output_bytes(&invoke);
                if outputs + 8 > u64::from(shell_frame::MAX_FRAME_BYTES) {
                    crate::say!("lpai-pd-shell: an invoke's outputs ({outputs} bytes) cannot fit a reply frame");
                    return Err(());
                }
                // SAFETY: the skel's invoke entry point.
                let call = unsafe { Call::make(self.invoke, invoke) }.map_err(|NoMemory { index, length }| {
                    crate::say!("lpai-pd-shell: no memory for region {index} of an invoke ({length} bytes)");
                })?;
                reply(|writer| {
                    writer.u32(call.status as u32);
                    writer.u32(call.guard);
                    call.outputs().for_each(|bytes| writer.bytes(bytes));
                })
            }
        }
    }
}

/// Writes one frame to stdout; `Err` after a stderr line.
fn reply(write: impl Fn(&mut FrameWriter<'_>)) -> Result<(), ()> {
    let mut measure = FrameWriter::new(&mut []);
    write(&mut measure);
    let mut frame = Mapping::new(measure.needed()).map_err(|_| crate::say!("lpai-pd-shell: no memory for a reply"))?;
    let mut writer = FrameWriter::new(&mut frame.as_mut_slice()[..measure.needed()]);
    write(&mut writer);
    let length = writer.finish().ok_or_else(|| crate::say!("lpai-pd-shell: a reply is over the frame limit"))?;
    system::write_all(1, &frame.as_slice()[..length])
        .map_err(|errno| crate::say!("lpai-pd-shell: cannot write a reply to stdout (errno {errno})"))
}

/// Fills `buffer` from stdin: `Ok(false)` at the end before the first byte, `Err` at the end after it.
fn read_exact(buffer: &mut [u8]) -> Result<bool, &'static str> {
    let mut filled = 0;
    while filled < buffer.len() {
        match system::read(0, &mut buffer[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err("stdin ended inside a frame"),
            Ok(read) => filled += read,
            Err(_) => return Err("cannot read stdin"),
        }
    }
    Ok(true)
}

/// The next request frame's body and its length; `None` when stdin ended between frames.
fn read_frame() -> Result<Option<(Mapping, usize)>, &'static str> {
    let mut header = [0u8; 4];
    if !read_exact(&mut header)? {
        return Ok(None);
    }
    let length = shell_frame::body_length(header).ok_or("a request frame is over the frame limit (64 MiB)")?;
    let mut body = Mapping::new(length).map_err(|_| "no memory for a request frame")?;
    if length > 0 && !read_exact(&mut body.as_mut_slice()[..length])? {
        return Err("stdin ended inside a frame");
    }
    Ok(Some((body, length)))
}

/// One stderr line saying what is wrong with a request body `Request::decode` refused.
fn describe_malformed(body: &[u8]) {
    let kind = body.get(..4).map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]));
    let name = match kind {
        None => {
            return crate::say!(
                "lpai-pd-shell: malformed request frame: {} bytes, shorter than its kind word",
                body.len()
            )
        }
        Some(KIND_OPEN) => "open",
        Some(KIND_INVOKE) => "invoke",
        Some(KIND_CLOSE) => "close",
        Some(KIND_RESOURCES) => "resources",
        Some(kind) => return crate::say!("lpai-pd-shell: malformed request frame: unknown kind {kind}"),
    };
    crate::say!(
        "lpai-pd-shell: malformed {name} request ({} bytes): short, trailing bytes, entries not matching its sc \
         word, a buffer outside its region, a handle entry that is not empty, or too many regions",
        body.len()
    );
}
