//! Custom op packages end to end on the host and on the virtual aDSP: `lpai-net-run --op_packages` registers the
//! test op package (tests/op-package, `lpai.test::TestGain`) with the contract model of libQnnLpai through the host
//! skel and through the shipped Hexagon skel under qemu-hexagon, in traditional and direct mode, so the
//! contract_custom_op fixture (whose graph uses that op) loads and computes its reference; without the package the
//! load fails as the documented API fails; a wrong provider name and a package that is not a library stop the run
//! before the load naming the package and QNN's error.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PROVIDER: &str = "LpaiTestOpPackage_interfaceProvider";

fn host_library(name: &str) -> PathBuf {
    common::artifact(
        &format!("target/release/{name}"),
        "cargo build --release -p lpai-contract-lpai -p lpai-contract-system -p lpai-test-op-package",
    )
}

fn virtual_adsp(name: &str) -> PathBuf {
    common::artifact(&format!("target/virtual-adsp/{name}"), "bash scripts/build-hexagon.sh")
}

/// Where a run goes: the host skel or the virtual aDSP's Hexagon skel, traditional or direct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    HostTraditional,
    HostDirect,
    VirtualAdspTraditional,
    VirtualAdspDirect,
}

const PLACES: [Place; 4] =
    [Place::HostTraditional, Place::HostDirect, Place::VirtualAdspTraditional, Place::VirtualAdspDirect];

impl Place {
    fn on_virtual_adsp(self) -> bool {
        matches!(self, Place::VirtualAdspTraditional | Place::VirtualAdspDirect)
    }

    /// The test op package as this place's PD opens it.
    fn package(self) -> PathBuf {
        match self.on_virtual_adsp() {
            true => virtual_adsp("liblpai_test_op_package.so"),
            false => host_library("liblpai_test_op_package.so"),
        }
    }
}

/// Runs contract_custom_op at `place` with `op_packages` (none when `None`), in `work/out`.
fn run(work: &Path, place: Place, op_packages: Option<&str>) -> Output {
    let fixture = common::fixture("contract_custom_op");
    let config = r#"{"context_configs": {"is_persistent_binary": true}}"#;
    std::fs::write(work.join("config.json"), config).unwrap();
    let list = common::absolute_input_list("contract_custom_op", "float", work);
    let net_run = common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run");
    let backend = match place.on_virtual_adsp() {
        true => virtual_adsp("libQnnLpaiContract.so"),
        false => host_library("libQnnLpaiContract.so"),
    };
    let mut command = Command::new(net_run);
    command
        .current_dir(work)
        .arg(format!("--backend={}", backend.display()))
        .arg(format!("--system_library={}", host_library("libQnnSystemContract.so").display()))
        .arg(format!("--retrieve_context={}", fixture.join("contract_custom_op.bin").display()))
        .arg(format!("--input_list={}", list.display()))
        .arg("--config_file=config.json")
        .arg("--output_dir=out")
        .env("LPAI_DIRECT_SKEL", common::host_skel());
    if let Some(packages) = op_packages {
        command.arg(format!("--op_packages={packages}"));
    }
    match place {
        Place::HostTraditional => {}
        Place::HostDirect => _ = command.arg("--direct_mode"),
        Place::VirtualAdspTraditional => _ = command.arg("--transport=qemu"),
        Place::VirtualAdspDirect => _ = command.args(["--direct_mode", "--transport=qemu"]),
    }
    command.output().unwrap()
}

/// lpai-net-run's own error lines.
fn error_lines(output: &Output) -> Vec<String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr.lines().filter(|line| line.starts_with("lpai-net-run: error:")).map(str::to_string).collect()
}

/// The run failed with one error line holding each of `parts`, and wrote no result.
fn assert_refused(output: &Output, work: &Path, place: Place, parts: &[&str]) {
    let errors = error_lines(output);
    assert!(
        !output.status.success() && errors.len() == 1,
        "{place:?}: {errors:?}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for part in parts {
        assert!(errors[0].contains(part), "{place:?}: {:?} lacks {part:?}", errors[0]);
    }
    assert!(common::result_files(&work.join("out")).is_empty(), "{place:?}: results were written");
}

#[test]
fn with_the_package_the_custom_op_binary_runs_everywhere_and_computes_its_reference() {
    for place in PLACES {
        let work = tempfile::tempdir().unwrap();
        let packages = format!("{}:{PROVIDER}", place.package().display());
        let output = run(work.path(), place, Some(&packages));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{place:?}: {stdout}{}", String::from_utf8_lossy(&output.stderr));
        let reference = common::fixture("contract_custom_op").join("reference/float");
        let expected = common::result_files(&reference);
        assert_eq!(common::result_files(&work.path().join("out")), expected, "{place:?}");
        for file in expected {
            let ours = std::fs::read(work.path().join("out").join(&file)).unwrap();
            assert!(ours == std::fs::read(reference.join(&file)).unwrap(), "{place:?}: {}", file.display());
        }
    }
}

#[test]
fn without_the_package_the_load_fails_as_the_api_documents() {
    for place in PLACES {
        let work = tempfile::tempdir().unwrap();
        let output = run(work.path(), place, None);
        assert_refused(
            &output,
            work.path(),
            place,
            &["contract_custom_op.bin", "QNN_CONTEXT_ERROR_CREATE_FROM_BINARY"],
        );
    }
}

#[test]
fn a_wrong_provider_or_a_file_that_is_not_a_library_stops_the_run_naming_the_package_and_qnns_error() {
    for place in PLACES {
        let package = place.package();
        let cases = [
            (
                format!("{}:NoSuchProvider", package.display()),
                "QNN_BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND (4006): it does not export that interface provider",
            ),
            // A text file named like a library, beside the run (the PD opens a path with a `/` from there).
            (
                format!("./not_a_library.so:{PROVIDER}"),
                "QNN_BACKEND_ERROR_OP_PACKAGE_NOT_FOUND (4005): it could not be opened",
            ),
        ];
        for (packages, says) in cases {
            let work = tempfile::tempdir().unwrap();
            std::fs::write(work.path().join("not_a_library.so"), "not an ELF file\n").unwrap();
            let output = run(work.path(), place, Some(&packages));
            let named = format!("op package {packages}: backendRegisterOpPackage failed");
            assert_refused(&output, work.path(), place, &["--op_packages: ", &named, says]);
        }
    }
}
