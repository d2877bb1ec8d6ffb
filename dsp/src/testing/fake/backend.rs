//! The fake backend's provider lists, its function table, and its backend entry points.

use super::record::Event;
use super::{context, entries, graph, handle, index_of, with_state, BACKEND_HANDLE_BASE};
use core::ffi::CStr;
use lpai_direct::qnn::error::{
    BACKEND_ERROR_INVALID_HANDLE, BACKEND_ERROR_NOT_SUPPORTED, COMMON_ERROR_INVALID_ARGUMENT,
};
use lpai_direct::qnn::provide::{Provider, ProviderList};
use lpai_direct::qnn::BackendPropertyOption;
use lpai_direct::qnn::{lpai, ApiVersion, BackendConfig, BackendConfigOption, BackendHandle, BackendProperty};
use lpai_direct::qnn::{ErrorHandle, Interface, InterfaceTable, LogHandle, Version};

/// The core API the fake LPAI provider speaks.
pub const CORE_API: Version = Version::new(2, 32, 0);
/// The core API of the old provider the runtime must refuse (QNN 2.13, another table order).
pub const OLD_CORE_API: Version = Version::new(2, 7, 0);
/// Backend id of the HTP provider in [`htp_and_lpai_providers`].
pub const HTP_BACKEND_ID: u32 = 6;

const TABLE: InterfaceTable = {
    // SAFETY: every field is an `Option` of a function pointer, for which all-zero bytes are `None`.
    let mut table: InterfaceTable = unsafe { core::mem::zeroed() };
    table.backend_create = Some(backend_create);
    table.backend_get_property = Some(backend_get_property);
    table.backend_free = Some(backend_free);
    table.backend_register_op_package = Some(backend_register_op_package);
    table.context_create_from_binary = Some(context::context_create_from_binary);
    table.context_free = Some(context::context_free);
    table.graph_retrieve = Some(graph::graph_retrieve);
    table.graph_get_property = Some(graph::graph_get_property);
    table.graph_set_config = Some(graph::graph_set_config);
    table.graph_finalize = Some(graph::graph_finalize);
    table.graph_execute = Some(graph::graph_execute);
    table
};

const fn provider(backend_id: u32, name: &'static CStr, core_api_version: Version) -> Interface {
    Interface {
        backend_id,
        provider_name: name.as_ptr(),
        api_version: ApiVersion { core_api_version, backend_api_version: lpai::API_VERSION },
        table: TABLE,
    }
}

static LPAI: Provider<Interface> = Provider(provider(lpai::BACKEND_ID_LPAI, lpai::PROVIDER_NAME, CORE_API));
static OLD_LPAI: Provider<Interface> = Provider(provider(lpai::BACKEND_ID_LPAI, lpai::PROVIDER_NAME, OLD_CORE_API));
static HTP: Provider<Interface> = Provider(provider(HTP_BACKEND_ID, c"HTP_QTI_AISW", CORE_API));
static LPAI_LIST: ProviderList<Interface, 1> = ProviderList::new([&LPAI]);
static OLD_LIST: ProviderList<Interface, 1> = ProviderList::new([&OLD_LPAI]);
static HTP_AND_LPAI_LIST: ProviderList<Interface, 2> = ProviderList::new([&HTP, &LPAI]);

/// # Safety
/// `list` and `count` are null or valid for writes.
unsafe fn hand_out<const N: usize>(
    providers: &'static ProviderList<Interface, N>,
    list: *mut *mut *const Interface,
    count: *mut u32,
) -> u64 {
    // SAFETY: forwarded from the caller.
    match unsafe { providers.hand_out(list, count) } {
        true => 0,
        false => u64::from(COMMON_ERROR_INVALID_ARGUMENT),
    }
}

/// `QnnInterface_getProviders` of the fake: one LPAI provider, core API 2.32.
///
/// # Safety
/// `list` and `count` are null or valid for writes.
pub unsafe extern "C" fn lpai_providers(list: *mut *mut *const Interface, count: *mut u32) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    unsafe { hand_out(&LPAI_LIST, list, count) }
}

/// `QnnInterface_getProviders` of an old LPAI library speaking core API 2.7 (must be refused).
///
/// # Safety
/// `list` and `count` are null or valid for writes.
pub unsafe extern "C" fn old_api_providers(list: *mut *mut *const Interface, count: *mut u32) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    unsafe { hand_out(&OLD_LIST, list, count) }
}

/// `QnnInterface_getProviders` listing HTP (id 6) first, then LPAI (id 12); both use the fake's table.
///
/// # Safety
/// `list` and `count` are null or valid for writes.
pub unsafe extern "C" fn htp_and_lpai_providers(list: *mut *mut *const Interface, count: *mut u32) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    unsafe { hand_out(&HTP_AND_LPAI_LIST, list, count) }
}

/// backendCreate: records the configs (HW_INFO in particular).
///
/// # Safety
/// `config` is null or a NULL-terminated list of valid configs; `backend` is valid for writes.
unsafe extern "C" fn backend_create(
    _log: LogHandle,
    config: *const *const BackendConfig,
    backend: *mut BackendHandle,
) -> ErrorHandle {
    if backend.is_null() {
        return u64::from(COMMON_ERROR_INVALID_ARGUMENT);
    }
    with_state(|state| {
        // SAFETY: the caller passes a NULL-terminated list of valid configs.
        for config in unsafe { entries(config) } {
            state.record.backend_configs += 1;
            // SAFETY: a valid config from the caller's list.
            let config = unsafe { *config };
            if config.option != BackendConfigOption::CUSTOM {
                continue;
            }
            // SAFETY: CUSTOM selects `custom_config`, which LPAI points at its own struct.
            let custom = unsafe { config.value.custom_config };
            if custom.is_null() {
                continue;
            }
            // SAFETY: an LPAI backend custom config; HW_INFO points at a HwInfo.
            let custom = unsafe { *custom.cast::<lpai::BackendCustomConfig>() };
            if custom.option == lpai::BackendConfigOption::HW_INFO && !custom.config.is_null() {
                // SAFETY: as above.
                state.record.hw_info = Some(unsafe { *custom.config.cast::<lpai::HwInfo>() });
            }
        }
        state.record.push(Event::BackendCreate);
        // SAFETY: checked non-null; valid for writes per the caller.
        unsafe { *backend = handle(BACKEND_HANDLE_BASE, state.backends_created) };
        state.backends_created += 1;
    });
    0
}

/// backendGetProperty: ALIGNMENT_REQ, REQUIRE_PERSISTENT_BINARY, ENPU_CORE_NUM and ENPU_CORE_INFO (core `i` has
/// `128 << i` MACs, version 6) from the settings.
///
/// # Safety
/// `properties` is a NULL-terminated list of valid properties whose targets are valid for writes.
unsafe extern "C" fn backend_get_property(
    backend: BackendHandle,
    properties: *mut *mut BackendProperty,
) -> ErrorHandle {
    with_state(|state| {
        if index_of(backend, BACKEND_HANDLE_BASE, state.backends_created).is_none() {
            return u64::from(BACKEND_ERROR_INVALID_HANDLE);
        }
        // SAFETY: a NULL-terminated list, per the caller.
        for property in unsafe { entries(properties.cast_const().cast::<*const BackendProperty>()) } {
            // SAFETY: a valid property; CUSTOM points at an LPAI custom property.
            let property = unsafe { *property };
            if property.option != BackendPropertyOption::CUSTOM || property.custom_property.is_null() {
                return u64::from(BACKEND_ERROR_NOT_SUPPORTED);
            }
            // SAFETY: as above.
            let custom = unsafe { *property.custom_property.cast::<lpai::BackendCustomProperty>() };
            let _ = state.record.properties_asked.push(custom.option.0);
            let settings = state.settings;
            match custom.option {
                // SAFETY: each option's target has the documented type and is valid for writes.
                lpai::BackendPropertyOption::ALIGNMENT_REQ => unsafe {
                    *custom.property.cast::<lpai::BufferAlignmentReq>() = lpai::BufferAlignmentReq {
                        start_addr_alignment: settings.start_alignment,
                        size_alignment: settings.size_alignment,
                    };
                },
                // SAFETY: as above (a C bool, one byte).
                lpai::BackendPropertyOption::REQUIRE_PERSISTENT_BINARY => unsafe {
                    *custom.property.cast::<u8>() = u8::from(settings.require_persistent);
                },
                // SAFETY: as above (a QnnLpaiBackend_eNPUCoreNum_t, a u32).
                lpai::BackendPropertyOption::ENPU_CORE_NUM if settings.enpu_cores > 0 => unsafe {
                    *custom.property.cast::<lpai::EnpuCoreNum>() = settings.enpu_cores;
                },
                lpai::BackendPropertyOption::ENPU_CORE_INFO if settings.enpu_cores > 0 => {
                    let info = custom.property.cast::<lpai::EnpuCoreInfo>();
                    // SAFETY: as above; the caller names the core in `coreIndex`.
                    let index = unsafe { (*info).core_index };
                    if index >= settings.enpu_cores || index >= 8 {
                        return u64::from(BACKEND_ERROR_NOT_SUPPORTED);
                    }
                    // SAFETY: as above.
                    unsafe { *info = lpai::EnpuCoreInfo { core_index: index, mac_cnt: 128 << index, version: 6 } };
                }
                _ => return u64::from(BACKEND_ERROR_NOT_SUPPORTED),
            }
        }
        state.record.push(Event::BackendGetProperty);
        0
    })
}

/// The one op package the fake knows, and its interface provider.
pub const OP_PACKAGE: &CStr = c"libFakeOpPackage.so";
/// [`OP_PACKAGE`]'s interface provider.
pub const OP_PACKAGE_PROVIDER: &CStr = c"FakeOpPackage_interfaceProvider";

/// backendRegisterOpPackage: [`OP_PACKAGE`] with [`OP_PACKAGE_PROVIDER`] is registered once (again: DUPLICATE);
/// another provider is IF_PROVIDER_NOT_FOUND, another path NOT_FOUND, as QnnBackend.h documents them.
///
/// # Safety
/// The strings are null or NUL-terminated.
unsafe extern "C" fn backend_register_op_package(
    backend: BackendHandle,
    path: *const core::ffi::c_char,
    interface_provider: *const core::ffi::c_char,
    target: *const core::ffi::c_char,
) -> ErrorHandle {
    use lpai_direct::qnn::error as qnn;
    if path.is_null() || interface_provider.is_null() {
        return u64::from(qnn::BACKEND_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: NUL-terminated (the caller's promise).
    let (path, provider) = unsafe { (CStr::from_ptr(path), CStr::from_ptr(interface_provider)) };
    with_state(|state| {
        if index_of(backend, BACKEND_HANDLE_BASE, state.backends_created).is_none() {
            return u64::from(BACKEND_ERROR_INVALID_HANDLE);
        }
        let code = match (path == OP_PACKAGE, provider == OP_PACKAGE_PROVIDER) {
            (false, _) => qnn::BACKEND_ERROR_OP_PACKAGE_NOT_FOUND,
            (true, false) => qnn::BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND,
            (true, true) if !state.record.op_packages.is_empty() => qnn::BACKEND_ERROR_OP_PACKAGE_DUPLICATE,
            (true, true) => match state.record.op_packages.push(!target.is_null()) {
                Ok(()) => 0,
                Err(_) => qnn::BACKEND_ERROR_OP_PACKAGE_REGISTRATION_FAILED,
            },
        };
        u64::from(code)
    })
}

/// backendFree: records how many contexts were still alive.
///
/// # Safety
/// Any handle value is accepted.
unsafe extern "C" fn backend_free(backend: BackendHandle) -> ErrorHandle {
    with_state(|state| {
        if index_of(backend, BACKEND_HANDLE_BASE, state.backends_created).is_none() {
            return u64::from(BACKEND_ERROR_INVALID_HANDLE);
        }
        state.record.contexts_live_at_backend_free = state.record.contexts.iter().filter(|c| c.live).count() as u32;
        state.record.push(Event::BackendFree);
        0
    })
}
