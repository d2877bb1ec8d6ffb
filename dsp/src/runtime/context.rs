//! A loaded context: the binary in the arena, the QNN context, its graphs, and teardown in reverse order.

use super::arena::Arena;
use super::backend::Backend;
use super::completion::TEARDOWN_WAIT_MS;
use super::error::{check, require, RuntimeError};
use super::graph::Graph;
use super::libraries::Libraries;
use super::load::{ContextOptions, Island, LoadRequest};
use super::metadata::Description;
use super::placement::{self, Placed};
use crate::log;
use crate::platform::{Level, Message, VendorCalls};
use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ptr;
use lpai_direct::qnn::{self, lpai, ContextConfig, ContextHandle, ProfileHandle};

/// Most graphs one context may hold: as many as a metadata record may describe, so a record always fits one.
pub const MAX_GRAPHS: usize = lpai_direct::metadata::MAX_GRAPHS;

/// A created context and its graphs. Dropping it waits (at most [`TEARDOWN_WAIT_MS`], without any lock) for a frame
/// still in flight, then, under the vendor-calls lock, frees the context, then the profile, then the binary
/// description (libQnnSystem's; a record's lives in the arena); the binary itself lives in the caller's arena until
/// the caller drops that. A frame that never ends makes the drop leak the context instead (one line names the graph).
///
/// `'a` is invariant: a context handed out under a lifetime its user cannot name ([`super::Owner::with_context`])
/// cannot be swapped for another, so the owner always frees the context it loaded, where it loaded it.
pub struct Context<'a> {
    backend: &'a Backend,
    handle: ContextHandle,
    profile: ProfileHandle,
    graphs: heapless::Vec<Graph<'a>, MAX_GRAPHS>,
    binary_bytes: usize,
    binary_in_place: bool,
    persistent: bool,
    /// Freed (under the lock) after the context that was built from it, by [`Context::release`].
    description: ManuallyDrop<Description<'a>>,
    /// Whether [`Context::release`] freed everything already (after a failed load, under the loader's lock).
    released: bool,
    _invariant: PhantomData<fn(&'a ()) -> &'a ()>,
}

impl<'a> Context<'a> {
    /// Loads a context binary as `request` says, on `libraries`: chooses where the metadata comes from, places the
    /// binary ([`super::placement`]), reads its metadata (libQnnSystem, or the record's descriptions built in the
    /// arena), creates the context (PERSISTENT_BINARY when the backend requires it or the options ask) and
    /// prepares every graph. Everything borrows `'a`: the libraries, the arena and an in-place binary outlive
    /// the context. `vendor` is the vendor-calls lock this thread holds ([`super::Owner::load`] takes it).
    ///
    /// The context is built where it is kept, in `slot` (it is large: its graphs' tensors), so no copy of it sits
    /// on the stack; `slot` must be empty (a context in it is refused, never freed here under the lock), and after a
    /// failure it is empty again. [`super::Owner`] loads this way; [`Context::load`] answers the context by value.
    pub fn load_into(
        slot: &mut Option<Context<'a>>,
        vendor: &VendorCalls,
        libraries: &'a Libraries,
        arena: &Arena<'a>,
        request: &LoadRequest<'a, '_>,
    ) -> Result<(), RuntimeError> {
        if slot.is_some() {
            return Err(RuntimeError::TooMany { what: Message::TooManyContextBinaries, count: 2, limit: 1 });
        }
        let loaded = Context::build(slot, libraries, arena, request);
        if loaded.is_err() {
            // Freed here, under the lock this thread holds, so that dropping it takes no lock.
            if let Some(context) = slot.as_mut() {
                context.release(vendor);
            }
            *slot = None;
        }
        loaded
    }

    /// [`Context::load_into`] a slot of its own, answering the context by value (for callers that keep it on
    /// their own, such as host tools and tests).
    pub fn load(
        vendor: &VendorCalls,
        libraries: &'a Libraries,
        arena: &Arena<'a>,
        request: &LoadRequest<'a, '_>,
    ) -> Result<Context<'a>, RuntimeError> {
        let mut slot = None;
        Context::load_into(&mut slot, vendor, libraries, arena, request)?;
        // A load that succeeded filled the slot; the error keeps this free of a panic path.
        slot.ok_or(RuntimeError::MissingFunction(Message::QnnContextCreateFromBinary))
    }

    fn build(
        slot: &mut Option<Context<'a>>,
        libraries: &'a Libraries,
        arena: &Arena<'a>,
        request: &LoadRequest<'a, '_>,
    ) -> Result<(), RuntimeError> {
        let backend = libraries.backend();
        let metadata = libraries.metadata(request.record)?;
        let options = &request.options;
        super::graph::check_core_selection(options.graph.affinity.core_selection, backend.properties().enpu_cores)?;
        let Placed { bytes: binary, in_place: binary_in_place } =
            placement::place(backend.properties(), arena, request.binary)?;
        let description = Description::of(metadata, binary, arena)?;
        let graph_count = description.graphs()?.len();
        if graph_count > MAX_GRAPHS {
            return Err(RuntimeError::TooMany { what: Message::TooManyGraphs, count: graph_count, limit: MAX_GRAPHS });
        }
        let required_by_backend = backend.properties().requires_persistent_binary;
        let context = slot.insert(Context {
            backend,
            handle: ptr::null_mut(),
            profile: ptr::null_mut(),
            graphs: heapless::Vec::new(),
            binary_bytes: binary.len(),
            binary_in_place,
            persistent: required_by_backend || options.persistent_binary,
            description: ManuallyDrop::new(description),
            released: false,
            _invariant: PhantomData,
        });
        match (options.profiling, backend.table().profile_create) {
            (None, _) => {}
            // Profiling is an extra: a backend without it runs the graphs unprofiled (no events to read).
            (Some(_), None) => log!(Level::Warn, Message::NoProfileCreate, backend.info().name.as_str()),
            (Some(level), Some(create)) => {
                // SAFETY: a created backend and a valid out-pointer.
                check(unsafe { create(backend.handle(), level, &mut context.profile) }, Message::QnnProfileCreate)?;
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
        log!(Level::Info, Message::ContextLoaded, context.graphs.len(), context.binary_bytes, arena.used());
        Ok(())
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
                log!(Level::Info, Message::NotLpaiSkippingIsland, backend.info().name.as_str())
            }
            Island::AllGraphs => {
                let _ = island.push(enable_island(ptr::null_mut()));
            }
            Island::Graphs(names) => {
                for name in names {
                    island.push(enable_island(name.as_ptr().cast_mut().cast())).map_err(|_| RuntimeError::TooMany {
                        what: Message::TooManyIslandGraphNames,
                        count: names.len(),
                        limit: MAX_GRAPHS,
                    })?;
                }
            }
        }
        let mut configs: heapless::Vec<ContextConfig, { MAX_GRAPHS + 2 }> = heapless::Vec::new();
        if self.persistent {
            let why = if required_by_backend { Message::BackendRequiresIt } else { Message::Requested };
            log!(Level::Info, Message::AskingPersistentBinary, why);
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
        let create = require(backend.table().context_create_from_binary, Message::QnnContextCreateFromBinary)?;
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
        } else {
            backend.context_created();
        }
        match code {
            0 => Ok(()),
            code if self.persistent && code == qnn::error::COMMON_ERROR_NOT_SUPPORTED => {
                Err(RuntimeError::PersistentBinaryRefused { code, required_by_backend })
            }
            code => Err(RuntimeError::Qnn { call: Message::QnnContextCreateFromBinary, code }),
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

    /// Whether the backend got the caller's own binary (an in-place binary it could use where it is), rather than
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
        let get_events = require(table.profile_get_events, Message::QnnProfileGetEvents)?;
        let mut ids: *const qnn::ProfileEventId = ptr::null();
        let mut count = 0u32;
        // SAFETY: a live profile handle and valid out-pointers; the id list is owned by the profile.
        check(unsafe { get_events(self.profile, &mut ids, &mut count) }, Message::QnnProfileGetEvents)?;
        // SAFETY: the backend returned `count` ids at `ids` (or null).
        for &id in unsafe { id_list(ids, count) } {
            visit(event_data(table, id, 0)?);
            let Some(get_sub_events) = table.profile_get_sub_events else {
                continue;
            };
            let mut sub_ids: *const qnn::ProfileEventId = ptr::null();
            let mut sub_count = 0u32;
            // SAFETY: an id from this profile and valid out-pointers.
            check(unsafe { get_sub_events(id, &mut sub_ids, &mut sub_count) }, Message::QnnProfileGetSubEvents)?;
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
    let get_data = require(table.profile_get_event_data, Message::QnnProfileGetEventData)?;
    let mut data = qnn::ProfileEventData {
        event_type: qnn::ProfileEventType(0),
        unit: qnn::ProfileEventUnit(0),
        value: 0,
        identifier: ptr::null(),
    };
    // SAFETY: an id from a live profile and a valid out-pointer.
    check(unsafe { get_data(id, &mut data) }, Message::QnnProfileGetEventData)?;
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

impl Context<'_> {
    /// Waits at most `micros` (without any lock) for the frames still in flight on the graphs, taking them; `false`
    /// when one has not completed by then, after one line naming the graph and the wait: the backend may still write
    /// the context's memory, so the caller must leak the context and that memory.
    pub fn settle_frames(&mut self, micros: u64) -> bool {
        for graph in self.graphs.iter_mut() {
            if !graph.settle_frame(micros) {
                log!(Level::Error, Message::FrameOutlivedClose, graph.name(), micros / 1000);
                return false;
            }
        }
        true
    }

    /// Frees the graphs, the context, the profile and the description, once; `vendor` is the lock this thread holds.
    fn release(&mut self, _vendor: &VendorCalls) {
        if self.released {
            return;
        }
        self.released = true;
        let table = self.backend.table();
        self.graphs.clear();
        if !self.handle.is_null() {
            if let Some(free) = table.context_free {
                // SAFETY: a created context, freed once; its graphs are gone and no frame is in flight.
                if let Err(error) = check(unsafe { free(self.handle, ptr::null_mut()) }, Message::QnnContextFree) {
                    log!(Level::Warn, error);
                }
            }
            self.backend.context_freed();
        }
        if !self.profile.is_null() {
            if let Some(free) = table.profile_free {
                // SAFETY: a created profile, freed once, after the context that used it.
                unsafe { free(self.profile) };
            }
        }
        // SAFETY: dropped once (`released`), after the context built from it.
        unsafe { ManuallyDrop::drop(&mut self.description) };
    }
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        if !self.settle_frames(u64::from(TEARDOWN_WAIT_MS) * 1000) {
            // Leaked: the backend may still use the graphs' memory, and the backend itself keeps a context.
            core::mem::forget(core::mem::take(&mut self.graphs));
            return;
        }
        let vendor = VendorCalls::lock();
        self.release(&vendor);
    }
}
