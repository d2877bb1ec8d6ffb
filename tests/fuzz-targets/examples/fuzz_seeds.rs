//! Writes the seed inputs of every fuzz target into `fuzz/corpus/<target>/seed-*` (the committed corpus starts from
//! them; `scripts/fuzz.sh --minimise` keeps those that still add coverage): real calls encoded by the stub's codec,
//! the fixtures' input lists, config files as the README documents them, the metadata records and binary info the
//! contract model's system library gives for the contract fixtures, and the virtual aDSP's shared objects.
//!
//! `cargo run -p lpai-fuzz-targets --example fuzz_seeds` (after `scripts/build-hexagon.sh`, for the ELF seeds).

use lpai_direct::codec::{self, Encoder, Method, RemoteArg, Scalars};
use lpai_direct::job;
use lpai_direct::metadata::{from_qnn, Writer};
use lpai_direct_skel::runtime::SystemLibrary;
use lpai_direct_skel::testing::fake::binary;
use lpai_direct_skel::testing::fuzz_calls;
use lpai_fuzz_targets::runtime::register_contract_model;
use std::ffi::CStr;
use std::path::{Path, PathBuf};

/// The contract model's library names.
const LPAI: &CStr = lpai_contract_model::LPAI_LIBRARY_NAME;
const SYSTEM: &CStr = lpai_contract_model::SYSTEM_LIBRARY_NAME;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn write(target: &str, name: &str, bytes: &[u8]) {
    let directory = root().join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::write(directory.join(format!("seed-{name}")), bytes).unwrap();
}

/// A `fuzz_calls` script being written.
#[derive(Default)]
struct Script(Vec<u8>, Vec<usize>);

impl Script {
    /// One call: `method`'s own `sc` word (or `sc`), on handle choice `handle`, with the encoder's arguments.
    fn call(&mut self, id: u32, sc: Option<u32>, handle: u8, scalars: u32, args: &[RemoteArg]) -> &mut Self {
        self.1.push(self.0.len());
        self.0.push((id as u8 & 0x0F) | if sc.is_some() { 0x10 } else { 0 } | (handle << 5));
        if let Some(sc) = sc {
            self.0.extend_from_slice(&sc.to_le_bytes());
        }
        if handle == 3 {
            // A number that is no handle.
            self.0.extend_from_slice(&[0x4C; 8]);
        }
        let word = Scalars::of(scalars);
        for (index, arg) in args.iter().enumerate().take(word.arg_count()) {
            if index >= (word.in_buffers + word.out_buffers) as usize {
                self.0.push(0);
                continue;
            }
            // SAFETY: the encoder's arguments are buffers pointing at live memory of their length.
            let buffer = unsafe { arg.buf };
            if buffer.len < 32 {
                self.0.push((buffer.len as u8) << 3);
            } else {
                self.0.push(4);
                self.0.extend_from_slice(&(buffer.len as u16).to_le_bytes());
            }
            if index < word.in_buffers as usize && buffer.len > 0 {
                // SAFETY: as above.
                let bytes = unsafe { std::slice::from_raw_parts(buffer.pv.cast::<u8>(), buffer.len) };
                self.0.extend_from_slice(bytes);
            }
        }
        self
    }

    /// One call encoded by the stub's codec.
    fn encoded<'b>(&mut self, method: &'static Method, build: impl FnOnce(&mut Encoder<'b>)) -> &mut Self {
        let mut encoder = Encoder::new(method);
        build(&mut encoder);
        let (scalars, args, _) = encoder.args();
        self.call(method.id, None, 0, scalars, &args)
    }
}

fn configure(script: &mut Script, backend: &'static CStr, system: &'static CStr, arena: u32) {
    use codec::configure as c;
    script.encoded(c::METHOD, |e| {
        let _ = e.u32(c::LOG_LEVEL, 2).and_then(|e| e.u32(c::ARENA_BYTES, arena));
        let _ = e.u32(c::LPAI_HW_VERSION, 6).and_then(|e| e.u32(c::LPAI_TARGET, 2));
        let _ = e.string(c::BACKEND, backend).and_then(|e| e.string(c::SYSTEM_LIBRARY, system));
    });
}

/// The calls after the first load of a handle, whose context id is 16 (graph 0, 16 bytes in and out, as the contract fixture and the fake have).
fn after_load(script: &mut Script, out: &'static mut [u8]) {
    let (description, rest) = out.split_at_mut(512);
    let (outputs, rest) = rest.split_at_mut(64);
    let (float_outputs, rest) = rest.split_at_mut(64);
    let (events, message) = rest.split_at_mut(256);
    script.encoded(codec::describe::METHOD, |e| {
        let _ = e.i32(codec::describe::CONTEXT_ID, CONTEXT).and_then(|e| e.u32(codec::describe::GRAPH, 0));
        let _ = e.rout_bytes(codec::describe::DESCRIPTION, description);
    });
    script.encoded(codec::execute::METHOD, |e| {
        use codec::execute as m;
        let _ = e.i32(m::CONTEXT_ID, CONTEXT).and_then(|e| e.u32(m::FLAGS, 0));
        let _ = e.bytes(m::INPUTS, &[7u8; 16]).and_then(|e| e.rout_bytes(m::OUTPUTS, &mut outputs[..16]));
    });
    script.encoded(codec::execute::METHOD, |e| {
        use codec::execute as m;
        let _ = e.i32(m::CONTEXT_ID, CONTEXT).and_then(|e| e.u32(m::FLAGS, 3));
        let _ = e.bytes(m::INPUTS, &[0x3F; 64]).and_then(|e| e.rout_bytes(m::OUTPUTS, float_outputs));
    });
    script.encoded(codec::set_performance::METHOD, |e| {
        use codec::set_performance as m;
        let _ = e.i32(m::CONTEXT_ID, CONTEXT).and_then(|e| e.u32(m::FPS, 30)).and_then(|e| e.u32(m::FTRT_RATIO, 20));
        let _ = e.u32(m::CLIENT_TYPE, 1).and_then(|e| e.u32(m::AFFINITY, 1)).and_then(|e| e.u32(m::PRIORITY, 100));
    });
    script.encoded(codec::profile::METHOD, |e| {
        let _ = e.i32(codec::profile::CONTEXT_ID, CONTEXT).and_then(|e| e.rout_bytes(codec::profile::EVENTS, events));
    });
    script.encoded(codec::last_error::METHOD, |e| {
        let _ = e.rout_bytes(codec::last_error::MESSAGE, message);
    });
    script.encoded(codec::unload::METHOD, |e| {
        let _ = e.i32(codec::unload::CONTEXT_ID, CONTEXT);
    });
}

/// The id of a handle's first context.
const CONTEXT: i32 = 16;

fn scratch() -> &'static mut [u8] {
    Box::leak(vec![0u8; 2048].into_boxed_slice())
}

fn leak(bytes: Vec<u8>) -> &'static [u8] {
    Box::leak(bytes.into_boxed_slice())
}

/// The contract system library's record of a contract fixture binary.
fn contract_record(binary: &[u8]) -> Vec<u8> {
    let system = SystemLibrary::load(SYSTEM).unwrap();
    let description = system.describe(binary).unwrap();
    let mut record = vec![0u8; 4096];
    let mut writer = Writer::new(&mut record);
    let hash = lpai_direct::metadata::binary_hash(binary);
    // SAFETY: the description owns every pointer in its graphs and lives to the end of this function.
    unsafe { from_qnn::write_graphs(description.graphs().unwrap(), &hash, &mut writer) }.unwrap();
    let length = writer.finish().unwrap();
    record.truncate(length);
    record
}

fn skel_invoke_seeds(single: &'static [u8], record: &'static [u8]) -> Vec<(String, Script)> {
    let (lpai, system) = (LPAI, SYSTEM);
    let mut seeds = Vec::new();

    let mut script = Script::default();
    configure(&mut script, lpai, system, 0);
    script.encoded(codec::load::METHOD, |e| {
        let _ = e.u32(codec::load::FLAGS, 1).and_then(|e| e.bytes(codec::load::BINARY, single));
    });
    after_load(&mut script, scratch());
    seeds.push(("contract-load".to_string(), script));

    let mut script = Script::default();
    configure(&mut script, lpai, c"", 1 << 20);
    script.encoded(codec::load_with_metadata::METHOD, |e| {
        use codec::load_with_metadata as m;
        let _ =
            e.u32(m::FLAGS, 1 | 2).and_then(|e| e.bytes(m::BINARY, single)).and_then(|e| e.bytes(m::METADATA, record));
    });
    after_load(&mut script, scratch());
    seeds.push(("contract-record".to_string(), script));

    let mut fake = vec![0u8; 200];
    assert!(binary::write_binary(&binary::ONE_GRAPH, &mut fake));
    let fake = leak(fake);
    let mut script = Script::default();
    configure(&mut script, c"libQnnLpaiFake.so", c"/any/dir/libQnnSystemFake.so", 0);
    script.encoded(codec::load::METHOD, |e| {
        let _ = e.u32(codec::load::FLAGS, 0).and_then(|e| e.bytes(codec::load::BINARY, fake));
    });
    after_load(&mut script, scratch());
    seeds.push(("fake-one-graph".to_string(), script));

    let mut script = Script::default();
    configure(&mut script, lpai, system, 0);
    script.encoded(codec::load_file::METHOD, |e| {
        let _ = e.u32(codec::load_file::FLAGS, 0);
        let _ = e.string(codec::load_file::PATH, c"/nonexistent-lpai-direct-fuzz/model.bin");
    });
    script.encoded(codec::load::METHOD, |e| {
        let _ = e.u32(codec::load::FLAGS, 1).and_then(|e| e.bytes(codec::load::BINARY, single));
    });
    let fields =
        job::Fields { flags: 3, keep: Some(1), ..job::Fields::new(CONTEXT, 0, "/nonexistent-lpai-direct-fuzz/out") };
    let outputs = [job::OutputFile { index: 0, file_name: "out.raw", float: true }];
    let mut job = Vec::new();
    job::encode(&fields, &outputs, &[&["/nonexistent-lpai-direct-fuzz/in.raw"]], &mut |part| {
        job.extend_from_slice(part)
    })
    .unwrap();
    let job = leak(job);
    let report = scratch();
    script.encoded(codec::run_job::METHOD, |e| {
        let _ =
            e.bytes(codec::run_job::JOB, job).and_then(|e| e.rout_bytes(codec::run_job::REPORT, &mut report[..256]));
    });
    script.encoded(codec::load_file_with_metadata::METHOD, |e| {
        use codec::load_file_with_metadata as m;
        let _ = e.u32(m::FLAGS, 0).and_then(|e| e.string(m::PATH, c"/nonexistent-lpai-direct-fuzz/m.bin"));
        let _ = e.bytes(m::METADATA, record);
    });
    seeds.push(("files-and-job".to_string(), script));

    // open and close on the wire, then a call on the closed handle and one on a number that is no handle.
    let mut script = Script::default();
    let uri =
        c"file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=adsp".to_bytes_with_nul();
    let mut count = (uri.len() as u32).to_le_bytes();
    let open = [
        RemoteArg::buffer(count.as_mut_ptr().cast(), 4),
        RemoteArg::buffer(uri.as_ptr().cast_mut().cast(), uri.len()),
        RemoteArg { h64: 0 },
    ];
    script.call(0, None, 0, codec::OPEN_SCALARS, &open);
    script.1.push(script.0.len());
    script.0.extend_from_slice(&[1, 1]);
    let mut unload = Encoder::new(codec::unload::METHOD);
    let _ = unload.i32(codec::unload::CONTEXT_ID, CONTEXT);
    let (scalars, args, _) = unload.args();
    script.call(codec::unload::ID, None, 2, scalars, &args);
    script.call(codec::unload::ID, None, 3, scalars, &args);
    seeds.push(("open-close".to_string(), script));

    // Broken calls: counts, an unknown method, a null buffer, a short primary, overlapping outputs.
    let mut script = Script::default();
    let mut last_error = Encoder::new(codec::last_error::METHOD);
    let message = scratch();
    let _ = last_error.rout_bytes(codec::last_error::MESSAGE, &mut message[..64]);
    let (scalars, args, _) = last_error.args();
    script.call(codec::last_error::ID, Some(scalars | 0x0001_0000), 0, scalars | 0x0001_0000, &args);
    script.call(15, Some(0x1F00_0000), 0, 0x1F00_0000, &[]);
    script.1.push(script.0.len());
    script.0.extend_from_slice(&[11, 4 << 3, 64, 0, 0, 0, 1 | (4 << 3), 4, 64, 0]);
    script.1.push(script.0.len());
    script.0.extend_from_slice(&[11, 2 << 3, 64, 0, 4 << 3, 2 | (4 << 3), 0, 0]);
    seeds.push(("malformed".to_string(), script));
    seeds
}

fn main() {
    let single = leak(std::fs::read(root().join("tests/fixtures/contract_single/contract_single.bin")).unwrap());
    let stream = std::fs::read(root().join("tests/fixtures/contract_stream/contract_stream.bin")).unwrap();
    register_contract_model().expect("the contract model registers as built-in libraries");
    let record = leak(contract_record(single));

    for (name, Script(script, starts)) in skel_invoke_seeds(single, record) {
        let summary = fuzz_calls::skel_invoke(&script).unwrap_or_else(|violation| panic!("{name}: {violation:?}"));
        println!("skel_invoke/{name}: {summary:?}");
        write("skel_invoke", &name, &script);
        // The codec decodes a script's first call: each call of the seed is one codec seed.
        for (index, &start) in starts.iter().enumerate() {
            let end = starts.get(index + 1).copied().unwrap_or(script.len());
            write("codec", &format!("{name}-{index}"), &script[start..end]);
        }
    }

    write("metadata_record", "contract-single", record);
    write("metadata_record", "contract-stream", &contract_record(&stream));
    let system = SystemLibrary::load(SYSTEM).unwrap();
    for (name, binary) in [("contract-single", single), ("contract-stream", &stream[..])] {
        let description = system.describe(binary).unwrap();
        for version in 1..=3 {
            // SAFETY: the description owns every pointer in its graphs and lives while they are read.
            let seed = unsafe { lpai_fuzz_targets::binary_info::encode(version, description.graphs().unwrap()) };
            write("binary_info", &format!("{name}-v{version}"), &seed);
        }
    }

    for fixture in ["contract_single", "kws_conv", "multi_io", "two_graphs"] {
        for kind in ["float", "native"] {
            let path = root().join(format!("tests/fixtures/{fixture}/input_list_{kind}.txt"));
            let Ok(text) = std::fs::read(&path) else { continue };
            for shape in [0u8, 0x05] {
                write("input_list", &format!("{fixture}-{kind}-{shape}"), &[&[shape][..], &text].concat());
            }
        }
    }
    write("input_list", "output-names", b"\x0f#out#1 logits\nmfcc:=a.raw in:=x:=b.raw frames:=c a b:=d\n\n# comment\n");
    write("input_list", "bare", b"\x01\n\na.raw b.raw\nc.raw d.raw\n#\n");

    let conf = br#"{"lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v5_1"},
 "lpai_graph": {"execute": {"fps": 30, "ftrt_ratio": 20, "client_type": "non_real_time", "affinity": "hard", "core_selection": 2}},
 "lpai_profile": {"level": "detailed"}, "lpai_direct": {"island": true}}"#;
    write("lpai_params", "full", conf);
    write("lpai_params", "minimal", br#"{"lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v6"}}"#);
    write("lpai_params", "empty", b"{}");
    let json = br#"{"backend_extensions": {"shared_library_path": "libQnnLpaiNetRunExtensions.so", "config_file_path": "./lpaiParams.conf"},
 "context_configs": {"is_persistent_binary": true, "context_priority": "normal_high", "memory_limit_hint": 65536,
  "enable_graphs": ["g1"], "async_execute_queue_depth": 2, "cache_compatibility_mode": "permissive"},
 "graph_configs": [{"graph_name": "g1", "graph_priority": "high", "graph_profiling_num_executions": 3}, {"graph_name": "g2"}],
 "profile_configs": {}}"#;
    write("config_json", "full", &[&json[..], b"\0", conf].concat());
    let current = br#"{"backend_extensions": {"config_file_path": "other.conf"}}"#;
    write(
        "config_json",
        "current-directory",
        &[&current[..], b"\0\0", br#"{"lpai_profile": {"level": "basic"}}"#].concat(),
    );
    write("config_json", "a-conf-itself", br#"{"lpai_backend": {"target_env": "arm"}}"#);

    for library in ["liblpai_direct_skel.so", "libQnnLpaiContract.so", "libQnnSystemContract.so"] {
        match std::fs::read(root().join("target/virtual-adsp").join(library)) {
            Ok(bytes) => write("elf_loader", library, &bytes),
            Err(error) => eprintln!("no ELF seed {library}: {error} (run scripts/build-hexagon.sh)"),
        }
    }
}
