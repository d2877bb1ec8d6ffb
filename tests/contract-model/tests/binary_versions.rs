//! The binary-version rule of the contract model (a model of the documented LPAI contract, not the vendor library):
//! LPCM version 2 names the core API and LPAI backend API a binary was made for, version 1 means the model's own;
//! contextCreateFromBinary refuses another major or a newer minor (5004, one line naming the rule and both sides),
//! and the system library reports the binary's versions in BinaryInfo.

mod common;

use common::*;
use lpai_contract_model::format::{self, loads_on, ApiVersions, Lpcm};
use lpai_contract_model::{rules, writer, CORE_API};
use lpai_direct::qnn::error as qnn_error;
use lpai_direct::qnn::{lpai, BinaryInfo, ContextConfig, Version};
use std::ptr::{null, null_mut};

/// A version 2 model file of [`SINGLE`] made for `versions`, with `payload` payload bytes.
fn file_version_2(versions: ApiVersions, payload: usize) -> Vec<u8> {
    let mut bytes = vec![0; writer::file_bytes_version_2(&SINGLE, payload)];
    assert_eq!(writer::write_version_2(&SINGLE, versions, &mut bytes), Some(bytes.len() - payload));
    bytes
}

/// The model's own versions with one part changed.
fn changed(core: (u32, u32, u32), backend: (u32, u32, u32)) -> ApiVersions {
    let own = ApiVersions::MODEL;
    let shift = |version: Version, (major, minor, patch): (u32, u32, u32)| {
        Version::new(version.major + major, version.minor + minor, version.patch + patch)
    };
    ApiVersions { core: shift(own.core, core), backend: shift(own.backend, backend) }
}

fn older_minor(version: Version) -> Version {
    Version::new(version.major, version.minor - 1, version.patch + 7)
}

/// contextCreateFromBinary of `bytes` on a fresh backend: its code (the context freed again on success).
fn create(bytes: &[u8]) -> u32 {
    let backend = create_backend();
    let binary = Buffer::of(bytes);
    let (answer, context) = create_context(backend, &binary, &[ContextConfig::persistent_binary(true)]);
    // SAFETY: a live context (on success) on a binary still alive, then a backend without contexts.
    unsafe {
        if answer == 0 {
            assert_eq!(lpai_table().context_free.unwrap()(context, null_mut()), 0);
        }
        assert_eq!(lpai_table().backend_free.unwrap()(backend), 0);
    }
    answer
}

/// The versions the system library reports for `bytes`.
fn described_versions(bytes: &[u8]) -> (Version, Version) {
    let binary = Buffer::of(bytes);
    let table = system_table();
    let mut handle = null_mut();
    // SAFETY: valid out-pointers and buffers; the info is read before the system context is freed.
    unsafe {
        assert_eq!(table.system_context_create.unwrap()(&mut handle), 0);
        let (mut info, mut size): (*const BinaryInfo, u64) = (null(), 0);
        let get = table.system_context_get_binary_info.unwrap();
        assert_eq!(code(get(handle, binary.ptr().cast(), binary.len as u64, &mut info, &mut size)), 0);
        let versions = (*info).versions().unwrap();
        assert_eq!(versions.info_version, 3);
        let answer = (versions.core_api_version, versions.backend_api_version);
        assert_eq!(table.system_context_free.unwrap()(handle), 0);
        answer
    }
}

#[test]
fn a_binary_for_a_newer_backend_minor_breaks_binary_version() {
    let _serial = serial();
    let newer = changed((0, 0, 0), (0, 1, 0));
    assert_eq!(create(&file_version_2(newer, 32)), qnn_error::CONTEXT_ERROR_BINARY_VERSION);
    let (own, backend) = (ApiVersions::MODEL, newer.backend);
    let expected = format!(
        "contract: rule binary-version: the binary is for backend API {}.{}.{} (core API {}.{}.{}), this backend is \
         {}.{}.{} (core {}.{}.{})",
        backend.major,
        backend.minor,
        backend.patch,
        own.core.major,
        own.core.minor,
        own.core.patch,
        own.backend.major,
        own.backend.minor,
        own.backend.patch,
        own.core.major,
        own.core.minor,
        own.core.patch
    );
    assert_eq!(one_rule("binary-version"), expected);
    assert_eq!(rules::BINARY_VERSION.code, 5004);
}

#[test]
fn another_major_or_a_newer_core_minor_breaks_binary_version() {
    let _serial = serial();
    let own = ApiVersions::MODEL;
    let older_major = |version: Version| Version::new(version.major - 1, version.minor, version.patch);
    let cases = [
        (changed((1, 0, 0), (0, 0, 0)), "core API 3.32.0"),
        (changed((0, 1, 0), (0, 0, 0)), "core API 2.33.0"),
        (changed((0, 0, 0), (1, 0, 0)), "backend API 3.26.0"),
        (ApiVersions { core: older_major(own.core), ..own }, "core API 1.32.0"),
        (ApiVersions { backend: older_major(own.backend), core: own.core }, "backend API 1.26.0"),
        (changed((0, 5, 0), (0, 9, 0)), "backend API 2.35.0 (core API 2.37.0)"),
    ];
    assert_eq!((own.core, own.backend), (Version::new(2, 32, 0), Version::new(2, 26, 0)));
    for (versions, named) in cases {
        assert_eq!(create(&file_version_2(versions, 0)), 5004, "{versions:?}");
        let line = one_rule("binary-version");
        assert!(line.contains(named) && line.ends_with("this backend is 2.26.0 (core 2.32.0)"), "{line}");
    }
}

#[test]
fn version_2_binaries_for_the_own_or_older_minors_load_and_run_as_version_1() {
    let _serial = serial();
    let own = ApiVersions::MODEL;
    let older = ApiVersions { core: older_minor(own.core), backend: older_minor(own.backend) };
    let newer_patch = changed((0, 0, 9), (0, 0, 3));
    let mut reference = Session::open(&file(&SINGLE, 64));
    for (index, byte) in reference.input_mut(0).iter_mut().enumerate() {
        *byte = index as u8 * 13;
    }
    assert_eq!(reference.execute(), 0);
    for versions in [own, older, newer_patch, ApiVersions { core: older.core, ..own }] {
        let bytes = file_version_2(versions, 64);
        let parsed = Lpcm::parse(&bytes).unwrap();
        assert_eq!((parsed.version(), parsed.api_versions()), (format::VERSION_2, versions));
        let mut session = Session::open(&bytes);
        for (index, byte) in session.input_mut(0).iter_mut().enumerate() {
            *byte = index as u8 * 13;
        }
        assert_eq!(session.execute(), 0);
        assert_eq!(session.output(0), reference.output(0), "{versions:?}");
        assert_eq!(session.free(), 0);
    }
    assert_eq!(reference.free(), 0);
    quiet();
}

#[test]
fn the_system_library_reports_the_binary_versions() {
    let _serial = serial();
    let own = ApiVersions::MODEL;
    assert_eq!(described_versions(&file(&SINGLE, 0)), (CORE_API, lpai::API_VERSION), "version 1: the model's own");
    let older = ApiVersions { core: older_minor(own.core), backend: Version::new(2, 3, 4) };
    assert_eq!(described_versions(&file_version_2(older, 8)), (older.core, older.backend));
    // Describing a binary the backend would refuse is no breach.
    let newer = changed((1, 2, 3), (4, 5, 6));
    assert_eq!(described_versions(&file_version_2(newer, 0)), (newer.core, newer.backend));
    quiet();
}

#[test]
fn the_version_2_layout() {
    let versions = ApiVersions { core: Version::new(2, 31, 5), backend: Version::new(2, 20, 1) };
    let bytes = file_version_2(versions, 16);
    assert_eq!(bytes.len(), file(&SINGLE, 16).len() + format::API_VERSIONS_BYTES);
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(&bytes[..4], b"LPCM");
    assert_eq!((word(4), word(8), word(12)), (2, bytes.len() as u32, 1));
    assert_eq!([word(16), word(20), word(24), word(28), word(32), word(36)], [2, 31, 5, 2, 20, 1]);
    assert_eq!(&bytes[40..42], b"g\0", "the first graph record follows the versions");
    // The records after the versions are version 1's records (the payload pattern differs: it follows the offset).
    let version_1 = file(&SINGLE, 16);
    let records = writer::file_bytes(&SINGLE, 0) - format::HEADER_BYTES;
    assert_eq!(bytes[40..40 + records], version_1[16..16 + records]);
    let parsed = Lpcm::parse(&version_1).unwrap();
    assert_eq!((parsed.version(), parsed.api_versions()), (format::VERSION, ApiVersions::MODEL));
    // A version 2 file whose header ends inside the versions, and an unknown version, are malformed.
    let mut short = bytes[..30].to_vec();
    short[8..12].copy_from_slice(&30u32.to_le_bytes());
    assert_eq!(Lpcm::parse(&short).unwrap_err().what, "file shorter than the 40-byte version 2 header");
    // Every prefix that ends before the records do (with total_bytes fixed up) is malformed; with the records whole,
    // a shorter payload is still a model file.
    for length in 0..40 + records {
        let mut prefix = bytes[..length].to_vec();
        if let Some(total) = prefix.get_mut(8..12) {
            total.copy_from_slice(&(length as u32).to_le_bytes());
        }
        assert!(Lpcm::parse(&prefix).is_err(), "a {length}-byte prefix parsed");
    }
    let mut fourth = bytes.clone();
    fourth[4] = 4;
    assert_eq!(Lpcm::parse(&fourth).unwrap_err().what, "version is not 1, 2 or 3");
    let compatible = [(2, 32, 0), (2, 0, 99), (2, 31, 0)].map(|(a, b, c)| loads_on(Version::new(a, b, c), CORE_API));
    assert_eq!(compatible, [true, true, true]);
    assert!(!loads_on(Version::new(2, 33, 0), CORE_API) && !loads_on(Version::new(1, 32, 0), CORE_API));
}

#[test]
fn the_version_3_layout_and_its_malformed_custom_ops() {
    let ops = [
        writer::CustomOpSpec { graph: 0, package: "lpai.test", op: "TestGain" },
        writer::CustomOpSpec { graph: 0, package: "pkg", op: "Other" },
    ];
    let bytes = writer::version_3_file(&SINGLE, &ops, 16).unwrap();
    assert_eq!(bytes.len(), file_version_2(ApiVersions::MODEL, 16).len() + 4 + 2 * format::CUSTOM_OP_BYTES);
    let word = |bytes: &[u8], at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!((word(&bytes, 4), word(&bytes, 40), word(&bytes, 44)), (3, 2, 0));
    assert_eq!(&bytes[48..58], b"lpai.test\0");
    assert_eq!(&bytes[80..89], b"TestGain\0");
    assert_eq!(&bytes[44 + 2 * 68..44 + 2 * 68 + 2], b"g\0", "the graph records follow the custom ops");
    let parsed = Lpcm::parse(&bytes).unwrap();
    assert_eq!((parsed.version(), parsed.api_versions()), (format::VERSION_3, ApiVersions::MODEL));
    let names: Vec<(Vec<u8>, Vec<u8>)> = parsed
        .custom_ops()
        .map(|op| (format::name_text(&op.package).to_vec(), format::name_text(&op.op).to_vec()))
        .collect();
    assert_eq!(names, [(b"lpai.test".to_vec(), b"TestGain".to_vec()), (b"pkg".to_vec(), b"Other".to_vec())]);
    // Versions 1 and 2 have no custom ops.
    assert_eq!(Lpcm::parse(&file(&SINGLE, 0)).unwrap().custom_ops().count(), 0);
    assert_eq!(Lpcm::parse(&file_version_2(ApiVersions::MODEL, 0)).unwrap().custom_ops().count(), 0);
    let malformed = |ops: &[writer::CustomOpSpec<'_>], change: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = writer::version_3_file(&SINGLE, ops, 0).unwrap();
        change(&mut bytes);
        Lpcm::parse(&bytes).unwrap_err().what
    };
    let unchanged = |_: &mut Vec<u8>| {};
    let too_many = |bytes: &mut Vec<u8>| bytes[40..44].copy_from_slice(&9u32.to_le_bytes());
    assert_eq!(malformed(&ops, &too_many), "custom_op_count above 8");
    let other_graph = [writer::CustomOpSpec { graph: 1, ..ops[0] }];
    assert_eq!(malformed(&other_graph, &unchanged), "custom op graph is not a graph of the file");
    let empty_name = [writer::CustomOpSpec { op: "", ..ops[0] }];
    assert_eq!(malformed(&empty_name, &unchanged), "name empty or without a NUL");
    assert_eq!(malformed(&[ops[0], ops[0]], &unchanged), "a graph names the same custom op twice");
    let unprintable = |bytes: &mut Vec<u8>| bytes[49] = 0x07;
    assert_eq!(malformed(&ops, &unprintable), "name has a byte that is not printable ASCII");
    // Every prefix ending before the records are whole (total_bytes fixed up) is malformed.
    let whole = writer::version_3_file(&SINGLE, &ops, 0).unwrap();
    for length in 0..whole.len() {
        let mut prefix = whole[..length].to_vec();
        if let Some(total) = prefix.get_mut(8..12) {
            total.copy_from_slice(&(length as u32).to_le_bytes());
        }
        assert!(Lpcm::parse(&prefix).is_err(), "a {length}-byte prefix parsed");
    }
}
