//! The embedding API: firmware in the audio or sensor PD (with or without an HLOS) runs an offline-prepared model
//! itself, frame after frame, with no IPC, no heap and no file access.
//!
//! The firmware opens the backend, and libQnnSystem if it has one, once ([`Libraries::open`] by library names, or
//! [`Libraries::new`] for a backend it created itself, for example from a libQnnLpai linked into its image with
//! [`Backend::from_providers`](crate::runtime::Backend::from_providers)) and creates an [`Embed`] over memory it
//! owns ([`Embed::new`] on a [`Borrowed`] footing). [`Embed::load`] carries out one [`LoadRequest`]: typically a
//! [`PersistentBinary`] that the firmware keeps for as long as the embedding lives, used without a copy when it
//! meets the backend's alignment, its tensor metadata read by libQnnSystem, or from a metadata record
//! ([`LoadRequest::with_record`]: `lpai_direct::metadata`, made on a host by `lpai-net-run inspect BIN
//! --emit_metadata FILE` and linked beside the binary), checked whole before use and against the backend while
//! loading, so no libQnnSystem is needed at all. Every input and output then has one native buffer for good
//! ([`Embed::input_mut`], [`Embed::output`]: the same memory every frame), and [`Embed::execute_frame`] runs
//! graphExecute once per frame, answering `Ok(None)` while LPAI needs more frames (EARLY_TERMINATION). The C API
//! over this module is the `lpai-direct-embed` crate (`dsp/include/lpai_direct_embed.h`).
//!
//! ```ignore
//! let libraries = Libraries::open(c"libQnnLpai.so", Some(c"libQnnSystem.so"), &BackendOptions::default())?;
//! let mut embed = Embed::new(Borrowed::new(&libraries, &mut ARENA));
//! let model = Binary::InPlace(PersistentBinary::new(&MODEL));     // used in place when aligned
//! embed.load(&LoadRequest::new(model))?;
//! // Or with no libQnnSystem in the PD (`Libraries::open(.., None, ..)`), from the record made on a host:
//! // embed.load(&LoadRequest::new(model).with_record(&MODEL_RECORD)?)?;
//! loop {
//!     sensor.read(embed.input_mut(0)?);                 // native bytes, straight into the bound buffer
//!     if let Some(execution) = embed.execute_frame()? {
//!         publish(embed.output(0)?, execution.micros());
//!     }
//! }
//! ```
//!
//! A model whose graphs use custom ops needs their op packages registered on the libraries before the load:
//! [`Libraries::register_op_package`] (path, interface provider, target), once per package.
//!
//! Opening and freeing the libraries and loading and freeing the context run under the PD-wide vendor-calls lock
//! ([`crate::platform::VendorCalls`]), as in the skel, so an embedding and skel handles in the same PD never create
//! or free vendor objects at the same time; frames do not take it.

use crate::log;
use crate::platform::{Level, Message};
use crate::runtime::{Backend, Context, Execution, Footing, Graph, Owner, RuntimeError, TensorInfo};
pub use crate::runtime::{Binary, Borrowed, Libraries, LoadRequest, PersistentBinary};
use core::ffi::CStr;
use core::ptr::NonNull;

mod asynchronous;

/// Which side of the graph a tensor is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// A graph input.
    Input,
    /// A graph output.
    Output,
}

/// A model running on a footing (libraries and arena memory: [`Borrowed`] from the caller, or owned): one context
/// and its selected graph. Dropping it frees the context (under the vendor-calls lock), then the footing.
pub struct Embed<F> {
    owner: Owner<F>,
    graph: usize,
    last: Option<Execution>,
}

impl<'a, F: Footing<'a>> Embed<F> {
    /// An embedding with nothing loaded on `footing`: everything the model needs (the binary's copy when it cannot
    /// be used in place, tensor tables and buffers, LPAI scratch and persistent memory) comes from its arena.
    pub fn new(footing: F) -> Embed<F> {
        Embed { owner: Owner::new(footing), graph: 0, last: None }
    }

    /// The backend (who it is, its alignment and persistent-binary needs).
    pub fn backend(&self) -> &Backend {
        self.owner.libraries().backend()
    }

    /// The libraries the embedding loads on ([`Libraries::register_op_package`] before [`Embed::load`]).
    pub fn libraries(&self) -> &Libraries {
        self.owner.libraries()
    }

    /// Loads the context binary as `request` says ([`Owner::load`]) and selects its first graph. One binary per
    /// embedding: a second load is refused. A request with no record on libraries without libQnnSystem is refused
    /// with [`RuntimeError::NoMetadata`]; a record's own refusals are [`RuntimeError::MalformedRecord`] (from
    /// [`LoadRequest::with_record`]), [`RuntimeError::RecordGraphMissing`] and, at the first frame,
    /// [`RuntimeError::RecordTensorsRefused`].
    pub fn load(&mut self, request: &LoadRequest<'a, '_>) -> Result<(), RuntimeError> {
        self.refuse_in_flight(Message::RefusedLoad)?;
        self.owner.load(request)?;
        self.graph = 0;
        self.last = None;
        let binary = if self.binary_in_place() == Some(true) { Message::InPlace } else { Message::Copied };
        let metadata = if request.record.is_some() { Message::ARecord } else { Message::LibQnnSystem };
        let (graphs, used, capacity) = (self.graph_count(), self.arena_used(), self.arena_capacity());
        log!(Level::Info, Message::EmbedLoaded, graphs, binary, metadata, used, capacity);
        Ok(())
    }
}

impl<F> Embed<F> {
    /// Whether a binary is loaded.
    pub fn is_loaded(&self) -> bool {
        self.owner.is_loaded()
    }

    /// Whether the backend got the caller's binary itself (`Some(true)`) or a copy (`Some(false)`); `None`
    /// before [`Embed::load`].
    pub fn binary_in_place(&self) -> Option<bool> {
        self.owner.context().map(Context::binary_in_place)
    }

    /// Graphs in the loaded binary (0 before [`Embed::load`]).
    pub fn graph_count(&self) -> usize {
        self.owner.context().map_or(0, Context::graph_count)
    }

    /// The index of the graph called `name`.
    pub fn graph_index(&self, name: &str) -> Option<usize> {
        self.owner.context()?.graph_index(name)
    }

    /// Selects the graph the tensor calls and [`Embed::execute_frame`] work on (the first after a load).
    pub fn select_graph(&mut self, index: usize) -> Result<(), RuntimeError> {
        if index >= self.graph_count() {
            return Err(RuntimeError::NoSuchGraph);
        }
        self.refuse_in_flight(Message::RefusedSelectGraph)?;
        self.graph = index;
        self.last = None;
        Ok(())
    }

    /// The selected graph's index.
    pub fn selected_graph(&self) -> usize {
        self.graph
    }

    #[inline(always)]
    fn graph(&self) -> Result<&Graph<'_>, RuntimeError> {
        self.owner.context().and_then(|context| context.graph(self.graph)).ok_or(RuntimeError::NoSuchGraph)
    }

    /// Runs `work` on the selected graph; [`RuntimeError::NoSuchGraph`] when nothing is loaded.
    #[inline(always)]
    fn with_graph<'s, R>(
        &'s mut self,
        work: impl for<'c> FnOnce(&'s mut Graph<'c>) -> Result<R, RuntimeError>,
    ) -> Result<R, RuntimeError> {
        let graph = self.graph;
        self.owner.with_context(|context| match context.and_then(|context| context.graph_mut(graph)) {
            Some(graph) => work(graph),
            None => Err(RuntimeError::NoSuchGraph),
        })
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
        self.with_graph(|graph| {
            graph.refuse_running_inputs()?;
            graph.input_bytes_mut(index).ok_or(RuntimeError::NoSuchTensor { index })
        })
    }

    /// The native buffer of output `index` (exactly the tensor's bytes): bound at load, the same memory every
    /// frame; it holds the last ready frame's result.
    pub fn output(&self, index: usize) -> Result<&[u8], RuntimeError> {
        let graph = self.graph()?;
        graph.refuse_in_flight(Message::RefusedReadingOutput)?;
        graph.output_bytes(index).ok_or(RuntimeError::NoSuchTensor { index })
    }

    /// Input `index`'s native buffer as the pointer the backend itself is given, and its bytes: the same for every
    /// frame until the embedding is dropped, for callers that bind it once and fill it through the pointer (the C
    /// API). Writing it while [`Embed::execute_frame`] runs, or after the embedding is dropped, is the caller's
    /// mistake; safe Rust uses [`Embed::input_mut`].
    pub fn input_pointer(&self, index: usize) -> Result<(NonNull<u8>, usize), RuntimeError> {
        let graph = self.graph()?;
        graph.refuse_running_inputs()?;
        graph.input_buffer(index).ok_or(RuntimeError::NoSuchTensor { index })
    }

    /// Output `index`'s native buffer as the pointer the backend itself is given, and its bytes: as
    /// [`Embed::input_pointer`]; safe Rust uses [`Embed::output`].
    pub fn output_pointer(&self, index: usize) -> Result<(NonNull<u8>, usize), RuntimeError> {
        let graph = self.graph()?;
        graph.refuse_in_flight(Message::RefusedBindingOutput)?;
        graph.output_buffer(index).ok_or(RuntimeError::NoSuchTensor { index })
    }

    /// Runs graphExecute once on the selected graph's input buffers: `Ok(Some(execution))` when the outputs are
    /// ready, `Ok(None)` when the backend answered EARLY_TERMINATION (feed the next frame, then call again).
    /// Allocates nothing and reads no file. Never inlined: one frame's work is one function, which
    /// `lpai-packet-bench` counts in the example programs.
    #[inline(never)]
    pub fn execute_frame(&mut self) -> Result<Option<Execution>, RuntimeError> {
        let execution = self.with_graph(|graph| graph.execute_frame())?;
        if execution.is_some() {
            self.last = execution;
        }
        Ok(execution)
    }

    /// The DSP-clock time of the last execution that made the outputs ready, in microseconds.
    pub fn last_execute_us(&self) -> Option<u64> {
        self.last.map(|execution| execution.micros())
    }

    /// Arena bytes the load used (the high-water mark, since nothing is freed before the embedding is).
    pub fn arena_used(&self) -> usize {
        self.owner.arena_used()
    }

    /// The arena's size.
    pub fn arena_capacity(&self) -> usize {
        self.owner.arena_capacity()
    }
}
