//! The audio module as SPF drives it through CAPI: its static properties, its state in the instance memory the
//! framework allocates, the properties and parameters it takes, one `process` per frame (the audio passed through
//! untouched, an inference every hop of the chosen channel, the result raised to a registered client) and `end`.
//! The exported C entry points and function table are the `lpai-direct-capi` crate's (`dsp/capi`).

use super::config::Config;
use super::format::{self, PcmFormat, SampleClock};
use super::frame::{self, Frame};
use super::ids::{EVENT_ID_RESULT, PARAM_ID_CONFIG, PARAM_ID_METADATA, PARAM_ID_MODEL, PARAM_ID_MODEL_PATH};
use super::ids::{PARAM_ID_RESULT, RESULT_HEADER_BYTES};
use super::model::{Freeing, Loading, Model, ModelError};
use super::properties::{entries, word, Access, Payload};
use super::stack::LoadStack;
use crate::log;
use crate::platform::{Level, Memory, Message};
use crate::runtime::{Binary, PersistentBinary};
use core::ffi::CStr;
use core::mem::{offset_of, size_of};
use core::ptr::NonNull;
use lpai_direct::capi::{self, event, media_format, property, stream_flags};
use lpai_direct::capi::{Buffer, CapiError, EventCallbackInfo, EventInfo, FunctionTable, Instance, PortInfo};
use lpai_direct::capi::{EventDataToDspClientV2, RegisterEventToDspClientV2, StreamData};
use lpai_direct::capi::{EBADPARAM, EFAILED, ENEEDMORE, ENOMEMORY, ENOTREADY, EOK, EUNSUPPORTED};
use lpai_direct::codec::copy_prefix;

/// "LPCA": a live module's state; cleared by `end`.
const MAGIC: u32 = u32::from_le_bytes(*b"LPCA");
/// Stack a call into the module may need, on SPF's thread, on top of the deepest point where its own code calls
/// foreign code (libQnnLpai's graphExecute, the framework's callback, the PD's services), whose frames cannot be
/// measured here: an allowance to confirm on a device. The vendor libraries' load and free do not run there but on
/// the module's load stack ([`super::stack`], sized by `load_stack=`).
pub const FOREIGN_STACK_BYTES: u32 = 4096;
/// Stack the module asks for (STACK_SIZE): its deepest own use, measured by `lpai-stack-check --capi-module` on its
/// Hexagon build (set_param loading a model: the benchmarks' `capi_stack_worst_bytes`; the check follows the load
/// onto the load stack, so the figure covers both), with [`FOREIGN_STACK_BYTES`] on top of that entry, rounded up
/// to 1 KiB. `tests/stack_and_panic.rs` holds it to the measurement: at least the need, less than 2 KiB above it.
/// SPF gives the container thread the largest STACK_SIZE of its modules plus 1 KiB for its own frames
/// (`gen_cntr_get_thread_stack_size`); `tests/capi_harness.rs` runs the module on a stack of exactly that size.
pub const STACK_BYTES: u32 = 10_240;
/// What the module's own code costs on the DSP, for its KPPS and BANDWIDTH votes, as `lpai-packet-bench` measures
/// it on the virtual aDSP (`target/bench/figures.json`, which fails when a figure outgrows these): packets per
/// `process` call (167 for a frame that runs no inference, since the frame is read in any of CAPI's four layouts;
/// 116 before), per inference (541) and per element of its conversions (7.22: each sample converted into the window,
/// each window element quantized, each output dequantized).
pub const PACKETS_PER_FRAME: u64 = 170;
/// See [`PACKETS_PER_FRAME`].
pub const PACKETS_PER_INFERENCE: u64 = 550;
/// See [`PACKETS_PER_FRAME`].
pub const PACKETS_PER_ELEMENT: u64 = 8;
/// Frames a second of SPF's shortest frame (1 ms: `sampling_rate / 1000` samples), which the votes assume until
/// the first `process` call shows the frame the module gets.
const SHORTEST_FRAMES_PER_SECOND: u32 = 1000;
/// Bytes of code fetched per packet with no cache (four 4-byte instructions at most).
const CODE_BYTES_PER_PACKET: u64 = 16;
/// The bit of a heap id that marks an island heap (SPF's POSAL_HEAP_ID_ISLAND_BIT_MASK, `posal_memory.h`). SPF gives
/// a module in an island container an island heap (graph_utils.c, APM_MODULE_PROP_ID_HEAP_ID) in HEAP_ID, and its
/// generic topology acts on ISLAND_VOTE only in a container whose heap is an island one, answering it elsewhere
/// with an error line ("not required for modules in Non Island container", gen_topo_capi_cb_handler_island.c).
const ISLAND_HEAP_BIT: u32 = 0x8;
/// Bytes of a version 2 media format payload SPF sends and the module keeps to echo as its output format.
const FORMAT_BYTES: usize = media_format::V2_BYTES_SENT;

/// A client registered for the result event.
#[derive(Clone, Copy)]
struct Client {
    dest_address: u64,
    token: u32,
}

/// The module's state, at the start of the instance memory the framework allocates (INIT_MEMORY_REQUIREMENT bytes,
/// 8-aligned): the CAPI instance (its function table) first, so `capi_t*` is the state's address.
#[repr(C)]
pub struct Module {
    instance: Instance,
    magic: u32,
    events: Option<EventCallbackInfo>,
    heap_id: u32,
    format: Option<PcmFormat>,
    format_bytes: [u8; FORMAT_BYTES],
    config: Config,
    /// Samples per channel of the frame the votes are for: the last `process` call's, or SPF's shortest frame
    /// (1 ms) since the input format.
    frame: u32,
    /// Microseconds of a count of samples at the format's rate (a result's timestamp).
    clock: SampleClock,
    client: Option<Client>,
    /// PARAM_PERSISTENCE_INFO registered PARAM_ID_MODEL: its payload is used in place.
    persistent_model: bool,
    /// A copy of PARAM_ID_LPAI_DIRECT_METADATA's record, for the next model.
    metadata: Option<(Memory, usize)>,
    model: Option<Model>,
    /// The stack the model was loaded on, kept to free it on: there whenever `model` is.
    stack: Option<LoadStack>,
}

/// Bytes of instance memory the module needs (INIT_MEMORY_REQUIREMENT).
pub const INSTANCE_BYTES: usize = size_of::<Module>();

/// Answers one static property (also asked again through `get_properties`); `None` when the module does not know
/// it.
fn static_property(id: u32, payload: &mut Payload<'_>) -> Option<Result<(), CapiError>> {
    let answer = |payload: &mut Payload<'_>, bytes: &[u8]| Some(payload.answer(bytes));
    match id {
        property::INIT_MEMORY_REQUIREMENT => answer(payload, &(INSTANCE_BYTES as u32).to_ne_bytes()),
        property::STACK_SIZE => answer(payload, &STACK_BYTES.to_ne_bytes()),
        property::IS_INPLACE => answer(payload, &[1]),
        property::REQUIRES_DATA_BUFFERING => answer(payload, &[0]),
        property::NUM_NEEDED_FRAMEWORK_EXTENSIONS => answer(payload, &0u32.to_ne_bytes()),
        property::INTERFACE_EXTENSIONS => Some(no_interface_extensions(payload)),
        _ => None,
    }
}

/// INTERFACE_EXTENSIONS: the framework lists the extensions it asks about; the module supports none of them.
fn no_interface_extensions(payload: &mut Payload<'_>) -> Result<(), CapiError> {
    let filled = payload.data()?;
    let count = word(filled).ok_or(ENEEDMORE)? as usize;
    let filled = filled.len();
    // After the count, padded to the pointer's alignment, one descriptor per extension: id, is_supported, buffer.
    let first = size_of::<usize>().max(4);
    let descriptor = size_of::<capi::InterfaceExtensionDescriptor>();
    let supported_at = core::mem::offset_of!(capi::InterfaceExtensionDescriptor, is_supported);
    let needed = count.checked_mul(descriptor).and_then(|bytes| bytes.checked_add(first)).ok_or(EBADPARAM)?;
    let room = payload.room();
    if room.len() < needed {
        return Err(ENEEDMORE);
    }
    for at in (0..count).map(|index| first + index * descriptor + supported_at) {
        if let Some(supported) = room.get_mut(at) {
            *supported = 0;
        }
    }
    payload.set_length(filled.max(needed));
    Ok(())
}

/// Answers the framework's static queries: every property of `static_properties`; the init list is not needed.
///
/// # Safety
/// As for [`entries`].
pub unsafe fn get_static_properties(static_properties: *mut capi::PropertyList) -> CapiError {
    let mut result = EOK;
    // SAFETY: forwarded.
    for (id, _, payload) in unsafe { entries(static_properties, Access::Write) } {
        let Some(mut payload) = payload else {
            result |= EBADPARAM;
            continue;
        };
        match static_property(id, &mut payload) {
            Some(answer) => result |= answer.err().unwrap_or(EOK),
            None => {
                payload.set_length(0);
                result |= EUNSUPPORTED;
            }
        }
    }
    result
}

impl Module {
    /// Sets up the module's state at `instance` with `table` and the init properties.
    ///
    /// # Safety
    /// `instance` is the framework's instance memory: INIT_MEMORY_REQUIREMENT bytes, 8-aligned, writable, used by
    /// nothing else until `end`; `init_properties` as for [`entries`].
    pub unsafe fn init(
        instance: *mut Instance,
        table: &'static FunctionTable,
        init_properties: *mut capi::PropertyList,
    ) -> CapiError {
        let state = instance.cast::<Module>();
        if state.is_null() || !state.is_aligned() {
            return EBADPARAM;
        }
        let module = Module {
            instance: Instance { table },
            magic: MAGIC,
            events: None,
            heap_id: 0,
            format: None,
            format_bytes: [0; FORMAT_BYTES],
            config: Config::default(),
            frame: 0,
            clock: SampleClock::of(0),
            client: None,
            persistent_model: false,
            metadata: None,
            model: None,
            stack: None,
        };
        // SAFETY: the caller's promise: room for the state, aligned, nothing there to drop.
        unsafe { state.write(module) };
        // SAFETY: just written; the only reference.
        let module = unsafe { &mut *state };
        // SAFETY: forwarded.
        let result = unsafe { module.set_properties(init_properties) };
        // Until a model is loaded SPF passes the audio through without calling the module.
        module.raise(event::PROCESS_STATE, PortInfo::default(), &mut [0]);
        result
    }

    /// The live module at `instance`; `None` for null, misaligned or ended instances.
    ///
    /// # Safety
    /// `instance` is null or the instance memory [`Module::init`] set up (or that `end` ended), which nothing else
    /// uses during `'i`.
    pub unsafe fn of<'i>(instance: *mut Instance) -> Option<&'i mut Module> {
        let state = instance.cast::<Module>();
        if state.is_null() || !state.is_aligned() {
            return None;
        }
        // SAFETY: aligned and readable (the caller's promise).
        let magic = unsafe { core::ptr::addr_of!((*state).magic).read() };
        // SAFETY: set up by `init` and not ended; nothing else uses it.
        (magic == MAGIC).then(|| unsafe { &mut *state })
    }

    /// Raises `event_id` with `payload` to the framework, if it gave a callback.
    fn raise(&self, event_id: u32, port_info: PortInfo, payload: &mut [u8]) -> CapiError {
        raise_event(self.events, event_id, port_info, payload.as_mut_ptr(), payload.len())
    }

    /// `set_properties`: every property of the list; unknown ones answer EUNSUPPORTED and the list goes on.
    ///
    /// # Safety
    /// As for [`entries`].
    pub unsafe fn set_properties(&mut self, list: *mut capi::PropertyList) -> CapiError {
        let mut result = EOK;
        // SAFETY: forwarded.
        for (id, port, payload) in unsafe { entries(list, Access::Read) } {
            let Some(mut payload) = payload else {
                result |= EBADPARAM;
                continue;
            };
            // Event registration's `actual_data_len` counts its event configuration, which is not inline.
            let limit = match id {
                property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 => size_of::<RegisterEventToDspClientV2>(),
                _ => usize::MAX,
            };
            let answer = match payload.first(limit) {
                Ok(data) => self.set_property(id, port, data),
                Err(code) => Err(code),
            };
            if let Err(code) = answer {
                if code == EUNSUPPORTED {
                    payload.set_length(0);
                }
                result |= code;
            }
        }
        result
    }

    fn set_property(&mut self, id: u32, port: PortInfo, data: &[u8]) -> Result<(), CapiError> {
        match id {
            property::EVENT_CALLBACK_INFO => {
                if data.len() < size_of::<EventCallbackInfo>() {
                    return Err(ENEEDMORE);
                }
                // SAFETY: `data` holds a whole `capi_event_callback_info_t` (checked), read without assuming its
                // alignment; any callback address is a valid `Option` of a function pointer (null is `None`).
                let events = unsafe { data.as_ptr().cast::<EventCallbackInfo>().read_unaligned() };
                self.events = Some(events);
                Ok(())
            }
            property::HEAP_ID => {
                self.heap_id = word(data).ok_or(ENEEDMORE)?;
                Ok(())
            }
            property::PORT_NUM_INFO | property::MODULE_INSTANCE_ID | property::LOGGING_INFO => Ok(()),
            property::INPUT_MEDIA_FORMAT_V2 => self.set_format(format::from_v2(data), data),
            property::INPUT_MEDIA_FORMAT => self.set_format(format::from_v1(data), &[]),
            property::ALGORITHMIC_RESET => {
                if let Some(model) = self.model.as_mut() {
                    model.reset();
                }
                Ok(())
            }
            property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 => {
                // Exactly the struct (`set_properties` read no more): SPF counts its event configuration in
                // `actual_data_len` too, but that is not inline (`event_cfg` points at it), and the result event
                // takes none, so it is never read.
                let fixed = data.get(..size_of::<RegisterEventToDspClientV2>()).ok_or(ENEEDMORE)?;
                let at = |offset| lpai_direct::bytes::Reader::at_offset(fixed, offset);
                let dest_address = at(offset_of!(RegisterEventToDspClientV2, dest_address)).u64().ok_or(ENEEDMORE)?;
                let token = at(offset_of!(RegisterEventToDspClientV2, token)).u32().ok_or(ENEEDMORE)?;
                let event_id = at(offset_of!(RegisterEventToDspClientV2, event_id)).u32().ok_or(ENEEDMORE)?;
                let is_register = at(offset_of!(RegisterEventToDspClientV2, is_register)).u8().ok_or(ENEEDMORE)? != 0;
                if event_id != EVENT_ID_RESULT {
                    return Err(EUNSUPPORTED);
                }
                self.client = is_register.then_some(Client { dest_address, token });
                Ok(())
            }
            property::PARAM_PERSISTENCE_INFO => {
                let is_register = data.first().copied().ok_or(ENEEDMORE)? != 0;
                let param_id = word(data.get(8..).ok_or(ENEEDMORE)?).ok_or(ENEEDMORE)?;
                if param_id != PARAM_ID_MODEL {
                    return Err(EUNSUPPORTED);
                }
                // The framework takes its memory back on deregistration: a model using it in place goes first.
                if self.persistent_model && !is_register {
                    self.unload();
                }
                self.persistent_model = is_register;
                Ok(())
            }
            _ => {
                let _ = port;
                Err(EUNSUPPORTED)
            }
        }
    }

    /// Takes an input media format (`v2` holds its payload to echo, empty for version 1) and raises the same as the
    /// output format.
    fn set_format(&mut self, format: Result<PcmFormat, format::FormatError>, v2: &[u8]) -> Result<(), CapiError> {
        let format = match format {
            Ok(format) => format,
            Err(error) => {
                log!(Level::Error, Message::CapiFormatRefused, error.what);
                return Err(error.code);
            }
        };
        if self.config.channel >= format.channels {
            log_channel_beyond(self.config.channel, format.channels);
            return Err(EBADPARAM);
        }
        let length = format::v2_bytes(format.channels);
        self.format_bytes = [0; FORMAT_BYTES];
        match v2.get(..length) {
            Some(bytes) => {
                copy_prefix(self.format_bytes.get_mut(..length).ok_or(EBADPARAM)?, bytes);
            }
            None => self.write_v2(format),
        }
        self.format = Some(format);
        self.clock = SampleClock::of(format.sampling_rate);
        self.frame = (format.sampling_rate / SHORTEST_FRAMES_PER_SECOND).max(1);
        self.vote();
        let output = PortInfo { is_valid: 1, is_input_port: 0, port_index: 0 };
        let mut echo = self.format_bytes;
        let result =
            self.raise(event::OUTPUT_MEDIA_FORMAT_UPDATED_V2, output, echo.get_mut(..length).unwrap_or(&mut []));
        if result != EOK {
            return Err(result);
        }
        Ok(())
    }

    /// Writes a version 2 payload for `format` (read from a version 1 payload): channel types left 0.
    fn write_v2(&mut self, format: PcmFormat) {
        let (bits, q_factor) = match format.sample {
            format::Sample::Q15 => (16, 15),
            format::Sample::Q32 { q_factor } => (32, q_factor),
        };
        let words = [
            media_format::FIXED_POINT,
            media_format::UNKNOWN,
            media_format::PCM,
            format.channels,
            bits,
            q_factor,
            format.sampling_rate,
            1,
            format.layout.interleaving(),
        ];
        for (slot, value) in self.format_bytes.chunks_exact_mut(4).zip(words) {
            copy_prefix(slot, &value.to_ne_bytes());
        }
    }

    /// `get_properties`: the static properties, the output format and its size, and the data threshold.
    ///
    /// # Safety
    /// As for [`entries`].
    pub unsafe fn get_properties(&mut self, list: *mut capi::PropertyList) -> CapiError {
        let mut result = EOK;
        // SAFETY: forwarded.
        for (id, _, payload) in unsafe { entries(list, Access::Write) } {
            let Some(mut payload) = payload else {
                result |= EBADPARAM;
                continue;
            };
            let length = self.format.map(|format| format::v2_bytes(format.channels));
            let answer = match (id, length) {
                (property::OUTPUT_MEDIA_FORMAT_SIZE, Some(length)) => {
                    payload.answer(&((length - 4) as u32).to_ne_bytes())
                }
                (property::OUTPUT_MEDIA_FORMAT_V2, Some(length)) => {
                    payload.answer(self.format_bytes.get(..length).unwrap_or(&[]))
                }
                // Asked before any input format (SPF's prepare does): refused, nothing kept.
                (property::OUTPUT_MEDIA_FORMAT_SIZE | property::OUTPUT_MEDIA_FORMAT_V2, None) => {
                    payload.set_length(0);
                    Err(ENOTREADY)
                }
                (property::PORT_DATA_THRESHOLD, _) => payload.answer(&1u32.to_ne_bytes()),
                _ => static_property(id, &mut payload).unwrap_or_else(|| {
                    payload.set_length(0);
                    Err(EUNSUPPORTED)
                }),
            };
            result |= answer.err().unwrap_or(EOK);
        }
        result
    }

    /// `set_param`: the model (a path, or its bytes), its metadata record, the configuration.
    ///
    /// # Safety
    /// SPF's persistence contract (CAPI's PARAM_PERSISTENCE_INFO): after the framework registered
    /// PARAM_ID_LPAI_DIRECT_MODEL as persistent (`set_properties`), the bytes of `data` for that parameter stay
    /// where they are, unchanged, until it deregisters the parameter or `end` returns, whichever comes first: the
    /// model uses them in place. Any other payload need only live for the call.
    pub unsafe fn set_param(&mut self, param_id: u32, data: &[u8]) -> CapiError {
        match param_id {
            PARAM_ID_CONFIG => self.set_config(data),
            PARAM_ID_METADATA => {
                let Some(mut memory) = Memory::allocate(data.len().max(1)) else {
                    return ENOMEMORY;
                };
                if let Some(target) = memory.bytes_mut().get_mut(..data.len()) {
                    copy_prefix(target, data);
                }
                self.metadata = Some((memory, data.len()));
                EOK
            }
            PARAM_ID_MODEL_PATH => {
                let Ok(path) = CStr::from_bytes_until_nul(data) else {
                    return EBADPARAM;
                };
                self.set_model(Binary::File(path))
            }
            PARAM_ID_MODEL if self.persistent_model => {
                // SAFETY: the caller's promise: the framework registered this parameter as persistent, so its memory
                // stays, unchanged, until it deregisters it, which unloads the model first (`set_property`), or
                // until `end`, which frees the model.
                let kept: &'static [u8] = unsafe { core::slice::from_raw_parts(data.as_ptr(), data.len()) };
                self.set_model(Binary::InPlace(PersistentBinary::new(kept)))
            }
            PARAM_ID_MODEL => self.set_model(Binary::Copy(data)),
            _ => EUNSUPPORTED,
        }
    }

    /// A new configuration, which replaces the whole of the one before. With a model loaded only `channel` and
    /// `hop` may change (they apply at once, the window restarting empty when either does); a key that shapes the
    /// model is refused, naming it. A channel beyond the input format's is refused. A refusal changes nothing.
    /// Its own function: the configuration it builds stays off the frame of a model's load.
    #[inline(never)]
    fn set_config(&mut self, data: &[u8]) -> CapiError {
        let mut next = self.config.clone();
        if let Err(error) = next.update(data) {
            match error.entry {
                Some(entry) => log!(Level::Error, Message::CapiConfigEntry, error.line, entry, error.what),
                None => log!(Level::Error, Message::CapiConfigLine, error.line, error.what),
            }
            return EBADPARAM;
        }
        if let Some(format) = self.format.filter(|format| next.channel >= format.channels) {
            log_channel_beyond(next.channel, format.channels);
            return EBADPARAM;
        }
        if let Some(key) = self.model.as_ref().and(self.config.model_key_changed(&next)) {
            log!(Level::Error, Message::CapiModelKey, key);
            return EBADPARAM;
        }
        let restart = (next.channel, next.hop) != (self.config.channel, self.config.hop);
        self.config = next;
        if let Some(model) = self.model.as_mut().filter(|_| restart) {
            model.restart(self.config.hop);
        }
        self.vote();
        EOK
    }

    /// Loads a model in place of the one before, on a new load stack of the configured size, then tells the
    /// framework: the votes, process enabled. The island vote is raised only in an island container, the one
    /// place SPF reads it.
    fn set_model(&mut self, binary: Binary<'static, '_>) -> CapiError {
        self.unload();
        let Some(mut stack) = LoadStack::allocate(self.config.load_stack as usize) else {
            log_no_load_stack(self.config.load_stack);
            return ENOMEMORY;
        };
        let record = self.metadata.as_ref().and_then(|(memory, length)| memory.bytes().get(..*length));
        let mut loading =
            Loading { slot: &mut self.model, config: &self.config, binary: Some(binary), record, result: Ok(()) };
        let used = stack.run(&mut loading);
        let result = core::mem::replace(&mut loading.result, Ok(()));
        log_load_stack(used, stack.size());
        self.stack = Some(stack);
        let result = match (used, result) {
            (Err(_), _) => Err(EFAILED),
            (Ok(_), Err(error)) => Err(model_error_code(&error)),
            (Ok(_), Ok(())) => Ok(()),
        };
        if let Err(code) = result {
            self.drop_model();
            return code;
        }
        self.vote();
        if self.heap_id & ISLAND_HEAP_BIT != 0 {
            let vote: u32 = if self.config.island { 0 } else { 1 };
            let _ = self.raise(event::ISLAND_VOTE, PortInfo::default(), &mut vote.to_ne_bytes());
        }
        let _ = self.raise(event::PROCESS_STATE, PortInfo::default(), &mut [1]);
        EOK
    }

    /// Raises KPPS and BANDWIDTH for the model at the format's rate, once both are known: every frame's own work
    /// (`process` calls a second, rounded up, for the frame the module gets, or SPF's shortest before the first
    /// call) and, every hop, the inference's: the samples converted into the window (the last `window` before it at
    /// most), the window quantized, the outputs dequantized, and the rest of its own work (graphExecute itself runs
    /// on LPAI).
    fn vote(&self) {
        let (Some(format), Some(model)) = (self.format, self.model.as_ref()) else {
            return;
        };
        let window = model.window_length() as u64;
        let hop = if self.config.hop == 0 { window } else { u64::from(self.config.hop) }.max(1);
        let rate = u64::from(format.sampling_rate);
        let outputs = model.output_elements() as u64;
        let (input_element, output_element) = model.element_bytes();
        let converted = window.min(hop);
        let elements = converted.saturating_add(window).saturating_add(outputs);
        let per_inference = PACKETS_PER_INFERENCE.saturating_add(PACKETS_PER_ELEMENT.saturating_mul(elements));
        let frames = rate.div_ceil(u64::from(self.frame.max(1))).saturating_mul(PACKETS_PER_FRAME);
        let packets = frames.saturating_add(rate.saturating_mul(per_inference) / hop);
        let kpps = u32::try_from(packets.div_ceil(1000)).unwrap_or(u32::MAX);
        // Per inference: each sample converted read and its float written; the window read and quantized into the
        // input; the outputs read and their floats written into the record.
        let sample_bytes = format.sample.bytes() as u64 + 4;
        let inference_bytes = [
            converted.saturating_mul(sample_bytes),
            window.saturating_mul(4 + input_element as u64),
            outputs.saturating_mul(output_element as u64 + 4),
            RESULT_HEADER_BYTES as u64,
        ];
        let inference_bytes = inference_bytes.iter().fold(0u64, |sum, bytes| sum.saturating_add(*bytes));
        let data = rate.saturating_mul(inference_bytes) / hop;
        let code = packets.saturating_mul(CODE_BYTES_PER_PACKET);
        let _ = self.raise(event::KPPS, PortInfo::default(), &mut kpps.to_ne_bytes());
        let mut bandwidth = [0u8; 8];
        let (code_bytes, data_bytes) = bandwidth.split_at_mut(4);
        copy_prefix(code_bytes, &u32::try_from(code).unwrap_or(u32::MAX).to_ne_bytes());
        copy_prefix(data_bytes, &u32::try_from(data).unwrap_or(u32::MAX).to_ne_bytes());
        let _ = self.raise(event::BANDWIDTH, PortInfo::default(), &mut bandwidth);
    }

    /// Drops the model, and tells the framework to pass the audio through without calling the module.
    fn unload(&mut self) {
        if self.drop_model() {
            let _ = self.raise(event::PROCESS_STATE, PortInfo::default(), &mut [0]);
        }
    }

    /// Drops the model on the stack it was loaded on, then that stack; answers whether there was a model.
    fn drop_model(&mut self) -> bool {
        let had = self.model.is_some();
        match self.stack.take() {
            Some(mut stack) => {
                let _ = stack.run(&mut Freeing(&mut self.model));
            }
            None => self.model = None,
        }
        had
    }

    /// `get_param`: the last result record.
    pub fn get_param(&mut self, param_id: u32, payload: &mut Payload<'_>) -> CapiError {
        match (param_id, self.model.as_ref()) {
            (PARAM_ID_RESULT, Some(model)) => payload.answer(model.record()).err().unwrap_or(EOK),
            (PARAM_ID_RESULT, None) => {
                payload.set_length(0);
                ENOTREADY
            }
            _ => EUNSUPPORTED,
        }
    }

    /// `process`: passes the frame through untouched (the markers propagated, the framework's flags left alone),
    /// votes again when the frame's length changed, and runs an inference each time the window of the chosen
    /// channel is due, answering the client with the result record. A frame it cannot read is refused (EBADPARAM,
    /// the output's lengths 0, saying why).
    ///
    /// # Safety
    /// `input` and `output` are null or the framework's arrays of stream pointers for the call, each entry null or
    /// a valid stream with `buffer_count` valid buffers, each buffer's `data` null or `max_data_len` bytes (for
    /// unpacked V2, the first buffer's); an output buffer is either the same memory as its input buffer (in place)
    /// or memory apart from every input.
    pub unsafe fn process(&mut self, input: *mut *mut StreamData, output: *mut *mut StreamData) -> CapiError {
        // SAFETY: the caller's promise: null or a valid first entry.
        let (Some(input), output) = (unsafe { first_stream(input) }, unsafe { first_stream(output) }) else {
            return EOK;
        };
        // SAFETY: a valid stream (the caller's promise); read by value.
        let stream = unsafe { input.read() };
        let Some(format) = self.format.as_ref() else {
            return EOK;
        };
        if let Some(output) = output {
            // SAFETY: the output stream (the caller's promise).
            unsafe { frame::propagate_markers(&stream, output) };
        }
        // SAFETY: the input's buffers (the caller's promise), read only while this call runs and written by nobody
        // meanwhile (an in-place output gets its lengths set, not its bytes).
        let frame = match unsafe { Frame::read(&stream, format) } {
            Ok(frame) => frame,
            Err(what) => {
                log!(Level::Error, Message::CapiFrameRefused, what);
                if let Some(output) = output {
                    // SAFETY: the output stream and its buffers (the caller's promise).
                    unsafe { frame::clear(output, format) };
                }
                return EBADPARAM;
            }
        };
        let mut result = EOK;
        if let Some(output) = output {
            // SAFETY: the output stream and its buffers (the caller's promise).
            result |= unsafe { frame.pass_through(output) };
        }
        let samples = u32::try_from(frame.samples).unwrap_or(u32::MAX);
        if samples != 0 && samples != self.frame && stream.flags & stream_flags::END_OF_FRAME == 0 {
            self.frame = samples;
            self.vote();
        }
        let Some(model) = self.model.as_mut() else {
            return result;
        };
        let Some(mut samples) = frame.channel(self.config.channel as usize) else {
            return result | EBADPARAM;
        };
        let timestamp = (stream.flags & stream_flags::TIMESTAMP_VALID != 0).then_some(stream.timestamp);
        let mut consumed = 0usize;
        while !samples.is_empty() {
            let (taken, due) = model.take(samples, format.sample);
            consumed = consumed.saturating_add(taken);
            samples = samples.split_at(taken).1;
            if !due {
                break;
            }
            // The timestamp of the window's last sample: the frame's, plus the samples before it in the frame.
            let clock = self.clock;
            let at = timestamp.map_or(0, |start| {
                let offset_us = clock.micros(consumed.saturating_sub(1) as u64);
                u64::try_from(start).unwrap_or(0).saturating_add(offset_us)
            });
            match model.infer(at) {
                Ok(Some(_)) => {
                    if let Some(client) = self.client {
                        result |= raise_result(self.events, client, model.record());
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    log!(Level::Error, Message::CapiInferenceFailed, error);
                    result |= EFAILED;
                }
            }
        }
        result
    }

    /// `end`: frees the model (on its load stack) and the record copy, in that order, and ends the state. It
    /// raises no event: SPF has destroyed the module's bypass before calling `end`, and a PROCESS_STATE now would
    /// make it a new one that nothing frees.
    pub fn end(&mut self) -> CapiError {
        self.drop_model();
        self.metadata = None;
        self.magic = 0;
        EOK
    }
}

/// Raises the result record to the registered client (DATA_TO_DSP_CLIENT_V2).
fn raise_result(events: Option<EventCallbackInfo>, client: Client, record: &[u8]) -> CapiError {
    let length = u32::try_from(record.len()).unwrap_or(u32::MAX);
    // The framework copies the payload before it returns and does not write it.
    let payload = Buffer { data: record.as_ptr().cast_mut().cast(), actual_data_len: length, max_data_len: length };
    let mut data = EventDataToDspClientV2 {
        dest_address: client.dest_address,
        token: client.token,
        event_id: EVENT_ID_RESULT,
        payload,
    };
    let at = (&mut data as *mut EventDataToDspClientV2).cast::<u8>();
    raise_event(events, event::DATA_TO_DSP_CLIENT_V2, PortInfo::default(), at, size_of::<EventDataToDspClientV2>())
}

/// Raises `event_id` with the `bytes` at `payload` to the framework, if it gave a callback.
fn raise_event(
    events: Option<EventCallbackInfo>,
    event_id: u32,
    port_info: PortInfo,
    payload: *mut u8,
    bytes: usize,
) -> CapiError {
    let Some(EventCallbackInfo { callback: Some(callback), context }) = events else {
        return EOK;
    };
    let length = u32::try_from(bytes).unwrap_or(u32::MAX);
    let buffer = Buffer { data: payload.cast(), actual_data_len: length, max_data_len: length };
    let mut info = EventInfo { port_info, payload: buffer };
    // SAFETY: the framework's callback with its own context; `info` and the `bytes` at `payload` (the callers'
    // live slices or structs) live for the call, which copies what it keeps.
    unsafe { callback(context, event_id, &mut info) }
}

/// The first stream of a port array, as a pointer (an output stream may be the input's own).
///
/// # Safety
/// As for [`Module::process`].
unsafe fn first_stream(streams: *mut *mut StreamData) -> Option<NonNull<StreamData>> {
    // SAFETY: null or a valid array (the caller's promise).
    unsafe { streams.as_ref() }.and_then(|first| NonNull::new(*first))
}

/// Logs a channel the input format does not have.
fn log_channel_beyond(channel: u32, channels: u32) {
    log!(Level::Error, Message::CapiChannelBeyond, channel, channels);
}

/// Logs why a model was not set; answers the code that says it.
#[inline(never)]
fn model_error_code(error: &ModelError) -> CapiError {
    match error {
        ModelError::NoMemory => {
            log!(Level::Error, Message::CapiNoMemoryForModel);
            ENOMEMORY
        }
        ModelError::NotConvertible => {
            log!(Level::Error, Message::CapiNotConvertible);
            EBADPARAM
        }
        ModelError::Runtime(error) => {
            log!(Level::Error, Message::CapiLoadFailed, error);
            EFAILED
        }
    }
}

/// Logs a load stack the PD heap could not give.
#[inline(never)]
fn log_no_load_stack(bytes: u32) {
    log!(Level::Error, Message::CapiNoLoadStack, bytes);
}

/// Logs what a load used of its `size`-byte stack: how much (info), over three quarters of it (a warning: set a
/// larger `load_stack=`), or all of it (an error).
#[inline(never)]
fn log_load_stack(used: Result<usize, usize>, size: usize) {
    match used {
        Ok(used) if used.saturating_mul(4) <= size.saturating_mul(3) => {
            log!(Level::Info, Message::CapiLoadStackUsed, used, size)
        }
        Ok(used) => log!(Level::Warn, Message::CapiLoadStackHigh, used, size),
        Err(used) => log!(Level::Error, Message::CapiLoadStackExhausted, used, size),
    }
}
