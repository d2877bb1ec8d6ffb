//! The audio module's ids, in the range AudioReach leaves to customers (owner nibble 1; ids with owner 0 are
//! Qualcomm's), and the result record a client reads or receives. `dsp/include/lpai_direct_capi.h` spells the same
//! for integrators; a test holds the two to the same values.

use lpai_direct::bytes::{Reader, Sink, Writer};

/// The module's id in an SPF graph (`MODULE_ID_LPAI_DIRECT`).
pub const MODULE_ID: u32 = 0x1700_1F00;
/// A NUL-terminated path of the context binary, which the PD opens.
pub const PARAM_ID_MODEL_PATH: u32 = 0x1800_1F01;
/// The context binary's bytes (copied, aligned, unless PARAM_PERSISTENCE_INFO registered them as persistent).
pub const PARAM_ID_MODEL: u32 = 0x1800_1F02;
/// NUL-terminated `key=value` lines ([`super::config`]).
pub const PARAM_ID_CONFIG: u32 = 0x1800_1F03;
/// get_param: the last result ([`ResultHeader`], then the first output as float32).
pub const PARAM_ID_RESULT: u32 = 0x1800_1F04;
/// The model's metadata record, when `system_library` is empty.
pub const PARAM_ID_METADATA: u32 = 0x1800_1F05;
/// The event a client registers for (REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2): the result record after each
/// inference.
pub const EVENT_ID_RESULT: u32 = 0x1800_1F06;

/// The result record's fixed part, little-endian, followed by `output_bytes` of float32 values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResultHeader {
    /// Inferences run so far.
    pub inferences: u32,
    /// Bytes of float32 output after the header.
    pub output_bytes: u32,
    /// Microseconds: the timestamp of the window's last sample.
    pub timestamp_us: u64,
    /// DSP clock ticks of its graphExecute.
    pub dsp_ticks: u64,
}

/// Bytes of an encoded [`ResultHeader`].
pub const RESULT_HEADER_BYTES: usize = 24;

impl ResultHeader {
    /// The header's bytes.
    pub fn encode(&self) -> [u8; RESULT_HEADER_BYTES] {
        let mut bytes = [0u8; RESULT_HEADER_BYTES];
        let mut writer = Writer::new(&mut bytes);
        writer.u32(self.inferences);
        writer.u32(self.output_bytes);
        writer.u64(self.timestamp_us);
        writer.u64(self.dsp_ticks);
        bytes
    }

    /// Reads a header from the front of `bytes`; `None` when they are shorter.
    pub fn decode(bytes: &[u8]) -> Option<ResultHeader> {
        let mut reader = Reader::new(bytes);
        Some(ResultHeader {
            inferences: reader.u32()?,
            output_bytes: reader.u32()?,
            timestamp_us: reader.u64()?,
            dsp_ticks: reader.u64()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_sit_in_the_customer_range() {
        for id in [PARAM_ID_MODEL_PATH, PARAM_ID_MODEL, PARAM_ID_CONFIG, PARAM_ID_RESULT, PARAM_ID_METADATA] {
            assert_eq!(id >> 28, 1, "{id:#x}: a parameter id");
            assert_eq!((id >> 24) & 0xF, 8, "{id:#x}: owner nibble 1, parameter type");
        }
        assert_eq!((MODULE_ID >> 24) & 0xF, 7);
        assert_eq!(MODULE_ID >> 28, 1);
    }

    #[test]
    fn a_result_header_round_trips_little_endian() {
        let header = ResultHeader { inferences: 3, output_bytes: 16, timestamp_us: 1 << 40, dsp_ticks: 19_200 };
        let bytes = header.encode();
        assert_eq!(&bytes[..8], &[3, 0, 0, 0, 16, 0, 0, 0]);
        assert_eq!(ResultHeader::decode(&bytes), Some(header));
        assert_eq!(ResultHeader::decode(&bytes[..RESULT_HEADER_BYTES - 1]), None);
    }

    #[test]
    fn the_c_header_spells_the_same_ids() {
        let header = include_str!("../../include/lpai_direct_capi.h");
        for (name, value) in [
            ("MODULE_ID_LPAI_DIRECT", MODULE_ID),
            ("PARAM_ID_LPAI_DIRECT_MODEL_PATH", PARAM_ID_MODEL_PATH),
            ("PARAM_ID_LPAI_DIRECT_MODEL", PARAM_ID_MODEL),
            ("PARAM_ID_LPAI_DIRECT_CONFIG", PARAM_ID_CONFIG),
            ("PARAM_ID_LPAI_DIRECT_RESULT", PARAM_ID_RESULT),
            ("PARAM_ID_LPAI_DIRECT_METADATA", PARAM_ID_METADATA),
            ("EVENT_ID_LPAI_DIRECT_RESULT", EVENT_ID_RESULT),
        ] {
            let line = std::format!("#define {name} 0x{value:08X}u");
            assert!(header.lines().any(|text| text.trim_end() == line), "the header lacks `{line}`");
        }
    }
}
