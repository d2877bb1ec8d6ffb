//! The runtime on the contract model of libQnnLpai (built in), as the targets that end in a load use it: the
//! backend, an arena, the contract fixture's binary, and a walk over every graph of a loaded context.

use lpai_direct_skel::platform::libraries::{
    register_builtin_libraries, BuiltinLibrary, BuiltinRefused, BuiltinSymbol,
};
use lpai_direct_skel::runtime::{Backend, BackendOptions, Context};

/// The contract model of libQnnLpai and its system library as built-in libraries, under
/// `lpai_contract_model::LPAI_LIBRARY_NAME` and `SYSTEM_LIBRARY_NAME`.
pub static CONTRACT_MODEL: [BuiltinLibrary; 2] = [
    BuiltinLibrary {
        name: lpai_contract_model::LPAI_LIBRARY_NAME,
        symbols: &[BuiltinSymbol::backend_providers(lpai_contract_model::lpai_providers)],
    },
    BuiltinLibrary {
        name: lpai_contract_model::SYSTEM_LIBRARY_NAME,
        symbols: &[BuiltinSymbol::system_providers(lpai_contract_model::system_providers)],
    },
];

/// Registers [`CONTRACT_MODEL`] (again: fine).
pub fn register_contract_model() -> Result<(), BuiltinRefused> {
    register_builtin_libraries(&CONTRACT_MODEL)
}

/// `contract_single`'s context binary: the one context binary the contract model's backend creates contexts from.
pub const CONTRACT_BINARY: &[u8] = include_bytes!("../../fixtures/contract_single/contract_single.bin");

/// Bytes of each load's arena: the binary, tensors and LPAI memories of anything the fuzzers describe fit, a
/// description with huge tensors does not (and is refused by name).
pub const ARENA_BYTES: usize = 1 << 20;

/// The contract model's backend, registered as a built-in library and loaded.
pub fn contract_backend() -> Option<Backend> {
    register_contract_model().ok()?;
    Backend::load(lpai_contract_model::LPAI_LIBRARY_NAME, &BackendOptions::default()).ok()
}

/// Walks a loaded context as the skel does: every graph's name and tensors, float input written, one execute,
/// outputs read back in both forms; checks what the runtime answers against what it said about the tensors.
pub fn exercise(context: &mut Context<'_>) {
    for index in 0..context.graph_count() {
        let Some(graph) = context.graph_mut(index) else { panic!("graph {index} of {} missing", index + 1) };
        let _ = (graph.name(), graph.c_name(), graph.lpai_memory());
        for input in 0..graph.input_count() {
            let info = graph.input(input).expect("an input the count includes");
            let (bytes, elements) = (info.bytes, info.elements);
            let float = vec![0u8; elements.saturating_mul(4).min(1 << 20)];
            let _ = graph.write_input_float(input, &float);
            let native = graph.input_bytes_mut(input).map(|buffer| buffer.len());
            assert!(native.is_none_or(|length| length == bytes), "input {input}: {native:?} bytes, not {bytes}");
        }
        if graph.execute_frame().is_err() {
            continue;
        }
        for output in 0..graph.output_count() {
            let info = graph.output(output).expect("an output the count includes");
            let (bytes, elements) = (info.bytes, info.elements);
            let native = graph.output_bytes(output).map(<[u8]>::len);
            assert!(native.is_none_or(|length| length == bytes), "output {output}: {native:?} bytes, not {bytes}");
            let mut float = vec![0u8; elements.saturating_mul(4).min(1 << 20)];
            let _ = graph.read_output_float(output, &mut float);
        }
    }
}
