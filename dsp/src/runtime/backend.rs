//! A QNN backend: the library, the chosen interface provider, the backend handle and its properties.
//!
//! LPAI steps (HW_INFO backend config, ALIGNMENT_REQ and REQUIRE_PERSISTENT_BINARY properties) run when the
//! provider is LPAI (backend id 12 or 16); other backends take the generic QNN path and the skipped steps are
//! logged at info level.

use super::error::{check, name_of, require, Name, QnnFailure, RuntimeError};
use crate::log;
use crate::platform::libraries::Library;
use crate::platform::Hex;
use crate::platform::VendorCalls;
use crate::platform::{Level, Message};
use core::ffi::{c_void, CStr};
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};
use lpai_direct::qnn::{self, lpai, BackendConfig, BackendConfigOption, BackendConfigValue, BackendHandle};
use lpai_direct::qnn::{BackendProperty, BackendPropertyOption, Interface, InterfaceGetProvidersFn, InterfaceTable};
use lpai_direct::wire::EnpuCores;

/// What the caller wants from the backend.
#[derive(Clone, Copy, Debug)]
pub struct BackendOptions {
    /// Only accept a provider with this backend id (LPAI 12, LPAI island 16, HTP 6); `None` takes LPAI when
    /// offered, else the first provider.
    pub backend_id: Option<u32>,
    /// LPAI target environment for the HW_INFO config.
    pub lpai_target: lpai::Target,
    /// LPAI hardware version for the HW_INFO config.
    pub lpai_hw_version: lpai::HwVersion,
}

impl Default for BackendOptions {
    fn default() -> Self {
        BackendOptions {
            backend_id: None,
            lpai_target: if cfg!(target_arch = "hexagon") { lpai::Target::ADSP } else { lpai::Target::X86 },
            lpai_hw_version: lpai::HwVersion(crate::build_config::DEFAULT_LPAI_HW_VERSION),
        }
    }
}

/// Who the backend is.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderInfo {
    /// e.g. `LPAI_QTI_AISW`, `HTP_QTI_AISW`.
    pub name: Name,
    /// QNN backend id (LPAI 12 or 16, HTP 6).
    pub backend_id: u32,
    /// Core API version the provider speaks.
    pub core_api: qnn::Version,
    /// The backend's own API version.
    pub backend_api: qnn::Version,
}

/// Backend properties the runtime acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackendProperties {
    /// Start-address alignment for the context binary and every buffer handed to the backend.
    pub start_alignment: usize,
    /// Size granularity for those buffers.
    pub size_alignment: usize,
    /// The backend needs the context binary to stay valid and unmoved until the context is freed.
    pub requires_persistent_binary: bool,
    /// What an I/O tensor's `clientBuf.dataSize` is rounded up to: LPAI's size alignment, at least
    /// [`LPAI_IO_SIZE_GRANULE`]; 1 (the exact size) for other backends.
    pub io_size_granule: usize,
    /// LPAI's eNPU cores (`ENPU_CORE_NUM`); `None` for other backends and an LPAI backend that does not answer it.
    /// Each core's `ENPU_CORE_INFO` is asked when wanted ([`Backend::enpu_cores`]), not kept.
    pub enpu_cores: Option<u32>,
}

/// LPAI I/O buffers carry a `dataSize` padded to a multiple of this, as the one public working LPAI direct mode
/// does on the DSP (ExecuTorch's `QNN_TENSOR_ALIGNMENT`).
pub const LPAI_IO_SIZE_GRANULE: usize = 64;

/// Buffers for the generic QNN path: aligned for any SIMD load a backend may do.
const GENERIC_ALIGNMENT: usize = 64;

/// A created QNN backend; freed (and its library unloaded) on drop.
pub struct Backend {
    interface: *const Interface,
    handle: BackendHandle,
    info: ProviderInfo,
    properties: BackendProperties,
    /// Contexts created on this backend and not freed (a leaked one, or one whose frame never ended, stays counted:
    /// the backend is then never freed, so it never touches that context's memory again).
    live_contexts: AtomicU32,
    // Declared last: closed after `Drop::drop` freed the backend.
    _library: Option<Library>,
}

impl Backend {
    /// Loads a backend library (e.g. libQnnLpai.so) and creates the backend.
    pub fn load(path: &CStr, options: &BackendOptions) -> Result<Backend, RuntimeError> {
        let library = Library::open(path)
            .map_err(|error| RuntimeError::LibraryNotLoaded { what: Message::StepLoadingBackendLibrary, error })?;
        let symbol = library.symbol(qnn::INTERFACE_GET_PROVIDERS_SYMBOL);
        let symbol = symbol.ok_or(RuntimeError::MissingSymbol(Message::QnnInterfaceGetProviders))?;
        // SAFETY: a QNN library exports QnnInterface_getProviders with exactly this signature.
        let get_providers = unsafe { core::mem::transmute::<*mut c_void, InterfaceGetProvidersFn>(symbol.as_ptr()) };
        // SAFETY: the library stays loaded while the backend lives: the backend owns it and drops it last; on an
        // error it drops here, after nothing from it is in use.
        unsafe { Backend::create(get_providers, options, Some(library)) }
    }

    /// Creates a backend from a `QnnInterface_getProviders` function already linked into the program.
    ///
    /// # Safety
    /// `get_providers` must behave as QNN specifies, and the code and data it returns must stay valid for as
    /// long as the backend lives.
    pub unsafe fn from_providers(
        get_providers: InterfaceGetProvidersFn,
        options: &BackendOptions,
    ) -> Result<Backend, RuntimeError> {
        // SAFETY: forwarded from the caller.
        unsafe { Backend::create(get_providers, options, None) }
    }

    /// # Safety
    /// As for [`Backend::from_providers`]; `library`, if any, is the one `get_providers` comes from.
    unsafe fn create(
        get_providers: InterfaceGetProvidersFn,
        options: &BackendOptions,
        library: Option<Library>,
    ) -> Result<Backend, RuntimeError> {
        // SAFETY: forwarded from the caller.
        let interface = unsafe { choose_provider(get_providers, options.backend_id)? };
        // SAFETY: the provider entry lives as long as its library.
        let provider = unsafe { &*interface };
        // SAFETY: a provider name is a NUL-terminated string owned by the library, or null.
        let name = unsafe { c_text(provider.provider_name) };
        let info = ProviderInfo {
            name: name_of(name),
            backend_id: provider.backend_id,
            core_api: provider.api_version.core_api_version,
            backend_api: provider.api_version.backend_api_version,
        };
        let is_lpai = is_lpai(info.backend_id);
        let mut hw_info = lpai::HwInfo { lpai_target: options.lpai_target, hw_version: options.lpai_hw_version };
        let mut custom = lpai::BackendCustomConfig {
            option: lpai::BackendConfigOption::HW_INFO,
            config: (&mut hw_info as *mut lpai::HwInfo).cast(),
        };
        let hw_config = BackendConfig {
            option: BackendConfigOption::CUSTOM,
            value: BackendConfigValue { custom_config: (&mut custom as *mut lpai::BackendCustomConfig).cast() },
        };
        let lpai_configs: [*const BackendConfig; 2] = [&hw_config, ptr::null()];
        let configs = if is_lpai {
            log!(Level::Info, Message::LpaiHwInfo, name, hw_info.lpai_target.0, Hex::of(hw_info.hw_version.0));
            lpai_configs.as_ptr()
        } else {
            log!(Level::Info, Message::NotLpaiSkippingHwInfo, name, info.backend_id);
            ptr::null()
        };
        let backend_create = require(provider.table.backend_create, Message::QnnBackendCreate)?;
        let mut handle: BackendHandle = ptr::null_mut();
        // SAFETY: the config array is NULL-terminated and outlives the call; no log handle.
        check(unsafe { backend_create(ptr::null_mut(), configs, &mut handle) }, Message::QnnBackendCreate)?;
        let mut backend = Backend {
            _library: library,
            interface,
            handle,
            live_contexts: AtomicU32::new(0),
            info,
            properties: BackendProperties {
                start_alignment: GENERIC_ALIGNMENT,
                size_alignment: 1,
                requires_persistent_binary: false,
                io_size_granule: 1,
                enpu_cores: None,
            },
        };
        if is_lpai {
            backend.properties = backend.lpai_properties()?;
        } else {
            log!(Level::Info, Message::NotLpaiSkippingAlignment, name);
        }
        Ok(backend)
    }

    fn lpai_properties(&self) -> Result<BackendProperties, RuntimeError> {
        let mut alignment = lpai::BufferAlignmentReq::default();
        let mut persistent: u8 = 0;
        let mut custom = [
            lpai::BackendCustomProperty {
                option: lpai::BackendPropertyOption::ALIGNMENT_REQ,
                property: (&mut alignment as *mut lpai::BufferAlignmentReq).cast(),
            },
            lpai::BackendCustomProperty {
                option: lpai::BackendPropertyOption::REQUIRE_PERSISTENT_BINARY,
                property: (&mut persistent as *mut u8).cast(),
            },
        ];
        let mut properties = [
            BackendProperty {
                option: BackendPropertyOption::CUSTOM,
                custom_property: (&mut custom[0] as *mut lpai::BackendCustomProperty).cast(),
            },
            BackendProperty {
                option: BackendPropertyOption::CUSTOM,
                custom_property: (&mut custom[1] as *mut lpai::BackendCustomProperty).cast(),
            },
        ];
        let mut list: [*mut BackendProperty; 3] = [&mut properties[0], &mut properties[1], ptr::null_mut()];
        let get_property = require(self.table().backend_get_property, Message::QnnBackendGetProperty)?;
        // SAFETY: a NULL-terminated list of properties whose targets outlive the call.
        check(unsafe { get_property(self.handle, list.as_mut_ptr()) }, Message::QnnBackendGetProperty)?;
        let start = (alignment.start_addr_alignment as usize).max(1);
        let size = (alignment.size_alignment as usize).max(1);
        log!(Level::Info, Message::LpaiAlignment, start, size, persistent != 0);
        if !start.is_power_of_two() {
            return Err(RuntimeError::BadAlignment { start });
        }
        Ok(BackendProperties {
            start_alignment: start,
            size_alignment: size,
            requires_persistent_binary: persistent != 0,
            io_size_granule: size.max(LPAI_IO_SIZE_GRANULE),
            enpu_cores: self.enpu_core_count(),
        })
    }

    /// Asks one LPAI custom property, `option`, into `value`; whether the backend answered it.
    fn lpai_property<T>(&self, option: lpai::BackendPropertyOption, value: &mut T) -> bool {
        let Some(get_property) = self.table().backend_get_property else { return false };
        let mut custom = lpai::BackendCustomProperty { option, property: (value as *mut T).cast() };
        let mut property = BackendProperty {
            option: BackendPropertyOption::CUSTOM,
            custom_property: (&mut custom as *mut lpai::BackendCustomProperty).cast(),
        };
        let mut list: [*mut BackendProperty; 2] = [&mut property, ptr::null_mut()];
        // SAFETY: a NULL-terminated list of one property whose target, `value`, is of the type `option` names (the
        // callers pair them as QnnLpaiBackend.h does) and outlives the call.
        check(unsafe { get_property(self.handle, list.as_mut_ptr()) }, Message::QnnBackendGetProperty).is_ok()
    }

    /// The eNPU cores; `None` when the backend does not say (an LPAI older than the property): then nothing is
    /// checked against them.
    fn enpu_core_count(&self) -> Option<u32> {
        let mut count: lpai::EnpuCoreNum = 0;
        if !self.lpai_property(lpai::BackendPropertyOption::ENPU_CORE_NUM, &mut count) {
            log!(Level::Info, Message::NoEnpuCoreNum);
            return None;
        }
        log!(Level::Info, Message::EnpuCores, count);
        Some(count)
    }

    /// The eNPU cores and the first [`lpai::MAX_ENPU_CORES`]'s information (`ENPU_CORE_INFO`, asked now; a core
    /// the backend does not describe reads as 0 MACs, version 0); `None` as [`BackendProperties::enpu_cores`].
    #[inline(never)]
    pub fn enpu_cores(&self) -> Option<EnpuCores> {
        let count = self.properties.enpu_cores?;
        let mut info = [lpai::EnpuCoreInfo::default(); lpai::MAX_ENPU_CORES];
        for (index, core) in info.iter_mut().enumerate().take((count as usize).min(lpai::MAX_ENPU_CORES)) {
            // ENPU_CORE_INFO answers for the core whose index the caller puts in `coreIndex`.
            core.core_index = index as u32;
            if !self.lpai_property(lpai::BackendPropertyOption::ENPU_CORE_INFO, core) {
                *core = lpai::EnpuCoreInfo { core_index: index as u32, mac_cnt: 0, version: 0 };
            }
        }
        Some(EnpuCores { count, info })
    }

    /// Registers an op package (`backendRegisterOpPackage`): the library at `path`, which exports the interface
    /// provider `interface_provider`, for `target` (`None`: the backend's default). It stays registered as long as
    /// the backend; a context binary whose graphs use its ops needs it before the load. `vendor` is the PD-wide
    /// vendor-calls lock this thread holds ([`Libraries::register_op_package`](super::Libraries::register_op_package)
    /// takes it).
    pub fn register_op_package(
        &self,
        _vendor: &VendorCalls,
        path: &CStr,
        interface_provider: &CStr,
        target: Option<&CStr>,
    ) -> Result<(), RuntimeError> {
        let register = require(self.table().backend_register_op_package, Message::QnnBackendRegisterOpPackage)?;
        let (path_text, provider_text) = (path.to_str().unwrap_or("?"), interface_provider.to_str().unwrap_or("?"));
        log!(Level::Info, Message::RegisteringOpPackage, path_text, provider_text);
        let target = target.map_or(ptr::null(), CStr::as_ptr);
        // SAFETY: the backend handle is live; the strings are NUL-terminated and outlive the call (the backend copies
        // what it keeps); a null target asks for the backend's default, as QnnBackend.h allows.
        let status = unsafe { register(self.handle, path.as_ptr(), interface_provider.as_ptr(), target) };
        match lpai_direct::qnn::error::code(status) {
            0 => Ok(()),
            code => Err(RuntimeError::OpPackage { package: package_name(path_text, provider_text), code }),
        }
    }

    /// The provider's function table.
    pub(crate) fn table(&self) -> &InterfaceTable {
        // SAFETY: the provider entry lives as long as its library, which this backend keeps loaded.
        unsafe { &(*self.interface).table }
    }

    /// The backend handle.
    pub(crate) fn handle(&self) -> BackendHandle {
        self.handle
    }

    /// Who the backend is.
    pub fn info(&self) -> &ProviderInfo {
        &self.info
    }

    /// The backend's build id (`backendGetBuildId`); empty when it has none or gives none.
    pub fn build_id(&self) -> &str {
        let Some(get_build_id) = self.table().backend_get_build_id else { return "" };
        let mut text: *const core::ffi::c_char = ptr::null();
        // SAFETY: a valid out-pointer; the backend answers a string it owns for as long as it is loaded.
        if lpai_direct::qnn::error::code(unsafe { get_build_id(&mut text) }) != 0 || text.is_null() {
            return "";
        }
        // SAFETY: a NUL-terminated string owned by the backend's library, which this backend keeps loaded.
        unsafe { c_text(text) }
    }

    /// Properties the runtime acts on.
    pub fn properties(&self) -> &BackendProperties {
        &self.properties
    }

    /// Whether the LPAI-specific steps apply.
    pub fn is_lpai(&self) -> bool {
        is_lpai(self.info.backend_id)
    }
}

impl Backend {
    /// Notes a context created on this backend.
    pub(crate) fn context_created(&self) {
        self.live_contexts.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a context of this backend freed.
    pub(crate) fn context_freed(&self) {
        self.live_contexts.fetch_sub(1, Ordering::Relaxed);
    }

    /// Contexts created on this backend and not freed.
    pub fn live_contexts(&self) -> u32 {
        self.live_contexts.load(Ordering::Relaxed)
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(backend_free) = self.table().backend_free {
            // SAFETY: every context borrowed this backend and is gone; the handle is freed once.
            let status = unsafe { backend_free(self.handle) };
            // Said without a RuntimeError on the stack: this drop is the deepest frame of a failed load.
            let code = lpai_direct::qnn::error::code(status);
            if code != 0 {
                log!(Level::Warn, QnnFailure { call: Message::QnnBackendFree, code });
            }
        }
    }
}

/// `PATH:PROVIDER` for an op package's error, its end kept when it is longer than a [`Name`] (the file name and the
/// provider say most), after `...`.
fn package_name(path: &str, provider: &str) -> Name {
    let mut name = Name::new();
    let (whole, room) = (path.len() + 1 + provider.len(), name.capacity());
    let skip = if whole > room {
        let _ = name.push_str("...");
        whole - (room - name.len())
    } else {
        0
    };
    let mut at = 0;
    for character in path.chars().chain(core::iter::once(':')).chain(provider.chars()) {
        if at >= skip && name.push(character).is_err() {
            break;
        }
        at += character.len_utf8();
    }
    name
}

/// Backend ids of the LPAI providers.
pub fn is_lpai(backend_id: u32) -> bool {
    backend_id == lpai::BACKEND_ID_LPAI || backend_id == lpai::BACKEND_ID_LPAI_ISLAND
}

/// Reads a C string owned by a library as UTF-8 text ("?" when null or not UTF-8).
///
/// # Safety
/// `text` is null or points to a NUL-terminated string that outlives the returned borrow.
pub(crate) unsafe fn c_text<'a>(text: *const core::ffi::c_char) -> &'a str {
    if text.is_null() {
        return "?";
    }
    // SAFETY: forwarded from the caller.
    unsafe { CStr::from_ptr(text) }.to_str().unwrap_or("?")
}

/// Picks the provider: the requested backend id, else LPAI when offered, else the first; its core API must be
/// 2.x with x at least the verified minor.
///
/// # Safety
/// As for [`Backend::from_providers`].
unsafe fn choose_provider(
    get_providers: InterfaceGetProvidersFn,
    backend_id: Option<u32>,
) -> Result<*const Interface, RuntimeError> {
    let mut list: *mut *const Interface = ptr::null_mut();
    let mut count: u32 = 0;
    // SAFETY: valid out-pointers; the callee fills them with a list it owns.
    check(unsafe { get_providers(&mut list, &mut count) }, Message::QnnInterfaceGetProviders)?;
    if list.is_null() || count == 0 {
        return Err(RuntimeError::NoProviders);
    }
    // SAFETY: the library returned `count` provider pointers at `list`.
    let providers = unsafe { core::slice::from_raw_parts(list, count as usize) };
    let wanted = |p: &Interface| match backend_id {
        Some(id) => p.backend_id == id,
        None => is_lpai(p.backend_id),
    };
    // SAFETY: non-null provider pointers point at entries the library owns.
    let entries = providers.iter().filter(|p| !p.is_null()).map(|&p| (p, unsafe { &*p }));
    let chosen = entries.clone().find(|(_, p)| wanted(p)).or_else(|| match backend_id {
        Some(_) => None,
        None => entries.clone().next(),
    });
    let Some((pointer, provider)) = chosen else {
        return Err(RuntimeError::NoProviders);
    };
    let found = provider.api_version.core_api_version;
    if !qnn::core_api_is_verified(found) {
        return Err(RuntimeError::UnsupportedApi {
            // SAFETY: a provider name is a NUL-terminated string owned by the library, or null.
            provider: name_of(unsafe { c_text(provider.provider_name) }),
            found,
            required: qnn::MIN_VERIFIED_CORE_API,
        });
    }
    Ok(pointer)
}
