//! Target `metadata_record`: the metadata record of direct mode (`lpai_direct::metadata::Record::parse`), and a
//! record that parses loaded as the skel loads one (the runtime builds libQnnSystem's descriptions from it in the
//! arena and loads the contract fixture's binary on the contract model with them).
//!
//! Input: the record's bytes. A record that parses must describe itself exactly: written back with the one
//! writer, it gives the same bytes.

use crate::runtime::{contract_backend, exercise, ARENA_BYTES, CONTRACT_BINARY};
use lpai_direct::metadata::{Record, Writer, MAX_GRAPHS, MAX_RANK, MAX_TENSORS};
use lpai_direct_skel::platform::VendorCalls;
use lpai_direct_skel::runtime::{Arena, Binary, Context, Libraries, LoadRequest};

/// The target.
pub fn run(data: &[u8]) {
    let record = match Record::parse(data) {
        Ok(record) => record,
        Err(error) => {
            assert!(error.offset <= data.len(), "an error past the record's end: {error}");
            return;
        }
    };
    assert!((1..=MAX_GRAPHS).contains(&record.graph_count()));
    let mut rewritten = vec![0u8; data.len()];
    let mut writer = Writer::new(&mut rewritten);
    writer.header(record.graph_count() as u32, &record.binary_hash());
    for graph in record.graphs() {
        assert!(graph.inputs.len() <= MAX_TENSORS && graph.outputs.len() <= MAX_TENSORS);
        writer.graph(graph.name, graph.inputs.len() as u32, graph.outputs.len() as u32);
        for tensor in graph.inputs.chain(graph.outputs) {
            assert!(tensor.rank as usize <= MAX_RANK, "{tensor:?}");
            assert!(tensor.native_bytes().is_some(), "a tensor the record checked has no size: {tensor:?}");
            writer.tensor(&tensor);
        }
    }
    assert_eq!(writer.finish(), Ok(data.len()), "the record does not write back to its own length");
    assert_eq!(rewritten, data, "the record does not write back to the same bytes");
    let _ = lpai_net_run::metadata::describe(&record);

    let _serial = crate::serial::lock();
    let Some(backend) = contract_backend() else { panic!("the contract model's backend does not load") };
    let mut memory = vec![0u8; ARENA_BYTES];
    let arena = Arena::new(&mut memory);
    let libraries = Libraries::new(backend, None);
    let request = LoadRequest { record: Some(record), ..LoadRequest::new(Binary::Copy(CONTRACT_BINARY)) };
    let loaded = Context::load(&VendorCalls::lock(), &libraries, &arena, &request);
    if let Ok(mut context) = loaded {
        exercise(&mut context);
    }
}
