//! Fuzzes the model file parser of the contract model (a model of the documented LPAI contract, not the vendor
//! library): random well-formed files parse, and truncated, bit-flipped and random files never panic; the parser,
//! the system library (30010) and contextCreateFromBinary (5005) always agree.

mod common;

use common::*;
use lpai_contract_model::format::{Lpcm, UFIXED_POINT_16, UFIXED_POINT_8};
use lpai_contract_model::take_log_lines;
use lpai_contract_model::writer::{self, GraphSpec, TensorSpec};
use lpai_direct::qnn::{BinaryInfo, ContextConfig};
use std::ptr::{null, null_mut};

/// Names, dimensions and tensors a random file borrows.
struct Storage {
    names: Vec<String>,
    dims: Vec<Vec<u32>>,
}

/// A random well-formed file.
fn random_file(random: &mut fastrand::Rng) -> Vec<u8> {
    let graph_count = 1 + random.u64(..4) as usize;
    let mut storage = Storage { names: Vec::new(), dims: Vec::new() };
    let mut shapes = Vec::new(); // (graph, inputs, outputs), each tensor (name index, dims index, wide, source)
    for graph in 0..graph_count {
        storage.names.push(format!("graph_{graph}_{}", random.u64(..1000)));
        let (inputs, outputs) = (1 + random.u64(..4) as usize, 1 + random.u64(..4) as usize);
        let mut tensors = Vec::new();
        for index in 0..inputs + outputs {
            storage.names.push(format!("t{index}"));
            let rank = 1 + random.u64(..4) as usize;
            storage.dims.push((0..rank).map(|_| 1 + random.u64(..6) as u32).collect());
            let source = if index < inputs { 0 } else { random.u64(..inputs as u64) as u32 };
            tensors.push((storage.names.len() - 1, storage.dims.len() - 1, random.u64(..2) == 1, source));
        }
        shapes.push((storage.names.len() - inputs - outputs - 1, inputs, tensors));
    }
    let mut specs: Vec<Vec<TensorSpec<'_>>> = Vec::new();
    for (_, _, tensors) in &shapes {
        specs.push(
            tensors
                .iter()
                .enumerate()
                .map(|(index, &(name, dims, wide, source))| TensorSpec {
                    name: &storage.names[name],
                    id: 100 + index as u32,
                    data_type: if wide { UFIXED_POINT_16 } else { UFIXED_POINT_8 },
                    scale: 0.5,
                    offset: -(random.u64(..200) as i32),
                    dims: &storage.dims[dims],
                    source,
                    multiplier: random.u64(..) as i32,
                    addend: random.u64(..) as i32,
                    shift: random.u64(..32) as u32,
                    step: random.u64(..) as i32,
                })
                .collect(),
        );
    }
    let graphs: Vec<GraphSpec<'_>> = shapes
        .iter()
        .zip(&specs)
        .map(|((name, inputs, _), tensors)| GraphSpec {
            name: &storage.names[*name],
            scratch_bytes: 4096,
            persistent_bytes: 16 + random.u64(..100) as u32,
            early_every: random.u64(..4) as u32,
            inputs: &tensors[..*inputs],
            outputs: &tensors[*inputs..],
        })
        .collect();
    let payload = random.u64(..200) as usize;
    let mut bytes = vec![0; writer::file_bytes(&graphs, payload)];
    assert!(writer::write(&graphs, &mut bytes).is_some());
    bytes
}

/// Feeds `bytes` to the parser, the system library and contextCreateFromBinary; all three must agree.
fn verdicts(bytes: &[u8], backend: lpai_direct::qnn::Handle, system: lpai_direct::qnn::Handle) -> bool {
    let parsed = Lpcm::parse(bytes).is_ok();
    let binary = Buffer::of(bytes);
    let (mut info, mut size): (*const BinaryInfo, u64) = (null(), 0);
    let get = system_table().system_context_get_binary_info.unwrap();
    // SAFETY: a valid buffer and out-pointers.
    let described = code(unsafe { get(system, binary.ptr().cast(), binary.len as u64, &mut info, &mut size) });
    let (created, context) = create_context(backend, &binary, &[ContextConfig::persistent_binary(true)]);
    if created == 0 {
        // SAFETY: a live context on a binary still alive.
        assert_eq!(unsafe { lpai_table().context_free.unwrap()(context, null_mut()) }, 0);
    }
    let expected = if parsed { (0, 0) } else { (30010, 5005) };
    assert_eq!((described, created), expected, "parser says {parsed} for {bytes:02x?}");
    let lines = take_log_lines();
    assert_eq!(lines.len(), if parsed { 0 } else { 2 }, "{lines:?}");
    assert!(lines.iter().all(|line| line.starts_with("contract: rule binary-format: ")), "{lines:?}");
    parsed
}

#[test]
fn random_truncated_flipped_and_noise_files_never_panic() {
    let _serial = serial();
    let backend = create_backend();
    let mut system = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { system_table().system_context_create.unwrap()(&mut system) }, 0);
    let mut random = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
    let (mut good, mut bad) = (0, 0);
    for round in 0..60 {
        let file = random_file(&mut random);
        assert!(verdicts(&file, backend, system), "round {round}: a well-formed file was refused");
        for length in (0..file.len()).step_by(1 + round % 7) {
            assert!(!verdicts(&file[..length], backend, system), "a truncated file was accepted");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert!(!verdicts(&longer, backend, system));
        for _ in 0..40 {
            let mut flipped = file.clone();
            for _ in 0..1 + random.u64(..3) {
                let at = random.u64(..flipped.len() as u64) as usize;
                flipped[at] ^= 1 << random.u64(..8);
            }
            if verdicts(&flipped, backend, system) {
                good += 1;
            } else {
                bad += 1;
            }
        }
        let mut noise = file.clone();
        noise[16..].iter_mut().for_each(|byte| *byte = random.u64(..) as u8);
        verdicts(&noise, backend, system);
    }
    println!("bit flips: {good} well-formed and {bad} malformed files");
    assert!(good > 100 && bad > 100, "flips gave {good} good and {bad} bad files: not a useful mix");
    // SAFETY: live handles, freed once.
    unsafe {
        assert_eq!(system_table().system_context_free.unwrap()(system), 0);
        assert_eq!(lpai_table().backend_free.unwrap()(backend), 0);
    }
}
