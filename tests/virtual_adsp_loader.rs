//! The virtual aDSP's loader and shell: `target/virtual-adsp/lpai-pd-shell` under `qemu-hexagon -cpu v73` loads
//! the real virtual-aDSP skel with the aDSP loader's checks, refuses patched copies of it with one precise line
//! each, and serves open, invoke and close frames (`lpai_direct::shell_frame`) over its stdin and stdout.

mod common;

use goblin::elf::Elf;
use lpai_direct::shell_frame::{self, BufferSpec, FrameReader, FrameWriter, RegionSpec};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const DT_HEXAGON_VER: u64 = 0x7000_0001;
const DT_NEEDED: u32 = 1;
const DT_DEBUG: u32 = 21;
const DT_FLAGS: u64 = 30;
const PT_DYNAMIC: u32 = 2;
const PT_NOTE: u32 = 4;
const PT_GNU_STACK: u32 = 0x6474_e551;
const R_HEX_B22_PCREL: u8 = 1;
const R_HEX_RELATIVE: u32 = 35;

fn shell() -> PathBuf {
    common::artifact("target/virtual-adsp/lpai-pd-shell", "scripts/build-hexagon.sh")
}

fn skel() -> PathBuf {
    common::artifact("target/virtual-adsp/liblpai_direct_skel.so", "scripts/build-hexagon.sh")
}

/// Runs the shell with `--check` on `library`.
fn check(library: &Path) -> Output {
    let (shell, library) = (shell(), library.to_str().unwrap().to_string());
    common::run("qemu-hexagon", &["-cpu", "v73", shell.to_str().unwrap(), "--check", &library])
}

/// The file offset of virtual address `vaddr` (through the PT_LOAD that holds it).
fn file_offset(elf: &Elf<'_>, vaddr: u64) -> usize {
    let load = elf.program_headers.iter().find(|header| {
        header.p_type == goblin::elf::program_header::PT_LOAD
            && header.p_vaddr <= vaddr
            && vaddr < header.p_vaddr + header.p_filesz
    });
    let load = load.unwrap_or_else(|| panic!("no PT_LOAD holds {vaddr:#x}"));
    (load.p_offset + vaddr - load.p_vaddr) as usize
}

/// The file offset of dynamic entry `tag`.
fn dynamic_entry(elf: &Elf<'_>, tag: u64) -> usize {
    let dynamic = elf.program_headers.iter().find(|header| header.p_type == PT_DYNAMIC).expect("a PT_DYNAMIC");
    let index = elf.dynamic.as_ref().unwrap().dyns.iter().position(|entry| entry.d_tag == tag);
    dynamic.p_offset as usize + 8 * index.unwrap_or_else(|| panic!("no dynamic entry {tag:#x}"))
}

/// The `.dynstr` offset of the name of an undefined symbol of the skel (`wanted`, or the first one).
fn undefined_name(elf: &Elf<'_>, wanted: Option<&str>) -> (String, usize) {
    elf.dynsyms
        .iter()
        .filter(|symbol| symbol.st_shndx == 0 && symbol.st_name != 0)
        .map(|symbol| (elf.dynstrtab.get_at(symbol.st_name).unwrap().to_string(), symbol.st_name))
        .find(|(name, _)| wanted.is_none_or(|wanted| name == wanted))
        .expect("an undefined symbol")
}

/// A patched copy of the skel in `directory`, with its path and the line the shell must refuse it with.
fn patched(directory: &Path, name: &str, patch: impl FnOnce(&Elf<'_>, &mut Vec<u8>) -> String) -> (PathBuf, String) {
    let original = std::fs::read(skel()).unwrap();
    let elf = Elf::parse(&original).expect("the skel parses");
    let mut bytes = original.clone();
    let reason = patch(&elf, &mut bytes);
    let path = directory.join(name);
    std::fs::write(&path, bytes).unwrap();
    let line = format!("lpai-pd-shell: {}: {reason}", path.display());
    (path, line)
}

fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn the_real_skel_loads_and_names_its_pd_services() {
    let skel = skel();
    let output = check(&skel);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    let prefix = format!("lpai-pd-shell: {}: loads (", skel.display());
    assert!(stdout.starts_with(&prefix) && stdout.lines().count() == 1, "{stdout}");
    for service in ["HAP_debug_v2", "apps_std_fopen", "dlopen", "malloc", "qurt_mutex_lock"] {
        assert!(stdout.contains(service), "the check line does not name {service}: {stdout}");
    }
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn the_shell_reaches_the_skel_only_through_the_library_it_loads() {
    let bytes = std::fs::read(shell()).unwrap();
    let elf = Elf::parse(&bytes).expect("the shell parses");
    let names: Vec<&str> = elf.syms.iter().filter_map(|symbol| elf.strtab.get_at(symbol.st_name)).collect();
    assert!(names.contains(&"lpai_program_main"), "the shell has no symbol table to check");
    for entry in ["lpai_direct_open", "lpai_direct_close", "lpai_direct_skel_handle_invoke"] {
        assert!(!names.contains(&entry), "the shell executable links the skel's {entry} itself");
    }
}

#[test]
fn patched_skels_are_refused_each_with_one_precise_line() {
    let work = tempfile::tempdir().unwrap();
    let phdr = |elf: &Elf<'_>, kind: u32| {
        let index = elf.program_headers.iter().position(|header| header.p_type == kind).unwrap();
        (index, elf.header.e_phoff as usize + index * elf.header.e_phentsize as usize)
    };
    let cases = [
        patched(work.path(), "no-version.so", |elf, bytes| {
            put_u32(bytes, dynamic_entry(elf, DT_HEXAGON_VER), DT_DEBUG);
            "has no DT_HEXAGON_VER (the aDSP loader requires version 3)".into()
        }),
        patched(work.path(), "note.so", |elf, bytes| {
            let (index, at) = phdr(elf, PT_DYNAMIC);
            put_u32(bytes, at, PT_NOTE);
            format!("has a PT_NOTE program header (#{index}): the aDSP loader accepts only PT_LOAD and PT_DYNAMIC")
        }),
        patched(work.path(), "stack.so", |elf, bytes| {
            let (index, at) = phdr(elf, PT_DYNAMIC);
            put_u32(bytes, at, PT_GNU_STACK);
            format!("has a PT_GNU_STACK program header (#{index}): the aDSP loader accepts only PT_LOAD and PT_DYNAMIC")
        }),
        patched(work.path(), "needed.so", |elf, bytes| {
            let (name, offset) = undefined_name(elf, None);
            let at = dynamic_entry(elf, DT_FLAGS);
            put_u32(bytes, at, DT_NEEDED);
            put_u32(bytes, at + 4, offset as u32);
            format!("needs {name} (DT_NEEDED): a PD library may depend on nothing but the PD's own services")
        }),
        patched(work.path(), "unprovided.so", |elf, bytes| {
            let (_, offset) = undefined_name(elf, Some("dlclose"));
            let strings = file_offset(elf, elf.dynamic.as_ref().unwrap().info.strtab as u64);
            bytes[strings + offset + "dlclose".len() - 1] = b'X';
            "needs dlclosX, which the PD does not provide".into()
        }),
        patched(work.path(), "relocation.so", |elf, bytes| {
            let info = &elf.dynamic.as_ref().unwrap().info;
            let table = file_offset(elf, info.rela as u64);
            let index = elf.dynrelas.iter().position(|rela| rela.r_type == R_HEX_RELATIVE).expect("R_HEX_RELATIVE");
            let rela = elf.dynrelas.iter().nth(index).unwrap();
            // Elf32_Rela: r_offset, r_info (type in the low byte), r_addend.
            bytes[table + 12 * index + 4] = R_HEX_B22_PCREL;
            format!(
                "has a relocation of type R_HEX_B22_PCREL at {:#x}: the PD loader applies only R_HEX_RELATIVE, \
                 R_HEX_JMP_SLOT, R_HEX_GLOB_DAT and R_HEX_32",
                rela.r_offset
            )
        }),
    ];
    for (path, expected) in cases {
        let output = check(&path);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{}: {stderr}", path.display());
        assert_eq!(stderr.lines().collect::<Vec<_>>(), [expected.as_str()], "{}", path.display());
        assert!(output.stdout.is_empty(), "{}", path.display());
    }
}

/// Builds tests/pd-shell/probe.c into a PD library in `directory` (clang-19, ld.lld-19, the skel's linker script,
/// `lpai-skel-fixup`'s DT_HEXAGON_VER).
fn probe_library(directory: &Path) -> PathBuf {
    let text = |path: &Path| path.to_str().unwrap().to_string();
    let (source, object, library) =
        (common::root().join("tests/pd-shell/probe.c"), directory.join("probe.o"), directory.join("libprobe.so"));
    let linker = common::root().join("linker");
    let compile = ["--target=hexagon-unknown-linux-musl", "-mcpu=hexagonv73", "-O2", "-fPIC", "-G0", "-ffreestanding"];
    let output = common::run("clang-19", &[&compile[..], &["-c", &text(&source), "-o", &text(&object)]].concat());
    assert!(output.status.success(), "clang-19: {}", String::from_utf8_lossy(&output.stderr));
    let script = format!("-T{}", text(&linker.join("skel.ld")));
    let versions = format!("--version-script={}", text(&linker.join("skel.ver")));
    let output =
        common::run("ld.lld-19", &["-shared", "-z", "now", &script, &versions, &text(&object), "-o", &text(&library)]);
    assert!(output.status.success(), "ld.lld-19: {}", String::from_utf8_lossy(&output.stderr));
    let mut bytes = std::fs::read(&library).unwrap();
    lpai_skel_fixup::fix_up(&mut bytes).expect("the probe takes DT_HEXAGON_VER");
    std::fs::write(&library, bytes).unwrap();
    library
}

#[test]
fn every_pd_service_answers_a_library_initializer() {
    let work = tempfile::tempdir().unwrap();
    let library = probe_library(work.path());
    std::fs::write(work.path().join("probe-input.txt"), "hello pd\n").unwrap();
    let (shell, skel) = (shell(), skel());
    let output = Command::new("qemu-hexagon")
        .args(["-cpu", "v73"])
        .arg(shell)
        .arg("--library-path")
        .arg(format!("/no/such/directory:{}", skel.parent().unwrap().display()))
        .arg("--check")
        .arg(&library)
        .current_dir(work.path())
        .output()
        .expect("qemu-hexagon starts (scripts/setup.sh installs it)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let answers: Vec<&str> = stderr.lines().filter_map(|line| line.strip_prefix("adsp[high] probe: ")).collect();
    let expected = [
        "fopen of a missing file = 2",
        "fopen of null = 14",
        "fopen with mode x = 22",
        "fopen = 0",
        "flen = 0",
        "length = 9",
        "fread = 0",
        "bytes read = 9",
        "ended = 1",
        "first byte = 104",
        "fread with null out-pointers = 14",
        "fclose = 0",
        "fclose again = 9",
        "fclose of stdout = 9",
        "fread of stdin = 9",
        "fopen for writing = 0",
        "fclose of the written file = 0",
        "mkdir = 0",
        "mkdir again = 17",
        "mkdir in a missing directory = 2",
        "mkdir of null = 22",
        "fileExists of the directory = 0",
        "directory exists = 1",
        "fopen of a partial file = 0",
        "fwrite = 0",
        "bytes written = 17",
        "end after fwrite = 0",
        "fwrite with null out-pointers = 14",
        "fwrite of a negative length = 22",
        "fclose of the partial file = 0",
        "fwrite to a closed file = 9",
        "fwrite to stdout = 9",
        "frename = 0",
        "partial name exists = 0",
        "fileExists of the final name = 0",
        "final name exists = 1",
        "frename of a missing file = 2",
        "frename of null = 22",
        "fileExists of null = 14",
        "fileExists with a null out-pointer = 14",
        "fopen of the renamed file = 0",
        "fread of the renamed file = 0",
        "bytes read back = 17",
        "last byte read back = 68",
        "fclose of the renamed file = 0",
        "fremove = 0",
        "removed file exists = 0",
        "fremove again = 2",
        "fremove of the directory = 0",
        "fremove of null = 22",
        "fopen for appending = 0",
        "fwrite appended = 0",
        "fclose of the appended file = 0",
        "fopen to append again = 0",
        "fwrite appended again = 0",
        "fclose after appending again = 0",
        "qtimer runs = 1",
        "malloc is 16-aligned = 1",
        "malloc is zeroed = 1",
        "malloc of 0 bytes = 1",
        "mutex word while held = 1",
        "mutex word after unlock = 0",
        "dlopen by name = 1",
        "dlsym of an entry point = 1",
        "dlsym of a missing name = 0",
        "dlsym of null = 0",
        "dlopen again gives the same handle = 1",
        "dlclose = 0",
        "dlclose of the last reference = 0",
        "dlclose of a closed handle = -1",
        "dlsym on a closed handle = 0",
        "dlopen of a missing library = 0",
        "dlopen of null = 0",
    ];
    assert_eq!(answers, expected, "{stderr}");
    assert_eq!(std::fs::read(work.path().join("probe-output.txt")).unwrap(), b"", "fopen \"wb\" creates the file");
    assert!(!work.path().join("probe-dir").exists(), "fremove removes the probe's file and directory");
    assert_eq!(std::fs::read(work.path().join("probe-record.bin")).unwrap(), b"onetwo", "fopen \"ab\" appends");
    let missing = format!(
        "lpai-pd-shell: dlopen libno_such_library.so: not found in /no/such/directory, {}, {} (the --library-path \
         directories, then the skel's)",
        skel.parent().unwrap().display(),
        work.path().display()
    );
    assert!(stderr.lines().any(|line| line == missing), "{stderr}");
    assert!(stderr.lines().any(|line| line == "adsp[error] probe: a plain format %d"), "{stderr}");
}

/// The shell in serve mode, its pipes, and the frames it answers.
struct Served {
    child: std::process::Child,
}

impl Served {
    fn start() -> Served {
        let child = Command::new("qemu-hexagon")
            .args(["-cpu", "v73"])
            .arg(shell())
            .arg(skel())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("qemu-hexagon starts (scripts/setup.sh installs it)");
        Served { child }
    }

    fn send(&mut self, write: impl Fn(&mut FrameWriter<'_>)) {
        let mut measure = FrameWriter::new(&mut []);
        write(&mut measure);
        let mut frame = vec![0u8; measure.needed()];
        let mut writer = FrameWriter::new(&mut frame);
        write(&mut writer);
        writer.finish().expect("the frame fits");
        self.child.stdin.as_mut().unwrap().write_all(&frame).unwrap();
    }

    fn receive(&mut self) -> Vec<u8> {
        let stdout = self.child.stdout.as_mut().unwrap();
        let mut header = [0u8; 4];
        stdout.read_exact(&mut header).expect("a reply frame");
        let mut body = vec![0u8; shell_frame::body_length(header).expect("a sane length")];
        stdout.read_exact(&mut body).unwrap();
        body
    }
}

#[test]
fn the_shell_serves_open_invoke_and_close_on_the_real_skel() {
    let mut served = Served::start();
    assert_eq!(served.receive(), shell_frame::READY);
    let uri = lpai_direct_stub::stub::fastrpc::skel_uri(lpai_direct_stub::stub::fastrpc::Domain::Adsp, None);
    served.send(|writer| shell_frame::write_open(writer, uri.as_bytes()));
    let reply = served.receive();
    let mut reader = FrameReader::new(&reply);
    let (status, handle) = (reader.i32().unwrap(), reader.u64().unwrap());
    assert!(reader.at_end() && status == 0 && handle != 0, "open: status {status:#x}, handle {handle:#x}");
    // Method 20 does not exist: the skel's AEE_EUNSUPPORTED, with its buffers untouched.
    let input = *b"input bytes";
    served.send(|writer| {
        let regions = [RegionSpec { length: 11, contents: Some(&input[..]) }, RegionSpec { length: 8, contents: None }];
        let buffers = [BufferSpec { region: 0, offset: 0, length: 11 }, BufferSpec { region: 1, offset: 0, length: 8 }];
        shell_frame::write_invoke(writer, handle, 0x1401_0100, regions.into_iter(), buffers.into_iter());
    });
    let reply = served.receive();
    let mut reader = FrameReader::new(&reply);
    let (status, guard, output) = (reader.u32().unwrap(), reader.u32().unwrap(), reader.rest());
    assert_eq!((status, guard), (0x8000_0414, 0), "invoke of method 20");
    assert_eq!(output, [0u8; 8]);
    served.send(|writer| shell_frame::write_close(writer, handle));
    assert_eq!(served.receive(), 0i32.to_le_bytes());
    drop(served.child.stdin.take());
    let output = served.child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn a_library_without_the_skel_entry_points_is_refused_before_ready() {
    let work = tempfile::tempdir().unwrap();
    let (path, _) = patched(work.path(), "not-a-skel.so", |elf, bytes| {
        let symbol =
            elf.dynsyms.iter().find(|symbol| elf.dynstrtab.get_at(symbol.st_name) == Some("lpai_direct_close"));
        let strings = file_offset(elf, elf.dynamic.as_ref().unwrap().info.strtab as u64);
        bytes[strings + symbol.expect("lpai_direct_close is exported").st_name + "lpai_direct_close".len() - 1] = b'X';
        String::new()
    });
    let shell = shell();
    let output = common::run("qemu-hexagon", &["-cpu", "v73", shell.to_str().unwrap(), path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let expected =
        format!("lpai-pd-shell: {}: is not an lpai-direct skel: it exports no lpai_direct_close", path.display());
    assert_eq!(stderr.lines().collect::<Vec<_>>(), [expected.as_str()]);
    assert!(output.stdout.is_empty(), "no READY frame before the refusal");
}

#[test]
fn a_malformed_frame_ends_the_shell_with_status_3_and_one_line() {
    let mut served = Served::start();
    assert_eq!(served.receive(), shell_frame::READY);
    served.send(|writer| writer.u32(9));
    drop(served.child.stdin.take());
    let output = served.child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert_eq!(stderr.lines().collect::<Vec<_>>(), ["lpai-pd-shell: malformed request frame: unknown kind 9"]);
}

/// The Hexagon version in an ELF header's flags (0x73 for v73, 0x81 for v81).
fn hexagon_version(bytes: &[u8]) -> u32 {
    Elf::parse(bytes).unwrap().header.e_flags & 0xFFF
}

/// The dynamic symbols a library exports and needs, by name.
fn dynamic_names(bytes: &[u8]) -> Vec<(String, bool)> {
    let elf = Elf::parse(bytes).unwrap();
    let mut names: Vec<(String, bool)> = elf
        .dynsyms
        .iter()
        .filter(|symbol| symbol.st_name != 0)
        .map(|symbol| (elf.dynstrtab.get_at(symbol.st_name).unwrap().to_string(), symbol.is_import()))
        .collect();
    names.sort();
    names
}

#[test]
fn the_virtual_skel_is_the_shipped_file_or_the_same_skel_built_for_v73() {
    let shipped = std::fs::read(common::artifact(
        "target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so",
        "scripts/build-hexagon.sh",
    ))
    .unwrap();
    let virtual_skel = std::fs::read(skel()).unwrap();
    if hexagon_version(&shipped) <= 0x73 {
        assert!(virtual_skel == shipped, "with HEX_VER <= 73 the virtual aDSP loads the shipped file itself");
    } else {
        assert_eq!(hexagon_version(&virtual_skel), 0x73, "the second build is for v73, the CPU qemu-hexagon emulates");
        assert_eq!(dynamic_names(&virtual_skel), dynamic_names(&shipped), "the same exports and PD services");
    }
}
