//! `--capi`: the PD as an audio PD running a loaded audio module (AudioReach CAPI): the whole session from stdin,
//! run by the session driver (`lpai_pd_shell::capi_session`), its transcript to stdout.

use super::loader::Library;
use super::system::{self, Mapping};
use lpai_direct::capi::{GetStaticPropertiesFn, InitFn};
use lpai_pd_shell::capi_session::{self, EntryPoints, SessionError};

/// The most session bytes read, and transcript bytes written.
const MAX_SESSION_BYTES: usize = 64 << 20;
/// Instance memory the driver offers the module.
const INSTANCE_BYTES: usize = 64 << 10;
/// The module's entry points.
const GET_STATIC_PROPERTIES: &str = "capi_lpai_direct_get_static_properties";
const INIT: &str = "capi_lpai_direct_init";

/// Runs the session on stdin through `module` and writes the transcript; answers the exit status: 0, 1 (not a
/// module), 3 (a malformed session, or no memory), after a stderr line.
pub fn serve(module: &Library) -> i32 {
    let find = |name: &'static str| module.symbol(name.as_bytes()).ok_or(name);
    let (get_static_properties, init) = match (find(GET_STATIC_PROPERTIES), find(INIT)) {
        (Ok(get_static_properties), Ok(init)) => (get_static_properties, init),
        (Err(missing), _) | (_, Err(missing)) => {
            crate::say!("lpai-pd-shell: not an lpai-direct audio module: it exports no {missing}");
            return 1;
        }
    };
    // SAFETY: the module's definitions of its two CAPI entry points, with the C signatures of `capi.md`
    // (`capi_err_t <tag>_get_static_properties(capi_proplist_t*, capi_proplist_t*)`,
    // `capi_err_t <tag>_init(capi_t*, capi_proplist_t*)`).
    let entry_points = unsafe {
        EntryPoints {
            get_static_properties: core::mem::transmute::<usize, GetStaticPropertiesFn>(get_static_properties),
            init: core::mem::transmute::<usize, InitFn>(init),
        }
    };
    let mappings = (Mapping::new(MAX_SESSION_BYTES), Mapping::new(INSTANCE_BYTES), Mapping::new(MAX_SESSION_BYTES));
    let (Ok(mut session), Ok(mut instance), Ok(mut transcript)) = mappings else {
        crate::say!("lpai-pd-shell: no memory for a CAPI session");
        return 3;
    };
    let length = match read_all(session.as_mut_slice()) {
        Ok(length) => length,
        Err(problem) => {
            crate::say!("lpai-pd-shell: {problem}");
            return 3;
        }
    };
    let instance = instance.as_mut_slice();
    // SAFETY: a mapping is page-aligned and holds whole u64s.
    let instance = unsafe { core::slice::from_raw_parts_mut(instance.as_mut_ptr().cast::<u64>(), instance.len() / 8) };
    // SAFETY: the module's CAPI entry points (above).
    let ran = unsafe {
        capi_session::run(entry_points, &mut session.as_mut_slice()[..length], instance, transcript.as_mut_slice())
    };
    let written = match ran {
        Ok(written) => written,
        Err(SessionError::Malformed { offset }) => {
            crate::say!("lpai-pd-shell: malformed CAPI session: the step at byte {offset}");
            return 3;
        }
        Err(SessionError::InstanceTooBig { bytes }) => {
            crate::say!("lpai-pd-shell: the module asks {bytes} bytes of instance memory, over {INSTANCE_BYTES}");
            return 3;
        }
        Err(SessionError::TranscriptFull) => {
            crate::say!("lpai-pd-shell: a CAPI session's transcript is over {MAX_SESSION_BYTES} bytes");
            return 3;
        }
    };
    match system::write_all(1, &transcript.as_slice()[..written]) {
        Ok(()) => 0,
        Err(errno) => {
            crate::say!("lpai-pd-shell: cannot write the transcript to stdout (errno {errno})");
            3
        }
    }
}

/// Reads stdin to its end into `buffer`; answers the length.
fn read_all(buffer: &mut [u8]) -> Result<usize, &'static str> {
    let mut filled = 0;
    loop {
        let Some(rest) = buffer.get_mut(filled..).filter(|rest| !rest.is_empty()) else {
            return Err("a CAPI session is over 64 MiB");
        };
        match system::read(0, rest) {
            Ok(0) => return Ok(filled),
            Ok(read) => filled += read,
            Err(_) => return Err("cannot read stdin"),
        }
    }
}
