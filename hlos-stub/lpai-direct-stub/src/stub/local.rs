//! The local transport: the host build of the skel (`liblpai_direct_skel.so`, from `cargo build -p
//! lpai-direct-dsp --release`) loaded at run time, the way FastRPC loads the DSP build on the aDSP. Its three
//! entry points are looked up by name and called with the same encoded `remote_arg`s FastRPC carries, so the
//! whole wire path runs without a DSP, and the stub library itself carries no skel code or skel symbols.

use super::address::SKEL_FILE_NAME;
use super::transport::Transport;
use super::workspace;
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use lpai_direct::codec::RemoteArg;
use std::ffi::{c_char, c_int, CStr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Environment variable naming the skel library when no path is given.
pub const SKEL_ENVIRONMENT: &str = "LPAI_DIRECT_SKEL";

type OpenFn = unsafe extern "C" fn(*const c_char, *mut u64) -> c_int;
type InvokeFn = unsafe extern "C" fn(u64, u32, *mut RemoteArg) -> c_int;
type CloseFn = unsafe extern "C" fn(u64) -> c_int;

/// Where the local transport finds the skel library.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SkelLocation {
    /// `$LPAI_DIRECT_SKEL` when set and not empty; else `liblpai_direct_skel.so` beside the running executable,
    /// then in the workspace's `target/release/` (see [`default_skel_paths`]).
    #[default]
    Search,
    /// This file and no other.
    File {
        /// The library.
        path: PathBuf,
        /// Who named it, for errors (`--skel`, `lpai_direct_stub_open_local`).
        named_by: &'static str,
    },
}

/// Why the skel library cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SkelError {
    /// No default place holds a skel library.
    #[error(
        "no host skel library: tried {tried}; build it with `cargo build -p lpai-direct-dsp --release`, or name \
         one with lpai-net-run --skel FILE, {SKEL_ENVIRONMENT} or lpai_direct_stub_open_local"
    )]
    NotFound {
        /// Every path tried, in order.
        tried: String,
    },
    /// The library that was named does not exist.
    #[error("the skel library {} (from {named_by}) does not exist", path.display())]
    Missing {
        /// The path named.
        path: PathBuf,
        /// Who named it.
        named_by: String,
    },
    /// The dynamic loader refused the library.
    #[error("cannot load the skel library {}: {reason}", path.display())]
    Unloadable {
        /// The library.
        path: PathBuf,
        /// The loader's message.
        reason: String,
    },
    /// The library lacks one of the skel's entry points.
    #[error("{} is not an lpai-direct skel: it exports no {symbol}", path.display())]
    MissingSymbol {
        /// The library.
        path: PathBuf,
        /// The entry point it lacks.
        symbol: &'static str,
    },
}

/// The places searched when nothing names the skel, in order: beside the running executable, then the
/// `target/release/` of the workspace this library was built in.
pub fn default_skel_paths() -> Vec<PathBuf> {
    let beside_executable =
        std::env::current_exe().ok().and_then(|exe| exe.parent().map(|directory| directory.join(SKEL_FILE_NAME)));
    let in_workspace = workspace::root().join("target/release").join(SKEL_FILE_NAME);
    beside_executable.into_iter().chain(std::iter::once(in_workspace)).collect()
}

/// Calls the host skel, loaded into this process. Clones share the library, which stays loaded as long as any
/// of them (and so any stub holding one) lives.
#[derive(Clone)]
pub struct Local {
    path: PathBuf,
    open: OpenFn,
    invoke: InvokeFn,
    close: CloseFn,
    // The entry points above come from it; it is unloaded when the last clone goes.
    library: Arc<Library>,
}

impl std::fmt::Debug for Local {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Local").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Local {
    /// Loads the skel library `location` names, or the first one the search finds.
    pub fn load(location: &SkelLocation) -> Result<Local, SkelError> {
        match location {
            SkelLocation::File { path, named_by } => Local::load_named(path, named_by),
            SkelLocation::Search => match std::env::var_os(SKEL_ENVIRONMENT).filter(|value| !value.is_empty()) {
                Some(value) => Local::load_named(Path::new(&value), &format!("${SKEL_ENVIRONMENT}")),
                None => Local::load_first(&default_skel_paths()),
            },
        }
    }

    /// Loads the first of `candidates` that exists; an error lists them all when none does.
    pub fn load_first(candidates: &[PathBuf]) -> Result<Local, SkelError> {
        match candidates.iter().find(|path| path.is_file()) {
            Some(path) => Local::load_file(path),
            None => {
                let tried: Vec<String> = candidates.iter().map(|path| path.display().to_string()).collect();
                Err(SkelError::NotFound { tried: tried.join(", ") })
            }
        }
    }

    /// Loads `path`, which `named_by` named; relative paths are taken from the current directory.
    fn load_named(path: &Path, named_by: &str) -> Result<Local, SkelError> {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if !absolute.is_file() {
            return Err(SkelError::Missing { path: absolute, named_by: named_by.to_string() });
        }
        Local::load_file(&absolute.canonicalize().unwrap_or(absolute))
    }

    /// Loads an existing library with RTLD_NOW | RTLD_LOCAL and looks up the three entry points.
    fn load_file(path: &Path) -> Result<Local, SkelError> {
        let unloadable =
            |error: libloading::Error| SkelError::Unloadable { path: path.into(), reason: error.to_string() };
        // SAFETY: loading the skel runs its initialisers; the host skel is built to be loaded this way (it is what
        // FastRPC's loader does with the DSP build). RTLD_LOCAL keeps its symbols out of the global scope.
        let library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(unloadable)?;
        let missing = |symbol: &'static str| SkelError::MissingSymbol { path: path.into(), symbol };
        // SAFETY: each symbol is looked up with the signature the skel's `entry.rs` gives it (the IDL's
        // `open`/`close` and the FastRPC invoke entry); the pointers stay valid while `library` is loaded, and
        // `Local` keeps it loaded as long as it holds them.
        let (open, invoke, close) = unsafe {
            (
                *library.get::<OpenFn>(b"lpai_direct_open\0").map_err(|_| missing("lpai_direct_open"))?,
                *library
                    .get::<InvokeFn>(b"lpai_direct_skel_handle_invoke\0")
                    .map_err(|_| missing("lpai_direct_skel_handle_invoke"))?,
                *library.get::<CloseFn>(b"lpai_direct_close\0").map_err(|_| missing("lpai_direct_close"))?,
            )
        };
        Ok(Local { path: path.to_path_buf(), open, invoke, close, library: Arc::new(library) })
    }

    /// The skel library in use.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the skel holds right now, for leak checks: the host build exports `lpai_direct_skel_host_resources`
    /// (the device skel does not); `None` for a skel without it.
    pub fn host_resources(&self) -> Option<HostResources> {
        type ResourcesFn = unsafe extern "C" fn(*mut u64, usize) -> usize;
        // SAFETY: the symbol has this signature in the skel's `entry.rs`; it is called while the library is loaded.
        let report = unsafe { self.library.get::<ResourcesFn>(b"lpai_direct_skel_host_resources\0") }.ok()?;
        let mut counts = [0u64; 5];
        // SAFETY: `counts` holds the 5 values the call is given room for.
        let known = unsafe { report(counts.as_mut_ptr(), counts.len()) };
        (known >= counts.len()).then_some(HostResources {
            handles: counts[0],
            contexts: counts[1],
            memory_blocks: counts[2],
            memory_bytes: counts[3],
            libraries: counts[4],
        })
    }
}

/// What the host skel holds at one moment (`lpai_direct_skel_host_resources`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostResources {
    /// Open handles (sessions).
    pub handles: u64,
    /// Loaded contexts.
    pub contexts: u64,
    /// Memory blocks the skel allocated and has not released: sessions, context arenas, job buffers.
    pub memory_blocks: u64,
    /// Their bytes.
    pub memory_bytes: u64,
    /// Libraries (QNN backends, system libraries) the runtime opened and has not closed.
    pub libraries: u64,
}

impl Transport for Local {
    fn name(&self) -> &'static str {
        "local"
    }

    fn place(&self) -> String {
        format!("the host skel {}", self.path.display())
    }

    fn skel_source(&self) -> String {
        self.path.display().to_string()
    }

    fn open(&mut self, uri: &CStr) -> Result<u64, i32> {
        let mut handle = 0u64;
        // SAFETY: a NUL-terminated URI and a valid out-pointer, as `lpai_direct_open` requires.
        match unsafe { (self.open)(uri.as_ptr(), &mut handle) } {
            0 => Ok(handle),
            status => Err(status),
        }
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        // SAFETY: forwarded from the caller, who promises `args` matches `scalars`.
        unsafe { (self.invoke)(handle, scalars, args) }
    }

    fn close(&mut self, handle: u64) -> i32 {
        // SAFETY: `lpai_direct_close` takes any number; one it did not give out answers AEE_EINVHANDLE.
        unsafe { (self.close)(handle) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_places_are_beside_the_executable_then_the_workspace() {
        let paths = default_skel_paths();
        let exe = std::env::current_exe().unwrap();
        assert_eq!(paths[0], exe.parent().unwrap().join(SKEL_FILE_NAME));
        assert!(paths[1].ends_with("target/release/liblpai_direct_skel.so"), "{paths:?}");
        assert!(paths[1].starts_with(workspace::root()), "{paths:?}");
    }

    #[test]
    fn a_search_that_finds_nothing_names_every_path_tried() {
        let work = tempfile::tempdir().unwrap();
        let candidates = [work.path().join("first/liblpai_direct_skel.so"), work.path().join("second.so")];
        let message = Local::load_first(&candidates).unwrap_err().to_string();
        for path in &candidates {
            assert!(message.contains(&path.display().to_string()), "{message}");
        }
        assert!(message.contains("--skel") && message.contains(SKEL_ENVIRONMENT), "{message}");
    }

    #[test]
    fn the_first_existing_candidate_is_used_and_a_non_library_is_named() {
        let work = tempfile::tempdir().unwrap();
        let not_a_library = work.path().join("liblpai_direct_skel.so");
        std::fs::write(&not_a_library, b"not an ELF file").unwrap();
        let candidates = [work.path().join("absent.so"), not_a_library.clone(), work.path().join("never.so")];
        let error = Local::load_first(&candidates).unwrap_err();
        assert!(matches!(&error, SkelError::Unloadable { path, .. } if *path == not_a_library), "{error}");
        assert!(error.to_string().contains(&not_a_library.display().to_string()), "{error}");
    }

    #[test]
    fn a_named_file_that_is_missing_names_the_file_and_who_named_it() {
        let location = SkelLocation::File { path: "/nonexistent/skel.so".into(), named_by: "--skel" };
        let message = Local::load(&location).unwrap_err().to_string();
        assert_eq!(message, "the skel library /nonexistent/skel.so (from --skel) does not exist");
    }

    #[test]
    fn a_library_without_the_entry_points_is_refused_by_symbol() {
        // The C library is loadable everywhere and is certainly not a skel.
        let libc = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"]
            .into_iter()
            .map(PathBuf::from)
            .find(|path| path.is_file())
            .expect("a libc.so.6 to load");
        let location = SkelLocation::File { path: libc.clone(), named_by: "the test" };
        let error = Local::load(&location).unwrap_err();
        assert!(matches!(error, SkelError::MissingSymbol { symbol: "lpai_direct_open", .. }), "{error}");
        assert_eq!(
            error.to_string(),
            format!(
                "{} is not an lpai-direct skel: it exports no lpai_direct_open",
                libc.canonicalize().unwrap().display()
            )
        );
    }
}
