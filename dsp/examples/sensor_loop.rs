//! A sensor-style loop on the Rust embedding API (`lpai_direct_skel::embed`), a static qemu-hexagon program: the
//! firmware keeps the model in its own memory, the input and output buffers are bound at load, and one frame at a
//! time is fed in and every ready result published.
//!
//! ```text
//! qemu-hexagon -cpu v73 sensor-loop BACKEND SYSTEM_LIBRARY BINARY FRAME...
//! ```
//!
//! The contract model of libQnnLpai is linked in (from the dsp crate's dev-dependency `lpai-contract-model`) and
//! registered as built-in libraries under `libQnnLpaiContract.so` and `libQnnSystemContract.so` (a path's last
//! component is what counts), as firmware registers a libQnnLpai it links into its image. Prints exactly what
//! `dsp/examples/c/sensor_loop.c` prints on stdout (graph, tensors, `frame <i> <output name> <hex bytes>`,
//! `binary in place: yes|no`), timings and the arena's high-water mark on stderr; `tests/embed_api.rs` compares
//! the two. Build: `scripts/build-hexagon.sh` (feature `linux-user`, static, v73).
#![no_std]
#![no_main]

use core::ffi::{c_char, CStr};
use lpai_direct_skel::embed::{Binary, Borrowed, Direction, Embed, Libraries, LoadRequest};
use lpai_direct_skel::platform::libraries::{
    register_builtin_libraries, BuiltinLibrary, BuiltinRefused, BuiltinSymbol,
};
use lpai_direct_skel::platform::linux_user::{exit, write_all};
use lpai_direct_skel::platform::{Current, Platform};
use lpai_direct_skel::runtime::{BackendOptions, PersistentBinary, RuntimeError, TensorInfo};

/// The contract model of libQnnLpai and its system library, linked in as built-in libraries.
static CONTRACT_MODEL: [BuiltinLibrary; 2] = [
    BuiltinLibrary {
        name: lpai_contract_model::LPAI_LIBRARY_NAME,
        symbols: &[BuiltinSymbol::backend_providers(lpai_contract_model::lpai_providers)],
    },
    BuiltinLibrary {
        name: lpai_contract_model::SYSTEM_LIBRARY_NAME,
        symbols: &[BuiltinSymbol::system_providers(lpai_contract_model::system_providers)],
    },
];

/// Most outputs the loop prints.
const MAX_OUTPUTS: usize = 8;

/// The firmware's copy of the model: aligned as a loader would place it, the unused tail its size padding.
#[repr(C, align(256))]
struct Model([u8; 64 * 1024]);

/// The embedding's arena.
#[repr(C, align(128))]
struct ArenaMemory([u8; 256 * 1024]);

/// A file descriptor the loop writes to.
struct Out(i32);

/// Writes parts (said into a line, as the runtime's messages are, then rendered with the core's table) to an
/// [`Out`].
macro_rules! put {
    ($out:expr, $($part:expr),+ $(,)?) => {{
        let mut line = lpai_direct_skel::platform::Line::new();
        $( lpai_direct_skel::platform::Say::say(&$part, &mut line); )+
        write_all($out.0, line.rendered().as_str().as_bytes());
    }};
}

fn write_hex(out: &mut Out, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for chunk in bytes.chunks(64) {
        let mut text = [0u8; 128];
        for (pair, &byte) in text.chunks_mut(2).zip(chunk) {
            if let [high, low] = pair {
                *high = DIGITS[usize::from(byte >> 4)];
                *low = DIGITS[usize::from(byte & 15)];
            }
        }
        write_all(out.0, text.get(..chunk.len() * 2).unwrap_or(&[]));
    }
}

/// `0x` and eight hex digits, as the C example prints a 32-bit value.
fn write_hex32(out: &mut Out, value: u32) {
    write_all(out.0, b"0x");
    write_hex(out, &value.to_be_bytes());
}

fn describe(out: &mut Out, direction: Direction, index: usize, tensor: &TensorInfo<'_>) {
    let side = if direction == Direction::Input { "input" } else { "output" };
    put!(out, side, " ", index, " ", tensor.name, " id ", tensor.id, " type ");
    write_hex32(out, tensor.data_type.0);
    put!(out, " shape ");
    for (at, dimension) in tensor.dimensions.iter().enumerate() {
        put!(out, if at > 0 { "x" } else { "" }, dimension);
    }
    put!(out, " bytes ", tensor.bytes);
    if let Some(quantization) = tensor.quantization {
        put!(out, " scale ");
        write_hex32(out, quantization.scale.to_bits());
        put!(out, " offset ", quantization.offset);
    }
    put!(out, "\n");
}

/// Why the loop stopped.
enum Stop {
    Usage,
    Register(BuiltinRefused),
    Runtime(&'static str, RuntimeError),
    File(&'static str, &'static CStr),
}

fn sensor_loop(arguments: &[&'static CStr]) -> Result<(), Stop> {
    let [_, backend, system, binary, frames @ ..] = arguments else {
        return Err(Stop::Usage);
    };
    if frames.is_empty() {
        return Err(Stop::Usage);
    }
    register_builtin_libraries(&CONTRACT_MODEL).map_err(Stop::Register)?;
    let mut model = Model([0; 64 * 1024]);
    let model_bytes = Current::read_file(binary, &mut model.0).map_err(|_| Stop::File("the context binary", binary))?;
    let options = BackendOptions::default();
    let libraries =
        Libraries::open(backend, Some(system), &options).map_err(|error| Stop::Runtime("open", error.error))?;
    let mut memory = ArenaMemory([0; 256 * 1024]);
    let mut embed = Embed::new(Borrowed::new(&libraries, &mut memory.0));
    let persistent = PersistentBinary::padded(&model.0, model_bytes).ok_or(Stop::File("the context binary", binary))?;
    let request = LoadRequest::new(Binary::InPlace(persistent));
    embed.load(&request).map_err(|error| Stop::Runtime("load", error))?;

    let out = &mut Out(1);
    let (inputs, outputs) = (embed.tensor_count(Direction::Input), embed.tensor_count(Direction::Output));
    let name = embed.graph_name().map_err(|error| Stop::Runtime("graph_name", error))?;
    let graph = embed.graph_index(name).ok_or(Stop::Runtime("graph_index", RuntimeError::NoSuchGraph))?;
    let graphs = embed.graph_count();
    put!(out, "graphs ", graphs, ", graph ", graph, " ", name, ", inputs ", inputs, ", outputs ", outputs, "\n");
    embed.select_graph(graph).map_err(|error| Stop::Runtime("select_graph", error))?;
    for direction in [Direction::Input, Direction::Output] {
        for index in 0..embed.tensor_count(direction) {
            let tensor = embed.tensor(direction, index).map_err(|error| Stop::Runtime("tensor", error))?;
            describe(out, direction, index, &tensor);
        }
    }
    if inputs != 1 || outputs == 0 || outputs > MAX_OUTPUTS {
        return Err(Stop::Runtime("graph", RuntimeError::NoSuchTensor { index: inputs }));
    }

    for (number, &path) in frames.iter().enumerate() {
        // The sensor's frame, straight into the bound input buffer.
        let input = embed.input_mut(0).map_err(|error| Stop::Runtime("input", error))?;
        match Current::read_file(path, input) {
            Ok(read) if read == input.len() => {}
            _ => return Err(Stop::File("a frame file (one frame of the input)", path)),
        }
        let Some(execution) = embed.execute_frame().map_err(|error| Stop::Runtime("execute_frame", error))? else {
            put!(out, "frame ", number, " not ready\n");
            continue;
        };
        for index in 0..outputs {
            let name = embed.tensor(Direction::Output, index).map(|tensor| tensor.name).unwrap_or("?");
            put!(out, "frame ", number, " ", name, " ");
            write_hex(out, embed.output(index).map_err(|error| Stop::Runtime("output", error))?);
            put!(out, "\n");
        }
        put!(Out(2), "sensor-loop: frame ", number, " executed in ", execution.micros(), " us\n");
    }
    let in_place = embed.binary_in_place() == Some(true);
    put!(out, "binary in place: ", if in_place { "yes" } else { "no" }, "\n");
    // The API refuses what it must: each call below is wrong in one way.
    let refused = matches!(embed.input_mut(99), Err(RuntimeError::NoSuchTensor { index: 99 }))
        && embed.select_graph(embed.graph_count()) == Err(RuntimeError::NoSuchGraph)
        && embed.tensor(Direction::Output, 99).is_err()
        && matches!(embed.load(&request), Err(RuntimeError::TooMany { .. }));
    if !refused {
        return Err(Stop::Runtime("a wrong call", RuntimeError::NoSuchGraph));
    }
    put!(out, "refusals: ok\n");
    put!(Out(2), "sensor-loop: arena high-water mark ", embed.arena_used(), " of ", embed.arena_capacity(), " bytes\n");
    Ok(())
}

/// The arguments on the initial stack: argc, then argv's pointers.
///
/// # Safety
/// `initial_stack` is the process's initial stack as Linux lays it out.
unsafe fn arguments(initial_stack: *const u32) -> heapless::Vec<&'static CStr, 64> {
    let mut arguments = heapless::Vec::new();
    // SAFETY: the first word is argc (the caller's promise).
    let count = unsafe { *initial_stack } as usize;
    for index in 0..count {
        // SAFETY: argc pointers follow it, each to a NUL-terminated string alive for the whole program.
        let text = unsafe { *initial_stack.add(1 + index) } as usize as *const c_char;
        // SAFETY: as above.
        if text.is_null() || arguments.push(unsafe { CStr::from_ptr(text) }).is_err() {
            break;
        }
    }
    arguments
}

/// # Safety
/// Called once, by `_start`, with the initial stack.
#[no_mangle]
unsafe extern "C" fn lpai_program_main(initial_stack: *const u32) -> ! {
    // SAFETY: `_start` passes the initial stack.
    let arguments = unsafe { arguments(initial_stack) };
    let error = &mut Out(2);
    match sensor_loop(&arguments) {
        Ok(()) => exit(0),
        Err(Stop::Usage) => {
            put!(error, "usage: sensor-loop BACKEND SYSTEM_LIBRARY BINARY FRAME...\n");
            exit(2)
        }
        Err(Stop::Register(refused)) => {
            put!(error, "sensor-loop: the contract model cannot be registered: ", refused, "\n");
            exit(1)
        }
        Err(Stop::Runtime(step, runtime)) => {
            put!(error, "sensor-loop: ", step, " failed: ", runtime, "\n");
            exit(1)
        }
        Err(Stop::File(what, path)) => {
            put!(error, "sensor-loop: cannot read ", what, " ", path.to_str().unwrap_or("?"), "\n");
            exit(1)
        }
    }
}
