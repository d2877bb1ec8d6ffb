//! The backend provider (`QnnInterface_getProviders`), its function table, and backendCreate / GetProperty / Free.

use crate::lock::with_state;
use crate::log::Line;
use crate::rules::{self, Breach};
use crate::state::{backend_handle, BackendSlot};
use crate::{asynchronous, context, execute, graph, op_package, ALIGNMENT_START, SIZE_GRANULE};
use lpai_direct::qnn::error::{BACKEND_ERROR_CANNOT_INITIALIZE, COMMON_ERROR_INVALID_ARGUMENT};
use lpai_direct::qnn::provide::{entries, Provider, ProviderList};
use lpai_direct::qnn::{lpai, ApiVersion, BackendConfig, BackendConfigOption, BackendHandle, BackendProperty};
use lpai_direct::qnn::{BackendPropertyOption, ErrorHandle, Interface, InterfaceTable, LogHandle, Version};

/// The core API the model's provider speaks.
pub const CORE_API: Version = Version::new(2, 32, 0);

const TABLE: InterfaceTable = {
    // SAFETY: every field is an `Option` of a function pointer, for which all-zero bytes are `None`.
    let mut table: InterfaceTable = unsafe { core::mem::zeroed() };
    table.backend_create = Some(backend_create);
    table.backend_get_property = Some(backend_get_property);
    table.backend_register_op_package = Some(op_package::backend_register_op_package);
    table.backend_free = Some(backend_free);
    table.context_create_from_binary = Some(context::context_create_from_binary);
    table.context_free = Some(context::context_free);
    table.graph_retrieve = Some(graph::graph_retrieve);
    table.graph_get_property = Some(graph::graph_get_property);
    table.graph_set_config = Some(graph::graph_set_config);
    table.graph_finalize = Some(graph::graph_finalize);
    table.graph_execute = Some(execute::graph_execute);
    table.graph_execute_async = Some(asynchronous::graph_execute_async);
    table
};

static LPAI: Provider<Interface> = Provider(Interface {
    backend_id: lpai::BACKEND_ID_LPAI,
    provider_name: lpai::PROVIDER_NAME.as_ptr(),
    api_version: ApiVersion { core_api_version: CORE_API, backend_api_version: lpai::API_VERSION },
    table: TABLE,
});
static LIST: ProviderList<Interface, 1> = ProviderList::new([&LPAI]);

/// `QnnInterface_getProviders` of the model: one LPAI provider (backend id 12, core API 2.32).
///
/// # Safety
/// `list` and `count` are null or valid for writes.
pub unsafe extern "C" fn lpai_providers(list: *mut *mut *const Interface, count: *mut u32) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    match unsafe { LIST.hand_out(list, count) } {
        true => 0,
        false => u64::from(COMMON_ERROR_INVALID_ARGUMENT),
    }
}

/// Reads the HW_INFO of a backend config list.
///
/// # Safety
/// `config` is null or a NULL-terminated list of valid configs.
unsafe fn hw_info(config: *const *const BackendConfig) -> Result<Option<(u32, u32)>, Breach> {
    let mut found = None;
    // SAFETY: per the caller.
    for entry in unsafe { entries(config) } {
        // SAFETY: a valid config from the caller's list.
        let config = unsafe { *entry };
        if config.option != BackendConfigOption::CUSTOM {
            continue;
        }
        // SAFETY: CUSTOM selects `custom_config`.
        let custom = unsafe { config.value.custom_config }.cast::<lpai::BackendCustomConfig>();
        if custom.is_null() {
            return Err(rules::BACKEND_CONFIG.breach().text("a CUSTOM backend config points at nothing"));
        }
        // SAFETY: an LPAI backend custom config, per the LPAI API.
        let custom = unsafe { *custom };
        if custom.option != lpai::BackendConfigOption::HW_INFO || custom.config.is_null() {
            return Err(rules::BACKEND_CONFIG.breach().text("custom option ").num(custom.option.0.into()));
        }
        // SAFETY: HW_INFO points at a HwInfo.
        let info = unsafe { *custom.config.cast::<lpai::HwInfo>() };
        let known = info.hw_version.c_name().is_some() && info.hw_version != lpai::HwVersion::UNKNOWN;
        if info.lpai_target.0 > lpai::Target::TENSILICA.0 || !known {
            let breach = rules::BACKEND_CONFIG.breach().text("HW_INFO target ").num(info.lpai_target.0.into());
            return Err(breach.text(", hw version ").hex(info.hw_version.0.into()));
        }
        found = Some((info.lpai_target.0, info.hw_version.0));
    }
    Ok(found)
}

/// The eNPU (LPAI engine) cores of the DSP the model runs on, as the virtual aDSP's hardware service
/// `lpai_vd_enpu_cores` (`linker/virtual-hardware-symbols.txt`) answers them: 1, or 0 in a PD shell run with
/// `--no-lpai-engine`. Only the PD library build on Hexagon asks (feature `virtual-hardware`, which
/// libQnnLpaiContract.so turns on); the programs that link the model in statically have no such service.
#[cfg(all(target_arch = "hexagon", feature = "virtual-hardware"))]
fn enpu_cores() -> u32 {
    extern "C" {
        /// `unsigned int lpai_vd_enpu_cores(void)`.
        fn lpai_vd_enpu_cores() -> u32;
    }
    // SAFETY: the virtual hardware's service takes no arguments and only answers a number.
    unsafe { lpai_vd_enpu_cores() }
}

/// Elsewhere (the host, and the Hexagon programs that link the model in) there is always one LPAI engine.
#[cfg(not(all(target_arch = "hexagon", feature = "virtual-hardware")))]
fn enpu_cores() -> u32 {
    1
}

/// Whether a backend created now executes asynchronously: always, unless on the host the environment variable
/// `LPAI_CONTRACT_NO_EXECUTE_ASYNC` is `1` (a backend without graphExecuteAsync, for tests of a runtime's fallback).
#[cfg(not(target_arch = "hexagon"))]
fn execute_async() -> bool {
    std::env::var_os("LPAI_CONTRACT_NO_EXECUTE_ASYNC").is_none_or(|value| value != "1")
}

/// On Hexagon every backend executes asynchronously (inside the call: the PD has no threads of the model).
#[cfg(target_arch = "hexagon")]
fn execute_async() -> bool {
    true
}

/// Whether a backend created now withholds its executions' notifications: on the host when the environment variable
/// `LPAI_CONTRACT_WITHHOLD_NOTIFY` is `1` (a backend that never notifies, or notifies only when a test says so with
/// [`crate::notify_withheld`], for tests of a runtime's bounded waits).
#[cfg(not(target_arch = "hexagon"))]
fn withhold_notify() -> bool {
    std::env::var_os("LPAI_CONTRACT_WITHHOLD_NOTIFY").is_some_and(|value| value == "1")
}

/// On Hexagon every backend notifies inside the call.
#[cfg(target_arch = "hexagon")]
fn withhold_notify() -> bool {
    false
}

/// On a DSP without an LPAI engine (`cores` 0) backendCreate fails: CANNOT_INITIALIZE (4000), after one log line.
fn without_engine(cores: u32) -> Option<ErrorHandle> {
    if cores != 0 {
        return None;
    }
    let text = "no LPAI engine on this DSP (the virtual hardware reports 0 eNPU cores): backendCreate fails";
    Line::message(text).emit();
    Some(u64::from(BACKEND_ERROR_CANNOT_INITIALIZE))
}

/// backendCreate: fails on a DSP without an LPAI engine, else records HW_INFO.
///
/// # Safety
/// `config` is null or a NULL-terminated list of valid configs; `backend` is null or valid for writes.
unsafe extern "C" fn backend_create(
    _log: LogHandle,
    config: *const *const BackendConfig,
    backend: *mut BackendHandle,
) -> ErrorHandle {
    if backend.is_null() {
        return u64::from(lpai_direct::qnn::error::BACKEND_ERROR_INVALID_ARGUMENT);
    }
    if let Some(failure) = without_engine(enpu_cores()) {
        return failure;
    }
    // SAFETY: per the caller.
    let result = unsafe { hw_info(config) }.and_then(|hw_info| {
        with_state(|state| {
            let serial = state.take_serial();
            let slot = state.backends.iter_mut().find(|slot| slot.serial == 0);
            let Some(slot) = slot else {
                return Err(rules::CAPACITY.breach().text("more than 8 live backends"));
            };
            *slot = BackendSlot {
                serial,
                hw_info,
                execute_async: execute_async(),
                withhold_notify: withhold_notify(),
                ..BackendSlot::EMPTY
            };
            Ok(serial)
        })
    });
    match result {
        Ok(serial) => {
            // SAFETY: checked non-null; valid for writes per the caller.
            unsafe { *backend = backend_handle(serial) };
            0
        }
        Err(breach) => breach.report(),
    }
}

/// MAC units the model reports for each eNPU core (ENPU_CORE_INFO).
pub const ENPU_CORE_MACS: u32 = 256;
/// The version the model reports for each eNPU core (ENPU_CORE_INFO): the default LPAI hardware version, v6.
pub const ENPU_CORE_VERSION: u32 = 6;

/// backendGetProperty: ALIGNMENT_REQ {128, 64}, REQUIRE_PERSISTENT_BINARY (true), ENPU_CORE_NUM (the DSP's
/// cores, [`enpu_cores`]) and ENPU_CORE_INFO for a core there is ([`ENPU_CORE_MACS`], [`ENPU_CORE_VERSION`]).
///
/// # Safety
/// `properties` is null or a NULL-terminated list of valid properties whose targets are valid for writes.
unsafe extern "C" fn backend_get_property(
    backend: BackendHandle,
    properties: *mut *mut BackendProperty,
) -> ErrorHandle {
    if with_state(|state| state.backend(backend)).is_none() {
        return rules::BACKEND_HANDLE.breach().text("backendGetProperty on ").hex(backend.addr() as u64).report();
    }
    // SAFETY: per the caller.
    for entry in unsafe { entries(properties.cast_const().cast::<*const BackendProperty>()) } {
        // SAFETY: a valid property from the caller's list.
        let property = unsafe { *entry };
        if property.option != BackendPropertyOption::CUSTOM || property.custom_property.is_null() {
            return rules::BACKEND_PROPERTY.breach().text("property option ").num(property.option.0.into()).report();
        }
        // SAFETY: CUSTOM points at an LPAI backend custom property.
        let custom = unsafe { *property.custom_property.cast::<lpai::BackendCustomProperty>() };
        if custom.property.is_null() {
            return rules::BACKEND_PROPERTY.breach().text("custom property points at nothing").report();
        }
        match custom.option {
            // SAFETY: ALIGNMENT_REQ points at a BufferAlignmentReq, valid for writes per the caller.
            lpai::BackendPropertyOption::ALIGNMENT_REQ => unsafe {
                custom.property.cast::<lpai::BufferAlignmentReq>().write_unaligned(lpai::BufferAlignmentReq {
                    start_addr_alignment: ALIGNMENT_START as u32,
                    size_alignment: SIZE_GRANULE as u32,
                })
            },
            // SAFETY: REQUIRE_PERSISTENT_BINARY points at a C bool (one byte), valid for writes.
            lpai::BackendPropertyOption::REQUIRE_PERSISTENT_BINARY => unsafe { custom.property.cast::<u8>().write(1) },
            // SAFETY: ENPU_CORE_NUM points at a QnnLpaiBackend_eNPUCoreNum_t (u32), valid for writes.
            lpai::BackendPropertyOption::ENPU_CORE_NUM => unsafe {
                custom.property.cast::<lpai::EnpuCoreNum>().write_unaligned(enpu_cores())
            },
            lpai::BackendPropertyOption::ENPU_CORE_INFO => {
                let info = custom.property.cast::<lpai::EnpuCoreInfo>();
                // SAFETY: ENPU_CORE_INFO points at a QnnLpaiBackend_eNPUCoreInfo_t whose coreIndex names the core.
                let index = unsafe { info.read_unaligned() }.core_index;
                let cores = enpu_cores();
                if index >= cores {
                    let breach = rules::BACKEND_PROPERTY.breach().text("ENPU_CORE_INFO of core ").num(index.into());
                    return breach.text(", of ").num(cores.into()).text(" core(s)").report();
                }
                let answer =
                    lpai::EnpuCoreInfo { core_index: index, mac_cnt: ENPU_CORE_MACS, version: ENPU_CORE_VERSION };
                // SAFETY: as above, valid for writes.
                unsafe { info.write_unaligned(answer) };
            }
            other => {
                return rules::BACKEND_PROPERTY.breach().text("custom option ").num(other.0.into()).report();
            }
        }
    }
    0
}

/// backendFree: only after every context of the backend was freed; then its op packages are released (terminate or
/// free, then dlclose).
///
/// # Safety
/// Any handle value is accepted.
unsafe extern "C" fn backend_free(backend: BackendHandle) -> ErrorHandle {
    let freed = with_state(|state| {
        let Some(slot) = state.backend(backend) else {
            return Err(rules::BACKEND_HANDLE.breach().text("backendFree on ").hex(backend.addr() as u64));
        };
        let serial = state.backends.get(slot).map_or(0, |slot| slot.serial);
        let live = state.contexts.iter().filter(|context| context.serial != 0 && context.backend == serial).count();
        if live > 0 {
            return Err(rules::FREE_ORDER.breach().num(live as u64).text(" context(s) of the backend still live"));
        }
        let slot = state.backends.get_mut(slot).ok_or_else(|| rules::BACKEND_HANDLE.breach().text("backendFree"))?;
        let packages = slot.packages;
        *slot = BackendSlot::EMPTY;
        Ok(packages)
    });
    match freed {
        Ok(packages) => {
            // On the host, the model's execution thread ends before the caller may unload the model.
            #[cfg(not(target_arch = "hexagon"))]
            asynchronous::quiesce();
            op_package::release_all(&packages);
            0
        }
        Err(breach) => breach.report(),
    }
}

/// The HW_INFO config (target, hardware version) a live backend was created with, if any.
pub fn recorded_hw_info(backend: BackendHandle) -> Option<lpai::HwInfo> {
    let (target, version) = with_state(|state| state.backends.get(state.backend(backend)?)?.hw_info)?;
    Some(lpai::HwInfo { lpai_target: lpai::Target(target), hw_version: lpai::HwVersion(version) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_an_engine_backend_create_fails_with_cannot_initialize() {
        crate::log::take();
        assert_eq!(without_engine(0), Some(4000));
        assert_eq!(
            crate::log::take(),
            ["contract: no LPAI engine on this DSP (the virtual hardware reports 0 eNPU cores): backendCreate fails"]
        );
        assert_eq!(without_engine(1), None);
        assert_eq!(without_engine(2), None);
        assert!(crate::log::take().is_empty());
        assert_eq!(enpu_cores(), 1, "the host build always has an engine");
    }
}
