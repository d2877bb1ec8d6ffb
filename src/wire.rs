//! Packed little-endian records the skel returns from `describe` and `profile`: one writer (skel side) and one
//! reader (stub side), so both ends read the same layout.
//!
//! A description is `"LPDG" u32 version` + a [`GraphRecord`] + one [`TensorRecord`] per input, then per output.
//! A profile is `"LPPE" u32 version u32 count` + that many [`EventRecord`]s. Text is `u32 length` + UTF-8 bytes.

use crate::bytes::{self, Sink};
use crate::qnn::lpai;

/// `load` / `load_file` flag: ask for QNN's PERSISTENT_BINARY context config.
pub const LOAD_PERSISTENT_BINARY: u32 = 1;
/// `load` / `load_file` flag: every graph in LPAI island mode.
pub const LOAD_ISLAND: u32 = 2;
/// `load` / `load_file` flag: set QNN's context PRIORITY to the value in bits 8..16 ([`load_priority`]).
pub const LOAD_PRIORITY: u32 = 4;

/// The `load` flags asking for context priority `priority` (QNN's LOW 0 .. HIGH 200); `None` for a value that does
/// not fit in the flags' priority byte.
pub const fn load_priority(priority: u32) -> Option<u32> {
    if priority > 0xFF {
        return None;
    }
    Some(LOAD_PRIORITY | priority << 8)
}

/// `load` / `load_file` flag: place LPAI's memory pools as bits 16..24 say ([`load_placement`]).
pub const LOAD_MEMORY_PLACEMENT: u32 = 8;

/// The `load` flags asking for `placement` (nothing when it is the default, so older skels still take them).
pub fn load_placement(placement: lpai::MemoryPlacement) -> u32 {
    if placement == lpai::MemoryPlacement::DEFAULT {
        return 0;
    }
    let nibble = |memory: lpai::MemType| memory.0 & 0xF;
    LOAD_MEMORY_PLACEMENT | nibble(placement.scratch) << 16 | nibble(placement.persistent) << 20
}

/// The memory placement `load` flags ask for; `Err(value)` names a memory-type value that is none of the four.
pub fn placement_of_load(flags: u32) -> Result<lpai::MemoryPlacement, u32> {
    if flags & LOAD_MEMORY_PLACEMENT == 0 {
        return Ok(lpai::MemoryPlacement::DEFAULT);
    }
    let memory = |value: u32| match lpai::MemType(value).name() {
        Some(_) => Ok(lpai::MemType(value)),
        None => Err(value),
    };
    Ok(lpai::MemoryPlacement { scratch: memory((flags >> 16) & 0xF)?, persistent: memory((flags >> 20) & 0xF)? })
}

/// The context priority `load` flags ask for, if any.
pub const fn priority_of_load(flags: u32) -> Option<u32> {
    if flags & LOAD_PRIORITY == 0 {
        return None;
    }
    Some((flags >> 8) & 0xFF)
}
/// `execute` flag: inputs are float32 (the skel quantizes them).
pub const EXECUTE_FLOAT_INPUTS: u32 = 1;
/// `execute` flag: outputs as float32 (the skel dequantizes them).
pub const EXECUTE_FLOAT_OUTPUTS: u32 = 2;
/// `set_performance` priority meaning "leave the priority alone".
pub const PRIORITY_UNCHANGED: u32 = 0x7FFF_FFFF;
/// `configure` lpai_target meaning "the skel's default" (aDSP on Hexagon, x86 elsewhere).
pub const TARGET_DEFAULT: u32 = 0x7FFF_FFFF;
/// `failed_library` answer: the last failed call stopped at neither library.
pub const FAILED_LIBRARY_NONE: u32 = 0;
/// `failed_library` answer: the last failed call stopped at the backend.
pub const FAILED_LIBRARY_BACKEND: u32 = 1;
/// `failed_library` answer: the last failed call stopped at the system library.
pub const FAILED_LIBRARY_SYSTEM: u32 = 2;

/// Bytes one tensor takes on the wire: 4 per element as float32, else its native size.
pub const fn io_bytes(float: bool, elements: usize, native_bytes: usize) -> Option<usize> {
    if float {
        elements.checked_mul(4)
    } else {
        Some(native_bytes)
    }
}

/// First word of a description.
pub const DESCRIPTION_MAGIC: u32 = u32::from_le_bytes(*b"LPDG");
/// First word of a profile.
pub const PROFILE_MAGIC: u32 = u32::from_le_bytes(*b"LPPE");
/// Layout version of both records.
pub const VERSION: u32 = 1;
/// Most dimensions a tensor record carries.
pub const MAX_RANK: usize = 8;

/// A graph's header record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphRecord<'t> {
    /// The graph's name.
    pub name: &'t str,
    /// Number of inputs (records that follow first).
    pub inputs: u32,
    /// Number of outputs (records after the inputs).
    pub outputs: u32,
    /// LPAI scratch bytes given to the graph.
    pub scratch_bytes: u32,
    /// LPAI persistent bytes given to the graph.
    pub persistent_bytes: u32,
    /// Arena bytes in use by the context (its high-water mark).
    pub arena_used: u32,
    /// The context arena's size.
    pub arena_capacity: u32,
    /// Ticks per second of the clock `execute` reports times in (19.2 MHz QTimer on the aDSP).
    pub clock_hz: u32,
}

/// One tensor's record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorRecord<'t> {
    /// The tensor's name.
    pub name: &'t str,
    /// Its QNN id.
    pub id: u32,
    /// `Qnn_DataType_t`.
    pub data_type: u32,
    /// Number of dimensions used in `dimensions`.
    pub rank: u32,
    /// Dimensions, outermost first.
    pub dimensions: [u32; MAX_RANK],
    /// Quantization scale (1 when not quantized).
    pub scale: f32,
    /// QNN quantization offset (0 when not quantized).
    pub offset: i32,
    /// Native size in bytes.
    pub native_bytes: u32,
    /// Element count.
    pub elements: u32,
    /// Whether the skel converts it to and from float32.
    pub convertible: bool,
}

/// One profile event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventRecord<'t> {
    /// QNN event type.
    pub event_type: u32,
    /// QNN unit.
    pub unit: u32,
    /// The measurement.
    pub value: u64,
    /// 0 top level, 1 sub-event.
    pub depth: u32,
    /// The backend's name for it.
    pub identifier: &'t str,
}

/// What `probe` found: the backend the skel loaded and its system library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackendRecord<'t> {
    /// The provider's name (`LPAI_QTI_AISW`).
    pub provider: &'t str,
    /// QNN backend id (LPAI 12).
    pub backend_id: u32,
    /// The core API version the provider speaks (major, minor, patch).
    pub core_api: [u32; 3],
    /// The backend's own API version (major, minor, patch).
    pub backend_api: [u32; 3],
    /// The backend's build id (`backendGetBuildId`), empty when it gives none.
    pub build_id: &'t str,
    /// The system library's API version; `None` when `configure` named none.
    pub system_api: Option<[u32; 3]>,
    /// The eNPU cores (`ENPU_CORE_NUM`) and the first [`lpai::MAX_ENPU_CORES`]'s `ENPU_CORE_INFO`; `None` when the
    /// backend is not LPAI or does not answer them. Written after the fields above, so a reader from before
    /// them still reads those, and a report from before them reads as `None`.
    pub enpu: Option<EnpuCores>,
}

/// The eNPU cores a backend reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnpuCores {
    /// How many there are.
    pub count: u32,
    /// The first `count.min(MAX_ENPU_CORES)` cores' index, MAC units and version.
    pub info: [lpai::EnpuCoreInfo; lpai::MAX_ENPU_CORES],
}

impl EnpuCores {
    /// The cores described (at most [`lpai::MAX_ENPU_CORES`]).
    pub fn described(&self) -> &[lpai::EnpuCoreInfo] {
        let count = (self.count as usize).min(lpai::MAX_ENPU_CORES);
        self.info.get(..count).unwrap_or(&[])
    }
}

/// The first word of a `probe` report.
pub const BACKEND_MAGIC: u32 = u32::from_le_bytes(*b"LPBK");

/// Writes records into a buffer, counting the bytes needed even past its end (so a caller can retry with a
/// large enough buffer).
pub struct Writer<'b>(bytes::Writer<'b>);

impl<'b> Writer<'b> {
    /// Writes from the start of `buffer`.
    pub fn new(buffer: &'b mut [u8]) -> Writer<'b> {
        Writer(bytes::Writer::new(buffer))
    }

    /// Bytes the records need.
    pub fn needed(&self) -> usize {
        self.0.needed()
    }

    /// Whether everything written so far fit.
    pub fn fits(&self) -> bool {
        self.0.fits()
    }

    fn text(&mut self, text: &str) {
        self.0.sized(text.as_bytes());
    }

    /// Appends `words`, little-endian: out of line, so the records share one copy of the store.
    #[inline(never)]
    fn words(&mut self, words: &[u32]) {
        for word in words {
            self.0.u32(*word);
        }
    }

    /// A description header and graph record.
    pub fn graph(&mut self, graph: &GraphRecord<'_>) {
        self.words(&[DESCRIPTION_MAGIC, VERSION]);
        self.text(graph.name);
        self.words(&[
            graph.inputs,
            graph.outputs,
            graph.scratch_bytes,
            graph.persistent_bytes,
            graph.arena_used,
            graph.arena_capacity,
            graph.clock_hz,
        ]);
    }

    /// A tensor record (the scale as its `f32` bits, the offset as its two's complement: the same bytes).
    pub fn tensor(&mut self, tensor: &TensorRecord<'_>) {
        self.text(tensor.name);
        let rank = tensor.rank.min(MAX_RANK as u32);
        self.words(&[tensor.id, tensor.data_type, rank]);
        self.words(tensor.dimensions.get(..rank as usize).unwrap_or_default());
        self.words(&[
            tensor.scale.to_bits(),
            tensor.offset as u32,
            tensor.native_bytes,
            tensor.elements,
            u32::from(tensor.convertible),
        ]);
    }

    /// A `probe` report.
    pub fn backend(&mut self, backend: &BackendRecord<'_>) {
        self.words(&[BACKEND_MAGIC, VERSION]);
        self.text(backend.provider);
        let ([core_major, core_minor, core_patch], [major, minor, patch]) = (backend.core_api, backend.backend_api);
        self.words(&[backend.backend_id, core_major, core_minor, core_patch, major, minor, patch]);
        self.text(backend.build_id);
        let [system_major, system_minor, system_patch] = backend.system_api.unwrap_or_default();
        self.words(&[u32::from(backend.system_api.is_some()), system_major, system_minor, system_patch]);
        if let Some(enpu) = &backend.enpu {
            self.words(&[enpu.count]);
            for core in enpu.described() {
                self.words(&[core.core_index, core.mac_cnt, core.version]);
            }
        }
    }

    /// A profile header for `count` events.
    pub fn profile(&mut self, count: u32) {
        self.words(&[PROFILE_MAGIC, VERSION, count]);
    }

    /// Replaces the event count of the profile header at the start of `buffer` (a writer that counts the events
    /// as it writes them gives the header 0, then the count); nothing when the header did not fit.
    pub fn set_profile_count(buffer: &mut [u8], count: u32) {
        if let Some(field) = buffer.get_mut(8..12) {
            crate::codec::copy_prefix(field, &count.to_le_bytes());
        }
    }

    /// A profile event.
    pub fn event(&mut self, event: &EventRecord<'_>) {
        let value = event.value;
        self.words(&[event.event_type, event.unit, value as u32, (value >> 32) as u32, event.depth]);
        self.text(event.identifier);
    }
}

/// Reads records back; every read is bounds-checked and answers `None` on malformed input.
pub struct Reader<'b>(bytes::Reader<'b>);

impl<'b> Reader<'b> {
    /// Reads from the start of `bytes`.
    pub fn new(bytes: &'b [u8]) -> Reader<'b> {
        Reader(bytes::Reader::new(bytes))
    }

    fn header(&mut self, magic: u32) -> Option<()> {
        (self.0.u32()? == magic && self.0.u32()? == VERSION).then_some(())
    }

    fn three(&mut self) -> Option<[u32; 3]> {
        Some([self.0.u32()?, self.0.u32()?, self.0.u32()?])
    }

    /// A description header and graph record.
    pub fn graph(&mut self) -> Option<GraphRecord<'b>> {
        self.header(DESCRIPTION_MAGIC)?;
        let name = self.0.text()?;
        Some(GraphRecord {
            name,
            inputs: self.0.u32()?,
            outputs: self.0.u32()?,
            scratch_bytes: self.0.u32()?,
            persistent_bytes: self.0.u32()?,
            arena_used: self.0.u32()?,
            arena_capacity: self.0.u32()?,
            clock_hz: self.0.u32()?,
        })
    }

    /// A tensor record.
    pub fn tensor(&mut self) -> Option<TensorRecord<'b>> {
        let name = self.0.text()?;
        let [id, data_type, rank] = self.three()?;
        if rank as usize > MAX_RANK {
            return None;
        }
        let mut dimensions = [0u32; MAX_RANK];
        for dimension in dimensions.iter_mut().take(rank as usize) {
            *dimension = self.0.u32()?;
        }
        Some(TensorRecord {
            name,
            id,
            data_type,
            rank,
            dimensions,
            scale: self.0.f32()?,
            offset: self.0.i32()?,
            native_bytes: self.0.u32()?,
            elements: self.0.u32()?,
            convertible: self.0.u32()? != 0,
        })
    }

    /// A `probe` report.
    pub fn backend(&mut self) -> Option<BackendRecord<'b>> {
        self.header(BACKEND_MAGIC)?;
        let provider = self.0.text()?;
        let backend_id = self.0.u32()?;
        let (core_api, backend_api) = (self.three()?, self.three()?);
        let build_id = self.0.text()?;
        let has_system = self.0.u32()?;
        let system_api = self.three()?;
        let system_api = match has_system {
            0 if system_api == [0; 3] => None,
            1 => Some(system_api),
            _ => return None,
        };
        // A report that ends here is from before the cores; one that goes on must hold them whole.
        let enpu = if self.0.at_end() {
            None
        } else {
            let count = self.0.u32()?;
            let mut info = [lpai::EnpuCoreInfo::default(); lpai::MAX_ENPU_CORES];
            for core in info.iter_mut().take((count as usize).min(lpai::MAX_ENPU_CORES)) {
                let (core_index, mac_cnt, version) = (self.0.u32()?, self.0.u32()?, self.0.u32()?);
                *core = lpai::EnpuCoreInfo { core_index, mac_cnt, version };
            }
            Some(EnpuCores { count, info })
        };
        Some(BackendRecord { provider, backend_id, core_api, backend_api, build_id, system_api, enpu })
    }

    /// A profile header: the number of events that follow.
    pub fn profile(&mut self) -> Option<u32> {
        self.header(PROFILE_MAGIC)?;
        self.0.u32()
    }

    /// A profile event.
    pub fn event(&mut self) -> Option<EventRecord<'b>> {
        let (event_type, unit, value) = (self.0.u32()?, self.0.u32()?, self.0.u64()?);
        Some(EventRecord { event_type, unit, value, depth: self.0.u32()?, identifier: self.0.text()? })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_placement_round_trips_through_the_load_flags_and_a_bad_type_is_named() {
        use super::{load_placement, placement_of_load, LOAD_MEMORY_PLACEMENT, LOAD_PERSISTENT_BINARY};
        use crate::qnn::lpai::{MemType, MemoryPlacement};
        assert_eq!(load_placement(MemoryPlacement::DEFAULT), 0, "the default asks nothing of an older skel");
        assert_eq!(placement_of_load(LOAD_PERSISTENT_BINARY), Ok(MemoryPlacement::DEFAULT));
        for (_, scratch) in MemType::NAMES {
            for (_, persistent) in MemType::NAMES {
                let placement = MemoryPlacement { scratch, persistent };
                assert_eq!(placement_of_load(load_placement(placement) | LOAD_PERSISTENT_BINARY), Ok(placement));
            }
        }
        assert_eq!(placement_of_load(LOAD_MEMORY_PLACEMENT | 9 << 16 | 1 << 20), Err(9));
        assert_eq!(placement_of_load(LOAD_MEMORY_PLACEMENT | 1 << 16), Err(0));
        assert_eq!(
            (MemType::named(b"tcm"), MemType::named(b"TCM"), MemType::PSRAM.name()),
            (Some(MemType::TCM), None, Some("psram"))
        );
    }

    use super::*;

    #[test]
    fn records_round_trip_and_short_buffers_report_what_they_need() {
        let graph = GraphRecord {
            name: "g",
            inputs: 1,
            outputs: 0,
            scratch_bytes: 5,
            persistent_bytes: 6,
            arena_used: 7,
            arena_capacity: 8,
            clock_hz: 19_200_000,
        };
        let mut dimensions = [0; MAX_RANK];
        dimensions[..2].copy_from_slice(&[1, 12]);
        let tensor = TensorRecord {
            name: "logits",
            id: 2,
            data_type: 0x408,
            rank: 2,
            dimensions,
            scale: 0.5,
            offset: -3,
            native_bytes: 12,
            elements: 12,
            convertible: true,
        };
        let mut buffer = [0u8; 256];
        let mut writer = Writer::new(&mut buffer);
        writer.graph(&graph);
        writer.tensor(&tensor);
        let needed = writer.needed();
        assert!(writer.fits());
        let mut reader = Reader::new(&buffer[..needed]);
        assert_eq!(reader.graph(), Some(graph));
        assert_eq!(reader.tensor(), Some(tensor));
        assert_eq!(reader.tensor(), None);

        let mut small = [0u8; 10];
        let mut writer = Writer::new(&mut small);
        writer.graph(&graph);
        assert!(!writer.fits() && writer.needed() > 10);

        let event = EventRecord { event_type: 400, unit: 1, value: 1 << 33, depth: 1, identifier: "execute" };
        let mut writer = Writer::new(&mut buffer);
        writer.profile(1);
        writer.event(&event);
        let mut reader = Reader::new(&buffer);
        assert_eq!((reader.profile(), reader.event()), (Some(1), Some(event)));
        assert_eq!(Reader::new(&[1, 2, 3]).graph(), None);

        let backend = BackendRecord {
            provider: "LPAI_QTI_AISW",
            backend_id: 12,
            core_api: [2, 32, 0],
            backend_api: [2, 26, 1],
            build_id: "v2.43.0",
            system_api: Some([1, 15, 0]),
            enpu: None,
        };
        let mut info = [lpai::EnpuCoreInfo::default(); lpai::MAX_ENPU_CORES];
        info[0] = lpai::EnpuCoreInfo { core_index: 0, mac_cnt: 256, version: 6 };
        info[1] = lpai::EnpuCoreInfo { core_index: 1, mac_cnt: 128, version: 6 };
        let two_cores = BackendRecord { enpu: Some(EnpuCores { count: 2, info }), ..backend };
        let mut base_bytes = 0;
        for backend in [backend, BackendRecord { system_api: None, ..backend }, two_cores] {
            let mut writer = Writer::new(&mut buffer);
            writer.backend(&backend);
            let needed = writer.needed();
            assert_eq!(Reader::new(&buffer[..needed]).backend(), Some(backend));
            if backend.enpu.is_none() {
                base_bytes = needed;
            }
            for cut in 0..needed {
                // A report from before the cores (cut where they begin) reads as one without them.
                let expected =
                    (cut == base_bytes && backend.enpu.is_some()).then_some(BackendRecord { enpu: None, ..backend });
                assert_eq!(Reader::new(&buffer[..cut]).backend(), expected, "cut at {cut}");
            }
        }
    }
}
