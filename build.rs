//! Build script of lpai-direct.
//!
//! Every build generates the IDL codec: `idl/lpai_direct.idl`, read by lpai-direct-idl's reader, becomes
//! `$OUT_DIR/lpai_direct_idl.rs` (included by `src/codec.rs`) and `$OUT_DIR/lpai_direct_idl.md` (the book's
//! interface table, which a test in `src/codec.rs` compares with docs/src/reference/interface.md).
//!
//! Ordinary builds need nothing else here (no libclang, no SDK). With feature `sdk-crosscheck` and
//! `QNN_SDK_ROOT` pointing at a QNN / QAIRT SDK, bindgen reads the SDK's QNN headers into
//! `$OUT_DIR/qnn_sdk.rs` and the build sets `cfg(qnn_sdk_bindings)`; the test in
//! `src/qnn/crosscheck.rs` then compares the hand-written declarations with bindgen's.

use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    build_id();
    idl_codec()?;
    qnn_sdk_crosscheck()?;
    Ok(())
}

/// The build id every library's version record carries (`lpai_direct::version::BUILD_ID`): `LPAI_DIRECT_BUILD_ID`
/// when set (a release sets its commit; an ordinary build does not, so a commit does not rebuild everything), else
/// `lpai-direct` and the crate's version; then `+m` and a hash of the message table and the record format
/// (`src/message/table.rs`, `src/message/encoding.rs`), so that a stub and a skel whose tables or record items differ
/// never carry the same build id.
fn build_id() {
    const MESSAGES: [&str; 2] = ["src/message/table.rs", "src/message/encoding.rs"];
    println!("cargo:rerun-if-env-changed=LPAI_DIRECT_BUILD_ID");
    let base = std::env::var("LPAI_DIRECT_BUILD_ID")
        .ok()
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| format!("lpai-direct {}", env!("CARGO_PKG_VERSION")));
    let mut bytes = Vec::new();
    for file in MESSAGES {
        println!("cargo:rerun-if-changed={file}");
        bytes.extend(std::fs::read(file).unwrap_or_else(|error| panic!("{file}: {error}")));
    }
    // FNV-1a, 32 bits: enough to tell two tables apart.
    let hash = bytes.iter().fold(0x811c_9dc5u32, |hash, &byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193));
    println!("cargo:rustc-env=LPAI_DIRECT_BUILD_ID={base}+m{hash:08x}");
}

/// Reads `idl/lpai_direct.idl` and writes the generated codec and interface table to `$OUT_DIR`; an IDL the
/// reader refuses fails the build with the file, line and reason.
fn idl_codec() -> Result<(), Box<dyn Error>> {
    use lpai_direct_idl::reader;
    use std::path::PathBuf;
    use std::{env, fs};

    println!("cargo:rerun-if-changed=idl/lpai_direct.idl");
    println!("cargo:rerun-if-changed=idl/src/reader.rs");
    println!("cargo:rerun-if-changed=idl/src/reader");
    let idl = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?).join("idl").join("lpai_direct.idl");
    let source = fs::read_to_string(&idl).map_err(|error| format!("cannot read {}: {error}", idl.display()))?;
    let interface =
        reader::read(&source).map_err(|error| format!("{}:{}: {}", idl.display(), error.line, error.message))?;
    let out = PathBuf::from(env::var("OUT_DIR")?);
    fs::write(out.join("lpai_direct_idl.rs"), reader::generate_rust(&interface))?;
    fs::write(out.join("lpai_direct_idl.md"), reader::markdown_table(&interface))?;
    Ok(())
}

/// Opt-in bindgen run over a real QNN SDK, for the cross-check test.
fn qnn_sdk_crosscheck() -> Result<(), Box<dyn Error>> {
    println!("cargo::rustc-check-cfg=cfg(qnn_sdk_bindings)");
    println!("cargo:rerun-if-env-changed=QNN_SDK_ROOT");
    #[cfg(feature = "sdk-crosscheck")]
    sdk::generate_bindings()?;
    Ok(())
}

#[cfg(feature = "sdk-crosscheck")]
mod sdk {
    use std::error::Error;
    use std::fmt::Write as _;
    use std::path::{Path, PathBuf};
    use std::{env, fs};

    /// Writes `$OUT_DIR/qnn_sdk.rs` and sets `cfg(qnn_sdk_bindings)`, or warns why it did not.
    pub fn generate_bindings() -> Result<(), Box<dyn Error>> {
        let Some(root) = env::var_os("QNN_SDK_ROOT") else {
            println!("cargo:warning=sdk-crosscheck: QNN_SDK_ROOT is not set, cross-check skipped");
            return Ok(());
        };
        if env::var("TARGET")? != env::var("HOST")? {
            println!("cargo:warning=sdk-crosscheck: runs on host builds only, skipped");
            return Ok(());
        }
        let include = PathBuf::from(root).join("include").join("QNN");
        let wrapper = wrapper_header(&include)?;
        let bindings = bindgen::Builder::default()
            .header_contents("lpai_direct_qnn_sdk.h", &wrapper)
            .clang_arg(format!("-I{}", include.display()))
            .allowlist_type("Qnn.*|LpaiDirect_.*")
            .allowlist_var("QNN_.*")
            .prepend_enum_name(false)
            .use_core()
            .layout_tests(false)
            .generate_comments(false)
            .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
            .generate()
            .map_err(|e| format!("sdk-crosscheck: bindgen failed on {}: {e}", include.display()))?;
        let out = PathBuf::from(env::var("OUT_DIR")?).join("qnn_sdk.rs");
        bindings.write_to_file(&out)?;
        println!("cargo:rustc-cfg=qnn_sdk_bindings");
        Ok(())
    }

    /// A header including the core, system and every `LPAI/QnnLpai*.h` header, plus typedefs
    /// giving the versioned function-table types fixed names.
    fn wrapper_header(include: &Path) -> Result<String, Box<dyn Error>> {
        let lpai_dir = include.join("LPAI");
        let mut lpai = Vec::new();
        for entry in
            fs::read_dir(&lpai_dir).map_err(|e| format!("sdk-crosscheck: cannot read {}: {e}", lpai_dir.display()))?
        {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if name.starts_with("QnnLpai") && name.ends_with(".h") {
                lpai.push(name);
            }
        }
        lpai.sort();
        let mut wrapper = String::from("#include \"QnnInterface.h\"\n#include \"System/QnnSystemInterface.h\"\n");
        for name in &lpai {
            writeln!(wrapper, "#include \"LPAI/{name}\"")?;
        }
        wrapper.push_str(
            "typedef QNN_INTERFACE_VER_TYPE LpaiDirect_InterfaceTable_t;\n\
             typedef QNN_SYSTEM_INTERFACE_VER_TYPE LpaiDirect_SystemInterfaceTable_t;\n",
        );
        Ok(wrapper)
    }
}
