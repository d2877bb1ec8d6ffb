//! A loaded context: the binary in the arena, the QNN context, its graphs, and teardown in reverse order.

use super::arena::Arena;
use super::backend::Backend;
use super::error::{check, require, RuntimeError};
use super::graph::{Graph, GraphOptions};
use super::metadata::{Description, Metadata};
use super::system::SystemLibrary;
use crate::log;
use crate::platform::Hex;
use crate::platform::{Current, Level, Platform};
use core::ffi::{c_void, CStr};
use core::ptr;
use lpai_direct::qnn::{self, lpai, ContextConfig, ContextHandle, Priority, ProfileHandle, ProfileLevel};

/// Most graphs one context may hold.
pub const MAX_GRAPHS: usize = 8;

/// Where the context binary comes from.
#[derive(Clone, Copy, Debug)]
pub enum BinarySource<'s> {
    /// Bytes the caller already holds (copied into the arena, aligned as the backend asks).
    Bytes(&'s [u8]),
    /// A file the platform reads straight into the arena.
    File(&'s CStr),
}

/// A context binary that the caller keeps in its own memory for as long as the context lives (firmware's model,
/// linked into its image or placed by its loader). [`Context::load_persistent`] hands it to the backend where it
/// is when it meets the backend's start and size alignment, and copies it into the arena otherwise.
#[derive(Clone, Copy, Debug)]
pub struct PersistentBinary<'a> {
    memory: &'a [u8],
    length: usize,
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

/// How to load a context.
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

/// A created context and its graphs. Dropping it frees the context, then the profile, then the binary
/// description (libQnnSystem's; a record's lives in the arena); the binary itself lives in the caller's arena until
/// the caller drops that.
pub struct Context<'a> {
    backend: &'a Backend,
    handle: ContextHandle,
    profile: ProfileHandle,
    graphs: heapless::Vec<Graph<'a>, MAX_GRAPHS>,
    binary_bytes: usize,
    binary_in_place: bool,
    persistent: bool,
    // Declared last: dropped after `Drop::drop` freed the context that was built from it.
    description: Description<'a>,
}

/// Reads or copies the binary into an aligned arena buffer.
fn place_binary<'a>(
    backend: &Backend,
    arena: &Arena<'a>,
    source: BinarySource<'_>,
) -> Result<&'a mut [u8], RuntimeError> {
    let size = match source {
        BinarySource::Bytes(bytes) => bytes.len() as u64,
        BinarySource::File(path) => Current::file_size(path)
            .map_err(|error| RuntimeError::Platform { what: "reading the context binary", error })?,
    };
    let length = usize::try_from(size).ok().filter(|&n| n > 0).ok_or(RuntimeError::BinarySize(size))?;
    let properties = backend.properties();
    let rounded = length.checked_next_multiple_of(properties.size_alignment).ok_or(RuntimeError::BinarySize(size))?;
    let buffer = arena.bytes(rounded, properties.start_alignment)?;
    let binary = buffer.get_mut(..length).ok_or(RuntimeError::BinarySize(size))?;
    match source {
        BinarySource::Bytes(bytes) => {
            lpai_direct::codec::copy_prefix(binary, bytes);
        }
        BinarySource::File(path) => {
            let read = Current::read_file(path, binary)
                .map_err(|error| RuntimeError::Platform { what: "reading the context binary", error })?;
            if read != length {
                return Err(RuntimeError::BinarySize(read as u64));
            }
        }
    }
    Ok(binary)
}

/// Uses a caller's persistent binary where it is when its start and its memory (binary plus padding) meet the
/// backend's start and size alignment; otherwise copies it into the arena and says so. Answers the bytes the
/// backend gets and whether they are the caller's own.
fn place_persistent<'a>(
    backend: &Backend,
    arena: &Arena<'a>,
    binary: PersistentBinary<'a>,
) -> Result<(&'a [u8], bool), RuntimeError> {
    let bytes = binary.bytes();
    if bytes.is_empty() {
        return Err(RuntimeError::BinarySize(0));
    }
    let properties = backend.properties();
    let address = bytes.as_ptr() as usize;
    let start_aligned = address.is_multiple_of(properties.start_alignment);
    let rounded = bytes.len().checked_next_multiple_of(properties.size_alignment);
    let size_aligned = rounded.is_some_and(|rounded| rounded <= binary.memory().len());
    if start_aligned && size_aligned {
        log!(Level::Info, "context binary used in place at ", Hex::of(address), " (", bytes.len(), " B), no copy");
        return Ok((bytes, true));
    }
    if !start_aligned {
        log!(
            Level::Warn,
            "context binary at ",
            Hex::of(address),
            " (",
            bytes.len(),
            " B) not at a multiple of ",
            properties.start_alignment,
            " as the backend wants: copied into the arena"
        );
    } else {
        log!(
            Level::Warn,
            "context binary at ",
            Hex::of(address),
            " (",
            bytes.len(),
            " B, ",
            binary.memory().len(),
            " B of memory) not padded to a multiple of ",
            properties.size_alignment,
            " B: copied into the arena"
        );
    }
    let copy = place_binary(backend, arena, BinarySource::Bytes(bytes))?;
    Ok((copy, false))
}

impl<'a> Context<'a> {
    /// Loads a context binary: places it in the arena, reads its metadata through libQnnSystem, creates the
    /// context (PERSISTENT_BINARY when the backend requires it or the caller asks), and prepares every graph.
    pub fn load(
        backend: &'a Backend,
        system: &'a SystemLibrary,
        arena: &Arena<'a>,
        source: BinarySource<'_>,
        options: &ContextOptions<'_>,
    ) -> Result<Context<'a>, RuntimeError> {
        Context::load_with(backend, Metadata::System(system), arena, source, options)
    }

    /// [`Context::load`] with the metadata from `metadata`: libQnnSystem, or a checked metadata record (see
    /// [`super::metadata`] for what is then checked against the backend).
    pub fn load_with(
        backend: &'a Backend,
        metadata: Metadata<'a, '_>,
        arena: &Arena<'a>,
        source: BinarySource<'_>,
        options: &ContextOptions<'_>,
    ) -> Result<Context<'a>, RuntimeError> {
        let binary = place_binary(backend, arena, source)?;
        Context::from_placed(backend, metadata, arena, binary, false, options)
    }

    /// Loads a context binary the caller keeps in its own memory for the context's whole life (the borrow `'a`
    /// ends only after the context is freed): the backend gets the caller's bytes themselves when they start at
    /// the backend's start alignment and `binary`'s memory covers the binary rounded up to its size alignment;
    /// otherwise a copy in the arena (logged as a warning). [`Context::binary_in_place`] says which. Everything
    /// else is as for [`Context::load`].
    pub fn load_persistent(
        backend: &'a Backend,
        system: &'a SystemLibrary,
        arena: &Arena<'a>,
        binary: PersistentBinary<'a>,
        options: &ContextOptions<'_>,
    ) -> Result<Context<'a>, RuntimeError> {
        Context::load_persistent_with(backend, Metadata::System(system), arena, binary, options)
    }

    /// [`Context::load_persistent`] with the metadata from `metadata`, as [`Context::load_with`].
    pub fn load_persistent_with(
        backend: &'a Backend,
        metadata: Metadata<'a, '_>,
        arena: &Arena<'a>,
        binary: PersistentBinary<'a>,
        options: &ContextOptions<'_>,
    ) -> Result<Context<'a>, RuntimeError> {
        let (binary, in_place) = place_persistent(backend, arena, binary)?;
        Context::from_placed(backend, metadata, arena, binary, in_place, options)
    }

    /// Creates the context from a binary that stays where it is for `'a`, and prepares every graph. Inlined into
    /// both loaders, so the skel's `load` path keeps one frame (the stack budget).
    #[inline(always)]
    fn from_placed(
        backend: &'a Backend,
        metadata: Metadata<'a, '_>,
        arena: &Arena<'a>,
        binary: &'a [u8],
        binary_in_place: bool,
        options: &ContextOptions<'_>,
    ) -> Result<Context<'a>, RuntimeError> {
        let description = Description::of(metadata, binary, arena)?;
        let graph_count = description.graphs()?.len();
        if graph_count > MAX_GRAPHS {
            return Err(RuntimeError::TooMany { what: "graphs", count: graph_count, limit: MAX_GRAPHS });
        }
        let required_by_backend = backend.properties().requires_persistent_binary;
        let mut context = Context {
            backend,
            handle: ptr::null_mut(),
            profile: ptr::null_mut(),
            graphs: heapless::Vec::new(),
            binary_bytes: binary.len(),
            binary_in_place,
            persistent: required_by_backend || options.persistent_binary,
            description,
        };
        match (options.profiling, backend.table().profile_create) {
            (None, _) => {}
            // Profiling is an extra: a backend without it runs the graphs unprofiled (no events to read).
            (Some(_), None) => log!(
                Level::Warn,
                "backend ",
                backend.info().name.as_str(),
                " has no profileCreate: running without QNN profile events"
            ),
            (Some(level), Some(create)) => {
                // SAFETY: a created backend and a valid out-pointer.
                check(unsafe { create(backend.handle(), level, &mut context.profile) }, "profileCreate")?;
            }
        }
        context.create(binary, options, required_by_backend)?;
        let graph_options = options.graph;
        let (graphs, from_record) = (context.description.graphs()?, context.description.is_record());
        for info in graphs {
            let graph =
                Graph::prepare(backend, context.handle, info, arena, &graph_options, context.profile, from_record)?;
            let _ = context.graphs.push(graph);
        }
        log!(
            Level::Info,
            "context loaded: ",
            context.graphs.len(),
            " graph(s), binary ",
            context.binary_bytes,
            " B, arena used ",
            arena.used(),
            " B"
        );
        Ok(context)
    }

    fn create(
        &mut self,
        binary: &[u8],
        options: &ContextOptions<'_>,
        required_by_backend: bool,
    ) -> Result<(), RuntimeError> {
        let backend = self.backend;
        let is_lpai = backend.is_lpai();
        let mut island: heapless::Vec<lpai::ContextCustomConfig, MAX_GRAPHS> = heapless::Vec::new();
        let enable_island = |config: *mut c_void| lpai::ContextCustomConfig {
            option: lpai::ContextConfigOption::ENABLE_ISLAND,
            config,
        };
        match options.island {
            Island::Off => {}
            _ if !is_lpai => {
                log!(Level::Info, "backend ", backend.info().name.as_str(), " is not LPAI: skipping ENABLE_ISLAND")
            }
            Island::AllGraphs => {
                let _ = island.push(enable_island(ptr::null_mut()));
            }
            Island::Graphs(names) => {
                for name in names {
                    island.push(enable_island(name.as_ptr().cast_mut().cast())).map_err(|_| RuntimeError::TooMany {
                        what: "island graph names",
                        count: names.len(),
                        limit: MAX_GRAPHS,
                    })?;
                }
            }
        }
        let mut configs: heapless::Vec<ContextConfig, { MAX_GRAPHS + 2 }> = heapless::Vec::new();
        if self.persistent {
            log!(
                Level::Info,
                "asking for PERSISTENT_BINARY (",
                if required_by_backend { "the backend requires it" } else { "requested" },
                ")"
            );
            let _ = configs.push(ContextConfig::persistent_binary(true));
        }
        if let Some(priority) = options.priority {
            let _ = configs.push(ContextConfig::priority(priority));
        }
        for custom in island.iter_mut() {
            let _ = configs.push(ContextConfig::custom((custom as *mut lpai::ContextCustomConfig).cast()));
        }
        let mut list: heapless::Vec<*const ContextConfig, { MAX_GRAPHS + 3 }> = heapless::Vec::new();
        for config in &configs {
            let _ = list.push(config);
        }
        let _ = list.push(ptr::null());
        let create = require(backend.table().context_create_from_binary, "contextCreateFromBinary")?;
        // SAFETY: the binary lives in the arena or the caller's memory for 'a (longer than the context); configs
        // are NULL-terminated and outlive the call; LPAI has no device handle, so none is passed on any backend.
        let status = unsafe {
            create(
                backend.handle(),
                ptr::null_mut(),
                list.as_ptr(),
                binary.as_ptr().cast(),
                binary.len() as u64,
                &mut self.handle,
                self.profile,
            )
        };
        let code = qnn::error::code(status);
        if code != 0 {
            // A failed create may leave anything in the out-parameter; never free it.
            self.handle = ptr::null_mut();
        }
        match code {
            0 => Ok(()),
            code if self.persistent && code == qnn::error::COMMON_ERROR_NOT_SUPPORTED => {
                Err(RuntimeError::PersistentBinaryRefused { code, required_by_backend })
            }
            code => Err(RuntimeError::Qnn { call: "contextCreateFromBinary", code }),
        }
    }

    /// Number of graphs.
    pub fn graph_count(&self) -> usize {
        self.graphs.len()
    }

    /// Graph `index`.
    pub fn graph(&self, index: usize) -> Option<&Graph<'a>> {
        self.graphs.get(index)
    }

    /// Graph `index`, to fill and run.
    pub fn graph_mut(&mut self, index: usize) -> Option<&mut Graph<'a>> {
        self.graphs.get_mut(index)
    }

    /// Index of the graph called `name`.
    pub fn graph_index(&self, name: &str) -> Option<usize> {
        self.graphs.iter().position(|graph| graph.name() == name)
    }

    /// Size of the context binary.
    pub fn binary_bytes(&self) -> usize {
        self.binary_bytes
    }

    /// Whether the backend got the caller's own binary ([`Context::load_persistent`] without a copy), rather than
    /// a copy in the arena.
    pub fn binary_in_place(&self) -> bool {
        self.binary_in_place
    }

    /// Whether the context was created with PERSISTENT_BINARY.
    pub fn is_persistent(&self) -> bool {
        self.persistent
    }

    /// Walks the profile events recorded so far, each followed by its sub-events (depth 1 for those);
    /// nothing without profiling.
    pub fn profile_events(&self, mut visit: impl FnMut(ProfileEvent<'_>)) -> Result<(), RuntimeError> {
        if self.profile.is_null() {
            return Ok(());
        }
        let table = self.backend.table();
        let get_events = require(table.profile_get_events, "profileGetEvents")?;
        let mut ids: *const qnn::ProfileEventId = ptr::null();
        let mut count = 0u32;
        // SAFETY: a live profile handle and valid out-pointers; the id list is owned by the profile.
        check(unsafe { get_events(self.profile, &mut ids, &mut count) }, "profileGetEvents")?;
        // SAFETY: the backend returned `count` ids at `ids` (or null).
        for &id in unsafe { id_list(ids, count) } {
            visit(event_data(table, id, 0)?);
            let Some(get_sub_events) = table.profile_get_sub_events else {
                continue;
            };
            let mut sub_ids: *const qnn::ProfileEventId = ptr::null();
            let mut sub_count = 0u32;
            // SAFETY: an id from this profile and valid out-pointers.
            check(unsafe { get_sub_events(id, &mut sub_ids, &mut sub_count) }, "profileGetSubEvents")?;
            // SAFETY: as above.
            for &sub_id in unsafe { id_list(sub_ids, sub_count) } {
                visit(event_data(table, sub_id, 1)?);
            }
        }
        Ok(())
    }
}

/// # Safety
/// `ids` is null or points at `count` ids that outlive the returned slice.
unsafe fn id_list<'p>(ids: *const qnn::ProfileEventId, count: u32) -> &'p [qnn::ProfileEventId] {
    if ids.is_null() {
        return &[];
    }
    // SAFETY: forwarded from the caller.
    unsafe { core::slice::from_raw_parts(ids, count as usize) }
}

fn event_data<'p>(
    table: &'p qnn::InterfaceTable,
    id: qnn::ProfileEventId,
    depth: u32,
) -> Result<ProfileEvent<'p>, RuntimeError> {
    let get_data = require(table.profile_get_event_data, "profileGetEventData")?;
    let mut data = qnn::ProfileEventData {
        event_type: qnn::ProfileEventType(0),
        unit: qnn::ProfileEventUnit(0),
        value: 0,
        identifier: ptr::null(),
    };
    // SAFETY: an id from a live profile and a valid out-pointer.
    check(unsafe { get_data(id, &mut data) }, "profileGetEventData")?;
    Ok(ProfileEvent {
        event_type: data.event_type.0,
        unit: data.unit.0,
        value: data.value,
        // SAFETY: the identifier is a NUL-terminated string owned by the profile (alive with the backend), or null.
        identifier: unsafe { super::backend::c_text(data.identifier) },
        depth,
    })
}

/// One profile event as QNN reports it.
#[derive(Clone, Copy, Debug)]
pub struct ProfileEvent<'p> {
    /// `QnnProfile_EventType_t` (EXECUTE 400, NODE 404, ...).
    pub event_type: u32,
    /// `QnnProfile_EventUnit_t` (MICROSEC 1, CYCLES 3, ...).
    pub unit: u32,
    /// The measurement.
    pub value: u64,
    /// The backend's name for the event.
    pub identifier: &'p str,
    /// 0 for a top-level event, 1 for its sub-events.
    pub depth: u32,
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        let table = self.backend.table();
        self.graphs.clear();
        if !self.handle.is_null() {
            if let Some(free) = table.context_free {
                // SAFETY: a created context, freed once; its graphs are gone.
                if let Err(error) = check(unsafe { free(self.handle, ptr::null_mut()) }, "contextFree") {
                    log!(Level::Warn, error);
                }
            }
        }
        if !self.profile.is_null() {
            if let Some(free) = table.profile_free {
                // SAFETY: a created profile, freed once, after the context that used it.
                unsafe { free(self.profile) };
            }
        }
    }
}
