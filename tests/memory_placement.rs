//! Where LPAI's memories live, end to end on the host and on the virtual aDSP: an lpaiParams.conf's
//! `lpai_direct.scratch_memory` and `persistent_memory` reach the contract model of libQnnLpai through the host skel
//! (traditional and direct mode) and through the shipped Hexagon skel under qemu-hexagon (direct mode), the
//! record and the closing lines say where the pools went, and an unknown memory type is refused in one line naming
//! the file, the key and the choices.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn contract_library(name: &str) -> PathBuf {
    common::artifact(
        &format!("target/release/{name}"),
        "cargo build --release -p lpai-contract-lpai -p lpai-contract-system",
    )
}

/// Where a run goes: the host skel, or the virtual aDSP's Hexagon skel (direct mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    HostTraditional,
    HostDirect,
    VirtualAdspDirect,
}

/// Runs contract_single with a config file whose lpaiParams.conf holds `lpai_direct`, in `work/out`.
fn run(work: &Path, lpai_direct: &str, place: Place) -> Output {
    let fixture = common::fixture("contract_single");
    std::fs::write(work.join("lpaiParams.conf"), format!(r#"{{"lpai_direct": {lpai_direct}}}"#)).unwrap();
    let config = r#"{"backend_extensions": {"shared_library_path": "libQnnLpaiNetRunExtensions.so",
        "config_file_path": "lpaiParams.conf"}, "context_configs": {"is_persistent_binary": true}}"#;
    std::fs::write(work.join("config.json"), config).unwrap();
    let list = common::absolute_input_list("contract_single", "float", work);
    let net_run = common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run");
    let backend = match place {
        Place::VirtualAdspDirect => {
            common::artifact("target/virtual-adsp/libQnnLpaiContract.so", "bash scripts/build-hexagon.sh")
        }
        _ => contract_library("libQnnLpaiContract.so"),
    };
    let mut command = Command::new(net_run);
    command
        .current_dir(work)
        .arg(format!("--backend={}", backend.display()))
        .arg(format!("--system_library={}", contract_library("libQnnSystemContract.so").display()))
        .arg(format!("--retrieve_context={}", fixture.join("contract_single.bin").display()))
        .arg(format!("--input_list={}", list.display()))
        .arg("--config_file=config.json")
        .arg("--output_dir=out")
        .env("LPAI_DIRECT_SKEL", common::host_skel());
    match place {
        Place::HostTraditional => {}
        Place::HostDirect => _ = command.arg("--direct_mode"),
        Place::VirtualAdspDirect => _ = command.args(["--direct_mode", "--transport=qemu"]),
    }
    command.output().unwrap()
}

#[test]
fn the_configured_memory_types_reach_the_backend_and_the_record() {
    for place in [Place::HostTraditional, Place::HostDirect, Place::VirtualAdspDirect] {
        let work = tempfile::tempdir().unwrap();
        let output = run(work.path(), r#"{"scratch_memory": "tcm", "persistent_memory": "psram"}"#, place);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains("LPAI scratch 100 B (tcm), persistent 40 B (psram)"), "{stdout}");
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(work.path().join("out/lpai_net_run.json")).unwrap()).unwrap();
        let expected = serde_json::json!({"scratch_bytes": 100, "scratch_type": "tcm", "persistent_bytes": 40,
            "persistent_type": "psram"});
        assert_eq!(record["lpai_memory"], expected, "{place:?}");
        // The model computes the same outputs wherever its pools lie.
        let reference = common::fixture("contract_single").join("reference/float");
        for file in common::result_files(&reference) {
            let ours = std::fs::read(work.path().join("out").join(&file)).unwrap();
            assert!(ours == std::fs::read(reference.join(&file)).unwrap(), "{}", file.display());
        }
    }
}

#[test]
fn an_unknown_memory_type_is_refused_naming_the_file_key_and_choices() {
    let work = tempfile::tempdir().unwrap();
    let output = run(work.path(), r#"{"scratch_memory": "sram"}"#, Place::HostTraditional);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let own: Vec<&str> = stderr.lines().filter(|line| line.starts_with("lpai-net-run")).collect();
    assert_eq!(own.len(), 1, "{stderr}");
    assert!(
        own[0]
            .contains("lpaiParams.conf: lpai_direct.scratch_memory is \"sram\"; expected one of ddr, llc, tcm, psram"),
        "{stderr}"
    );
}
