//! One test per backend and context rule of the contract model (a model of the documented LPAI contract, not the
//! vendor library): each breaks the rule once and sees the documented code and one log line naming the rule.

mod common;

use common::*;
use lpai_contract_model::rules;
use lpai_direct::qnn::error as qnn_error;
use lpai_direct::qnn::{lpai, BackendProperty, BackendPropertyOption, ContextConfig};
use std::ptr::{null, null_mut};

#[test]
fn binary_overwritten_after_create_breaks_binary_persistent() {
    let _serial = serial();
    let mut session = Session::open(&file(&SINGLE, 64));
    assert_eq!(session.execute(), 0);
    let last = session.binary.len - 1;
    session.binary.bytes_mut()[last] ^= 0x40; // the runtime reused the buffer before contextFree
    assert_eq!(session.execute(), qnn_error::COMMON_ERROR_LOADING_BINARIES);
    assert!(one_rule("binary-persistent").contains("graphExecute"));
    assert_eq!(session.finalize(), 1009);
    one_rule("binary-persistent");
    assert_eq!(session.free(), 1009);
    assert!(one_rule("binary-persistent").contains("contextFree"));
    // SAFETY: a stale handle is refused, never used.
    assert_eq!(code(unsafe { lpai_table().context_free.unwrap()(session.context, null_mut()) }), 5002);
    one_rule("live-handle");
}

#[test]
fn binary_misaligned_breaks_binary_aligned() {
    let _serial = serial();
    let bytes = file(&SINGLE, 0);
    let backend = create_backend();
    let mut binary = Buffer::with_offset(bytes.len(), 64);
    binary.bytes_mut().copy_from_slice(&bytes);
    let (answer, _) = create_context(backend, &binary, &[ContextConfig::persistent_binary(true)]);
    assert_eq!(answer, qnn_error::CONTEXT_ERROR_INVALID_ARGUMENT);
    assert!(one_rule("binary-aligned").contains("is not a multiple of 128"));
    // SAFETY: a live backend without contexts.
    assert_eq!(unsafe { lpai_table().backend_free.unwrap()(backend) }, 0);
}

#[test]
fn missing_persistent_binary_config_breaks_persistent_binary() {
    let _serial = serial();
    let backend = create_backend();
    let binary = Buffer::of(&file(&SINGLE, 0));
    assert_eq!(create_context(backend, &binary, &[]).0, qnn_error::CONTEXT_ERROR_INVALID_CONFIG);
    assert!(one_rule("persistent-binary").contains("no PERSISTENT_BINARY"));
    assert_eq!(create_context(backend, &binary, &[ContextConfig::persistent_binary(false)]).0, 5010);
    assert!(one_rule("persistent-binary").contains("is 0, not 1"));
    // SAFETY: a live backend without contexts.
    assert_eq!(unsafe { lpai_table().backend_free.unwrap()(backend) }, 0);
}

#[test]
fn malformed_binary_breaks_binary_format_on_both_sides() {
    let _serial = serial();
    let backend = create_backend();
    let good = file(&SINGLE, 32);
    let truncated = Buffer::of(&good[..good.len() - 1]);
    let persistent = [ContextConfig::persistent_binary(true)];
    assert_eq!(create_context(backend, &truncated, &persistent).0, qnn_error::CONTEXT_ERROR_CREATE_FROM_BINARY);
    assert!(one_rule("binary-format").contains("total_bytes differs from the file length"));
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    assert_eq!(create_context(backend, &Buffer::of(&bad_magic), &persistent).0, 5005);
    one_rule("binary-format");
    let table = system_table();
    let mut handle = null_mut();
    // SAFETY: valid out-pointers and buffers throughout.
    unsafe {
        assert_eq!(table.system_context_create.unwrap()(&mut handle), 0);
        let (mut info, mut size) = (null(), 0u64);
        let get = table.system_context_get_binary_info.unwrap();
        let answer = get(handle, truncated.ptr().cast(), truncated.len as u64, &mut info, &mut size);
        assert_eq!(code(answer), qnn_error::SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
        one_rule("binary-format");
        assert_eq!(table.system_context_free.unwrap()(handle), 0);
        assert_eq!(lpai_table().backend_free.unwrap()(backend), 0);
    }
}

#[test]
fn stale_context_handle_breaks_live_handle() {
    let _serial = serial();
    let bytes = file(&SINGLE, 0);
    let mut old = Session::open(&bytes);
    let (context, graph) = (old.context, old.graph);
    assert_eq!(old.free(), 0);
    quiet();
    let mut new = Session::open(&bytes); // may take the freed slot
                                         // SAFETY: stale handles are refused, never used.
    unsafe {
        assert_eq!(
            code(lpai_table().context_free.unwrap()(context, null_mut())),
            qnn_error::CONTEXT_ERROR_INVALID_HANDLE
        );
        assert!(one_rule("live-handle").contains("not a live context"));
        assert_eq!(code(lpai_table().graph_finalize.unwrap()(graph, null_mut(), null_mut())), 6001);
        one_rule("live-handle");
    }
    assert_eq!(new.execute(), 0);
    assert_eq!(new.free(), 0);
    quiet();
}

#[test]
fn other_rules_answer_their_codes() {
    let _serial = serial();
    let session = Session::open(&file(&SINGLE, 0));
    assert_eq!(session.retrieve(c"nope").0, qnn_error::GRAPH_ERROR_GRAPH_DOES_NOT_EXIST);
    one_rule("graph-name");
    // SAFETY: valid handles and lists throughout.
    unsafe {
        assert_eq!(
            code(lpai_table().backend_free.unwrap()(session.backend)),
            qnn_error::BACKEND_ERROR_TERMINATE_FAILED
        );
        one_rule("free-order");
        // ENPU_CORE_NUM: the one core of the host; ENPU_CORE_INFO of it; of a core beyond it, refused.
        let mut cores = 0u32;
        let mut custom = lpai::BackendCustomProperty {
            option: lpai::BackendPropertyOption::ENPU_CORE_NUM,
            property: (&raw mut cores).cast(),
        };
        let mut property =
            BackendProperty { option: BackendPropertyOption::CUSTOM, custom_property: (&raw mut custom).cast() };
        let mut list = [&raw mut property, null_mut()];
        assert_eq!(code(lpai_table().backend_get_property.unwrap()(session.backend, list.as_mut_ptr())), 0);
        assert_eq!(cores, 1);
        for (index, expected) in [(0u32, 0u32), (1, 4003)] {
            let mut info = lpai::EnpuCoreInfo { core_index: index, mac_cnt: 0, version: 0 };
            let mut custom = lpai::BackendCustomProperty {
                option: lpai::BackendPropertyOption::ENPU_CORE_INFO,
                property: (&raw mut info).cast(),
            };
            let mut property =
                BackendProperty { option: BackendPropertyOption::CUSTOM, custom_property: (&raw mut custom).cast() };
            let mut list = [&raw mut property, null_mut()];
            let answer = code(lpai_table().backend_get_property.unwrap()(session.backend, list.as_mut_ptr()));
            assert_eq!(answer, expected, "core {index}");
            if expected == 0 {
                assert_eq!(info, lpai::EnpuCoreInfo { core_index: 0, mac_cnt: 256, version: 6 });
            }
        }
        one_rule("backend-property");
        let binary = Buffer::of(&file(&SINGLE, 0));
        let mut context = null_mut();
        let configs = [ContextConfig::persistent_binary(true)];
        let list = [&raw const configs[0], null()];
        let device = std::ptr::without_provenance_mut(0x1234);
        let create = lpai_table().context_create_from_binary.unwrap();
        let answer = create(
            session.backend,
            device,
            list.as_ptr(),
            binary.ptr().cast(),
            binary.len as u64,
            &mut context,
            null_mut(),
        );
        assert_eq!(code(answer), 5000);
        one_rule("no-device");
        let mut island =
            lpai::ContextCustomConfig { option: lpai::ContextConfigOption::ENABLE_ISLAND, config: null_mut() };
        let configs = [
            configs[0],
            ContextConfig::custom((&raw mut island).cast()),
            ContextConfig::custom((&raw mut island).cast()),
        ];
        assert_eq!(create_context(session.backend, &binary, &configs).0, 5010);
        assert!(one_rule("context-config").contains("ENABLE_ISLAND"));
    }
    let backend = create_backend();
    let binary = Buffer::of(&file(&SINGLE, 0));
    let mut contexts = Vec::new();
    while contexts.len() < 16 {
        let (answer, context) = create_context(backend, &binary, &[ContextConfig::persistent_binary(true)]);
        if answer != 0 {
            assert_eq!(answer, qnn_error::COMMON_ERROR_MEM_ALLOC);
            assert!(one_rule("capacity").contains("more than 8 live contexts"));
            break;
        }
        contexts.push(context);
    }
    assert_eq!(contexts.len(), lpai_contract_model::MAX_CONTEXTS - 1); // the session holds one
    for context in contexts {
        // SAFETY: live contexts, freed once.
        assert_eq!(unsafe { lpai_table().context_free.unwrap()(context, null_mut()) }, 0);
    }
    // SAFETY: a live backend without contexts.
    assert_eq!(unsafe { lpai_table().backend_free.unwrap()(backend) }, 0);
    quiet();
}

#[test]
fn backend_reports_lpai_properties_and_keeps_hw_info() {
    let _serial = serial();
    let backend = create_backend();
    let info = lpai_contract_model::recorded_hw_info(backend).unwrap();
    assert_eq!((info.lpai_target, info.hw_version), (lpai::Target::ADSP, lpai::HwVersion::V6));
    let mut alignment = lpai::BufferAlignmentReq::default();
    let mut persistent = 0u8;
    let mut custom = [
        lpai::BackendCustomProperty {
            option: lpai::BackendPropertyOption::ALIGNMENT_REQ,
            property: (&raw mut alignment).cast(),
        },
        lpai::BackendCustomProperty {
            option: lpai::BackendPropertyOption::REQUIRE_PERSISTENT_BINARY,
            property: (&raw mut persistent).cast(),
        },
    ];
    let mut properties = custom.each_mut().map(|c| BackendProperty {
        option: BackendPropertyOption::CUSTOM,
        custom_property: (c as *mut lpai::BackendCustomProperty).cast(),
    });
    let [first, second] = properties.each_mut();
    let mut list = [first as *mut BackendProperty, second, null_mut()];
    // SAFETY: a NULL-terminated list whose targets outlive the call.
    assert_eq!(unsafe { lpai_table().backend_get_property.unwrap()(backend, list.as_mut_ptr()) }, 0);
    assert_eq!((alignment.start_addr_alignment, alignment.size_alignment, persistent), (128, 64, 1));
    // SAFETY: a live backend, then a stale one.
    unsafe {
        assert_eq!(lpai_table().backend_free.unwrap()(backend), 0);
        assert_eq!(code(lpai_table().backend_free.unwrap()(backend)), qnn_error::BACKEND_ERROR_INVALID_HANDLE);
    }
    one_rule("live-handle");
}

#[test]
fn rule_table_names_known_codes() {
    for rule in rules::ALL {
        assert_ne!(qnn_error::error_name(rule.code), "unknown QNN error", "{}", rule.name);
        let same_name = rules::ALL.iter().filter(|other| other.name == rule.name && other.code == rule.code);
        assert_eq!(same_name.count(), 1, "{} {} listed twice", rule.name, rule.code);
    }
    assert_eq!(rules::BINARY_PERSISTENT.code, 1009);
}
