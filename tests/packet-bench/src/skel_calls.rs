//! The skel's calls, made through the qemu transport on the virtual aDSP with qemu's per-packet trace on: open,
//! configure the contract model, load two binaries, then batches of `last_error`, native and float executes on
//! the 16-element contract fixture and float executes on a 1,024-element graph, and close. Each call's packets are
//! counted from the trace (see [`crate::trace`]).

use crate::pd::PdLayout;
use crate::trace::{self, Window};
use anyhow::{bail, Context};
use lpai_contract_model::writer::{self, GraphSpec, TensorSpec};
use lpai_direct_stub::stub::fastrpc::{skel_uri, Domain};
use lpai_direct_stub::stub::{flags, Configuration, LoadRequest, Qemu, QemuOptions, Stub};
use std::ffi::CString;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Elements of the wide graph the conversions are counted on.
pub const WIDE_ELEMENTS: u32 = 1024;
const UFIXED_POINT_8: u32 = 0x0408;

/// The calls made, in order; a label per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Opening, configuring, loading, closing: not counted.
    SetUp,
    /// `last_error` on a valid handle.
    LastError,
    /// `execute`, native bytes in and out, 16 elements.
    ExecuteNative,
    /// `execute`, float in and out, 16 elements.
    ExecuteFloat,
    /// `execute`, float in and out, [`WIDE_ELEMENTS`] elements.
    ExecuteWide,
}

/// The windows of every call, labelled.
pub struct Counted {
    /// Each call with its packets.
    pub calls: Vec<(Call, Window)>,
}

impl Counted {
    /// The windows of one kind of call.
    pub fn of(&self, kind: Call) -> Vec<&Window> {
        self.calls.iter().filter(|(call, _)| *call == kind).map(|(_, window)| window).collect()
    }
}

/// A 1-input, 1-output u8 graph of `elements` elements for the contract model.
pub fn wide_binary(elements: u32) -> anyhow::Result<Vec<u8>> {
    let dims = [1, elements];
    let tensor = |name, id| TensorSpec {
        name,
        id,
        data_type: UFIXED_POINT_8,
        scale: 0.0625,
        offset: -128,
        dims: &dims,
        source: 0,
        multiplier: 1,
        addend: 0,
        shift: 0,
        step: 0,
    };
    let (inputs, outputs) = ([tensor("in", 1)], [TensorSpec { multiplier: 3, shift: 2, ..tensor("out", 2) }]);
    let graphs = [GraphSpec {
        name: "wide",
        scratch_bytes: 4096,
        persistent_bytes: 64,
        early_every: 0,
        inputs: &inputs,
        outputs: &outputs,
    }];
    let mut bytes = vec![0; writer::file_bytes(&graphs, 64)];
    writer::write(&graphs, &mut bytes).context("writing the wide contract binary")?;
    Ok(bytes)
}

fn text(path: &Path) -> anyhow::Result<CString> {
    CString::new(path.to_str().context("a non-UTF-8 path")?).context("a path with a NUL")
}

/// Float values spread over the tensors' range, as bytes.
fn floats(count: u32) -> Vec<u8> {
    (0..count).flat_map(|index| ((index % 97) as f32 * 0.0625 - 3.0).to_le_bytes()).collect()
}

/// Makes the calls (`batch` of each counted kind) on the skel in `virtual_adsp`, tracing into `trace`.
pub fn count(virtual_adsp: &Path, fixture_binary: &Path, trace: &Path, batch: usize) -> anyhow::Result<Counted> {
    let skel = virtual_adsp.join("liblpai_direct_skel.so");
    let options = QemuOptions {
        skel: Some(skel.clone()),
        shell: Some(virtual_adsp.join("lpai-pd-shell")),
        trace: Some(trace.to_path_buf()),
        ..QemuOptions::default()
    };
    let mut made = Vec::new();
    {
        let qemu = Qemu::start(&options).context("starting the virtual aDSP")?;
        let mut stub = Stub::open(Box::new(qemu), &skel_uri(Domain::Adsp, None))?;
        // The open, then the version handshake.
        made.extend([Call::SetUp, Call::SetUp]);
        let backend = text(&virtual_adsp.join("libQnnLpaiContract.so"))?;
        let system = text(&virtual_adsp.join("libQnnSystemContract.so"))?;
        stub.configure(&Configuration::with_libraries(backend, system, 1 << 20))?;
        made.push(Call::SetUp);
        let single = std::fs::read(fixture_binary).with_context(|| format!("reading {}", fixture_binary.display()))?;
        let small = stub.load(&LoadRequest::bytes(&single))?.context;
        made.push(Call::SetUp);
        let wide = stub.load(&LoadRequest::bytes(&wide_binary(WIDE_ELEMENTS)?))?.context;
        made.push(Call::SetUp);
        for _ in 0..batch {
            stub.last_error()?;
            made.push(Call::LastError);
        }
        let native: Vec<u8> = (0..16u8).map(|byte| byte.wrapping_mul(37)).collect();
        let mut out = vec![0u8; WIDE_ELEMENTS as usize * 4];
        for _ in 0..batch {
            stub.execute(small, 0, 0, &native, &mut out[..16])?;
            made.push(Call::ExecuteNative);
        }
        let both = flags::FLOAT_INPUTS | flags::FLOAT_OUTPUTS;
        for _ in 0..batch {
            stub.execute(small, 0, both, &floats(16), &mut out[..64])?;
            made.push(Call::ExecuteFloat);
        }
        let wide_inputs = floats(WIDE_ELEMENTS);
        for _ in 0..batch {
            stub.execute(wide, 0, both, &wide_inputs, &mut out)?;
            made.push(Call::ExecuteWide);
        }
        stub.close()?;
        made.push(Call::SetUp);
    }
    let mut map = trace.as_os_str().to_owned();
    map.push(".map");
    let layout = PdLayout::new(&PathBuf::from(map), &skel, &crate::pd::SKEL_ENTRY_POINTS)?;
    let file = std::fs::File::open(trace).with_context(|| format!("reading the trace {}", trace.display()))?;
    let windows = trace::windows(BufReader::with_capacity(1 << 20, file), &layout)?;
    if windows.len() != made.len() {
        bail!(
            "the trace holds {} calls into the skel, but {} were made: the packets cannot be given to calls",
            windows.len(),
            made.len()
        );
    }
    Ok(Counted { calls: made.into_iter().zip(windows).collect() })
}
