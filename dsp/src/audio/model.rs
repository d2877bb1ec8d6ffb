//! The audio module's model: an embedding on libraries and an arena of its own (the context binary copied or read
//! into the arena, or the framework's persistent memory used in place), the window over the first input and the
//! result record, in memory from the PD heap taken when the model is set and released when it drops. One inference
//! quantizes the window into the first input, runs graphExecute and dequantizes the first output into the record.

use super::config::Config;
use super::format::{Channel, Sample};
use super::ids::{ResultHeader, RESULT_HEADER_BYTES};
use super::stack::Job;
use super::window::Window;
use crate::embed::{Direction, Embed};
use crate::platform::{Memory, Shared};
use crate::runtime::placement::room_for_copy;
use crate::runtime::quantize::Encoding;
use crate::runtime::{BackendOptions, Binary, ContextOptions, Execution, GraphOptions, Island, Libraries};
use crate::runtime::{LoadRequest, OpenError, Owned, RuntimeError};
use lpai_direct::codec::copy_prefix;
use lpai_direct::qnn::lpai;
use lpai_direct::quantize::{dequantize, quantize};

/// Arena bytes for the tensors and the backend's scratch and persistent memory; room for the binary's copy comes on
/// top (a persistent binary the backend can use where it is leaves that room unused).
const ARENA_HEADROOM: usize = 512 * 1024;

/// Why a model could not be set.
#[derive(Debug)]
pub enum ModelError {
    /// The PD heap could not give the model's memory.
    NoMemory,
    /// The runtime refused or failed (reading the binary's file included).
    Runtime(RuntimeError),
    /// The model's first input or output cannot be converted from or to float32.
    NotConvertible,
}

impl From<RuntimeError> for ModelError {
    fn from(error: RuntimeError) -> ModelError {
        ModelError::Runtime(error)
    }
}

impl From<OpenError> for ModelError {
    fn from(error: OpenError) -> ModelError {
        ModelError::Runtime(error.error)
    }
}

/// A model's load, made on the module's load stack ([`super::stack::LoadStack::run`]), where the vendor libraries'
/// start-up code may take what it needs: a model loaded into `slot` (empty), `result` saying how that went.
pub struct Loading<'s, 'a> {
    /// The module's model, empty.
    pub slot: &'s mut Option<Model>,
    /// The configuration.
    pub config: &'a Config,
    /// The context binary, taken by the load.
    pub binary: Option<Binary<'static, 'a>>,
    /// Its metadata record, when given.
    pub record: Option<&'a [u8]>,
    /// The load's outcome.
    pub result: Result<(), ModelError>,
}

impl Job for Loading<'_, '_> {
    fn run(&mut self) {
        if let Some(binary) = self.binary.take() {
            self.result = Model::load(self.slot, self.config, binary, self.record);
        }
    }
}

/// A model's free, made on the stack it was loaded on: its context, backend and libraries freed.
pub struct Freeing<'s>(pub &'s mut Option<Model>);

impl Job for Freeing<'_> {
    fn run(&mut self) {
        *self.0 = None;
    }
}

/// A loaded model: the embedding on its own libraries and arena, the window, the result record.
pub struct Model {
    embed: Embed<Owned>,
    window: Window<Memory>,
    /// The result record: its header, then the first output as float32.
    record: Memory,
    input: Encoding,
    output: Encoding,
    inferences: u32,
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
        graph: GraphOptions { perf, affinity, memory: config.memory, ..GraphOptions::default() },
        ..ContextOptions::default()
    }
}

impl Model {
    /// Opens the configured libraries, registers the configuration's op packages on them and loads `binary` (its metadata from libQnnSystem, or from `record` when
    /// given), with a window of the first input's elements and an inference every `hop` samples (0: the window).
    /// An in-place binary (the framework's persistent memory) must stay until the model drops.
    ///
    /// The model is written into `slot` (it holds the context, which is large), so no copy of it is returned
    /// through the caller's stack; after a failure `slot` is left as it was.
    pub fn load(
        slot: &mut Option<Model>,
        config: &Config,
        binary: Binary<'static, '_>,
        record: Option<&[u8]>,
    ) -> Result<(), ModelError> {
        let system = (!config.system_library.is_empty()).then(|| config.system_library.as_c_str());
        let libraries = Libraries::open(config.backend.as_c_str(), system, &BackendOptions::default())?;
        for (path, interface_provider, target) in config.op_packages.iter() {
            libraries.register_op_package(path, interface_provider, target)?;
        }
        let properties = *libraries.backend().properties();
        let libraries = Shared::new(libraries).map_err(|_| ModelError::NoMemory)?;
        let copy = room_for_copy(binary.length()?, &properties).ok_or(ModelError::NoMemory)?;
        let arena = copy.checked_add(ARENA_HEADROOM).and_then(Memory::allocate).ok_or(ModelError::NoMemory)?;
        let mut embed = Embed::new(Owned::new(libraries, arena));
        let mut request = LoadRequest::new(binary).with_options(options(config));
        if let Some(record) = record {
            request = request.with_record(record)?;
        }
        embed.load(&request)?;
        let (input, output) = (embed.tensor(Direction::Input, 0)?, embed.tensor(Direction::Output, 0)?);
        let (Some(input_encoding), Some(output_encoding)) = (input.encoding, output.encoding) else {
            return Err(ModelError::NotConvertible);
        };
        let ring = input.elements.checked_mul(4).and_then(Memory::allocate);
        let record_bytes = output.elements.checked_mul(4).and_then(|bytes| bytes.checked_add(RESULT_HEADER_BYTES));
        let (Some(ring), Some(mut record)) = (ring, record_bytes.and_then(Memory::allocate)) else {
            return Err(ModelError::NoMemory);
        };
        record.bytes_mut().fill(0);
        *slot = Some(Model {
            embed,
            window: Window::new(ring, usize::try_from(config.hop).unwrap_or(usize::MAX)),
            record,
            input: input_encoding,
            output: output_encoding,
            inferences: 0,
        });
        Ok(())
    }

    /// Samples in the window (the first input's elements).
    pub fn window_length(&self) -> usize {
        self.window.length()
    }

    /// Elements of the first output (float32 values in the record).
    pub fn output_elements(&self) -> usize {
        self.record.size().saturating_sub(RESULT_HEADER_BYTES) / 4
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
        let record = self.record.bytes_mut();
        let (header, floats) = record.split_at_mut(RESULT_HEADER_BYTES.min(record.len()));
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
        self.record.bytes()
    }

    /// Forgets the window and the count (ALGORITHMIC_RESET).
    pub fn reset(&mut self) {
        self.window.reset();
        self.inferences = 0;
        self.record.bytes_mut().fill(0);
    }

    /// Takes samples of one channel into the window until an inference is due ([`Window::take`]).
    pub fn take(&mut self, samples: Channel<'_>, sample: Sample) -> (usize, bool) {
        self.window.take(samples, sample)
    }

    /// Starts the window again, empty, with an inference every `hop` samples (0: the window); the count and the
    /// last record stay.
    pub fn restart(&mut self, hop: u32) {
        self.window.restart(usize::try_from(hop).unwrap_or(usize::MAX));
    }
}
