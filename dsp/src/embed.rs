//! The embedding API: firmware in the audio or sensor PD (with or without an HLOS) runs an offline-prepared model
//! itself, frame after frame, with no IPC, no heap and no file access.
//!
//! The firmware opens the backend, and libQnnSystem if it has one, once ([`Libraries::open`] by library names,
//! [`Libraries::open_backend_only`] with no libQnnSystem, or [`Libraries::new`] / [`Libraries::backend_only`] for a
//! backend it created itself, for example from a libQnnLpai linked into its image with
//! [`Backend::from_providers`]) and creates an [`Embed`] over memory it owns ([`Embed::new`]). [`Embed::load`]
//! loads a [`PersistentBinary`] that the firmware keeps for as long as the embedding lives, without copying it
//! when it meets the backend's alignment, its tensor metadata read by libQnnSystem; [`Embed::load_with_record`]
//! does the same with the metadata from a metadata record (`lpai_direct::metadata`, made on a host by
//! `lpai-net-run inspect BIN --emit_metadata FILE` and linked beside the binary), checked whole before use and
//! against the backend while loading, so no libQnnSystem is needed at all. Every input and output then has one
//! native buffer for good ([`Embed::input_mut`], [`Embed::output`]: the same memory every frame), and
//! [`Embed::execute_frame`] runs graphExecute once per frame, answering `Ok(None)` while LPAI needs more frames
//! (EARLY_TERMINATION). The C API over this module is the `lpai-direct-embed` crate
//! (`dsp/include/lpai_direct_embed.h`).
//!
//! ```ignore
//! let libraries = Libraries::open(c"libQnnLpai.so", c"libQnnSystem.so")?;
//! let mut embed = Embed::new(&mut ARENA, &libraries);
//! embed.load(PersistentBinary::new(&MODEL))?;          // used in place when aligned
//! // Or with no libQnnSystem in the PD, from the record made on a host:
//! // let libraries = Libraries::open_backend_only(c"libQnnLpai.so")?;
//! // embed.load_with_record(PersistentBinary::new(&MODEL), &MODEL_RECORD)?;
//! loop {
//!     sensor.read(embed.input_mut(0)?);                 // native bytes, straight into the bound buffer
//!     if let Some(execution) = embed.execute_frame()? {
//!         publish(embed.output(0)?, execution.micros());
//!     }
//! }
//! ```
//!
//! Creating and freeing the backend, system contexts and contexts runs under the PD-wide vendor-calls lock
//! ([`VendorCalls`]), as in the skel, so an embedding and skel handles in the same PD never create or free vendor
//! objects at the same time; frames do not take it.

use crate::log;
use crate::platform::{Level, VendorCalls};
use crate::runtime::{
    Arena, Backend, BackendOptions, Context, ContextOptions, Execution, Graph, Metadata, PersistentBinary,
    RuntimeError, SystemLibrary, TensorInfo,
};
use core::ffi::CStr;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use lpai_direct::metadata::Record;

/// Which side of the graph a tensor is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// A graph input.
    Input,
    /// A graph output.
    Output,
}

/// The backend, and libQnnSystem when the PD has one, that embeddings run on; kept by the caller for as long as
/// its embeddings live (they borrow it). Dropping it frees libQnnSystem, then the backend, under the vendor-calls
/// lock.
pub struct Libraries {
    // Dropped by hand in `Drop`, under the lock.
    backend: ManuallyDrop<Backend>,
    system: ManuallyDrop<Option<SystemLibrary>>,
}

impl Libraries {
    /// Loads the backend library (a registered built-in library of that name first, then the platform's loader)
    /// with default options, and libQnnSystem the same way.
    pub fn open(backend_library: &CStr, system_library: &CStr) -> Result<Libraries, RuntimeError> {
        let _vendor = VendorCalls::lock();
        let backend = Backend::load(backend_library, &BackendOptions::default())?;
        let system = SystemLibrary::load(system_library)?;
        Ok(Libraries::new(backend, system))
    }

    /// Loads the backend library as [`Libraries::open`] does, and no libQnnSystem: every load then takes a
    /// metadata record ([`Embed::load_with_record`]).
    pub fn open_backend_only(backend_library: &CStr) -> Result<Libraries, RuntimeError> {
        let _vendor = VendorCalls::lock();
        let backend = Backend::load(backend_library, &BackendOptions::default())?;
        Ok(Libraries::backend_only(backend))
    }

    /// Takes a backend and libQnnSystem the caller created (under [`VendorCalls::lock`] when skel handles may run
    /// in the same PD).
    pub fn new(backend: Backend, system: SystemLibrary) -> Libraries {
        Libraries { backend: ManuallyDrop::new(backend), system: ManuallyDrop::new(Some(system)) }
    }

    /// Takes a backend the caller created, with no libQnnSystem (see [`Libraries::open_backend_only`]).
    pub fn backend_only(backend: Backend) -> Libraries {
        Libraries { backend: ManuallyDrop::new(backend), system: ManuallyDrop::new(None) }
    }

    /// The backend (who it is, its alignment and persistent-binary needs).
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// libQnnSystem; `None` for backend-only libraries.
    pub fn system(&self) -> Option<&SystemLibrary> {
        self.system.as_ref()
    }
}

impl Drop for Libraries {
    fn drop(&mut self) {
        let _vendor = VendorCalls::lock();
        // SAFETY: each is dropped once, here, and never used again; every embedding that borrowed them is gone.
        unsafe {
            ManuallyDrop::drop(&mut self.system);
            ManuallyDrop::drop(&mut self.backend);
        }
    }
}

/// A model running in caller-owned memory on borrowed [`Libraries`]: one context and its selected graph.
///
/// Dropping it frees the context (under the vendor-calls lock); the arena, the binary and the libraries stay the
/// caller's.
pub struct Embed<'a> {
    arena: Arena<'a>,
    libraries: &'a Libraries,
    context: Option<Context<'a>>,
    graph: usize,
    last: Option<Execution>,
}

impl<'a> Embed<'a> {
    /// Takes `memory` as the arena: everything the model needs (the binary's copy when it cannot be used in place,
    /// tensor tables and buffers, LPAI scratch and persistent memory) comes from it.
    pub fn new(memory: &'a mut [u8], libraries: &'a Libraries) -> Embed<'a> {
        Embed { arena: Arena::new(memory), libraries, context: None, graph: 0, last: None }
    }

    /// The backend (who it is, its alignment and persistent-binary needs).
    pub fn backend(&self) -> &Backend {
        self.libraries.backend()
    }

    /// Loads the context binary with default options: see [`Embed::load_with_options`].
    pub fn load(&mut self, binary: PersistentBinary<'a>) -> Result<(), RuntimeError> {
        self.load_with_options(binary, &ContextOptions::default())
    }

    /// Loads the context binary, which the caller keeps unchanged until this embedding is dropped, its tensor
    /// metadata read by libQnnSystem: the backend gets it in place when it meets the backend's alignment (see
    /// [`Context::load_persistent`]), a copy in the arena otherwise. Selects the first graph. One binary per
    /// embedding: a second load is refused. Without libQnnSystem ([`Libraries::open_backend_only`]) it is
    /// refused with [`RuntimeError::NoMetadata`]: use [`Embed::load_with_record`].
    pub fn load_with_options(
        &mut self,
        binary: PersistentBinary<'a>,
        options: &ContextOptions<'_>,
    ) -> Result<(), RuntimeError> {
        self.load_from(binary, None, options)
    }

    /// Loads the context binary as [`Embed::load`] does, with its tensor metadata from `record`, a metadata record
    /// (`lpai_direct::metadata`; `lpai-net-run inspect BIN --emit_metadata FILE` writes one) instead of
    /// libQnnSystem, which then need not exist: see [`Embed::load_with_record_and_options`].
    pub fn load_with_record(&mut self, binary: PersistentBinary<'a>, record: &[u8]) -> Result<(), RuntimeError> {
        self.load_with_record_and_options(binary, record, &ContextOptions::default())
    }

    /// [`Embed::load_with_options`] with the tensor metadata from `record`. The record's bytes are untrusted:
    /// they are checked whole first ([`RuntimeError::MalformedRecord`] says where and what is wrong), then
    /// against the backend while loading (a graph the binary lacks is refused by name,
    /// [`RuntimeError::RecordGraphMissing`]; tensors the backend refuses at the first frame,
    /// [`RuntimeError::RecordTensorsRefused`]). What the embedding needs of the record is copied into the arena,
    /// so `record` is needed only during this call. Works with and without libQnnSystem (which it does not use).
    pub fn load_with_record_and_options(
        &mut self,
        binary: PersistentBinary<'a>,
        record: &[u8],
        options: &ContextOptions<'_>,
    ) -> Result<(), RuntimeError> {
        let record = Record::parse(record).map_err(RuntimeError::MalformedRecord)?;
        self.load_from(binary, Some(record), options)
    }

    /// Loads `binary` with its metadata from `record`, or from libQnnSystem when there is none.
    fn load_from(
        &mut self,
        binary: PersistentBinary<'a>,
        record: Option<Record<'_>>,
        options: &ContextOptions<'_>,
    ) -> Result<(), RuntimeError> {
        if self.context.is_some() {
            return Err(RuntimeError::TooMany { what: "context binaries per embedding", count: 2, limit: 1 });
        }
        let metadata = match (record, self.libraries.system()) {
            (Some(record), _) => Metadata::Record(record),
            (None, Some(system)) => Metadata::System(system),
            (None, None) => return Err(RuntimeError::NoMetadata),
        };
        let backend = self.libraries.backend();
        let context = {
            let _vendor = VendorCalls::lock();
            Context::load_persistent_with(backend, metadata, &self.arena, binary, options)?
        };
        log!(
            Level::Info,
            "embed: loaded ",
            context.graph_count(),
            " graph(s), binary ",
            if context.binary_in_place() { "in place" } else { "copied" },
            ", metadata from ",
            if record.is_some() { "a record" } else { "libQnnSystem" },
            ", arena used ",
            self.arena.used(),
            " of ",
            self.arena.capacity(),
            " B"
        );
        self.context = Some(context);
        self.graph = 0;
        self.last = None;
        Ok(())
    }

    /// Whether a binary is loaded.
    pub fn is_loaded(&self) -> bool {
        self.context.is_some()
    }

    /// Whether the backend got the caller's binary itself (`Some(true)`) or a copy (`Some(false)`); `None`
    /// before [`Embed::load`].
    pub fn binary_in_place(&self) -> Option<bool> {
        self.context.as_ref().map(Context::binary_in_place)
    }

    /// Graphs in the loaded binary (0 before [`Embed::load`]).
    pub fn graph_count(&self) -> usize {
        self.context.as_ref().map_or(0, Context::graph_count)
    }

    /// The index of the graph called `name`.
    pub fn graph_index(&self, name: &str) -> Option<usize> {
        self.context.as_ref()?.graph_index(name)
    }

    /// Selects the graph the tensor calls and [`Embed::execute_frame`] work on (the first after a load).
    pub fn select_graph(&mut self, index: usize) -> Result<(), RuntimeError> {
        if index >= self.graph_count() {
            return Err(RuntimeError::NoSuchGraph);
        }
        self.graph = index;
        self.last = None;
        Ok(())
    }

    /// The selected graph's index.
    pub fn selected_graph(&self) -> usize {
        self.graph
    }

    fn graph(&self) -> Result<&Graph<'a>, RuntimeError> {
        self.context.as_ref().and_then(|context| context.graph(self.graph)).ok_or(RuntimeError::NoSuchGraph)
    }

    fn graph_mut(&mut self) -> Result<&mut Graph<'a>, RuntimeError> {
        let graph = self.graph;
        self.context.as_mut().and_then(|context| context.graph_mut(graph)).ok_or(RuntimeError::NoSuchGraph)
    }

    /// The selected graph's name.
    pub fn graph_name(&self) -> Result<&str, RuntimeError> {
        Ok(self.graph()?.name())
    }

    /// The selected graph's name as the NUL-terminated string the binary's description holds (empty when it has
    /// none), for C callers.
    pub fn graph_c_name(&self) -> Result<&CStr, RuntimeError> {
        Ok(self.graph()?.c_name().unwrap_or(c""))
    }

    /// Inputs or outputs of the selected graph (0 before [`Embed::load`]).
    pub fn tensor_count(&self, direction: Direction) -> usize {
        match (self.graph(), direction) {
            (Ok(graph), Direction::Input) => graph.input_count(),
            (Ok(graph), Direction::Output) => graph.output_count(),
            (Err(_), _) => 0,
        }
    }

    /// Describes input or output `index` of the selected graph: name, id, data type, shape, native bytes, scale
    /// and offset.
    pub fn tensor(&self, direction: Direction, index: usize) -> Result<TensorInfo<'_>, RuntimeError> {
        let graph = self.graph()?;
        let info = match direction {
            Direction::Input => graph.input(index),
            Direction::Output => graph.output(index),
        };
        info.ok_or(RuntimeError::NoSuchTensor { index })
    }

    /// The native buffer of input `index` (exactly the tensor's bytes): bound at load, the same memory every
    /// frame; fill it before [`Embed::execute_frame`].
    pub fn input_mut(&mut self, index: usize) -> Result<&mut [u8], RuntimeError> {
        self.graph_mut()?.input_bytes_mut(index).ok_or(RuntimeError::NoSuchTensor { index })
    }

    /// The native buffer of output `index` (exactly the tensor's bytes): bound at load, the same memory every
    /// frame; it holds the last ready frame's result.
    pub fn output(&self, index: usize) -> Result<&[u8], RuntimeError> {
        self.graph()?.output_bytes(index).ok_or(RuntimeError::NoSuchTensor { index })
    }

    /// Input `index`'s native buffer as the pointer the backend itself is given, and its bytes: the same for every
    /// frame until the embedding is dropped, for callers that bind it once and fill it through the pointer (the C
    /// API). Writing it while [`Embed::execute_frame`] runs, or after the embedding is dropped, is the caller's
    /// mistake; safe Rust uses [`Embed::input_mut`].
    pub fn input_pointer(&self, index: usize) -> Result<(NonNull<u8>, usize), RuntimeError> {
        self.graph()?.input_buffer(index).ok_or(RuntimeError::NoSuchTensor { index })
    }

    /// Output `index`'s native buffer as the pointer the backend itself is given, and its bytes: as
    /// [`Embed::input_pointer`]; safe Rust uses [`Embed::output`].
    pub fn output_pointer(&self, index: usize) -> Result<(NonNull<u8>, usize), RuntimeError> {
        self.graph()?.output_buffer(index).ok_or(RuntimeError::NoSuchTensor { index })
    }

    /// Runs graphExecute once on the selected graph's input buffers: `Ok(Some(execution))` when the outputs are
    /// ready, `Ok(None)` when the backend answered EARLY_TERMINATION (feed the next frame, then call again).
    /// Allocates nothing and reads no file. Never inlined: one frame's work is one function, which
    /// `lpai-packet-bench` counts in the example programs.
    #[inline(never)]
    pub fn execute_frame(&mut self) -> Result<Option<Execution>, RuntimeError> {
        let execution = self.graph_mut()?.execute_frame()?;
        if execution.is_some() {
            self.last = execution;
        }
        Ok(execution)
    }

    /// The DSP-clock time of the last execution that made the outputs ready, in microseconds.
    pub fn last_execute_us(&self) -> Option<u64> {
        self.last.map(|execution| execution.micros())
    }

    /// Arena bytes used so far (the high-water mark, since nothing is freed before the embedding is).
    pub fn arena_used(&self) -> usize {
        self.arena.used()
    }

    /// The arena's size.
    pub fn arena_capacity(&self) -> usize {
        self.arena.capacity()
    }
}

impl Drop for Embed<'_> {
    fn drop(&mut self) {
        let _vendor = VendorCalls::lock();
        self.context = None;
    }
}

/// The contract model of libQnnLpai and its system library as built-in libraries, for the qemu examples of
/// the embedding API (feature `contract-model`) and the self-tests; never part of a device build.
#[cfg(any(test, feature = "contract-model", feature = "self-test"))]
pub mod contract_model {
    use crate::platform::libraries::{register_builtin_libraries, BuiltinLibrary, BuiltinSymbol, BuiltinsFixed};

    /// `libQnnLpaiContract.so` and `libQnnSystemContract.so`, linked in.
    pub const LIBRARIES: [BuiltinLibrary; 2] = [
        BuiltinLibrary {
            name: lpai_contract_model::LPAI_LIBRARY_NAME,
            symbols: &[BuiltinSymbol::backend_providers(lpai_contract_model::lpai_providers)],
        },
        BuiltinLibrary {
            name: lpai_contract_model::SYSTEM_LIBRARY_NAME,
            symbols: &[BuiltinSymbol::system_providers(lpai_contract_model::system_providers)],
        },
    ];

    /// [`LIBRARIES`] as a set to register.
    pub static BUILTINS: &[BuiltinLibrary] = &LIBRARIES;

    /// Registers [`BUILTINS`] (once per program; the same set again is fine).
    pub fn register() -> Result<(), BuiltinsFixed> {
        register_builtin_libraries(&BUILTINS)
    }
}
