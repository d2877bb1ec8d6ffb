//! The model's state (live backends, contexts with their graphs, system contexts) and its handles.
//!
//! A handle is a number, never a pointer the model dereferences: a per-kind base plus the object's serial (graphs:
//! `serial * 4 + index`). Serials count up across all kinds, so a freed object's handle never reaches the object
//! that later takes its slot.

use crate::format::{self, GraphView, Name, MAX_GRAPHS, MAX_TENSORS};
use crate::op_package::{PackageSlot, MAX_PACKAGES};
use core::ffi::c_void;

/// Backends alive at once.
pub const MAX_BACKENDS: usize = 8;
/// Contexts alive at once.
pub const MAX_CONTEXTS: usize = 8;
/// System contexts alive at once.
pub const MAX_SYSTEM_CONTEXTS: usize = 8;

const BACKEND_BASE: usize = 0x0B00_0000;
const CONTEXT_BASE: usize = 0x0C00_0000;
const GRAPH_BASE: usize = 0x1000_0000;
const SYSTEM_BASE: usize = 0x0E00_0000;
/// Serials stay below this (then wrap to 1), so every handle kind keeps to its own range.
const SERIAL_LIMIT: u32 = 1 << 20;

/// How one output is computed (or an input's size).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TensorPlan {
    pub(crate) id: u32,
    pub(crate) wide: bool,
    pub(crate) elements: u32,
    pub(crate) bytes: u32,
    pub(crate) source: u32,
    pub(crate) multiplier: i32,
    pub(crate) addend: i32,
    pub(crate) shift: u32,
    pub(crate) step: i32,
}

/// What the backend keeps of a graph record.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GraphPlan {
    pub(crate) name: Name,
    pub(crate) scratch_bytes: u32,
    pub(crate) persistent_bytes: u32,
    pub(crate) early_every: u32,
    pub(crate) input_count: usize,
    pub(crate) output_count: usize,
    /// Inputs, then outputs.
    pub(crate) tensors: [TensorPlan; MAX_TENSORS],
}

impl GraphPlan {
    const EMPTY: GraphPlan = GraphPlan {
        name: [0; format::NAME_BYTES],
        scratch_bytes: 0,
        persistent_bytes: 0,
        early_every: 0,
        input_count: 0,
        output_count: 0,
        tensors: [TensorPlan {
            id: 0,
            wide: false,
            elements: 0,
            bytes: 0,
            source: 0,
            multiplier: 0,
            addend: 0,
            shift: 0,
            step: 0,
        }; MAX_TENSORS],
    };

    pub(crate) fn of(view: &GraphView<'_>) -> GraphPlan {
        let record = view.record;
        let mut plan = GraphPlan {
            name: record.name,
            scratch_bytes: record.scratch_bytes,
            persistent_bytes: record.persistent_bytes,
            early_every: record.early_every,
            input_count: record.input_count as usize,
            output_count: record.output_count as usize,
            ..GraphPlan::EMPTY
        };
        for (index, slot) in plan.tensors.iter_mut().enumerate().take(view.tensor_count()) {
            if let Some(tensor) = view.tensor(index) {
                *slot = TensorPlan {
                    id: tensor.id,
                    wide: tensor.is_wide(),
                    elements: tensor.elements,
                    bytes: tensor.bytes,
                    source: tensor.source,
                    multiplier: tensor.multiplier,
                    addend: tensor.addend,
                    shift: tensor.shift,
                    step: tensor.step,
                };
            }
        }
        plan
    }

    /// Tensor `index` (inputs first, then outputs).
    pub(crate) fn tensor(&self, index: usize) -> TensorPlan {
        self.tensors.get(index).copied().unwrap_or_default()
    }
}

/// Scratch or persistent memory as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Memory {
    pub(crate) mem_type: u32,
    pub(crate) size: u32,
    pub(crate) addr: usize,
}

/// One graph of a live context.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GraphSlot {
    pub(crate) plan: GraphPlan,
    pub(crate) retrieved: bool,
    pub(crate) scratch: Option<Memory>,
    pub(crate) persistent: Option<Memory>,
    /// graphFinalize came after the last accepted config.
    pub(crate) finalized: bool,
    /// A PERSISTENT_MEM config came after the last finalize: the next finalize writes a fresh header.
    pub(crate) persistent_fresh: bool,
}

impl GraphSlot {
    const EMPTY: GraphSlot = GraphSlot {
        plan: GraphPlan::EMPTY,
        retrieved: false,
        scratch: None,
        persistent: None,
        finalized: false,
        persistent_fresh: false,
    };
}

/// Where the binary of a context is, and what it hashed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BinaryRecord {
    pub(crate) addr: usize,
    pub(crate) length: usize,
    pub(crate) hash: u64,
}

/// A live context (serial 0: a free slot).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContextSlot {
    pub(crate) serial: u32,
    pub(crate) backend: u32,
    pub(crate) binary: BinaryRecord,
    pub(crate) graph_count: usize,
    pub(crate) graphs: [GraphSlot; MAX_GRAPHS],
}

/// A live backend (serial 0: a free slot), the HW_INFO it was given, whether it executes asynchronously, and its
/// registered op packages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BackendSlot {
    pub(crate) serial: u32,
    pub(crate) hw_info: Option<(u32, u32)>,
    /// graphExecuteAsync is supported (false: `LPAI_CONTRACT_NO_EXECUTE_ASYNC=1` at backendCreate, host only).
    pub(crate) execute_async: bool,
    /// Its executions' notifications are withheld (`LPAI_CONTRACT_WITHHOLD_NOTIFY=1` at backendCreate, host only).
    #[cfg_attr(target_arch = "hexagon", expect(dead_code, reason = "Hexagon's executions notify inside the call"))]
    pub(crate) withhold_notify: bool,
    pub(crate) packages: [PackageSlot; MAX_PACKAGES],
}

impl BackendSlot {
    pub(crate) const EMPTY: BackendSlot = BackendSlot {
        serial: 0,
        hw_info: None,
        execute_async: false,
        withhold_notify: false,
        packages: [PackageSlot::EMPTY; MAX_PACKAGES],
    };
}

/// Everything the model keeps between calls.
pub(crate) struct State {
    next_serial: u32,
    pub(crate) backends: [BackendSlot; MAX_BACKENDS],
    pub(crate) contexts: [ContextSlot; MAX_CONTEXTS],
    /// Serials of live system contexts (0: free).
    pub(crate) systems: [u32; MAX_SYSTEM_CONTEXTS],
}

impl State {
    pub(crate) const INITIAL: State = State {
        next_serial: 1,
        backends: [BackendSlot::EMPTY; MAX_BACKENDS],
        contexts: [ContextSlot {
            serial: 0,
            backend: 0,
            binary: BinaryRecord { addr: 0, length: 0, hash: 0 },
            graph_count: 0,
            graphs: [GraphSlot::EMPTY; MAX_GRAPHS],
        }; MAX_CONTEXTS],
        systems: [0; MAX_SYSTEM_CONTEXTS],
    };

    /// A serial no live object has.
    pub(crate) fn take_serial(&mut self) -> u32 {
        loop {
            let serial = self.next_serial;
            self.next_serial = if serial + 1 >= SERIAL_LIMIT { 1 } else { serial + 1 };
            let in_use = self.backends.iter().any(|slot| slot.serial == serial)
                || self.contexts.iter().any(|slot| slot.serial == serial)
                || self.systems.contains(&serial);
            if !in_use {
                return serial;
            }
        }
    }

    /// The slot of a live backend.
    pub(crate) fn backend(&self, handle: *mut c_void) -> Option<usize> {
        let serial = serial_of(handle, BACKEND_BASE)?;
        self.backends.iter().position(|slot| slot.serial == serial)
    }

    /// The slot of a live context.
    pub(crate) fn context(&self, handle: *mut c_void) -> Option<usize> {
        let serial = serial_of(handle, CONTEXT_BASE)?;
        self.contexts.iter().position(|slot| slot.serial == serial)
    }

    /// The slot of a live system context.
    pub(crate) fn system(&self, handle: *mut c_void) -> Option<usize> {
        let serial = serial_of(handle, SYSTEM_BASE)?;
        self.systems.iter().position(|&live| live == serial)
    }

    /// A retrieved graph of a live context: (context slot, graph index).
    pub(crate) fn graph(&self, handle: *mut c_void) -> Option<(usize, usize)> {
        let value = handle.addr().checked_sub(GRAPH_BASE)?;
        let (serial, index) = (u32::try_from(value >> 2).ok()?, value & 3);
        let slot = self.contexts.iter().position(|slot| slot.serial == serial && serial != 0)?;
        let context = self.contexts.get(slot)?;
        let graph = context.graphs.get(index)?;
        (index < context.graph_count && graph.retrieved).then_some((slot, index))
    }

    /// The graph slot behind a handle.
    pub(crate) fn graph_mut(&mut self, handle: *mut c_void) -> Option<(&mut GraphSlot, u32, BinaryRecord)> {
        let (slot, index) = self.graph(handle)?;
        let context = self.contexts.get_mut(slot)?;
        let (serial, binary) = (context.serial, context.binary);
        Some((context.graphs.get_mut(index)?, serial, binary))
    }
}

fn serial_of(handle: *mut c_void, base: usize) -> Option<u32> {
    let serial = u32::try_from(handle.addr().checked_sub(base)?).ok()?;
    (serial != 0 && serial < SERIAL_LIMIT).then_some(serial)
}

fn handle(value: usize) -> *mut c_void {
    core::ptr::without_provenance_mut(value)
}

/// The handle of the backend with `serial`.
pub(crate) fn backend_handle(serial: u32) -> *mut c_void {
    handle(BACKEND_BASE + serial as usize)
}

/// The handle of the context with `serial`.
pub(crate) fn context_handle(serial: u32) -> *mut c_void {
    handle(CONTEXT_BASE + serial as usize)
}

/// The handle of graph `index` of the context with `serial`.
pub(crate) fn graph_handle(serial: u32, index: usize) -> *mut c_void {
    handle(GRAPH_BASE + ((serial as usize) << 2) + (index & 3))
}

/// The handle of the system context with `serial`.
pub(crate) fn system_handle(serial: u32) -> *mut c_void {
    handle(SYSTEM_BASE + serial as usize)
}

/// The token of a graph's persistent header: unique per context and graph.
pub(crate) fn token(serial: u32, index: usize) -> u32 {
    0x5000_0000 | (serial << 2) | (index as u32 & 3)
}

/// FNV-1a, 64 bits, over every byte.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3))
}
