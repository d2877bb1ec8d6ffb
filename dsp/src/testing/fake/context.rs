//! The fake backend's context entry points: create from a fake binary (checked as LPAI would), and free.

use super::binary::{parse_binary, MAX_BINARY_BYTES};
use super::record::{ContextRecord, Event, State, MAX_CONTEXTS};
use super::{entries, handle, index_of, with_state, BACKEND_HANDLE_BASE};
use core::ffi::c_void;
use lpai_direct::qnn::error::{
    COMMON_ERROR_MEM_ALLOC, COMMON_ERROR_NOT_SUPPORTED, CONTEXT_ERROR_CREATE_FROM_BINARY,
    CONTEXT_ERROR_INVALID_ARGUMENT, CONTEXT_ERROR_INVALID_CONFIG, CONTEXT_ERROR_INVALID_HANDLE,
};
use lpai_direct::qnn::{lpai, BackendHandle, ContextConfig, ContextConfigOption, ContextHandle, DeviceHandle};
use lpai_direct::qnn::{ErrorHandle, ProfileHandle};

const CONTEXT_HANDLE_BASE: usize = 0xC000;

/// Records one context config; false when the fake does not know it.
///
/// # Safety
/// `config` points at a valid config whose custom pointer, if CUSTOM, is an LPAI context custom config.
unsafe fn record_context_config(record: &mut ContextRecord, config: *const ContextConfig) -> bool {
    // SAFETY: per the caller; each arm reads the union member its option selects.
    unsafe {
        match (*config).option {
            ContextConfigOption::PERSISTENT_BINARY => {
                record.persistent_binary = Some((*config).value.is_persistent_binary)
            }
            ContextConfigOption::PRIORITY => record.priority = Some((*config).value.priority),
            ContextConfigOption::CUSTOM => {
                let custom = (*config).value.custom_config.cast::<lpai::ContextCustomConfig>();
                if custom.is_null() {
                    return false;
                }
                let _ = record.custom.push(((*custom).option.0, (*custom).config.addr()));
            }
            _ => return false,
        }
    }
    true
}

/// contextCreateFromBinary: records the configs and the binary, then checks them as LPAI would.
///
/// # Safety
/// `config` is null or a NULL-terminated list of valid configs; `buffer` holds `size` readable bytes;
/// `context` is valid for writes.
pub(crate) unsafe extern "C" fn context_create_from_binary(
    backend: BackendHandle,
    device: DeviceHandle,
    config: *const *const ContextConfig,
    buffer: *const c_void,
    size: u64,
    context: *mut ContextHandle,
    _profile: ProfileHandle,
) -> ErrorHandle {
    with_state(|state| {
        state.record.context_create_calls += 1;
        if index_of(backend, BACKEND_HANDLE_BASE, state.backends_created).is_none() || context.is_null() {
            return u64::from(CONTEXT_ERROR_INVALID_ARGUMENT);
        }
        let Some(slot) = state.record.contexts.iter().position(|c| !c.live) else {
            return u64::from(COMMON_ERROR_MEM_ALLOC);
        };
        let settings = state.settings;
        let record = &mut state.record.contexts[slot];
        *record = ContextRecord { device_was_null: device.is_null(), ..ContextRecord::EMPTY };
        record.binary_address = buffer.addr();
        record.binary_size = size;
        let mut known = true;
        // SAFETY: a NULL-terminated list of valid configs, per the caller.
        for entry in unsafe { entries(config) } {
            // SAFETY: as above.
            known &= unsafe { record_context_config(record, entry) };
        }
        let island = record.custom.iter().filter(|(option, _)| *option == lpai::ContextConfigOption::ENABLE_ISLAND.0);
        let island_all = island.clone().any(|&(_, name)| name == 0);
        if settings.refuse_persistent && record.persistent_binary.is_some() {
            return u64::from(COMMON_ERROR_NOT_SUPPORTED);
        }
        let persistent_missing = settings.require_persistent && record.persistent_binary != Some(1);
        if !known || persistent_missing || (island_all && island.count() > 1) {
            return u64::from(CONTEXT_ERROR_INVALID_CONFIG);
        }
        let length = usize::try_from(size).unwrap_or(usize::MAX);
        let aligned = buffer.addr().is_multiple_of(settings.start_alignment.max(1) as usize);
        if buffer.is_null() || !aligned || length > MAX_BINARY_BYTES {
            return u64::from(CONTEXT_ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: the caller's buffer holds `size` readable bytes.
        let bytes = unsafe { core::slice::from_raw_parts(buffer.cast::<u8>(), length) };
        let Some(spec) = parse_binary(bytes) else {
            return u64::from(CONTEXT_ERROR_CREATE_FROM_BINARY);
        };
        record.created = true;
        record.live = true;
        let kept = &mut state.contexts[slot];
        kept.spec = spec;
        kept.binary = buffer.cast();
        kept.binary_copy[..length].copy_from_slice(bytes);
        state.record.push(Event::ContextCreate(slot as u8));
        // SAFETY: checked non-null; valid for writes per the caller.
        unsafe { *context = handle(CONTEXT_HANDLE_BASE, slot) };
        0
    })
}

/// The live context slot behind a context handle.
pub(crate) fn context_slot(state: &State, context: ContextHandle) -> Option<usize> {
    index_of(context, CONTEXT_HANDLE_BASE, MAX_CONTEXTS).filter(|&slot| state.record.contexts[slot].live)
}

/// contextFree: checks that the (persistent) binary still holds its bytes, then frees the context.
///
/// # Safety
/// The binary the context was created from is still readable (QNN's persistent-binary contract).
pub(crate) unsafe extern "C" fn context_free(context: ContextHandle, _profile: ProfileHandle) -> ErrorHandle {
    with_state(|state| {
        let Some(slot) = context_slot(state, context) else {
            return u64::from(CONTEXT_ERROR_INVALID_HANDLE);
        };
        let record = &mut state.record.contexts[slot];
        let length = record.binary_size as usize;
        // SAFETY: the persistent binary must stay valid until this call; a runtime that broke that contract is
        // what this check exists to catch, and in these tests the buffer is the caller's arena, still alive.
        let bytes = unsafe { core::slice::from_raw_parts(state.contexts[slot].binary, length) };
        record.binary_intact_at_free = Some(state.contexts[slot].binary_copy.get(..length) == Some(bytes));
        record.live = false;
        state.record.push(Event::ContextFree(slot as u8));
        0
    })
}
