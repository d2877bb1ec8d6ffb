//! graphRetrieve, graphGetProperty, graphSetConfig and graphFinalize.

use crate::context::check_binary;
use crate::format::name_text;
use crate::lock::with_state;
use crate::rules::{self, answer, Breach};
use crate::state::{graph_handle, token, GraphSlot, Memory};
use crate::{persistent, ALIGNMENT_START, SIZE_GRANULE};
use core::ffi::{c_char, CStr};
use lpai_direct::qnn::provide::entries;
use lpai_direct::qnn::{lpai, ContextHandle, ErrorHandle, GraphConfig, GraphConfigOption, GraphHandle};
use lpai_direct::qnn::{GraphProperty, GraphPropertyOption, Priority, ProfileHandle, SignalHandle};

fn stale(call: &str, graph: GraphHandle) -> Breach {
    let breach = rules::GRAPH_HANDLE.breach().text(call).text(" on ").hex(graph.addr() as u64);
    breach.text(", not a retrieved graph of a live context")
}

/// graphRetrieve: a graph of the context's binary, by name.
///
/// # Safety
/// `name` is null or a NUL-terminated string; `graph` is null or valid for writes.
pub(crate) unsafe extern "C" fn graph_retrieve(
    context: ContextHandle,
    name: *const c_char,
    graph: *mut GraphHandle,
) -> ErrorHandle {
    if name.is_null() || graph.is_null() {
        return rules::GRAPH_ARGUMENTS.breach().text("graphRetrieve with a null name or out-pointer").report();
    }
    // SAFETY: a NUL-terminated string, per the caller.
    let name = unsafe { CStr::from_ptr(name) }.to_bytes();
    let found = with_state(|state| {
        let Some(slot) = state.context(context).and_then(|slot| state.contexts.get_mut(slot)) else {
            let breach = rules::GRAPH_HANDLE.breach().text("graphRetrieve on ").hex(context.addr() as u64);
            return Err(breach.text(", not a live context"));
        };
        let serial = slot.serial;
        let count = slot.graph_count;
        let graphs = slot.graphs.iter_mut().take(count).enumerate();
        let Some((index, graph)) = graphs.into_iter().find(|(_, graph)| name_text(&graph.plan.name) == name) else {
            return Err(rules::GRAPH_NAME.breach().text("no graph named ").name(name));
        };
        graph.retrieved = true;
        Ok(graph_handle(serial, index))
    });
    match found {
        Ok(handle) => {
            // SAFETY: checked non-null; valid for writes per the caller.
            unsafe { *graph = handle };
            0
        }
        Err(breach) => breach.report(),
    }
}

/// graphGetProperty: SCRATCH_MEM_SIZE and PERSISTENT_MEM_SIZE from the binary.
///
/// # Safety
/// `properties` is null or a NULL-terminated list of valid properties; CUSTOM ones point at LPAI graph custom
/// properties whose targets are `u32`s valid for writes.
pub(crate) unsafe extern "C" fn graph_get_property(
    graph: GraphHandle,
    properties: *mut *mut GraphProperty,
) -> ErrorHandle {
    let Some(sizes) = with_state(|state| state.graph_mut(graph).map(|(slot, ..)| slot.plan)) else {
        return stale("graphGetProperty", graph).report();
    };
    // SAFETY: per the caller.
    for entry in unsafe { entries(properties.cast_const().cast::<*const GraphProperty>()) } {
        // SAFETY: a valid property from the caller's list.
        let property = unsafe { *entry };
        if property.option != GraphPropertyOption::CUSTOM || property.custom_property.is_null() {
            return rules::GRAPH_PROPERTY.breach().text("property option ").num(property.option.0.into()).report();
        }
        // SAFETY: CUSTOM points at an LPAI graph custom property.
        let custom = unsafe { *property.custom_property.cast::<lpai::GraphCustomProperty>() };
        let size = match custom.option {
            _ if custom.property.is_null() => {
                return rules::GRAPH_PROPERTY.breach().text("custom property points at nothing").report();
            }
            lpai::GraphPropertyOption::SCRATCH_MEM_SIZE => sizes.scratch_bytes,
            lpai::GraphPropertyOption::PERSISTENT_MEM_SIZE => sizes.persistent_bytes,
            other => return rules::GRAPH_PROPERTY.breach().text("custom option ").num(other.0.into()).report(),
        };
        // SAFETY: both options point at a u32 valid for writes, per the caller.
        unsafe { custom.property.cast::<u32>().write_unaligned(size) };
    }
    0
}

/// What one accepted graph config changes.
enum Change {
    Scratch(Memory),
    Persistent(Memory),
    Other,
}

/// The model's size limit of one memory pool per memory type (`None`: DDR, limited only by what the caller has):
/// TCM 256 KiB, LLC 1 MiB, PSRAM 2 MiB. Values of this model, not of any device; a device's are in its
/// documentation.
pub const MEMORY_LIMITS: [(lpai::MemType, Option<u32>); 4] = [
    (lpai::MemType::DDR, None),
    (lpai::MemType::LLC, Some(1 << 20)),
    (lpai::MemType::TCM, Some(256 << 10)),
    (lpai::MemType::PSRAM, Some(2 << 20)),
];

/// Checks one LPAI memory config against the `memory-aligned` and `memory-fits` rules.
fn check_memory(what: &str, memory: lpai::GraphMem, needed: u32) -> Result<Memory, Breach> {
    let addr = memory.addr.expose_provenance();
    let aligned = addr != 0 && addr.is_multiple_of(ALIGNMENT_START);
    let sized = memory.size >= needed && memory.size.is_multiple_of(SIZE_GRANULE as u32);
    if aligned && sized && (1..=4).contains(&memory.mem_type.0) {
        let limit = MEMORY_LIMITS.iter().find(|(memory_type, _)| *memory_type == memory.mem_type).and_then(|l| l.1);
        if let Some(limit) = limit.filter(|&limit| memory.size > limit) {
            let name = memory.mem_type.c_name().unwrap_or("?");
            let breach = rules::MEMORY_FITS.breach().text(what).text(" of ").num(memory.size.into());
            return Err(breach
                .text(" bytes in ")
                .text(name)
                .text(", whose limit is ")
                .num(limit.into())
                .text(" bytes"));
        }
        return Ok(Memory { mem_type: memory.mem_type.0, size: memory.size, addr });
    }
    let breach = rules::MEMORY_ALIGNED.breach().text(what).text(" at ").hex(addr as u64).text(", size ");
    let breach = breach.num(memory.size.into()).text(" (needs >= ").num(needed.into()).text(", a multiple of 64)");
    Err(breach.text(", memType ").num(memory.mem_type.0.into()))
}

/// Checks one graph config.
///
/// # Safety
/// `config` is a valid config; CUSTOM ones point at LPAI graph custom configs whose targets have the documented
/// types.
unsafe fn check_config(config: &GraphConfig, slot: &GraphSlot) -> Result<Change, Breach> {
    match config.option {
        GraphConfigOption::PRIORITY => {
            // SAFETY: PRIORITY selects `priority`.
            let priority = unsafe { config.value.priority };
            match priority {
                Priority::LOW | Priority::NORMAL | Priority::NORMAL_HIGH | Priority::HIGH => Ok(Change::Other),
                _ => Err(rules::GRAPH_CONFIG.breach().text("priority ").num(priority.0.into())),
            }
        }
        GraphConfigOption::CUSTOM => {
            // SAFETY: CUSTOM selects `custom_config`.
            let custom = unsafe { config.value.custom_config }.cast::<lpai::GraphCustomConfig>();
            if custom.is_null() {
                return Err(rules::GRAPH_CONFIG.breach().text("a CUSTOM graph config points at nothing"));
            }
            // SAFETY: an LPAI graph custom config, per the caller.
            let custom = unsafe { *custom };
            let target = custom.config;
            match custom.option {
                _ if target.is_null() => Err(rules::GRAPH_CONFIG.breach().text("custom config points at nothing")),
                lpai::GraphConfigOption::SCRATCH_MEM => {
                    // SAFETY: SCRATCH_MEM points at a GraphMem.
                    let memory = unsafe { target.cast::<lpai::GraphMem>().read_unaligned() };
                    Ok(Change::Scratch(check_memory("SCRATCH_MEM", memory, slot.plan.scratch_bytes)?))
                }
                lpai::GraphConfigOption::PERSISTENT_MEM => {
                    // SAFETY: PERSISTENT_MEM points at a GraphMem.
                    let memory = unsafe { target.cast::<lpai::GraphMem>().read_unaligned() };
                    Ok(Change::Persistent(check_memory("PERSISTENT_MEM", memory, slot.plan.persistent_bytes)?))
                }
                lpai::GraphConfigOption::PERF_CFG => {
                    // SAFETY: PERF_CFG points at a PerfCfg.
                    let perf = unsafe { target.cast::<lpai::PerfCfg>().read_unaligned() };
                    let client = matches!(
                        perf.client_type,
                        lpai::ClientPerfType::REAL_TIME | lpai::ClientPerfType::NON_REAL_TIME
                    );
                    if perf.fps == 0 || perf.ftrt_ratio == 0 || !client {
                        let breach = rules::GRAPH_CONFIG.breach().text("PERF_CFG fps ").num(perf.fps.into());
                        let breach = breach.text(", ftrtRatio ").num(perf.ftrt_ratio.into());
                        return Err(breach.text(", clientType ").num(perf.client_type.0.into()));
                    }
                    Ok(Change::Other)
                }
                lpai::GraphConfigOption::CORE_AFFINITY => {
                    // SAFETY: CORE_AFFINITY points at a CoreAffinity.
                    let affinity = unsafe { target.cast::<lpai::CoreAffinity>().read_unaligned() };
                    match affinity.affinity {
                        lpai::CoreAffinityType::SOFT | lpai::CoreAffinityType::HARD => Ok(Change::Other),
                        other => Err(rules::GRAPH_CONFIG.breach().text("CORE_AFFINITY ").num(other.0.into())),
                    }
                }
                other => Err(rules::GRAPH_CONFIG.breach().text("custom option ").num(other.0.into())),
            }
        }
        other => Err(rules::GRAPH_CONFIG.breach().text("config option ").num(other.0.into())),
    }
}

/// graphSetConfig: every config is checked before any is applied; any accepted list un-finalizes the graph.
///
/// # Safety
/// `config` is null or a NULL-terminated list of valid configs (see [`check_config`]).
pub(crate) unsafe extern "C" fn graph_set_config(graph: GraphHandle, config: *const *const GraphConfig) -> ErrorHandle {
    answer(with_state(|state| {
        let Some((slot, ..)) = state.graph_mut(graph) else {
            return Err(stale("graphSetConfig", graph));
        };
        // SAFETY: per the caller.
        for entry in unsafe { entries(config) } {
            // SAFETY: a valid config, per the caller.
            unsafe { check_config(&*entry, slot) }?;
        }
        // SAFETY: per the caller.
        for entry in unsafe { entries(config) } {
            // SAFETY: as above; it was accepted just now.
            match unsafe { check_config(&*entry, slot) }? {
                Change::Scratch(memory) => slot.scratch = Some(memory),
                Change::Persistent(memory) => (slot.persistent, slot.persistent_fresh) = (Some(memory), true),
                Change::Other => {}
            }
            slot.finalized = false;
        }
        Ok(())
    }))
}

/// graphFinalize: both memories must be set; a new persistent memory gets a fresh header.
///
/// # Safety
/// The memories given by SCRATCH_MEM and PERSISTENT_MEM are writable for their sizes; the binary is readable.
pub(crate) unsafe extern "C" fn graph_finalize(
    graph: GraphHandle,
    _profile: ProfileHandle,
    _signal: SignalHandle,
) -> ErrorHandle {
    let taken = with_state(|state| {
        let (slot, serial, binary) = state.graph_mut(graph).ok_or_else(|| stale("graphFinalize", graph))?;
        let (Some(_), Some(memory)) = (slot.scratch, slot.persistent) else {
            let breach = rules::MEMORY_BEFORE_FINALIZE.breach().text("graph ").name(&slot.plan.name).text(": ");
            let missing = match (slot.scratch, slot.persistent) {
                (None, None) => "neither SCRATCH_MEM nor PERSISTENT_MEM was set",
                (None, _) => "SCRATCH_MEM was not set",
                _ => "PERSISTENT_MEM was not set",
            };
            return Err(breach.text(missing));
        };
        let (_, index) = state.graph(graph).unwrap_or((0, 0));
        Ok((binary, memory, token(serial, index)))
    });
    let (binary, memory, token) = match taken {
        Ok(taken) => taken,
        Err(breach) => return breach.report(),
    };
    // SAFETY: per the caller.
    if let Err(breach) = unsafe { check_binary(&binary, "graphFinalize") } {
        return breach.report();
    }
    answer(with_state(|state| {
        let (slot, ..) = state.graph_mut(graph).ok_or_else(|| stale("graphFinalize", graph))?;
        if slot.persistent_fresh && slot.persistent == Some(memory) {
            // SAFETY: the runtime gave this memory (at least 16 bytes, checked at graphSetConfig) to the graph.
            unsafe { persistent::write(memory.addr, persistent::Header::fresh(token)) };
        }
        slot.persistent_fresh = false;
        slot.finalized = true;
        Ok(())
    }))
}
