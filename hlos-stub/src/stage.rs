//! `lpai-net-run stage`: assembles the device directory of the native aDSP path. Its root (meant for
//! `/data/local/tmp/LPAI`) holds the HLOS side: `lpai-net-run` for the target, `liblpai_direct_stub.so`, the context
//! binary, the inputs under `inputs/`, the input list rewritten to device paths, `config.json` (backend extensions
//! and `context_configs.is_persistent_binary`) and `lpaiParams.conf`; its `adsp/` folder holds the DSP side: the
//! Hexagon skel, the libQnnLpai given and whatever else must be loaded in the PD. Every file is checked first (it
//! exists, and is an ELF for the processor that loads it); the directory is then built beside its final name and
//! renamed into place, so it appears whole or not at all. The `adb` commands that push and run it are answered as
//! argument lists, and [`push`] runs them.

use crate::net_run_config;
use crate::stub::fastrpc::Pd;
use crate::stub::Named;
use anyhow::{anyhow, bail, Context as _, Result};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where the root goes on the device unless told otherwise.
pub const DEFAULT_DEVICE_DIR: &str = "/data/local/tmp/LPAI";
/// `QNN_TARGET_ARCH` when neither the flag nor the environment gives one (scripts/build-hlos.sh's default).
pub const DEFAULT_TARGET_ARCH: &str = "aarch64-oe-linux-gcc11.2";
/// `HEX_VER` when neither the flag nor the environment gives one (scripts/build-hexagon.sh's default).
pub const DEFAULT_HEX_VER: &str = "81";
/// `HW_VER` when neither the flag nor the environment gives one (the runtime's default LPAI hardware version).
pub const DEFAULT_HW_VER: &str = "v6";

/// The skel's file name: FastRPC opens it by this name (`file:///liblpai_direct_skel.so?...`).
pub const SKEL_FILE: &str = "liblpai_direct_skel.so";
/// The stub library's file name.
pub const STUB_FILE: &str = "liblpai_direct_stub.so";
/// The command's file name.
pub const NET_RUN_FILE: &str = "lpai-net-run";
/// The rewritten input list's file name.
pub const INPUT_LIST_FILE: &str = "input_list.txt";
/// The backend-extensions file's name.
pub const CONFIG_FILE: &str = "config.json";
/// The LPAI parameters file's name.
pub const PARAMS_FILE: &str = "lpaiParams.conf";
/// The environment file's name: the run's `LD_LIBRARY_PATH` and `ADSP_LIBRARY_PATH`, sourced by the run command
/// (`. ./env.sh`) and by the virtual device.
pub const ENV_FILE: &str = "env.sh";
/// The folder of the input files.
pub const INPUTS_DIR: &str = "inputs";
/// The folder of the DSP side.
pub const ADSP_DIR: &str = "adsp";
/// The results folder the run writes on the device.
pub const OUTPUT_DIR: &str = "output";

/// The Hexagon versions LLVM (and scripts/build-hexagon.sh) knows.
const HEXAGON_VERSIONS: [u32; 12] = [60, 62, 65, 66, 67, 68, 69, 71, 73, 75, 79, 81];
/// The LPAI hardware versions lpaiParams.conf names.
const HW_VERSIONS: [&str; 4] = ["v5", "v5_1", "v6", "v7"];
/// The directories the FastRPC library searches when ADSP_LIBRARY_PATH is not set; kept after the staged `adsp/`
/// so the PD still finds the system's own libraries.
const DSP_DEFAULT_SEARCH: [&str; 3] = ["/usr/lib/rfsa/adsp", "/vendor/lib/rfsa/adsp", "/vendor/dsp/"];

/// A setting's value and where it came from (`--hex_ver`, `HEX_VER in the environment`, `the default`), for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Given {
    /// The value.
    pub value: String,
    /// Where it came from.
    pub from: String,
}

impl Given {
    /// The flag's value, else the environment variable's, else the default.
    pub fn choose(
        flag: Option<&str>,
        flag_name: &str,
        environment: Option<String>,
        variable: &str,
        default: &str,
    ) -> Given {
        match (flag, environment.filter(|value| !value.is_empty())) {
            (Some(value), _) => Given { value: value.to_string(), from: flag_name.to_string() },
            (None, Some(value)) => Given { value, from: format!("{variable} in the environment") },
            (None, None) => Given { value: default.to_string(), from: "the default".to_string() },
        }
    }

    fn is_default(&self) -> bool {
        self.from == "the default"
    }
}

/// What `stage` assembles.
#[derive(Clone, Debug, PartialEq)]
pub struct StageSettings {
    /// The local directory to create (it must not exist yet).
    pub output_dir: PathBuf,
    /// The context binary.
    pub retrieve_context: PathBuf,
    /// The input list; its files are copied under `inputs/` and the list rewritten to their device paths.
    pub input_list: PathBuf,
    /// The libQnnLpai (Hexagon) placed in `adsp/`.
    pub backend: PathBuf,
    /// An lpaiParams.conf or a backend-extensions JSON naming one (`None`: a minimal conf is written).
    pub config_file: Option<PathBuf>,
    /// The HLOS side's libQnnSystem (aarch64), placed in the root: lpai-net-run reads the binary's metadata with it.
    pub system_library: Option<PathBuf>,
    /// A Hexagon libQnnSystem placed in `adsp/`, which the skel loads to read the metadata itself.
    pub dsp_system_library: Option<PathBuf>,
    /// Other Hexagon libraries the PD must load (libQnnLpai's own dependencies), placed in `adsp/`.
    pub adsp_libraries: Vec<PathBuf>,
    /// The Hexagon skel (`None`: scripts/build-hexagon.sh's output in the workspace).
    pub skel: Option<PathBuf>,
    /// A directory holding `lpai-net-run` and `liblpai_direct_stub.so` for the target (`None`: scripts/build-hlos.sh's
    /// output for [`StageSettings::target_arch`] in the workspace).
    pub hlos_dir: Option<PathBuf>,
    /// `lpai-net-run` for the target (overrides the one in the HLOS directory).
    pub net_run: Option<PathBuf>,
    /// `liblpai_direct_stub.so` for the target (overrides the one in the HLOS directory).
    pub stub: Option<PathBuf>,
    /// `QNN_TARGET_ARCH`: the HLOS side's target.
    pub target_arch: Given,
    /// `HEX_VER`: the device's Hexagon version.
    pub hex_ver: Given,
    /// `HW_VER`: the LPAI hardware version.
    pub hw_ver: Given,
    /// Where the root goes on the device.
    pub device_dir: String,
    /// The PD the skel runs in.
    pub pd: Pd,
    /// The inputs are native files (the run gets `--use_native_input_files`).
    pub use_native_input_files: bool,
    /// Write native outputs (the run gets `--use_native_output_files`).
    pub use_native_output_files: bool,
}

/// One `adb` invocation: its arguments, without the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdbCommand {
    /// The arguments.
    pub args: Vec<String>,
}

impl fmt::Display for AdbCommand {
    /// The command as a shell line: `adb` and each argument, double-quoted when it holds anything a shell reads.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "adb")?;
        for argument in &self.args {
            let plain =
                !argument.is_empty() && argument.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
            if plain {
                write!(formatter, " {argument}")?;
            } else {
                let escaped =
                    argument.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "\\$").replace('`', "\\`");
                write!(formatter, " \"{escaped}\"")?;
            }
        }
        Ok(())
    }
}

/// What `stage` made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Staged {
    /// The directory, complete.
    pub directory: PathBuf,
    /// Every file in it, relative to it, sorted.
    pub files: Vec<PathBuf>,
    /// The `adb` commands that push it and run it, in order.
    pub commands: Vec<AdbCommand>,
    /// What to know before running: signing, root, the PD, libraries the PD must find elsewhere.
    pub notes: Vec<String>,
    /// Where the run writes its results on the device (`adb pull` it afterwards).
    pub results: String,
}

/// The HLOS targets `QNN_TARGET_ARCH` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hlos {
    Android,
    OeLinux,
    Qnx,
}

impl Hlos {
    fn parse(given: &Given) -> Result<Hlos> {
        match given.value.as_str() {
            "aarch64-android" => Ok(Hlos::Android),
            "aarch64-qnx800" => Ok(Hlos::Qnx),
            value if value.starts_with("aarch64-oe-linux-gcc") => Ok(Hlos::OeLinux),
            value => bail!(
                "QNN_TARGET_ARCH from {} is \"{value}\"; expected aarch64-android, aarch64-oe-linux-gcc<version> or \
                 aarch64-qnx800",
                given.from
            ),
        }
    }

    /// The Rust target scripts/build-hlos.sh builds for it.
    fn triple(self) -> &'static str {
        match self {
            Hlos::Android => "aarch64-linux-android",
            Hlos::OeLinux => "aarch64-unknown-linux-gnu",
            Hlos::Qnx => "aarch64-unknown-nto-qnx800",
        }
    }

    /// Where the target keeps the FastRPC library, searched after the root (`None`: the loader's default covers it).
    fn system_library_dir(self) -> Option<&'static str> {
        match self {
            Hlos::Android => Some("/vendor/lib64"),
            Hlos::OeLinux | Hlos::Qnx => None,
        }
    }
}

fn parse_hex_ver(given: &Given) -> Result<u32> {
    let digits = given.value.strip_prefix(['v', 'V']).unwrap_or(&given.value);
    match digits.parse::<u32>() {
        Ok(version) if HEXAGON_VERSIONS.contains(&version) => Ok(version),
        _ => bail!(
            "HEX_VER from {} is \"{}\"; expected a Hexagon version LLVM knows (60, 62, 65, 66, 67, 68, 69, 71, 73, 75, \
             79, 81)",
            given.from,
            given.value
        ),
    }
}

fn parse_hw_ver(given: &Given) -> Result<&'static str> {
    match HW_VERSIONS.iter().find(|name| **name == given.value) {
        Some(name) => Ok(name),
        None => bail!("HW_VER from {} is \"{}\"; expected one of {}", given.from, given.value, HW_VERSIONS.join(", ")),
    }
}

/// The processor an ELF file is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Machine {
    Aarch64,
    Hexagon,
}

impl Machine {
    fn number(self) -> u16 {
        match self {
            Machine::Aarch64 => 183,
            Machine::Hexagon => 164,
        }
    }

    fn described(number: u16) -> String {
        match number {
            3 => "an x86 ELF".into(),
            40 => "a 32-bit ARM ELF".into(),
            62 => "an x86-64 ELF".into(),
            164 => "a Hexagon ELF".into(),
            183 => "an AArch64 ELF".into(),
            other => format!("an ELF for machine {other}"),
        }
    }
}

/// What the ELF check learnt of a Hexagon file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct HexagonFacts {
    /// The Hexagon version in its flags (`None`: not one of the known encodings).
    version: Option<u32>,
    /// The libraries its dynamic section needs.
    needed: Vec<String>,
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

/// The Hexagon version a file's flags encode: `EF_HEXAGON_MACH_Vnn` is 0xnn, the version's digits read as hex.
fn hexagon_version(flags: u32) -> Option<u32> {
    format!("{:x}", flags & 0xff).parse().ok()
}

/// The `DT_NEEDED` names of a little-endian 32-bit ELF, found through its program headers as a loader finds them;
/// `None` when its headers do not hold together.
fn needed_libraries(bytes: &[u8]) -> Option<Vec<String>> {
    const PT_LOAD: u32 = 1;
    const PT_DYNAMIC: u32 = 2;
    const DT_NULL: u32 = 0;
    const DT_NEEDED: u32 = 1;
    const DT_STRTAB: u32 = 5;
    let table = u32_at(bytes, 28)? as usize;
    let entry_size = usize::from(u16_at(bytes, 42)?);
    let count = usize::from(u16_at(bytes, 44)?);
    if count > 0 && entry_size < 32 {
        return None;
    }
    let headers: Vec<[u32; 4]> = (0..count)
        .map(|index| {
            let at = table.checked_add(index.checked_mul(entry_size)?)?;
            // p_type, p_offset, p_vaddr, p_filesz
            Some([u32_at(bytes, at)?, u32_at(bytes, at + 4)?, u32_at(bytes, at + 8)?, u32_at(bytes, at + 16)?])
        })
        .collect::<Option<_>>()?;
    let Some(dynamic) = headers.iter().find(|header| header[0] == PT_DYNAMIC) else {
        return Some(Vec::new());
    };
    let (mut names, mut strings) = (Vec::new(), None);
    for index in 0..(dynamic[3] as usize / 8) {
        let at = (dynamic[1] as usize).checked_add(index * 8)?;
        let (tag, value) = (u32_at(bytes, at)?, u32_at(bytes, at + 4)?);
        match tag {
            DT_NULL => break,
            DT_NEEDED => names.push(value),
            DT_STRTAB => strings = Some(value),
            _ => {}
        }
    }
    if names.is_empty() {
        return Some(Vec::new());
    }
    let address = strings?;
    let load = headers.iter().find(|header| {
        header[0] == PT_LOAD && address >= header[2] && u64::from(address) < u64::from(header[2]) + u64::from(header[3])
    })?;
    let table_offset = (load[1] as usize).checked_add((address - load[2]) as usize)?;
    names
        .into_iter()
        .map(|name| {
            let start = table_offset.checked_add(name as usize)?;
            let rest = bytes.get(start..)?;
            let end = rest.iter().position(|&byte| byte == 0)?;
            Some(String::from_utf8_lossy(&rest[..end]).into_owned())
        })
        .collect()
}

/// Checks that `path` (named by `flag`) is an ELF for `machine`; answers what it learnt of a Hexagon file.
fn check_elf(path: &Path, flag: &str, machine: Machine) -> Result<HexagonFacts> {
    let bytes = std::fs::read(path).with_context(|| format!("{flag} {} cannot be read", path.display()))?;
    let expected = Machine::described(machine.number());
    if bytes.get(..4) != Some(b"\x7fELF".as_slice()) {
        bail!("{flag} {} is not an ELF file; the {} side needs {expected}", path.display(), side(machine));
    }
    let found = u16_at(&bytes, 18).unwrap_or(0);
    let little_endian = bytes.get(5) == Some(&1);
    if found != machine.number() || !little_endian {
        bail!("{flag} {} is {}, not {expected}", path.display(), Machine::described(found));
    }
    if machine == Machine::Aarch64 {
        return Ok(HexagonFacts::default());
    }
    if bytes.get(4) != Some(&1) {
        bail!("{flag} {} is a 64-bit ELF; Hexagon libraries are 32-bit", path.display());
    }
    let version = u32_at(&bytes, 36).and_then(hexagon_version);
    let needed = needed_libraries(&bytes)
        .with_context(|| format!("{flag} {}: its program headers or dynamic section are malformed", path.display()))?;
    Ok(HexagonFacts { version, needed })
}

fn side(machine: Machine) -> &'static str {
    match machine {
        Machine::Aarch64 => "HLOS",
        Machine::Hexagon => "aDSP",
    }
}

/// One file to place: where it comes from, who named it, where it goes (relative to the root).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Placed {
    source: PathBuf,
    named_by: String,
    destination: PathBuf,
    executable: bool,
}

/// The workspace this library was built in (where the build scripts put their outputs).
fn workspace() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
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
        let path = workspace().join("target").join(hlos.triple()).join("release").join(name);
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
    let path = workspace().join("target/hexagon-unknown-linux-musl/release").join(SKEL_FILE);
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
    use crate::stub::library_version;
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

/// The input list read and rewritten: its text with device paths, and the files to copy.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ListPlan {
    text: String,
    files: Vec<Placed>,
}

/// Reads the input list: `#` lines and blank lines are kept as they are; each entry (`name:=path` or a bare path,
/// taken from the current directory when relative, as lpai-net-run reads it) must name a file, which goes under
/// `inputs/` by its file name (`inputs/<n>/` when another file already has that name) and is written back as its
/// device path.
fn plan_input_list(list: &Path, device_dir: &str) -> Result<ListPlan> {
    let text = std::fs::read_to_string(list).with_context(|| format!("cannot read input list {}", list.display()))?;
    let mut by_source: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut taken: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut files = Vec::new();
    let mut lines = Vec::new();
    let mut inferences = 0;
    for (index, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            lines.push(raw.to_string());
            continue;
        }
        inferences += 1;
        let mut entries = Vec::new();
        for entry in trimmed.split_whitespace() {
            let (name, path) = match entry.split_once(":=") {
                Some((name, path)) => (Some(name), path),
                None => (None, entry),
            };
            let source = Path::new(path);
            let canonical = std::fs::canonicalize(source).ok().filter(|path| path.is_file()).with_context(|| {
                format!(
                    "input list {} line {}: {path} is not a file (relative paths are taken from the current \
                     directory, as lpai-net-run reads them)",
                    list.display(),
                    index + 1
                )
            })?;
            let destination = match by_source.get(&canonical) {
                Some(destination) => destination.clone(),
                None => {
                    let base = PathBuf::from(canonical.file_name().unwrap_or_default());
                    let mut destination = Path::new(INPUTS_DIR).join(&base);
                    let mut counter = 1;
                    while taken.contains_key(&destination) {
                        destination = Path::new(INPUTS_DIR).join(counter.to_string()).join(&base);
                        counter += 1;
                    }
                    taken.insert(destination.clone(), canonical.clone());
                    by_source.insert(canonical.clone(), destination.clone());
                    files.push(Placed {
                        source: canonical.clone(),
                        named_by: format!("input list {} line {}", list.display(), index + 1),
                        destination: destination.clone(),
                        executable: false,
                    });
                    destination
                }
            };
            let device_path = format!("{device_dir}/{}", destination.display());
            if device_path.contains(char::is_whitespace) {
                bail!(
                    "input list {} line {}: {path} would be {device_path} on the device, and an input list cannot \
                     hold a path with spaces",
                    list.display(),
                    index + 1
                );
            }
            entries.push(match name {
                Some(name) => format!("{name}:={device_path}"),
                None => device_path,
            });
        }
        lines.push(entries.join(" "));
    }
    if inferences == 0 {
        bail!("input list {} has no inference lines", list.display());
    }
    Ok(ListPlan { text: lines.join("\n") + "\n", files })
}

/// The lpaiParams.conf to stage: the one `config_file` stands for (checked with lpai-net-run's own reader), with
/// `lpai_backend.target_env` `adsp` and `lpai_backend.enable_hw_ver` filled in when absent; or a minimal one. A conf
/// for another target, or for another hardware version than a `HW_VER` given explicitly, is refused.
fn plan_params(config_file: Option<&Path>, hw_ver: &Given, hw: &str) -> Result<String> {
    let mut params = match config_file {
        None => serde_json::json!({}),
        Some(path) => {
            net_run_config::read(path)?;
            match net_run_config::params_file(path)? {
                None => serde_json::json!({}),
                Some(conf) => {
                    let text = std::fs::read_to_string(&conf)
                        .with_context(|| format!("cannot read config file {}", conf.display()))?;
                    serde_json::from_str(&text)
                        .with_context(|| format!("config file {} is not JSON", conf.display()))?
                }
            }
        }
    };
    let shown =
        config_file.map(|path| net_run_config::params_file(path).ok().flatten().unwrap_or_else(|| path.to_path_buf()));
    let object = params.as_object_mut().context("an lpaiParams.conf must be a JSON object")?;
    let backend = object.entry("lpai_backend").or_insert_with(|| serde_json::json!({}));
    let backend = backend.as_object_mut().with_context(|| {
        format!("config file {}: lpai_backend must be an object", shown.clone().unwrap_or_default().display())
    })?;
    match backend.get("target_env").and_then(|value| value.as_str()) {
        Some("adsp") | None => {}
        Some(other) => bail!(
            "config file {}: lpai_backend.target_env is \"{other}\"; the native aDSP path stage assembles needs \
             \"adsp\"",
            shown.unwrap_or_default().display()
        ),
    }
    backend.insert("target_env".into(), "adsp".into());
    match backend.get("enable_hw_ver").and_then(|value| value.as_str()) {
        Some(asked) if asked != hw && !hw_ver.is_default() => bail!(
            "config file {} asks for lpai_backend.enable_hw_ver {asked}, but HW_VER from {} is {hw}",
            shown.unwrap_or_default().display(),
            hw_ver.from
        ),
        Some(_) => {}
        None => {
            backend.insert("enable_hw_ver".into(), hw.into());
        }
    }
    Ok(serde_json::to_string_pretty(&params).context("writing lpaiParams.conf")? + "\n")
}

/// env.sh: the environment the run needs on the device, which the run command sources: the HLOS libraries from the
/// root (and the target's FastRPC directory), the DSP side from `adsp/` before the system's own directories.
fn environment_file(device_dir: &str, hlos: Hlos) -> String {
    let mut libraries = device_dir.to_string();
    if let Some(directory) = hlos.system_library_dir() {
        libraries.push(':');
        libraries.push_str(directory);
    }
    let search: Vec<String> =
        std::iter::once(format!("{device_dir}/{ADSP_DIR}")).chain(DSP_DEFAULT_SEARCH.map(String::from)).collect();
    format!(
        "# Written by lpai-net-run stage: the environment of a run on the device (the run command sources it).\n\
         export LD_LIBRARY_PATH={libraries}\n\
         export ADSP_LIBRARY_PATH='{}'\n",
        search.join(";")
    )
}

/// config.json: qnn-net-run's backend-extensions file naming the staged conf, and the persistent binary LPAI needs.
fn config_json() -> String {
    let value = serde_json::json!({
        "backend_extensions": { "config_file_path": format!("./{PARAMS_FILE}") },
        "context_configs": { "is_persistent_binary": true },
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

fn check_device_dir(device_dir: &str) -> Result<()> {
    let bad = |c: char| c.is_whitespace() || "'\";$`\\".contains(c);
    if !device_dir.starts_with('/') || device_dir.contains(bad) || device_dir.len() < 2 {
        bail!(
            "--device_dir {device_dir:?} must be an absolute directory other than / without spaces, quotes, \
             semicolons, $, ` or \\ (it goes into the input list, a shell command and ADSP_LIBRARY_PATH)"
        );
    }
    Ok(())
}

/// The `adb` commands that push the staged `directory` to `device_dir` and run it there.
fn commands(directory: &Path, device_dir: &str, run: &str) -> Vec<AdbCommand> {
    let command = |args: &[&str]| AdbCommand { args: args.iter().map(|arg| arg.to_string()).collect() };
    let contents = format!("{}/.", directory.display());
    vec![
        command(&["root"]),
        command(&["wait-for-device"]),
        command(&["shell", "mkdir", "-p", device_dir]),
        command(&["push", &contents, device_dir]),
        command(&["shell", run]),
    ]
}

/// Assembles the staged directory (see the module documentation) and answers what it holds, the commands and notes.
pub fn stage(settings: &StageSettings) -> Result<Staged> {
    let hlos = Hlos::parse(&settings.target_arch)?;
    let hex_ver = parse_hex_ver(&settings.hex_ver)?;
    let hw = parse_hw_ver(&settings.hw_ver)?;
    let device_dir = settings.device_dir.trim_end_matches('/').to_string();
    check_device_dir(&device_dir)?;
    if settings.pd == Pd::Root {
        bail!("--pd root is not a place stage prepares (use user, audio or sensors)");
    }
    if settings.system_library.is_none() && settings.dsp_system_library.is_none() {
        bail!(
            "the run needs a libQnnSystem to read the binary's metadata: name the HLOS side's (aarch64) with \
             --system_library FILE, or a Hexagon one the skel loads with --dsp_system_library FILE"
        );
    }
    let output_dir = &settings.output_dir;
    if output_dir.exists() {
        bail!(
            "--output_dir {} already exists: stage makes a new directory, whole or not at all (remove it or name \
             another)",
            output_dir.display()
        );
    }

    // Everything is checked before anything is written.
    let mut notes = Vec::new();
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
    notes.extend(check_interfaces(&staged_stub.source, &staged_stub.named_by, &skel, &skel_by)?);
    let mut dsp = vec![(skel, skel_by, SKEL_FILE.to_string(), skel_facts)];
    let backend = named_file(&settings.backend, "--backend")?;
    let backend_name = file_name(&backend, "--backend")?;
    let backend_facts = check_elf(&backend, "--backend", Machine::Hexagon)?;
    dsp.push((backend, "--backend".into(), backend_name.clone(), backend_facts));
    if let Some(path) = &settings.dsp_system_library {
        let path = named_file(path, "--dsp_system_library")?;
        let name = file_name(&path, "--dsp_system_library")?;
        let facts = check_elf(&path, "--dsp_system_library", Machine::Hexagon)?;
        system_arguments = vec!["--dsp_system_library".to_string(), name.clone()];
        dsp.push((path, "--dsp_system_library".into(), name, facts));
    }
    for path in &settings.adsp_libraries {
        let path = named_file(path, "--adsp_library")?;
        let name = file_name(&path, "--adsp_library")?;
        let facts = check_elf(&path, "--adsp_library", Machine::Hexagon)?;
        dsp.push((path, "--adsp_library".into(), name, facts));
    }
    let dsp_names: Vec<String> = dsp.iter().map(|(_, _, name, _)| name.clone()).collect();
    for (source, named_by, name, facts) in &dsp {
        if let Some(version) = facts.version.filter(|version| *version > hex_ver) {
            notes.push(format!(
                "{named_by} {} is built for Hexagon v{version}, newer than HEX_VER={hex_ver}: a v{hex_ver} DSP cannot \
                 run it",
                source.display()
            ));
        }
        let missing: Vec<&str> = facts
            .needed
            .iter()
            .map(String::as_str)
            .filter(|needed| !dsp_names.iter().any(|name| name == needed))
            .collect();
        if !missing.is_empty() {
            notes.push(format!(
                "adsp/{name} needs {}, not staged: the PD must find it on its library path (add it with \
                 --adsp_library FILE)",
                missing.join(", ")
            ));
        }
        placed.push(Placed {
            source: source.clone(),
            named_by: named_by.clone(),
            destination: Path::new(ADSP_DIR).join(name),
            executable: false,
        });
    }

    let list = plan_input_list(&settings.input_list, &device_dir)?;
    let params = plan_params(settings.config_file.as_deref(), &settings.hw_ver, hw)?;
    let environment = environment_file(&device_dir, hlos);
    let written: [(&str, String); 4] = [
        (INPUT_LIST_FILE, list.text.clone()),
        (CONFIG_FILE, config_json()),
        (PARAMS_FILE, params),
        (ENV_FILE, environment),
    ];
    placed.extend(list.files);

    // Two files for one place would lose one.
    let mut destinations: BTreeMap<PathBuf, String> = BTreeMap::new();
    let reserved = written.iter().map(|(name, _)| (PathBuf::from(name), "stage itself".to_string()));
    let fixed = [INPUTS_DIR, ADSP_DIR, OUTPUT_DIR].map(|name| (PathBuf::from(name), "stage's layout".to_string()));
    for (destination, named_by) in reserved.chain(fixed) {
        destinations.insert(destination, named_by);
    }
    for file in &placed {
        if let Some(first) = destinations.insert(file.destination.clone(), file.named_by.clone()) {
            bail!(
                "{} ({}) would be staged as {}, which {first} already uses",
                file.source.display(),
                file.named_by,
                file.destination.display()
            );
        }
    }

    let mut run = format!("cd {device_dir} && . ./{ENV_FILE} && ./{NET_RUN_FILE}");
    let mut arguments = vec![
        "--transport".to_string(),
        "fastrpc".to_string(),
        "--backend".to_string(),
        backend_name.clone(),
        "--retrieve_context".to_string(),
        format!("{device_dir}/{binary_name}"),
        "--input_list".to_string(),
        format!("{device_dir}/{INPUT_LIST_FILE}"),
        "--config_file".to_string(),
        format!("{device_dir}/{CONFIG_FILE}"),
        "--direct_mode".to_string(),
        "--output_dir".to_string(),
        format!("{device_dir}/{OUTPUT_DIR}"),
    ];
    arguments.extend(system_arguments);
    if settings.pd != Pd::User {
        arguments.extend(["--pd".to_string(), settings.pd.name().to_string()]);
    }
    if settings.use_native_input_files {
        arguments.push("--use_native_input_files".to_string());
    }
    if settings.use_native_output_files {
        arguments.push("--use_native_output_files".to_string());
    }
    for argument in &arguments {
        if argument.contains(|c: char| c.is_whitespace() || "'\";$`\\&|<>()*?".contains(c)) {
            bail!("{argument:?} cannot go into the device's shell command unquoted (rename the file)");
        }
        run.push(' ');
        run.push_str(argument);
    }

    let dsp_files: Vec<String> = dsp_names.iter().map(|name| format!("{ADSP_DIR}/{name}")).collect();
    notes.insert(
        0,
        format!(
            "sign the DSP side before running: {} (the aDSP's PDs load signed libraries: the Hexagon SDK's \
             tools/elfsigner/elfsigner.py signs each, with a test signature on a development device, as ExecuTorch's \
             LPAI direct-mode script does for every library it places on the aDSP)",
            dsp_files.join(", ")
        ),
    );
    notes.insert(
        1,
        "the run needs root: the commands start with `adb root` (a production build's adbd cannot be root)".into(),
    );
    if let Some(note) = pd_note(settings.pd, &device_dir) {
        notes.insert(2, note);
    }

    let directory = assemble(output_dir, &placed, &written)?;
    let files = files_below(&directory)?;
    let results = format!("{device_dir}/{OUTPUT_DIR}");
    Ok(Staged { commands: commands(&directory, &device_dir, &run), directory, files, notes, results })
}

/// Where the skel must live for a static PD to load it.
fn pd_note(pd: Pd, device_dir: &str) -> Option<String> {
    let (name, daemon) = match pd {
        Pd::Audio => ("audio", "the daemon that opens createstaticpd:audiopd, `adsprpcd audiopd adsp`"),
        Pd::Sensors => ("sensors", "the daemon that opens createstaticpd:sensorspd"),
        Pd::User | Pd::Root => return None,
    };
    Some(format!(
        "--pd {name}: the {name} PD is a static PD the system starts; its library loads and file reads are served by \
         its own HLOS daemon ({daemon}), so the ADSP_LIBRARY_PATH that counts is that daemon's (set where the system \
         starts it), not the one in the command above. Put the files of {device_dir}/{ADSP_DIR} in a directory on \
         that path, usually /vendor/lib/rfsa/adsp (Android) or /usr/lib/rfsa/adsp (Linux), which needs a writable \
         partition (adb remount), or build them into the DSP image; unverified without a device"
    ))
}

/// Every file below `directory`, relative to it, sorted.
fn files_below(directory: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(next) = pending.pop() {
        let entries = std::fs::read_dir(&next).with_context(|| format!("cannot list {}", next.display()))?;
        for entry in entries {
            let path = entry.with_context(|| format!("cannot list {}", next.display()))?.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(directory) {
                found.push(relative.to_path_buf());
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Builds the directory beside `output_dir` (its name plus `.partial`, removed first when an interrupted stage left
/// it) and renames it into place; on any failure removes it, so nothing half-made remains.
fn assemble(output_dir: &Path, placed: &[Placed], written: &[(&str, String)]) -> Result<PathBuf> {
    let mut partial_name = output_dir.file_name().context("--output_dir has no directory name")?.to_os_string();
    partial_name.push(".partial");
    let partial = output_dir.with_file_name(partial_name);
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("cannot remove {} (left by an interrupted stage)", partial.display()))?;
    }
    let built = (|| -> Result<()> {
        std::fs::create_dir_all(partial.join(ADSP_DIR))
            .with_context(|| format!("cannot create {}", partial.display()))?;
        for file in placed {
            let destination = partial.join(&file.destination);
            if let Some(parent) = destination.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::copy(&file.source, &destination).with_context(|| {
                format!("cannot copy {} ({}) to {}", file.source.display(), file.named_by, destination.display())
            })?;
            set_mode(&destination, if file.executable { 0o755 } else { 0o644 })?;
        }
        for (name, text) in written {
            let destination = partial.join(name);
            std::fs::write(&destination, text).with_context(|| format!("cannot write {}", destination.display()))?;
        }
        std::fs::rename(&partial, output_dir)
            .with_context(|| format!("cannot rename {} to {}", partial.display(), output_dir.display()))
    })();
    if let Err(error) = built {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(error);
    }
    Ok(output_dir.to_path_buf())
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the permissions of {}", path.display()))
}

/// The first `program` in the directories of `path` (a `PATH` value) that is an executable file.
pub fn find_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = path?;
    std::env::split_paths(path).map(|directory| directory.join(program)).find(|candidate| {
        std::fs::metadata(candidate)
            .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
    })
}

/// The `adb` that `--push` runs: the first on `path` (a `PATH` value); an error when there is none.
pub fn adb_on_path(path: Option<&std::ffi::OsStr>) -> Result<PathBuf> {
    find_program("adb", path).context(
        "--push runs adb, which is not on PATH (install the Android platform tools, or leave out --push and run the \
         commands yourself)",
    )
}

/// Runs `commands` in order with `adb`, each with this process's stdin, stdout and stderr; stops at the first that
/// cannot start or fails, naming it.
pub fn push(commands: &[AdbCommand], adb: &Path) -> Result<()> {
    for command in commands {
        let status = std::process::Command::new(adb)
            .args(&command.args)
            .status()
            .map_err(|error| anyhow!("cannot start {} for `{command}`: {error}", adb.display()))?;
        if !status.success() {
            bail!("`{command}` failed ({status}); the commands after it were not run");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(value: &str) -> Given {
        Given { value: value.into(), from: "--test".into() }
    }

    /// A little-endian ELF32 Hexagon library with `flags` and, when `needed` is not empty, a dynamic section naming
    /// those libraries, laid out as a linker does (one PT_LOAD covering the file, a PT_DYNAMIC inside it).
    fn hexagon_library(flags: u32, needed: &[&str]) -> Vec<u8> {
        let mut strings = vec![0u8];
        let mut offsets = Vec::new();
        for name in needed {
            offsets.push(strings.len() as u32);
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
        }
        let (header, phdrs) = (52usize, 2usize);
        let strtab_at = header + phdrs * 32;
        let dynamic_at = strtab_at + strings.len().next_multiple_of(4);
        let mut dynamic: Vec<(u32, u32)> = offsets.iter().map(|&offset| (1, offset)).collect();
        dynamic.push((5, strtab_at as u32 + 0x1000));
        dynamic.push((0, 0));
        let total = dynamic_at + dynamic.len() * 8;
        let mut bytes = vec![0u8; total];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 1; // ELFCLASS32
        bytes[5] = 1; // little-endian
        bytes[6] = 1;
        bytes[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
        bytes[18..20].copy_from_slice(&164u16.to_le_bytes());
        bytes[28..32].copy_from_slice(&(header as u32).to_le_bytes());
        bytes[36..40].copy_from_slice(&flags.to_le_bytes());
        bytes[42..44].copy_from_slice(&32u16.to_le_bytes());
        bytes[44..46].copy_from_slice(&(phdrs as u16).to_le_bytes());
        let mut phdr = |index: usize, fields: [u32; 6]| {
            let at = header + index * 32;
            for (slot, value) in fields.iter().enumerate() {
                bytes[at + slot * 4..at + slot * 4 + 4].copy_from_slice(&value.to_le_bytes());
            }
        };
        // p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz: the file mapped at 0x1000.
        phdr(0, [1, 0, 0x1000, 0x1000, total as u32, total as u32]);
        let dynamic_bytes = (dynamic.len() * 8) as u32;
        phdr(1, [2, dynamic_at as u32, 0x1000 + dynamic_at as u32, 0, dynamic_bytes, dynamic_bytes]);
        bytes[strtab_at..strtab_at + strings.len()].copy_from_slice(&strings);
        for (index, (tag, value)) in dynamic.iter().enumerate() {
            let at = dynamic_at + index * 8;
            bytes[at..at + 4].copy_from_slice(&tag.to_le_bytes());
            bytes[at + 4..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        bytes
    }

    #[test]
    fn needed_libraries_are_read_through_the_program_headers() {
        let bytes = hexagon_library(0x73, &["libc++.so.1", "libc++abi.so.1"]);
        assert_eq!(needed_libraries(&bytes), Some(vec!["libc++.so.1".to_string(), "libc++abi.so.1".to_string()]));
        assert_eq!(needed_libraries(&hexagon_library(0x73, &[])), Some(Vec::new()));
        // Cut anywhere inside the headers or tables, the file is malformed, never a panic.
        for length in [30, 60, 100, bytes.len() - 3] {
            assert_eq!(needed_libraries(&bytes[..length]), None, "cut at {length}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libQnnLpai.so");
        std::fs::write(&path, &bytes).unwrap();
        let facts = check_elf(&path, "--backend", Machine::Hexagon).unwrap();
        assert_eq!(
            facts,
            HexagonFacts { version: Some(73), needed: vec!["libc++.so.1".into(), "libc++abi.so.1".into()] }
        );
        let message = check_elf(&path, "--net_run", Machine::Aarch64).unwrap_err().to_string();
        assert!(message.ends_with("libQnnLpai.so is a Hexagon ELF, not an AArch64 ELF"), "{message}");
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        let message = check_elf(&path, "--skel", Machine::Hexagon).unwrap_err().to_string();
        assert!(message.ends_with("is not an ELF file; the aDSP side needs a Hexagon ELF"), "{message}");
    }

    #[test]
    fn hexagon_versions_read_as_their_digits() {
        assert_eq!(hexagon_version(0x73), Some(73));
        assert_eq!(hexagon_version(0x81), Some(81));
        assert_eq!(hexagon_version(0x8067), Some(67));
        assert_eq!(hexagon_version(0x7a), None);
    }

    #[test]
    fn settings_come_from_the_flag_then_the_environment_then_the_default() {
        let chosen = Given::choose(Some("79"), "--hex_ver", Some("73".into()), "HEX_VER", "81");
        assert_eq!(chosen, Given { value: "79".into(), from: "--hex_ver".into() });
        let chosen = Given::choose(None, "--hex_ver", Some("73".into()), "HEX_VER", "81");
        assert_eq!(chosen, Given { value: "73".into(), from: "HEX_VER in the environment".into() });
        let chosen = Given::choose(None, "--hex_ver", Some(String::new()), "HEX_VER", "81");
        assert!(chosen.is_default() && chosen.value == "81");
        assert_eq!(parse_hex_ver(&given("v75")).unwrap(), 75);
        let message = parse_hex_ver(&given("74")).unwrap_err().to_string();
        assert!(message.starts_with("HEX_VER from --test is \"74\""), "{message}");
        assert_eq!(parse_hw_ver(&given("v5_1")).unwrap(), "v5_1");
        assert!(parse_hw_ver(&given("6")).unwrap_err().to_string().contains("expected one of v5, v5_1, v6, v7"));
        assert_eq!(Hlos::parse(&given("aarch64-oe-linux-gcc9.3")).unwrap(), Hlos::OeLinux);
        assert_eq!(Hlos::parse(&given("aarch64-android")).unwrap().triple(), "aarch64-linux-android");
        assert!(Hlos::parse(&given("x86_64-linux-clang")).unwrap_err().to_string().contains("aarch64-qnx800"));
    }

    #[test]
    fn the_conf_gets_the_target_and_hardware_version_it_lacks_and_refuses_others() {
        let dir = tempfile::tempdir().unwrap();
        let minimal: serde_json::Value = serde_json::from_str(&plan_params(None, &given("v7"), "v7").unwrap()).unwrap();
        assert_eq!(minimal, serde_json::json!({"lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v7"}}));
        let conf = dir.path().join("lpaiParams.conf");
        std::fs::write(&conf, r#"{"lpai_backend": {"enable_hw_ver": "v5"}, "lpai_graph": {"execute": {"fps": 30}}}"#)
            .unwrap();
        let default = Given { value: "v6".into(), from: "the default".into() };
        let kept: serde_json::Value = serde_json::from_str(&plan_params(Some(&conf), &default, "v6").unwrap()).unwrap();
        assert_eq!(kept["lpai_backend"], serde_json::json!({"target_env": "adsp", "enable_hw_ver": "v5"}));
        assert_eq!(kept["lpai_graph"]["execute"]["fps"], 30);
        let message = plan_params(Some(&conf), &given("v6"), "v6").unwrap_err().to_string();
        assert!(message.contains("asks for lpai_backend.enable_hw_ver v5, but HW_VER from --test is v6"), "{message}");
        std::fs::write(&conf, r#"{"lpai_backend": {"target_env": "arm"}}"#).unwrap();
        let message = plan_params(Some(&conf), &default, "v6").unwrap_err().to_string();
        assert!(message.contains("lpaiParams.conf: lpai_backend.target_env is \"arm\""), "{message}");
        std::fs::write(&conf, r#"{"lpai_backend": {"target_env": "adsp", "typo": 1}}"#).unwrap();
        let message = format!("{:#}", plan_params(Some(&conf), &default, "v6").unwrap_err());
        assert!(message.contains("unknown field `typo`"), "{message}");
    }

    #[test]
    fn commands_print_as_shell_lines() {
        let command = AdbCommand { args: vec!["shell".into(), "cd /x && A='b;c' ./run".into()] };
        assert_eq!(command.to_string(), "adb shell \"cd /x && A='b;c' ./run\"");
        let command = AdbCommand { args: vec!["push".into(), "/tmp/s/.".into(), "/data/local/tmp/LPAI".into()] };
        assert_eq!(command.to_string(), "adb push /tmp/s/. /data/local/tmp/LPAI");
        assert!(check_device_dir("/data/local/tmp/LPAI").is_ok());
        for bad in ["relative", "/", "/data/my dir", "/data/a;b"] {
            assert!(check_device_dir(bad).is_err(), "{bad}");
        }
    }
}
