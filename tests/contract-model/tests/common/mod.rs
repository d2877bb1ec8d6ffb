//! Test harness: drives the contract model (a model of the documented LPAI contract, not the vendor library)
//! through its provider tables, as a runtime would, with aligned buffers and the standard LPAI sequence.
#![allow(dead_code)] // each test binary uses a different part of the harness

use lpai_contract_model::format::{UFIXED_POINT_16, UFIXED_POINT_8};
use lpai_contract_model::writer::{self, GraphSpec, TensorSpec};
use lpai_contract_model::{lpai_providers, system_providers, take_log_lines};
use lpai_direct::qnn::{self, lpai, BackendConfig, BackendConfigOption, BackendConfigValue, BinaryInfo, ContextConfig};
use lpai_direct::qnn::{ClientBuffer, GraphConfig, GraphInfo, Handle, InterfaceTable, SystemInterfaceTable, Tensor};
use lpai_direct::qnn::{TensorMemType, TensorMemory};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::{null, null_mut};

/// The low 16 bits of a QNN answer.
pub fn code(answer: u64) -> u32 {
    qnn::error::code(answer)
}

/// Serialises the tests of one binary (the model's capacity is shared by the whole process).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    take_log_lines();
    guard
}

/// Asserts that exactly one line was logged since the last check, naming `rule`; returns it.
pub fn one_rule(rule: &str) -> String {
    let lines = take_log_lines();
    assert_eq!(lines.len(), 1, "expected one log line for rule {rule}, got {lines:?}");
    let prefix = format!("contract: rule {rule}: ");
    assert!(lines[0].starts_with(&prefix), "{:?} does not start with {prefix:?}", lines[0]);
    lines[0].clone()
}

/// Asserts nothing was logged since the last check.
pub fn quiet() {
    let lines = take_log_lines();
    assert!(lines.is_empty(), "unexpected log lines: {lines:?}");
}

/// The LPAI provider's table.
pub fn lpai_table() -> &'static InterfaceTable {
    let (mut list, mut count) = (null_mut(), 0u32);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { lpai_providers(&mut list, &mut count) }, 0);
    assert_eq!(count, 1);
    // SAFETY: the model hands out one provider pointing at a static.
    let provider = unsafe { &**list };
    assert_eq!(provider.backend_id, lpai::BACKEND_ID_LPAI);
    &provider.table
}

/// The system provider's table.
pub fn system_table() -> &'static SystemInterfaceTable {
    let (mut list, mut count) = (null_mut(), 0u32);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { system_providers(&mut list, &mut count) }, 0);
    assert_eq!(count, 1);
    // SAFETY: as above.
    &unsafe { &**list }.table
}

/// A zeroed heap buffer whose first byte is `offset` bytes past a 256-byte boundary.
pub struct Buffer {
    base: *mut u8,
    layout: Layout,
    offset: usize,
    pub len: usize,
}

// SAFETY: an owned allocation.
unsafe impl Send for Buffer {}

impl Buffer {
    pub fn with_offset(len: usize, offset: usize) -> Buffer {
        let layout = Layout::from_size_align(len + offset + 1, 256).unwrap();
        // SAFETY: a non-zero size.
        let base = unsafe { alloc_zeroed(layout) };
        assert!(!base.is_null());
        Buffer { base, layout, offset, len }
    }

    /// 128-aligned (in fact 256).
    pub fn new(len: usize) -> Buffer {
        Buffer::with_offset(len, 0)
    }

    pub fn of(bytes: &[u8]) -> Buffer {
        let mut buffer = Buffer::new(bytes.len());
        buffer.bytes_mut().copy_from_slice(bytes);
        buffer
    }

    pub fn ptr(&self) -> *mut u8 {
        // SAFETY: inside the allocation.
        unsafe { self.base.add(self.offset) }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes of the allocation.
        unsafe { std::slice::from_raw_parts(self.ptr(), self.len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, exclusively borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { dealloc(self.base, self.layout) };
    }
}

pub const fn tensor(name: &'static str, id: u32, wide: bool, dims: &'static [u32]) -> TensorSpec<'static> {
    TensorSpec {
        name,
        id,
        data_type: if wide { UFIXED_POINT_16 } else { UFIXED_POINT_8 },
        scale: 0.0625,
        offset: -128,
        dims,
        source: 0,
        multiplier: 1,
        addend: 0,
        shift: 0,
        step: 0,
    }
}

pub const SINGLE_INPUTS: [TensorSpec<'static>; 1] = [tensor("in", 7, false, &[1, 16])];
pub const SINGLE_OUTPUTS: [TensorSpec<'static>; 1] =
    [TensorSpec { multiplier: 3, addend: -40, shift: 2, step: 5, ..tensor("out", 9, false, &[1, 16]) }];
/// One graph `g`: u8 [1,16] in (id 7), u8 [1,16] out (id 9), scratch 100, persistent 40.
pub const SINGLE: [GraphSpec<'static>; 1] = [GraphSpec {
    name: "g",
    scratch_bytes: 100,
    persistent_bytes: 40,
    early_every: 0,
    inputs: &SINGLE_INPUTS,
    outputs: &SINGLE_OUTPUTS,
}];

/// A model file of `graphs` with `payload` payload bytes.
pub fn file(graphs: &[GraphSpec<'_>], payload: usize) -> Vec<u8> {
    let mut bytes = vec![0; writer::file_bytes(graphs, payload)];
    assert_eq!(writer::write(graphs, &mut bytes), Some(bytes.len() - payload));
    bytes
}

pub fn round64(size: usize) -> usize {
    size.next_multiple_of(64)
}

/// backendCreate with HW_INFO (ADSP, v6).
pub fn create_backend() -> Handle {
    let mut hw = lpai::HwInfo { lpai_target: lpai::Target::ADSP, hw_version: lpai::HwVersion::V6 };
    let mut custom =
        lpai::BackendCustomConfig { option: lpai::BackendConfigOption::HW_INFO, config: (&raw mut hw).cast() };
    let config = BackendConfig {
        option: BackendConfigOption::CUSTOM,
        value: BackendConfigValue { custom_config: (&raw mut custom).cast() },
    };
    let list = [&raw const config, null()];
    let mut backend = null_mut();
    // SAFETY: a NULL-terminated list and a valid out-pointer.
    assert_eq!(unsafe { lpai_table().backend_create.unwrap()(null_mut(), list.as_ptr(), &mut backend) }, 0);
    backend
}

/// contextCreateFromBinary with these configs; the code, and the handle on success.
pub fn create_context(backend: Handle, binary: &Buffer, configs: &[ContextConfig]) -> (u32, Handle) {
    let mut list: Vec<*const ContextConfig> = configs.iter().map(|c| c as *const ContextConfig).collect();
    list.push(null());
    let mut context = null_mut();
    let create = lpai_table().context_create_from_binary.unwrap();
    // SAFETY: valid lists, buffer and out-pointer.
    let answer = unsafe {
        create(backend, null_mut(), list.as_ptr(), binary.ptr().cast(), binary.len as u64, &mut context, null_mut())
    };
    (code(answer), context)
}

/// graphSetConfig with LPAI custom configs (option, target) and plain configs.
pub fn set_config(
    graph: Handle,
    custom: &mut [(lpai::GraphConfigOption, *mut std::ffi::c_void)],
    plain: &[GraphConfig],
) -> u32 {
    let mut customs: Vec<lpai::GraphCustomConfig> =
        custom.iter().map(|&(option, config)| lpai::GraphCustomConfig { option, config }).collect();
    let mut configs: Vec<GraphConfig> =
        customs.iter_mut().map(|c| GraphConfig::custom((c as *mut lpai::GraphCustomConfig).cast())).collect();
    configs.extend_from_slice(plain);
    let mut list: Vec<*const GraphConfig> = configs.iter().map(|c| c as *const GraphConfig).collect();
    list.push(null());
    // SAFETY: a NULL-terminated list of configs that outlive the call.
    code(unsafe { lpai_table().graph_set_config.unwrap()(graph, list.as_ptr()) })
}

pub fn memory(size: usize, buffer: &Buffer) -> lpai::GraphMem {
    lpai::GraphMem { mem_type: lpai::MemType::DDR, size: size as u32, addr: buffer.ptr().cast() }
}

/// A system context describing `binary`: (handle, graphs).
pub fn describe(binary: &Buffer) -> (Handle, &'static [GraphInfo]) {
    let table = system_table();
    let mut handle = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { table.system_context_create.unwrap()(&mut handle) }, 0);
    let (mut info, mut size): (*const BinaryInfo, u64) = (null(), 0);
    let get = table.system_context_get_binary_info.unwrap();
    // SAFETY: valid buffer and out-pointers.
    assert_eq!(code(unsafe { get(handle, binary.ptr().cast(), binary.len as u64, &mut info, &mut size) }), 0);
    // SAFETY: the description lives until the system context is freed (the session keeps it).
    let graphs = unsafe { &*info }.graphs().unwrap();
    // SAFETY: as above.
    (handle, unsafe { std::slice::from_raw_parts(graphs.graphs, graphs.num_graphs as usize) })
}

mod session;
#[allow(unused_imports)] // not every test binary runs sessions
pub use session::Session;

/// Native bytes of a described tensor.
pub fn tensor_bytes(tensor: &Tensor) -> usize {
    let common = tensor.common().unwrap();
    // SAFETY: the description holds `rank` dimensions.
    let dims = unsafe { std::slice::from_raw_parts(common.dimensions, common.rank as usize) };
    dims.iter().map(|&d| d as usize).product::<usize>() * common.data_type.element_size().unwrap()
}

/// Points a described tensor at `buffer` with `data_size`.
pub fn attach(tensor: &mut Tensor, data: *mut u8, data_size: usize) {
    let common = tensor.common_mut().unwrap();
    common.mem_type = TensorMemType::RAW;
    common.memory = TensorMemory { client_buf: ClientBuffer { data: data.cast(), data_size: data_size as u32 } };
}

/// The host build of the test op package (tests/op-package, `liblpai_test_op_package.so`), built now by cargo into
/// the target directory of this test's own profile if it is missing or stale.
pub fn op_package_library() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(std::path::Path::parent).unwrap().to_path_buf();
    let target_dir = profile_dir.parent().unwrap();
    let mut build = std::process::Command::new(env!("CARGO"));
    build.args(["build", "-q", "-p", "lpai-test-op-package", "--target-dir"]).arg(target_dir);
    if profile_dir.file_name() == Some(std::ffi::OsStr::new("release")) {
        build.arg("--release");
    }
    let status = build.status().expect("cannot run cargo to build lpai-test-op-package");
    assert!(status.success(), "cargo build -p lpai-test-op-package failed");
    let library = profile_dir.join("liblpai_test_op_package.so");
    assert!(library.exists(), "{} is missing after cargo build -p lpai-test-op-package", library.display());
    library
}

/// backendRegisterOpPackage with these (nullable) arguments: the code.
pub fn register_op_package(
    backend: Handle,
    path: Option<&std::ffi::CStr>,
    provider: Option<&std::ffi::CStr>,
    target: Option<&std::ffi::CStr>,
) -> u32 {
    let pointer = |text: Option<&std::ffi::CStr>| text.map_or(null(), std::ffi::CStr::as_ptr);
    let register = lpai_table().backend_register_op_package.unwrap();
    // SAFETY: null or NUL-terminated strings that outlive the call; the library is the test op package.
    code(unsafe { register(backend, pointer(path), pointer(provider), pointer(target)) })
}
