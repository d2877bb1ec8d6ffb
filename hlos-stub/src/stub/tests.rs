//! The stub against a scripted transport: answers that need more room get one retry; the default transport
//! falls back to local with the reason.

use super::*;
use lpai_direct::codec::RemoteArg;
use std::cell::Cell;
use std::rc::Rc;

/// Answers every `describe` with success and the next needed length from `lengths`, counting the calls.
struct Answering {
    lengths: Vec<u32>,
    invokes: Rc<Cell<usize>>,
}

impl Transport for Answering {
    fn name(&self) -> &'static str {
        "answering"
    }

    fn place(&self) -> String {
        "the test".into()
    }

    fn open(&mut self, _uri: &CStr) -> Result<u64, i32> {
        Ok(1)
    }

    unsafe fn invoke(&mut self, _handle: u64, _scalars: u32, args: *mut RemoteArg) -> i32 {
        let call = self.invokes.get();
        self.invokes.set(call + 1);
        assert!(call < 8, "the stub keeps calling");
        let length = self.lengths[call.min(self.lengths.len() - 1)];
        let primary_out = codec::describe::METHOD.primary_out_arg().unwrap();
        // SAFETY: describe's primary output holds its u32 description_bytes at offset 0.
        unsafe { (*args.add(primary_out)).buf.pv.cast::<u32>().write_unaligned(length) };
        0
    }

    fn close(&mut self, _handle: u64) -> i32 {
        0
    }
}

fn describe_bytes(lengths: Vec<u32>) -> (Result<Vec<u8>, StubError>, usize) {
    let invokes = Rc::new(Cell::new(0));
    let transport = Answering { lengths, invokes: invokes.clone() };
    let mut stub = Stub::open(Box::new(transport), c"uri").unwrap();
    use codec::describe as m;
    let result = stub.call_for_bytes(m::METHOD, (m::DESCRIPTION, m::DESCRIPTION_BYTES), |e| {
        e.i32(m::CONTEXT_ID, 0)?.u32(m::GRAPH, 0).map(drop)
    });
    (result, invokes.get())
}

#[test]
fn a_bigger_answer_gets_exactly_one_retry() {
    let (bytes, invokes) = describe_bytes(vec![5000, 5000]);
    assert_eq!((bytes.unwrap().len(), invokes), (5000, 2));
    let (bytes, invokes) = describe_bytes(vec![100]);
    assert_eq!((bytes.unwrap().len(), invokes), (100, 1));
    let (bytes, invokes) = describe_bytes(vec![5000, 6000, 7000]);
    assert!(matches!(bytes, Err(StubError::Malformed { method: "describe" })), "{bytes:?}");
    assert_eq!(invokes, 2);
}

#[test]
fn the_default_transport_falls_back_to_local_with_the_reason() {
    let (_, unavailable) = default_transport_trying(
        fastrpc::FastRpcOptions { libraries: vec!["/nonexistent/libadsprpc.so".into()], ..Default::default() },
        true,
    );
    assert!(unavailable.is_some_and(|why| why.tried.contains("/nonexistent/libadsprpc.so")));
    let (transport, unavailable) = default_transport_trying(fastrpc::FastRpcOptions::default(), false);
    assert_eq!((transport.name(), unavailable.is_none()), ("local", true));
}
