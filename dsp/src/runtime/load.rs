//! What to load, in one request: the context binary (the caller's bytes used in place, bytes to copy, or a file
//! the DSP reads), where its tensor metadata comes from (libQnnSystem, or a metadata record checked whole), and how
//! to create the context. Every way of loading (the skel's four methods, the embedding API in Rust and C, the audio
//! module) builds one of these; [`super::Owner::load`] carries it out.

use super::error::RuntimeError;
use super::graph::GraphOptions;
use crate::platform::{Current, Message, Platform};
use core::ffi::CStr;
use lpai_direct::metadata::Record;
use lpai_direct::qnn::{Priority, ProfileLevel};

/// A context binary that the caller keeps in its own memory for as long as the context lives (firmware's model,
/// linked into its image or placed by its loader, or a framework's persistent parameter). The backend gets it where
/// it is when it meets the backend's start and size alignment, a copy in the arena otherwise.
#[derive(Clone, Copy, Debug)]
pub struct PersistentBinary<'a> {
    pub(super) memory: &'a [u8],
    pub(super) length: usize,
}

impl<'a> PersistentBinary<'a> {
    /// Exactly the binary's bytes.
    pub fn new(binary: &'a [u8]) -> PersistentBinary<'a> {
        PersistentBinary { memory: binary, length: binary.len() }
    }

    /// A binary of `length` bytes at the start of `memory`, whose remaining bytes are padding the caller owns too:
    /// a binary whose length is not a multiple of the backend's size alignment can then still be used in place.
    /// `None` when `length` is larger than `memory`.
    pub fn padded(memory: &'a [u8], length: usize) -> Option<PersistentBinary<'a>> {
        (length <= memory.len()).then_some(PersistentBinary { memory, length })
    }

    /// The binary itself (without the padding).
    pub fn bytes(&self) -> &'a [u8] {
        self.memory.get(..self.length).unwrap_or(self.memory)
    }

    /// The memory the caller gave: the binary and its padding.
    pub fn memory(&self) -> &'a [u8] {
        self.memory
    }
}

/// Where the context binary comes from. `'a` is how long an [`InPlace`](Binary::InPlace) binary stays (the
/// context must not outlive it); `'c` how long the call's own bytes or path live (only while loading).
#[derive(Clone, Copy, Debug)]
pub enum Binary<'a, 'c> {
    /// The caller's memory, kept unchanged for the context's whole life: used in place when aligned.
    InPlace(PersistentBinary<'a>),
    /// Bytes that live only during the load: copied into the arena, aligned as the backend asks.
    Copy(&'c [u8]),
    /// A file the platform reads straight into the arena.
    File(&'c CStr),
}

impl Binary<'_, '_> {
    /// The binary's size in bytes (a file's as the platform reports it).
    pub fn length(&self) -> Result<usize, RuntimeError> {
        match self {
            Binary::InPlace(binary) => Ok(binary.bytes().len()),
            Binary::Copy(bytes) => Ok(bytes.len()),
            Binary::File(path) => {
                let size = Current::file_size(path)
                    .map_err(|error| RuntimeError::Platform { what: Message::StepReadingContextBinary, error })?;
                usize::try_from(size).map_err(|_| RuntimeError::BinarySize(size))
            }
        }
    }
}

/// LPAI island (uImage) mode for the context's graphs.
#[derive(Clone, Copy, Debug, Default)]
pub enum Island<'o> {
    /// No island config.
    #[default]
    Off,
    /// Every graph in island mode.
    AllGraphs,
    /// Only the named graphs.
    Graphs(&'o [&'o CStr]),
}

/// How to create the context.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContextOptions<'o> {
    /// Ask for PERSISTENT_BINARY even if the backend does not require it.
    pub persistent_binary: bool,
    /// Context priority, if set.
    pub priority: Option<Priority>,
    /// LPAI island mode.
    pub island: Island<'o>,
    /// Per-graph settings.
    pub graph: GraphOptions,
    /// Collect profile events at this level.
    pub profiling: Option<ProfileLevel>,
}

/// One load: the binary, its metadata's source, the options.
#[derive(Clone, Copy, Debug)]
pub struct LoadRequest<'a, 'c> {
    /// The context binary.
    pub binary: Binary<'a, 'c>,
    /// The binary's metadata record, checked whole; `None` reads the metadata with libQnnSystem. A record is
    /// needed only while loading (what the context keeps of it is copied into the arena).
    pub record: Option<Record<'c>>,
    /// How to create the context.
    pub options: ContextOptions<'c>,
}

impl<'a, 'c> LoadRequest<'a, 'c> {
    /// `binary`, its metadata from libQnnSystem, default options.
    pub fn new(binary: Binary<'a, 'c>) -> LoadRequest<'a, 'c> {
        LoadRequest { binary, record: None, options: ContextOptions::default() }
    }

    /// The metadata from the metadata record `bytes` (`lpai_direct::metadata`, as `lpai-net-run inspect BIN
    /// --emit_metadata FILE` writes it) instead of libQnnSystem. The bytes are untrusted: they are checked whole
    /// here ([`RuntimeError::MalformedRecord`] says at which byte and what is wrong), then against the binary and
    /// the backend while loading (see [`super::metadata`]).
    pub fn with_record(self, bytes: &'c [u8]) -> Result<LoadRequest<'a, 'c>, RuntimeError> {
        let record = Record::parse(bytes).map_err(RuntimeError::MalformedRecord)?;
        Ok(LoadRequest { record: Some(record), ..self })
    }

    /// These options instead of the defaults.
    pub fn with_options(self, options: ContextOptions<'c>) -> LoadRequest<'a, 'c> {
        LoadRequest { options, ..self }
    }

    /// `sets` input buffer sets for every graph (1, the default, or 2: the caller fills one while a frame started
    /// with `start_frame` executes on the other; the second set costs each input's padded buffer and tensor
    /// description once more in the arena).
    pub fn with_input_sets(mut self, sets: u32) -> LoadRequest<'a, 'c> {
        self.options.graph.input_sets = sets;
        self
    }
}
