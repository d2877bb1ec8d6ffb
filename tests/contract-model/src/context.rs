//! contextCreateFromBinary and contextFree, and the `binary-persistent` check the graph calls share.

use crate::format::{loads_on, name_text, ApiVersions, Lpcm, MAX_GRAPHS, NAME_BYTES};
use crate::lock::with_state;
use crate::op_package::PackageSlot;
use crate::rules::{self, answer, Breach};
use crate::state::{context_handle, fnv1a, BinaryRecord, ContextSlot, GraphPlan, GraphSlot};
use crate::ALIGNMENT_START;
use core::ffi::{c_char, c_void, CStr};
use lpai_direct::qnn::provide::entries;
use lpai_direct::qnn::{lpai, BackendHandle, ContextConfig, ContextConfigOption, ContextHandle, DeviceHandle};
use lpai_direct::qnn::{ErrorHandle, Priority, ProfileHandle};

/// What the context configs asked for.
struct Configs {
    persistent: Option<u8>,
    island_all: u32,
    island_names: [*const c_char; MAX_GRAPHS * 2],
    island_named: usize,
}

/// Reads the context configs.
///
/// # Safety
/// `config` is null or a NULL-terminated list of valid configs; CUSTOM ones point at LPAI context custom configs.
unsafe fn read_configs(config: *const *const ContextConfig) -> Result<Configs, Breach> {
    let mut configs =
        Configs { persistent: None, island_all: 0, island_names: [core::ptr::null(); MAX_GRAPHS * 2], island_named: 0 };
    // SAFETY: per the caller.
    for entry in unsafe { entries(config) } {
        // SAFETY: a valid config; each arm reads the union member its option selects.
        let config = unsafe { *entry };
        match config.option {
            ContextConfigOption::PERSISTENT_BINARY => {
                // SAFETY: as above.
                configs.persistent = Some(unsafe { config.value.is_persistent_binary })
            }
            ContextConfigOption::PRIORITY => {
                // SAFETY: as above.
                let priority = unsafe { config.value.priority };
                if !matches!(priority, Priority::LOW | Priority::NORMAL | Priority::NORMAL_HIGH | Priority::HIGH) {
                    return Err(rules::CONTEXT_CONFIG.breach().text("priority ").num(priority.0.into()));
                }
            }
            ContextConfigOption::CUSTOM => {
                // SAFETY: as above.
                let custom = unsafe { config.value.custom_config }.cast::<lpai::ContextCustomConfig>();
                if custom.is_null() {
                    return Err(rules::CONTEXT_CONFIG.breach().text("a CUSTOM context config points at nothing"));
                }
                // SAFETY: an LPAI context custom config, per the caller.
                let custom = unsafe { *custom };
                match custom.option {
                    lpai::ContextConfigOption::ENABLE_ISLAND if custom.config.is_null() => configs.island_all += 1,
                    lpai::ContextConfigOption::ENABLE_ISLAND => {
                        let Some(slot) = configs.island_names.get_mut(configs.island_named) else {
                            return Err(rules::CONTEXT_CONFIG.breach().text("more ENABLE_ISLAND names than graphs"));
                        };
                        *slot = custom.config.cast::<c_char>().cast_const();
                        configs.island_named += 1;
                    }
                    lpai::ContextConfigOption::MODEL_BUFFER_MEM_TYPE if !custom.config.is_null() => {}
                    other => {
                        return Err(rules::CONTEXT_CONFIG.breach().text("custom option ").num(other.0.into()));
                    }
                }
            }
            other => return Err(rules::CONTEXT_CONFIG.breach().text("config option ").num(other.0.into())),
        }
    }
    Ok(configs)
}

impl Configs {
    /// ENABLE_ISLAND: once with null, or graph names of the binary, not both.
    ///
    /// # Safety
    /// The island names are NUL-terminated strings.
    unsafe fn check_island(&self, file: &Lpcm<'_>) -> Result<(), Breach> {
        if self.island_all > 1 || (self.island_all == 1 && self.island_named > 0) {
            let breach =
                rules::CONTEXT_CONFIG.breach().text("ENABLE_ISLAND for all graphs ").num(self.island_all.into());
            return Err(breach.text(" time(s) plus ").num(self.island_named as u64).text(" by name"));
        }
        for &name in self.island_names.iter().take(self.island_named) {
            // SAFETY: per the caller.
            let name = unsafe { CStr::from_ptr(name) }.to_bytes();
            if !file.graphs().any(|graph| name_text(&graph.record.name) == name) {
                return Err(rules::CONTEXT_CONFIG.breach().text("ENABLE_ISLAND names no graph: ").name(name));
            }
        }
        Ok(())
    }
}

/// contextCreateFromBinary.
///
/// # Safety
/// `config` is null or a NULL-terminated list of valid configs; `buffer` holds `size` readable bytes (and stays so
/// until contextFree); `context` is null or valid for writes.
pub(crate) unsafe extern "C" fn context_create_from_binary(
    backend: BackendHandle,
    device: DeviceHandle,
    config: *const *const ContextConfig,
    buffer: *const c_void,
    size: u64,
    context: *mut ContextHandle,
    _profile: ProfileHandle,
) -> ErrorHandle {
    if context.is_null() {
        return rules::CONTEXT_ARGUMENTS.breach().text("contextCreateFromBinary without an out-pointer").report();
    }
    // SAFETY: forwarded from the caller.
    match unsafe { create(backend, device, config, buffer, size) } {
        Ok(serial) => {
            // SAFETY: checked non-null; valid for writes per the caller.
            unsafe { *context = context_handle(serial) };
            0
        }
        Err(breach) => breach.report(),
    }
}

/// # Safety
/// As for [`context_create_from_binary`].
unsafe fn create(
    backend: BackendHandle,
    device: DeviceHandle,
    config: *const *const ContextConfig,
    buffer: *const c_void,
    size: u64,
) -> Result<u32, Breach> {
    let Some(backend_serial) = with_state(|state| state.backends.get(state.backend(backend)?).map(|slot| slot.serial))
    else {
        return Err(rules::BACKEND_HANDLE.breach().text("contextCreateFromBinary on ").hex(backend.addr() as u64));
    };
    if !device.is_null() {
        return Err(rules::NO_DEVICE.breach().text("device handle ").hex(device.addr() as u64));
    }
    // SAFETY: per the caller.
    let configs = unsafe { read_configs(config) }?;
    if configs.persistent != Some(1) {
        let breach = rules::PERSISTENT_BINARY.breach();
        return Err(match configs.persistent {
            None => breach.text("no PERSISTENT_BINARY config"),
            Some(value) => breach.text("PERSISTENT_BINARY is ").num(value.into()).text(", not 1"),
        });
    }
    if buffer.is_null() || !buffer.addr().is_multiple_of(ALIGNMENT_START) {
        let breach = rules::BINARY_ALIGNED.breach().text("binary at ").hex(buffer.addr() as u64);
        return Err(breach.text(" is not a multiple of ").num(ALIGNMENT_START as u64));
    }
    let Ok(length) = usize::try_from(size) else {
        return Err(rules::BINARY_FORMAT.breach().text("size ").num(size).text(" does not fit in memory"));
    };
    // SAFETY: the caller's buffer holds `size` readable bytes.
    let bytes = unsafe { core::slice::from_raw_parts(buffer.cast::<u8>(), length) };
    let file = Lpcm::parse(bytes).map_err(|malformed| {
        let breach = rules::BINARY_FORMAT.breach().text(malformed.what).text(" (byte ").num(malformed.at as u64);
        breach.text(", value ").num(malformed.value).text(", size ").num(size).text(")")
    })?;
    check_version(&file)?;
    // SAFETY: per the caller.
    unsafe { configs.check_island(&file) }?;
    let binary = BinaryRecord { addr: buffer.expose_provenance(), length, hash: fnv1a(bytes) };
    with_state(|state| {
        let Some(owner) = state.backend(backend).and_then(|index| state.backends.get(index)) else {
            return Err(rules::BACKEND_HANDLE.breach().text("backend freed during contextCreateFromBinary"));
        };
        check_custom_ops(&file, &owner.packages)?;
        let serial = state.take_serial();
        let Some(slot) = state.contexts.iter_mut().find(|slot| slot.serial == 0) else {
            return Err(rules::CAPACITY.breach().text("more than 8 live contexts"));
        };
        *slot = ContextSlot { serial, backend: backend_serial, binary, graph_count: file.graph_count(), ..*slot };
        for (graph, view) in slot.graphs.iter_mut().zip(file.graphs()) {
            *graph = GraphSlot {
                plan: GraphPlan::of(&view),
                retrieved: false,
                scratch: None,
                persistent: None,
                finalized: false,
                persistent_fresh: false,
            };
        }
        Ok(serial)
    })
}

/// The `op-package` rule of contextCreateFromBinary: a package registered with the backend provides every custom
/// op the binary's graphs use.
fn check_custom_ops(file: &Lpcm<'_>, packages: &[PackageSlot]) -> Result<(), Breach> {
    let Some(missing) = file.custom_ops().find(|op| !packages.iter().any(|kept| kept.provides(&op.package, &op.op)))
    else {
        return Ok(());
    };
    let graph = file.graph(missing.graph as usize).map_or([0; NAME_BYTES], |graph| graph.record.name);
    let breach = rules::OP_PACKAGE_MISSING.breach().text("graph \"").name(&graph).text("\" uses op ");
    let breach = breach.name(&missing.package).text("::").name(&missing.op);
    Err(breach.text(", which no registered op package provides"))
}

/// The `binary-version` rule: the binary's core API and backend API majors are the model's and their minors no
/// greater (a version 1 file is for the model's own versions).
fn check_version(file: &Lpcm<'_>) -> Result<(), Breach> {
    let (made_for, own) = (file.api_versions(), ApiVersions::MODEL);
    if loads_on(made_for.core, own.core) && loads_on(made_for.backend, own.backend) {
        return Ok(());
    }
    let breach = rules::BINARY_VERSION.breach().text("the binary is for backend API ").version(made_for.backend);
    let breach = breach.text(" (core API ").version(made_for.core).text("), this backend is ").version(own.backend);
    Err(breach.text(" (core ").version(own.core).text(")"))
}

/// The `binary-persistent` rule: the binary at the recorded address still hashes as at create time.
///
/// # Safety
/// The binary's memory is readable (QNN's rule: it stays valid until contextFree).
pub(crate) unsafe fn check_binary(binary: &BinaryRecord, call: &str) -> Result<(), Breach> {
    // SAFETY: per the caller; recorded from a buffer of this length.
    let bytes =
        unsafe { core::slice::from_raw_parts(core::ptr::with_exposed_provenance::<u8>(binary.addr), binary.length) };
    let now = fnv1a(bytes);
    if now == binary.hash {
        return Ok(());
    }
    let breach = rules::BINARY_PERSISTENT.breach().text(call).text(": the binary at ").hex(binary.addr as u64);
    let breach = breach.text(" (").num(binary.length as u64).text(" bytes) hashes ").hex(now);
    Err(breach.text(", not ").hex(binary.hash).text(": it was freed, moved or reused before contextFree"))
}

/// contextFree: frees the context, then checks the binary was still intact.
///
/// # Safety
/// The context's binary is still readable (QNN's persistent-binary rule).
pub(crate) unsafe extern "C" fn context_free(context: ContextHandle, _profile: ProfileHandle) -> ErrorHandle {
    // On the host contextFree first waits for the executions graphExecuteAsync queued on the context's graphs.
    #[cfg(not(target_arch = "hexagon"))]
    if let Some(serial) = with_state(|state| state.contexts.get(state.context(context)?).map(|slot| slot.serial)) {
        crate::asynchronous::wait_for_context(serial);
    }
    let freed = with_state(|state| {
        let slot = state.context(context)?;
        let context = state.contexts.get_mut(slot)?;
        context.serial = 0;
        Some(context.binary)
    });
    let Some(binary) = freed else {
        let breach = rules::CONTEXT_HANDLE.breach().text("contextFree on ").hex(context.addr() as u64);
        return breach.text(", not a live context (freed already, or never created)").report();
    };
    // SAFETY: per the caller.
    answer(unsafe { check_binary(&binary, "contextFree") })
}
