//! What the fake was asked (an ordered event log plus per-context and per-graph facts), and its live state.

use super::binary::{BinarySpec, MAX_BINARY_BYTES, MAX_BINARY_GRAPHS, ONE_GRAPH};
use super::Settings;
use lpai_direct::qnn::{lpai, Priority};

/// Contexts (and system contexts) the fake holds at once.
pub const MAX_CONTEXTS: usize = 4;
/// Events the log keeps; later ones are only counted in [`Record::events_lost`].
pub const MAX_EVENTS: usize = 48;

/// A graph: the context's slot and the graph's index in that context's binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphId {
    /// Context slot (0 for the first context created in a test).
    pub context: u8,
    /// Graph index in the binary.
    pub graph: u8,
}

/// One call the fake answered successfully (graphExecute is counted per graph instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// backendCreate.
    BackendCreate,
    /// backendGetProperty.
    BackendGetProperty,
    /// backendFree.
    BackendFree,
    /// systemContextCreate, with its slot.
    SystemContextCreate(u8),
    /// systemContextGetBinaryInfo.
    SystemGetBinaryInfo(u8),
    /// systemContextFree.
    SystemContextFree(u8),
    /// contextCreateFromBinary, with the context slot.
    ContextCreate(u8),
    /// contextFree.
    ContextFree(u8),
    /// graphRetrieve.
    GraphRetrieve(GraphId),
    /// graphGetProperty.
    GraphGetProperty(GraphId),
    /// graphSetConfig.
    GraphSetConfig(GraphId),
    /// graphFinalize.
    GraphFinalize(GraphId),
}

/// What one graph was given and asked.
#[derive(Clone, Copy, Debug)]
pub struct GraphRecord {
    /// graphRetrieve found it.
    pub retrieved: bool,
    /// The SCRATCH_MEM config.
    pub scratch: Option<lpai::GraphMem>,
    /// The PERSISTENT_MEM config.
    pub persistent: Option<lpai::GraphMem>,
    /// The PERF_CFG config.
    pub perf: Option<lpai::PerfCfg>,
    /// The CORE_AFFINITY config.
    pub affinity: Option<lpai::CoreAffinity>,
    /// The PRIORITY config.
    pub priority: Option<Priority>,
    /// Configs the fake did not know.
    pub unknown_configs: u32,
    /// graphFinalize came after the memory configs (the last graphSetConfig).
    pub finalized_after_config: bool,
    /// graphExecute calls, early terminations included.
    pub execute_calls: u32,
    /// Executions that completed.
    pub completed: u32,
    /// Every input and output buffer was aligned to the start alignment.
    pub io_aligned: bool,
    /// The input's and the output's `clientBuf.dataSize` at the last graphExecute.
    pub data_sizes: (u32, u32),
}

impl GraphRecord {
    const EMPTY: GraphRecord = GraphRecord {
        retrieved: false,
        scratch: None,
        persistent: None,
        perf: None,
        affinity: None,
        priority: None,
        unknown_configs: 0,
        finalized_after_config: false,
        execute_calls: 0,
        completed: 0,
        io_aligned: true,
        data_sizes: (0, 0),
    };
}

/// What one contextCreateFromBinary was asked (kept for refused ones too), and how its context ended.
#[derive(Clone, Debug)]
pub struct ContextRecord {
    /// The context was created.
    pub created: bool,
    /// Not freed yet.
    pub live: bool,
    /// No device handle was passed (LPAI has none).
    pub device_was_null: bool,
    /// The PERSISTENT_BINARY config's value.
    pub persistent_binary: Option<u8>,
    /// The PRIORITY config.
    pub priority: Option<Priority>,
    /// LPAI custom configs: (option, config pointer); ENABLE_ISLAND is option 11.
    pub custom: heapless::Vec<(u32, usize), 8>,
    /// Where the binary was.
    pub binary_address: usize,
    /// The size passed.
    pub binary_size: u64,
    /// At contextFree: whether the binary still held its bytes at the same address.
    pub binary_intact_at_free: Option<bool>,
    /// Its graphs.
    pub graphs: [GraphRecord; MAX_BINARY_GRAPHS],
}

impl ContextRecord {
    pub(crate) const EMPTY: ContextRecord = ContextRecord {
        created: false,
        live: false,
        device_was_null: false,
        persistent_binary: None,
        priority: None,
        custom: heapless::Vec::new(),
        binary_address: 0,
        binary_size: 0,
        binary_intact_at_free: None,
        graphs: [GraphRecord::EMPTY; MAX_BINARY_GRAPHS],
    };
}

/// Everything recorded in one session.
#[derive(Clone, Debug)]
pub struct Record {
    /// Calls in order.
    pub events: heapless::Vec<Event, MAX_EVENTS>,
    /// Events that did not fit.
    pub events_lost: u32,
    /// The HW_INFO config of the last backendCreate.
    pub hw_info: Option<lpai::HwInfo>,
    /// Configs passed to backendCreate.
    pub backend_configs: u32,
    /// LPAI custom property options asked of backendGetProperty, in order.
    pub properties_asked: heapless::Vec<u32, 8>,
    /// Contexts still alive when backendFree came.
    pub contexts_live_at_backend_free: u32,
    /// System contexts not freed yet.
    pub system_contexts_live: u32,
    /// contextCreateFromBinary calls, refused ones included.
    pub context_create_calls: u32,
    /// Op packages backendRegisterOpPackage accepted, and whether each came with a target.
    pub op_packages: heapless::Vec<bool, 4>,
    /// Per context slot.
    pub contexts: [ContextRecord; MAX_CONTEXTS],
}

impl Record {
    const EMPTY: Record = Record {
        events: heapless::Vec::new(),
        events_lost: 0,
        hw_info: None,
        backend_configs: 0,
        properties_asked: heapless::Vec::new(),
        contexts_live_at_backend_free: 0,
        system_contexts_live: 0,
        context_create_calls: 0,
        op_packages: heapless::Vec::new(),
        contexts: [ContextRecord::EMPTY; MAX_CONTEXTS],
    };

    /// Index of the first `event` in the log.
    pub fn position(&self, event: Event) -> Option<usize> {
        self.events.iter().position(|&logged| logged == event)
    }

    /// Whether every one of `events` is in the log, each first seen after the one before it.
    pub fn in_order(&self, events: &[Event]) -> bool {
        let mut last = None;
        for &event in events {
            match self.position(event) {
                Some(at) if last.is_none_or(|before| at > before) => last = Some(at),
                _ => return false,
            }
        }
        true
    }

    /// Graph `id`'s record.
    pub fn graph(&self, id: GraphId) -> Option<&GraphRecord> {
        self.contexts.get(usize::from(id.context))?.graphs.get(usize::from(id.graph))
    }

    pub(crate) fn push(&mut self, event: Event) {
        if self.events.push(event).is_err() {
            self.events_lost += 1;
        }
    }
}

/// What a live context keeps beside its record.
pub(crate) struct ContextSlot {
    pub(crate) spec: BinarySpec,
    pub(crate) binary: *const u8,
    pub(crate) binary_copy: [u8; MAX_BINARY_BYTES],
}

/// The fake's whole state.
pub(crate) struct State {
    pub(crate) settings: Settings,
    pub(crate) record: Record,
    pub(crate) early_left: u32,
    pub(crate) backends_created: usize,
    pub(crate) contexts: [ContextSlot; MAX_CONTEXTS],
    pub(crate) system_slots: [bool; MAX_CONTEXTS],
}

impl State {
    pub(crate) const INITIAL: State = State {
        settings: Settings::LPAI,
        record: Record::EMPTY,
        early_left: 0,
        backends_created: 0,
        contexts: [const { ContextSlot { spec: ONE_GRAPH, binary: core::ptr::null(), binary_copy: [0; MAX_BINARY_BYTES] } };
            MAX_CONTEXTS],
        system_slots: [false; MAX_CONTEXTS],
    };

    pub(crate) fn reset(&mut self, settings: Settings) {
        *self = State::INITIAL;
        self.settings = settings;
        self.early_left = settings.early_terminations;
    }
}
