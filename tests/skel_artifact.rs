//! The Hexagon skel as the aDSP loader will see it: Hexagon shared object, DT_HEXAGON_VER = 3, only LOAD and
//! DYNAMIC program headers, no DT_NEEDED, only `lpai_direct_*` exported, only PD runtime services undefined; and
//! the audio module's shared object the same way, exporting its two CAPI entry points alone.

mod common;

const SKEL: &str = "target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so";
const AUDIO_MODULE: &str = "target/hexagon-capi/hexagon-unknown-linux-musl/release/liblpai_direct_capi.so";

fn runtime_symbols() -> Vec<String> {
    let text = std::fs::read_to_string(common::root().join("linker/dsp-runtime-symbols.txt")).unwrap();
    lpai_skel_fixup::parse_symbol_list(&text)
}

#[test]
fn skel_is_what_the_adsp_loader_expects() {
    let bytes = std::fs::read(common::artifact(SKEL, "scripts/build-hexagon.sh")).unwrap();
    let report = lpai_skel_fixup::check(&bytes, "lpai_direct_", &runtime_symbols()).unwrap();
    let mut exported = report.exported.clone();
    exported.sort();
    assert_eq!(exported, ["lpai_direct_close", "lpai_direct_open", "lpai_direct_skel_handle_invoke"], "{report:?}");
    assert!(report.exported.iter().all(|name| !name.starts_with("_ZN") && !name.starts_with("_R")));
}

#[test]
fn the_audio_module_exports_its_two_capi_entry_points_alone_and_needs_only_pd_services() {
    let bytes = std::fs::read(common::artifact(AUDIO_MODULE, "scripts/build-hexagon.sh")).unwrap();
    let report = lpai_skel_fixup::check(&bytes, "capi_lpai_direct_", &runtime_symbols()).unwrap();
    let mut exported = report.exported.clone();
    exported.sort();
    // Not the skel's entry points: the dsp crate's `skel` feature is off in the module's build.
    assert_eq!(exported, ["capi_lpai_direct_get_static_properties", "capi_lpai_direct_init"], "{report:?}");
    assert!(report.undefined.iter().all(|name| runtime_symbols().contains(name)), "{report:?}");
}

#[test]
fn file_and_readelf_agree() {
    let skel = common::artifact(SKEL, "scripts/build-hexagon.sh");
    let skel = skel.to_str().unwrap();
    let file = String::from_utf8(common::run("file", &[skel]).stdout).unwrap();
    assert!(file.contains("QUALCOMM DSP6") && file.contains("shared object"), "{file}");
    let dynamic = String::from_utf8(common::run("readelf", &["-dW", skel]).stdout).unwrap();
    assert!(!dynamic.contains("(NEEDED)"), "{dynamic}");
    assert!(
        dynamic.lines().any(|l| l.trim_start().starts_with("0x70000001") && l.trim_end().ends_with(" 0x3")),
        "{dynamic}"
    );
    let headers = String::from_utf8(common::run("readelf", &["-lW", skel]).stdout).unwrap();
    let types: Vec<&str> = headers
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Type"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(!types.is_empty() && types.iter().all(|t| *t == "LOAD" || *t == "DYNAMIC"), "{headers}");
}

#[test]
fn fixup_refuses_a_host_library_and_a_skel_without_the_tag() {
    let host = common::artifact("target/release/liblpai_direct_skel.so", "cargo build -p lpai-direct-dsp --release");
    let mut bytes = std::fs::read(host).unwrap();
    let error = lpai_skel_fixup::fix_up(&mut bytes).unwrap_err();
    assert!(error.to_string().contains("not a 32-bit Hexagon ELF"), "{error}");

    let mut skel = std::fs::read(common::artifact(SKEL, "scripts/build-hexagon.sh")).unwrap();
    let tag = 0x7000_0001u32.to_le_bytes();
    let at = skel.windows(8).position(|w| w[..4] == tag && w[4..] == 3u32.to_le_bytes()).unwrap();
    skel[at..at + 4].copy_from_slice(&0x6fff_fffbu32.to_le_bytes());
    skel[at + 4..at + 8].copy_from_slice(&1u32.to_le_bytes());
    let error = lpai_skel_fixup::check(&skel, "lpai_direct_", &runtime_symbols()).unwrap_err();
    assert!(error.to_string().contains("DT_HEXAGON_VER"), "{error}");
    lpai_skel_fixup::fix_up(&mut skel).unwrap();
    lpai_skel_fixup::check(&skel, "lpai_direct_", &runtime_symbols()).unwrap();
}

#[test]
fn host_cdylib_has_the_same_entry_point() {
    let host = common::artifact("target/release/liblpai_direct_skel.so", "cargo build -p lpai-direct-dsp --release");
    // SAFETY: the library is ours; its initialisers are Rust's.
    let library = unsafe { libloading::Library::new(host) }.unwrap();
    type Invoke = unsafe extern "C" fn(u64, u32, *mut core::ffi::c_void) -> i32;
    // SAFETY: the signature matches dsp/src/entry.rs.
    let invoke = unsafe { library.get::<Invoke>(b"lpai_direct_skel_handle_invoke\0") }.unwrap();
    // SAFETY: method 31 with no arguments reads nothing.
    let status = unsafe { invoke(0, 0x1F00_0000, core::ptr::null_mut()) };
    assert_eq!(status as u32, 0x8000_0414);
}
