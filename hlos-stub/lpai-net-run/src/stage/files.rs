//! The files `stage` places and where each comes from: a flag, `--hlos_dir`, or the build scripts' output in the
//! workspace. The HLOS side goes in the root, the DSP side in `adsp/`; each is checked as its processor loads it
//! (`elf`), and the stub and the skel must speak one interface (their version records).

use super::assemble::Placed;
use super::elf::{check_elf, Machine};
use super::layout::{ADSP_DIR, NET_RUN_FILE, SKEL_FILE, STUB_FILE};
use super::settings::StageSettings;
use super::target::Hlos;
use crate::settings::OpPackageSetting;
use anyhow::{bail, Context as _, Result};
use lpai_direct_stub::stub::{library_version, workspace};
use std::path::{Path, PathBuf};

/// The HLOS side, checked: what goes in the root.
pub struct HlosSide {
    /// lpai-net-run, the stub library, the context binary and the HLOS side's libQnnSystem, in that order.
    pub placed: Vec<Placed>,
    /// The stub library among them.
    pub stub: Placed,
    /// The context binary's file name.
    pub binary_name: String,
    /// The run's flags naming the HLOS side's libQnnSystem (none when not staged).
    pub system_arguments: Vec<String>,
}

/// The DSP side, checked: what goes in `adsp/`.
pub struct DspSide {
    /// The skel, the backend, the DSP side's libQnnSystem and the other libraries, in that order.
    pub placed: Vec<Placed>,
    /// Their file names.
    pub names: Vec<String>,
    /// The backend's file name.
    pub backend_name: String,
    /// The run's flags naming the DSP side's libQnnSystem, when one is staged.
    pub system_arguments: Option<Vec<String>>,
    /// The op packages as the run names them: by their file names in `adsp/`, which the PD's loader finds there
    /// as it finds the backend.
    pub op_packages: Vec<OpPackageSetting>,
    /// What the checks found that the run should know (an older skel interface, a newer Hexagon version, libraries
    /// the PD must find elsewhere).
    pub notes: Vec<String>,
}

/// A file a flag named: it must exist.
fn named_file(path: &Path, flag: &str) -> Result<PathBuf> {
    if !path.is_file() {
        bail!("{flag} {} does not exist (or is not a file)", path.display());
    }
    Ok(path.to_path_buf())
}

fn file_name(path: &Path, flag: &str) -> Result<String> {
    path.file_name()
        .and_then(|name| name.to_str())
        .map(str::to_string)
        .with_context(|| format!("{flag} {} has no usable file name", path.display()))
}

/// Checks the HLOS side's files (`hlos`'s builds unless named) and places them in the root; the run finds them
/// under `device_dir`.
pub fn hlos_side(settings: &StageSettings, hlos: Hlos, device_dir: &str) -> Result<HlosSide> {
    let mut placed = Vec::new();
    let (net_run, net_run_by, stub, stub_by) = hlos_files(settings, hlos)?;
    check_elf(&net_run, &net_run_by, Machine::Aarch64)?;
    check_elf(&stub, &stub_by, Machine::Aarch64)?;
    placed.push(Placed { source: net_run, named_by: net_run_by, destination: NET_RUN_FILE.into(), executable: true });
    let staged_stub = Placed { source: stub, named_by: stub_by, destination: STUB_FILE.into(), executable: false };
    placed.push(staged_stub.clone());
    let binary = named_file(&settings.retrieve_context, "--retrieve_context")?;
    let binary_name = file_name(&binary, "--retrieve_context")?;
    placed.push(Placed {
        source: binary,
        named_by: "--retrieve_context".into(),
        destination: binary_name.clone().into(),
        executable: false,
    });
    let mut system_arguments = Vec::new();
    if let Some(path) = &settings.system_library {
        let path = named_file(path, "--system_library")?;
        check_elf(&path, "--system_library", Machine::Aarch64)?;
        let name = file_name(&path, "--system_library")?;
        system_arguments = vec!["--system_library".to_string(), format!("{device_dir}/{name}")];
        placed.push(Placed {
            source: path,
            named_by: "--system_library".into(),
            destination: name.into(),
            executable: false,
        });
    }
    Ok(HlosSide { placed, stub: staged_stub, binary_name, system_arguments })
}

/// Checks the DSP side's files (the skel against `hex_ver` and against the `stub` staged) and places them in
/// `adsp/`.
pub fn dsp_side(settings: &StageSettings, hex_ver: u32, stub: &Placed) -> Result<DspSide> {
    let mut notes = Vec::new();
    let (skel, skel_by) = skel_file(settings, hex_ver)?;
    let skel_facts = check_elf(&skel, &skel_by, Machine::Hexagon)?;
    if let Some(version) = skel_facts.version.filter(|version| *version > hex_ver) {
        bail!(
            "{skel_by} {} is built for Hexagon v{version}, newer than HEX_VER={hex_ver} (from {}): rebuild it with \
             HEX_VER={hex_ver} bash scripts/build-hexagon.sh",
            skel.display(),
            settings.hex_ver.from
        );
    }
    notes.extend(check_interfaces(&stub.source, &stub.named_by, &skel, &skel_by)?);
    let mut dsp = vec![(skel, skel_by, SKEL_FILE.to_string(), skel_facts)];
    let backend = named_file(&settings.backend, "--backend")?;
    let backend_name = file_name(&backend, "--backend")?;
    let backend_facts = check_elf(&backend, "--backend", Machine::Hexagon)?;
    dsp.push((backend, "--backend".into(), backend_name.clone(), backend_facts));
    let mut system_arguments = None;
    if let Some(path) = &settings.dsp_system_library {
        let path = named_file(path, "--dsp_system_library")?;
        let name = file_name(&path, "--dsp_system_library")?;
        let facts = check_elf(&path, "--dsp_system_library", Machine::Hexagon)?;
        system_arguments = Some(vec!["--dsp_system_library".to_string(), name.clone()]);
        dsp.push((path, "--dsp_system_library".into(), name, facts));
    }
    let mut op_packages = Vec::new();
    for package in &settings.op_packages {
        let path = named_file(&package.path, "--op_packages")?;
        let name = file_name(&path, "--op_packages")?;
        let facts = check_elf(&path, "--op_packages", Machine::Hexagon)?;
        op_packages.push(OpPackageSetting { path: PathBuf::from(&name), ..package.clone() });
        dsp.push((path, "--op_packages".into(), name, facts));
    }
    for path in &settings.adsp_libraries {
        let path = named_file(path, "--adsp_library")?;
        let name = file_name(&path, "--adsp_library")?;
        let facts = check_elf(&path, "--adsp_library", Machine::Hexagon)?;
        dsp.push((path, "--adsp_library".into(), name, facts));
    }
    let names: Vec<String> = dsp.iter().map(|(_, _, name, _)| name.clone()).collect();
    let mut placed = Vec::new();
    for (source, named_by, name, facts) in dsp {
        if let Some(version) = facts.version.filter(|version| *version > hex_ver) {
            notes.push(format!(
                "{named_by} {} is built for Hexagon v{version}, newer than HEX_VER={hex_ver}: a v{hex_ver} DSP cannot \
                 run it",
                source.display()
            ));
        }
        let missing: Vec<&str> =
            facts.needed.iter().map(String::as_str).filter(|needed| !names.iter().any(|name| name == needed)).collect();
        if !missing.is_empty() {
            notes.push(format!(
                "adsp/{name} needs {}, not staged: the PD must find it on its library path (add it with \
                 --adsp_library FILE)",
                missing.join(", ")
            ));
        }
        placed.push(Placed { source, named_by, destination: Path::new(ADSP_DIR).join(name), executable: false });
    }
    Ok(DspSide { placed, names, backend_name, system_arguments, op_packages, notes })
}

/// The HLOS binaries: explicit files first, then `--hlos_dir`, then scripts/build-hlos.sh's output.
fn hlos_files(settings: &StageSettings, hlos: Hlos) -> Result<(PathBuf, String, PathBuf, String)> {
    let arch = &settings.target_arch.value;
    let pick = |explicit: &Option<PathBuf>, flag: &str, name: &str| -> Result<(PathBuf, String)> {
        if let Some(path) = explicit {
            return Ok((named_file(path, flag)?, flag.to_string()));
        }
        if let Some(directory) = &settings.hlos_dir {
            let path = directory.join(name);
            if !path.is_file() {
                bail!("--hlos_dir {} holds no {name} (or name it with {flag} FILE)", directory.display());
            }
            return Ok((path, format!("--hlos_dir {}", directory.display())));
        }
        let path = workspace::root().join("target").join(hlos.triple()).join("release").join(name);
        if !path.is_file() {
            bail!(
                "{name} for QNN_TARGET_ARCH={arch} is missing: expected {}; build it with QNN_TARGET_ARCH={arch} bash \
                 scripts/build-hlos.sh, or name it with {flag} FILE (or a directory holding both with --hlos_dir DIR)",
                path.display()
            );
        }
        Ok((path, format!("the default {name} for QNN_TARGET_ARCH={arch}")))
    };
    let (net_run, net_run_by) = pick(&settings.net_run, "--net_run", NET_RUN_FILE)?;
    let (stub, stub_by) = pick(&settings.stub, "--stub", STUB_FILE)?;
    Ok((net_run, net_run_by, stub, stub_by))
}

fn skel_file(settings: &StageSettings, hex_ver: u32) -> Result<(PathBuf, String)> {
    if let Some(path) = &settings.skel {
        return Ok((named_file(path, "--skel")?, "--skel".to_string()));
    }
    let path = workspace::root().join("target/hexagon-unknown-linux-musl/release").join(SKEL_FILE);
    if !path.is_file() {
        bail!(
            "the Hexagon skel for HEX_VER={hex_ver} is missing: expected {}; build it with HEX_VER={hex_ver} bash \
             scripts/build-hexagon.sh, or name one with --skel FILE",
            path.display()
        );
    }
    Ok((path, format!("the default skel for HEX_VER={hex_ver}")))
}

/// The stub and the skel must speak one major version of the interface (their version records): another major is
/// refused; an older minor, or a record that cannot be read, is a note.
fn check_interfaces(stub: &Path, stub_by: &str, skel: &Path, skel_by: &str) -> Result<Vec<String>> {
    let (stub_record, skel_record) = (library_version::read(stub), library_version::read(skel));
    let (stub_record, skel_record) = match (stub_record, skel_record) {
        (Ok(stub_record), Ok(skel_record)) => (stub_record, skel_record),
        (stub_record, skel_record) => {
            let unread = [(stub, stub_by, stub_record.err()), (skel, skel_by, skel_record.err())];
            return Ok(unread
                .into_iter()
                .filter_map(|(path, by, error)| Some((path, by, error?)))
                .map(|(path, by, error)| {
                    format!(
                        "cannot check that the stub and the skel speak one interface: {by} {} {error}",
                        path.display()
                    )
                })
                .collect());
        }
    };
    let (stub_version, skel_version) = (stub_record.interface, skel_record.interface);
    if stub_version.major != skel_version.major {
        bail!(
            "{skel_by} {} speaks interface {skel_version} (build {}), but {stub_by} {} speaks {stub_version} (build \
             {}): a stub and a skel of different major versions cannot talk; stage the skel and the stub of one build",
            skel.display(),
            skel_record.build_id(),
            stub.display(),
            stub_record.build_id()
        );
    }
    Ok(match skel_version.minor < stub_version.minor {
        true => vec![format!(
            "{skel_by} {} speaks interface {skel_version}, older than the stub's {stub_version}: the run works, but \
             methods newer than the skel (doctor's backend check among them) are refused",
            skel.display()
        )],
        false => Vec::new(),
    })
}
