//! The audio module's model: the QNN libraries, the context binary (a copy placed as the backend wants it, used in
//! place, or the framework's persistent memory), the embedding over its own arena, the window over the first input and the result record, in
//! memory from the PD heap taken when the model is set and released, in reverse, when it drops. One inference
//! quantizes the window into the first input, runs graphExecute and dequantizes the first output into the record.

use super::config::Config;
use super::format::Sample;
use super::ids::{ResultHeader, RESULT_HEADER_BYTES};
use super::window::Window;
use crate::embed::{Direction, Embed, Libraries};
use crate::platform::{Current, Memory, Platform, PlatformError};
use crate::runtime::backend::BackendProperties;
use crate::runtime::quantize::Encoding;
use crate::runtime::{ContextOptions, Execution, GraphOptions, Island, PersistentBinary, RuntimeError};
use core::ffi::CStr;
use core::mem::{size_of, ManuallyDrop};
use core::ptr::NonNull;
use lpai_direct::codec::copy_prefix;
use lpai_direct::qnn::lpai;
use lpai_direct::quantize::{dequantize, quantize};

/// Arena bytes for the tensors and the backend's scratch and persistent memory (a persistent binary the backend
/// cannot use where it is gets room for its copy on top).
const ARENA_HEADROOM: usize = 512 * 1024;

/// Where a binary of `length` bytes sits in memory the model allocates for it: at `offset`, a multiple of the
/// backend's start alignment, with `padded` bytes (its size alignment) there, so the backend uses it in place.
#[derive(Clone, Copy)]
struct Placement {
    offset: usize,
    length: usize,
    padded: usize,
}

impl Placement {
    /// Memory for a binary of `length` bytes and where the binary goes in it; `None` when the PD heap cannot give
    /// it or the sizes overflow.
    fn new(length: usize, properties: &BackendProperties) -> Option<(Memory, Placement)> {
        let start = properties.start_alignment.max(1);
        let padded = length.checked_next_multiple_of(properties.size_alignment.max(1))?;
        let memory = Memory::allocate(padded.checked_add(start - 1)?.max(1))?;
        let offset = (memory.bytes().as_ptr() as usize).wrapping_neg().checked_rem(start)?;
        Some((memory, Placement { offset, length, padded }))
    }
}

/// Where the context binary comes from.
pub enum Binary<'p> {
    /// Bytes that live only during the call: the model keeps an aligned copy.
    Copy(&'p [u8]),
    /// A file the PD reads.
    File(&'p CStr),
    /// The framework's memory, registered persistent: used in place.
    Persistent(Persistent),
}

/// Memory the framework keeps for the module (PARAM_PERSISTENCE_INFO): a pointer and a length, not a borrow.
#[derive(Clone, Copy)]
pub struct Persistent {
    start: NonNull<u8>,
    bytes: usize,
}

impl Persistent {
    /// The framework's `bytes` at `start`.
    ///
    /// # Safety
    /// The bytes stay readable and unchanged until the model that uses them drops (the framework keeps a
    /// persistent parameter until it deregisters it, which the module answers by dropping the model first).
    pub unsafe fn new(start: NonNull<u8>, bytes: usize) -> Persistent {
        Persistent { start, bytes }
    }
}

/// Why a model could not be set.
#[derive(Debug)]
pub enum ModelError {
    /// The PD heap could not give the model's memory.
    NoMemory,
    /// The binary's file could not be read.
    File(PlatformError),
    /// The runtime refused or failed.
    Runtime(RuntimeError),
    /// The model's first input or output cannot be converted from or to float32.
    NotConvertible,
}

impl From<RuntimeError> for ModelError {
    fn from(error: RuntimeError) -> ModelError {
        ModelError::Runtime(error)
    }
}

/// A loaded model. `'m` names the model's own memory: the embedding, the window and the record borrow it for
/// `'m`, and nothing borrowed for `'m` leaves the model.
pub struct Model<'m> {
    /// Dropped by hand first: it borrows the libraries and the memory below.
    embed: ManuallyDrop<Embed<'m>>,
    /// In `libraries_memory`; dropped in place after the embedding.
    libraries: NonNull<Libraries>,
    window: Window<'m>,
    /// The result record: its header, then the first output as float32.
    record: &'m mut [u8],
    input: Encoding,
    output: Encoding,
    inferences: u32,
    // The memory, released last (fields drop in order after `Drop::drop`).
    _libraries_memory: Memory,
    _arena: Memory,
    _binary: Option<Memory>,
    _ring: Memory,
    _record: Memory,
}

/// The configuration's LPAI settings for the context (a 0 keeps the documented default).
fn options(config: &Config) -> ContextOptions<'static> {
    let chosen = |value: u32, default: u32| if value == 0 { default } else { value };
    let performance = config.performance;
    let perf = lpai::PerfCfg {
        fps: chosen(performance.fps, lpai::PerfCfg::DEFAULT.fps),
        ftrt_ratio: chosen(performance.ftrt_ratio, lpai::PerfCfg::DEFAULT.ftrt_ratio),
        client_type: lpai::ClientPerfType(chosen(performance.client_type, lpai::PerfCfg::DEFAULT.client_type.0)),
    };
    let affinity = lpai::CoreAffinity {
        affinity: lpai::CoreAffinityType(chosen(performance.affinity, lpai::CoreAffinity::DEFAULT.affinity.0)),
        core_selection: performance.core_selection,
    };
    ContextOptions {
        island: if config.island { Island::AllGraphs } else { Island::Off },
        graph: GraphOptions { perf, affinity, ..GraphOptions::default() },
        ..ContextOptions::default()
    }
}

impl<'m> Model<'m> {
    /// Opens the configured libraries and loads `binary` (its metadata from libQnnSystem, or from `record` when
    /// given), with a window of the first input's elements and an inference every `hop` samples (0: the window).
    pub fn load(config: &Config, binary: Binary<'_>, record: Option<&[u8]>) -> Result<Model<'m>, ModelError> {
        let (backend, system) = (config.backend.as_c_str(), config.system_library.as_c_str());
        let libraries = match config.system_library.is_empty() {
            true => Libraries::open_backend_only(backend)?,
            false => Libraries::open(backend, system)?,
        };
        let mut libraries_memory = Memory::allocate(size_of::<Libraries>()).ok_or(ModelError::NoMemory)?;
        let slot = libraries_memory.bytes_mut().as_mut_ptr().cast::<Libraries>();
        if !slot.is_aligned() {
            return Err(ModelError::NoMemory);
        }
        // SAFETY: the allocation is `size_of::<Libraries>()` bytes, aligned for it (checked), owned by this model.
        unsafe { slot.write(libraries) };
        let libraries = NonNull::new(slot).ok_or(ModelError::NoMemory)?;
        // From here on, a failure drops `guard`, which drops the libraries in place before their memory goes.
        let guard = LibrariesGuard(libraries);
        // SAFETY: written above, dropped only by `guard` or the model, after this use.
        let properties = *unsafe { libraries.as_ref() }.backend().properties();
        // The module's own copy is placed where the backend can use it in place; the framework's persistent bytes
        // are used where they are, or copied into the arena when the backend wants another alignment.
        let (binary_memory, persistent, placement) = match binary {
            Binary::Copy(bytes) => {
                let (mut memory, placement) = Placement::new(bytes.len(), &properties).ok_or(ModelError::NoMemory)?;
                copy_prefix(memory.bytes_mut().get_mut(placement.offset..).unwrap_or_default(), bytes);
                (Some(memory), None, placement)
            }
            Binary::File(path) => {
                let size = Current::file_size(path).map_err(ModelError::File)?;
                let size = usize::try_from(size).map_err(|_| ModelError::NoMemory)?;
                let (mut memory, placement) = Placement::new(size, &properties).ok_or(ModelError::NoMemory)?;
                let target = memory.bytes_mut().get_mut(placement.offset..).unwrap_or_default();
                let read =
                    Current::read_file(path, target.get_mut(..size).unwrap_or_default()).map_err(ModelError::File)?;
                if read != size {
                    // The file shrank between its size and its reading: an input/output error.
                    return Err(ModelError::File(PlatformError::Failed(5)));
                }
                (Some(memory), None, placement)
            }
            Binary::Persistent(persistent) => {
                let placement = Placement { offset: 0, length: persistent.bytes, padded: persistent.bytes };
                (None, Some(persistent), placement)
            }
        };
        let mut binary_memory = binary_memory;
        let copy_room = if persistent.is_some() { placement.length } else { 0 };
        let arena_bytes = copy_room.checked_add(ARENA_HEADROOM).ok_or(ModelError::NoMemory)?;
        let mut arena = Memory::allocate(arena_bytes).ok_or(ModelError::NoMemory)?;
        // SAFETY: the arena and the binary's memory are owned by the model and released after the embedding that
        // borrows them (`Drop`); nothing else uses them while it lives.
        let (arena_bytes, binary_memory_bytes): (&'m mut [u8], &'m [u8]) = unsafe {
            let binary: &'m [u8] = match (&mut binary_memory, persistent) {
                (Some(memory), _) => memory.bytes_for(),
                // SAFETY (of the persistent bytes): `Persistent::new`'s contract.
                (None, Some(persistent)) => core::slice::from_raw_parts(persistent.start.as_ptr(), persistent.bytes),
                (None, None) => &[],
            };
            (arena.bytes_for(), binary)
        };
        let placed = binary_memory_bytes.get(placement.offset..placement.offset + placement.padded).unwrap_or_default();
        let binary = PersistentBinary::padded(placed, placement.length).ok_or(ModelError::NoMemory)?;
        // SAFETY: written above and kept until `Drop` (or the guard) drops it, after the embedding.
        let libraries_ref: &'m Libraries = unsafe { libraries.as_ref() };
        let mut embed = Embed::new(arena_bytes, libraries_ref);
        let options = options(config);
        let loaded = match record {
            Some(record) => embed.load_with_record_and_options(binary, record, &options),
            None => embed.load_with_options(binary, &options),
        };
        let ready = loaded.and_then(|()| {
            let input = embed.tensor(Direction::Input, 0)?;
            let output = embed.tensor(Direction::Output, 0)?;
            Ok((input.encoding, output.encoding, input.elements, output.elements))
        });
        let (input, output, window_length, output_elements) = match ready {
            Ok((Some(input), Some(output), window, elements)) => (input, output, window, elements),
            Ok(_) => {
                drop(embed);
                return Err(ModelError::NotConvertible);
            }
            Err(error) => {
                drop(embed);
                return Err(ModelError::Runtime(error));
            }
        };
        let ring_bytes = window_length.checked_mul(4).ok_or(ModelError::NoMemory)?;
        let record_bytes = output_elements.checked_mul(4).and_then(|bytes| bytes.checked_add(RESULT_HEADER_BYTES));
        let memories = Memory::allocate(ring_bytes).zip(record_bytes.and_then(Memory::allocate));
        let Some((mut ring, mut record_memory)) = memories else {
            drop(embed);
            return Err(ModelError::NoMemory);
        };
        // SAFETY: owned by the model, released after everything that borrows them; used by nothing else.
        let (ring_slice, record): (&'m mut [u8], &'m mut [u8]) =
            unsafe { (ring.bytes_for(), record_memory.bytes_for()) };
        core::mem::forget(guard);
        Ok(Model {
            embed: ManuallyDrop::new(embed),
            libraries,
            window: Window::new(ring_slice, usize::try_from(config.hop).unwrap_or(usize::MAX)),
            record,
            input,
            output,
            inferences: 0,
            _libraries_memory: libraries_memory,
            _arena: arena,
            _binary: binary_memory,
            _ring: ring,
            _record: record_memory,
        })
    }

    /// Samples in the window (the first input's elements).
    pub fn window_length(&self) -> usize {
        self.window.length()
    }

    /// Elements of the first output (float32 values in the record).
    pub fn output_elements(&self) -> usize {
        self.record.len().saturating_sub(RESULT_HEADER_BYTES) / 4
    }

    /// Native bytes per element of the first input and of the first output.
    pub fn element_bytes(&self) -> (usize, usize) {
        (self.input.element_bytes(), self.output.element_bytes())
    }

    /// Runs the due inference on the window: quantizes it into the first input, executes, dequantizes the first
    /// output into the record with `timestamp_us`; answers the execution, or `None` while LPAI needs more frames.
    pub fn infer(&mut self, timestamp_us: u64) -> Result<Option<Execution>, RuntimeError> {
        let element = self.input.element_bytes();
        let (oldest, newest) = self.window.ordered();
        let input = self.embed.input_mut(0)?;
        let split = (oldest.len() / 4).saturating_mul(element).min(input.len());
        let (first, second) = input.split_at_mut(split);
        if !quantize(self.input, oldest, first) || !quantize(self.input, newest, second) {
            return Err(RuntimeError::NoSuchTensor { index: 0 });
        }
        self.window.inferred();
        let Some(execution) = self.embed.execute_frame()? else {
            return Ok(None);
        };
        self.inferences = self.inferences.saturating_add(1);
        let output = self.embed.output(0)?;
        let (header, floats) = self.record.split_at_mut(RESULT_HEADER_BYTES.min(self.record.len()));
        if !dequantize(self.output, output, floats) {
            return Err(RuntimeError::NoSuchTensor { index: 0 });
        }
        let fixed = ResultHeader {
            inferences: self.inferences,
            output_bytes: u32::try_from(floats.len()).unwrap_or(u32::MAX),
            timestamp_us,
            dsp_ticks: execution.ticks,
        };
        copy_prefix(header, &fixed.encode());
        Ok(Some(execution))
    }

    /// The last result record (all zero before the first inference).
    pub fn record(&self) -> &[u8] {
        self.record
    }

    /// Forgets the window and the count (ALGORITHMIC_RESET).
    pub fn reset(&mut self) {
        self.window.reset();
        self.inferences = 0;
        self.record.fill(0);
    }

    /// Takes samples of one channel into the window until an inference is due ([`Window::take`]).
    pub fn take(&mut self, bytes: &[u8], sample: Sample) -> (usize, bool) {
        self.window.take(bytes, sample)
    }
}

/// Drops the libraries in place when a load fails after they were written (not after success: the model's `Drop`
/// does it then).
struct LibrariesGuard(NonNull<Libraries>);

impl Drop for LibrariesGuard {
    fn drop(&mut self) {
        // SAFETY: written by `load` and not dropped yet; nothing borrows them any more (the embedding is gone).
        unsafe { self.0.as_ptr().drop_in_place() };
    }
}

impl Drop for Model<'_> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here, before the libraries and the memory it borrows.
        unsafe { ManuallyDrop::drop(&mut self.embed) };
        // SAFETY: written by `load`, dropped once, here, after the embedding that borrowed them; their memory is
        // released after this, when the fields drop.
        unsafe { self.libraries.as_ptr().drop_in_place() };
    }
}
