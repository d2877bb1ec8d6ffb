//! lpai-direct as an AudioReach (SPF) audio module, AMDB tag `capi_lpai_direct`: the two CAPI entry points and
//! the module's function table, each a thin C shell over [`lpai_direct_skel::audio::module::Module`], which checks
//! every pointer and size the framework passes. No function can panic.
//!
//! The audio integrator's guide (registering the module in an SPF build, parameters and events, costs per frame,
//! STACK_SIZE) is the book's `docs/src/audio.md`.
#![no_std]

use lpai_direct::capi::EBADPARAM;
use lpai_direct::capi::{Buffer, CapiError, FunctionTable, Instance, PortInfo, PropertyList, StreamData};
use lpai_direct_skel::audio::module::{self, Module};
use lpai_direct_skel::audio::properties::Payload;

/// The module's function table, in CAPI's order.
static TABLE: FunctionTable = FunctionTable { process, end, set_param, get_param, set_properties, get_properties };

/// Answers the framework's static queries (instance memory, stack, in place, no buffering, no extensions).
///
/// # Safety
/// Both lists are null or valid `capi_proplist_t`s for the call, their payload buffers as the framework lends them.
#[no_mangle]
pub unsafe extern "C" fn capi_lpai_direct_get_static_properties(
    init_properties: *mut PropertyList,
    static_properties: *mut PropertyList,
) -> CapiError {
    let _ = init_properties;
    // SAFETY: forwarded.
    unsafe { module::get_static_properties(static_properties) }
}

/// Sets up a module in the instance memory the framework allocated (INIT_MEMORY_REQUIREMENT bytes, zeroed,
/// 8-aligned) and takes the init properties.
///
/// # Safety
/// `instance` is that memory, used by nothing else until `end`; `init_properties` as for
/// [`capi_lpai_direct_get_static_properties`].
#[no_mangle]
pub unsafe extern "C" fn capi_lpai_direct_init(
    instance: *mut Instance,
    init_properties: *mut PropertyList,
) -> CapiError {
    // SAFETY: forwarded.
    unsafe { Module::init(instance, &TABLE, init_properties) }
}

/// Host builds only (never the Hexagon module): `size_t lpai_direct_capi_host_resources(uint64_t* counts, size_t
/// capacity)` writes up to `capacity` counts of what the module's runtime holds right now: memory blocks from the
/// platform, their bytes, libraries opened; then the most a model's load or free used of its load stack so far in
/// the process; answers how many counts it knows (4). The C harness checks that `end` gives every one of the first
/// three back, and prints the fourth.
///
/// # Safety
/// `counts` must be null (nothing written) or valid for `capacity` writes.
#[cfg(not(target_arch = "hexagon"))]
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_capi_host_resources(counts: *mut u64, capacity: usize) -> usize {
    let held = lpai_direct_skel::platform::host::Host::resources();
    let known = [held.blocks, held.bytes, held.libraries, lpai_direct_skel::audio::stack::deepest_use()]
        .map(|count| count as u64);
    if !counts.is_null() {
        for (index, value) in known.iter().enumerate().take(capacity) {
            // SAFETY: index < capacity, and the caller promises `capacity` writable counts.
            unsafe { counts.add(index).write(*value) };
        }
    }
    known.len()
}

/// The live module at `instance`, or EBADPARAM.
///
/// # Safety
/// `instance` is null or memory `capi_lpai_direct_init` set up, used by no other call meanwhile.
unsafe fn with(instance: *mut Instance, work: impl FnOnce(&mut Module) -> CapiError) -> CapiError {
    // SAFETY: forwarded.
    match unsafe { Module::of(instance) } {
        Some(module) => work(module),
        None => EBADPARAM,
    }
}

/// # Safety
/// As the framework calls it: the module's instance, then null or arrays of stream pointers for the call.
unsafe extern "C" fn process(
    instance: *mut Instance,
    input: *mut *mut StreamData,
    output: *mut *mut StreamData,
) -> CapiError {
    // SAFETY: forwarded.
    unsafe { with(instance, |module| module.process(input, output)) }
}

/// # Safety
/// The module's instance.
unsafe extern "C" fn end(instance: *mut Instance) -> CapiError {
    // SAFETY: forwarded.
    unsafe { with(instance, |module| module.end()) }
}

/// # Safety
/// The module's instance; `payload` null or a buffer lent for the call, except that a payload of
/// PARAM_ID_LPAI_DIRECT_MODEL after PARAM_PERSISTENCE_INFO registered it stays, unchanged, until the framework
/// deregisters it or `end` returns (SPF's persistence contract, which [`Module::set_param`] relies on).
unsafe extern "C" fn set_param(
    instance: *mut Instance,
    id: u32,
    port: *const PortInfo,
    payload: *mut Buffer,
) -> CapiError {
    let _ = port;
    // SAFETY: forwarded: a payload to read (its `actual_data_len` bytes).
    let Some(payload) = (unsafe { Payload::to_read(payload) }) else {
        return EBADPARAM;
    };
    // SAFETY: forwarded, for `with` and for `set_param`: the framework keeps its persistence contract (this
    // function's # Safety).
    unsafe {
        with(instance, |module| match payload.data() {
            Ok(data) => module.set_param(id, data),
            Err(code) => code,
        })
    }
}

/// # Safety
/// The module's instance; `payload` null or a buffer lent for the call.
unsafe extern "C" fn get_param(
    instance: *mut Instance,
    id: u32,
    port: *const PortInfo,
    payload: *mut Buffer,
) -> CapiError {
    let _ = port;
    // SAFETY: forwarded: a payload to answer into (its `max_data_len` bytes).
    let Some(mut payload) = (unsafe { Payload::to_write(payload) }) else {
        return EBADPARAM;
    };
    // SAFETY: forwarded.
    unsafe { with(instance, |module| module.get_param(id, &mut payload)) }
}

/// # Safety
/// The module's instance; `list` null or a property list lent for the call.
unsafe extern "C" fn set_properties(instance: *mut Instance, list: *mut PropertyList) -> CapiError {
    // SAFETY: forwarded.
    unsafe { with(instance, |module| module.set_properties(list)) }
}

/// # Safety
/// The module's instance; `list` null or a property list lent for the call.
unsafe extern "C" fn get_properties(instance: *mut Instance, list: *mut PropertyList) -> CapiError {
    // SAFETY: forwarded.
    unsafe { with(instance, |module| module.get_properties(list)) }
}
