//! The PCM media formats the audio module takes: read from SPF's version 2 or version 1 payload bytes (checked
//! whole, no pointer casts), and refused with the reason when the module cannot handle them.

use lpai_direct::capi::media_format::{self, V1_CHANNEL_SLOTS};
use lpai_direct::capi::{CapiError, EBADPARAM, ENEEDMORE};

/// Most channels the module takes.
pub const MAX_CHANNELS: u32 = 8;
/// Bytes of the header and version 2 body before the channel types.
const V2_FIXED_BYTES: usize = 4 + 32;
/// Bytes of a version 1 payload: the header, seven fields and 16 channel types.
const V1_BYTES: usize = 4 + 28 + 2 * V1_CHANNEL_SLOTS;

/// How one sample is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// `i16`, Q15.
    Q15,
    /// `i32` with `q_factor` fractional bits (27 or 31).
    Q32 {
        /// Fractional bits.
        q_factor: u32,
    },
}

impl Sample {
    /// Bytes per sample.
    pub const fn bytes(self) -> usize {
        match self {
            Sample::Q15 => 2,
            Sample::Q32 { .. } => 4,
        }
    }

    /// The factor that turns a sample into its float value (x / 2^q_factor): a power of two, so exact.
    pub fn scale(self) -> f32 {
        let q_factor = match self {
            Sample::Q15 => 15,
            Sample::Q32 { q_factor } => q_factor,
        };
        1.0 / (1u64 << q_factor) as f32
    }
}

/// A format the module takes: fixed-point PCM, deinterleaved unpacked, 1 to [`MAX_CHANNELS`] channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcmFormat {
    /// Channels.
    pub channels: u32,
    /// How samples are stored.
    pub sample: Sample,
    /// Hz, as the framework said (not used for the model).
    pub sampling_rate: u32,
    /// `DEINTERLEAVED_UNPACKED` or `_V2`.
    pub interleaving: u32,
}

/// Why a format is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// What is wrong.
    pub what: &'static str,
    /// The CAPI code to answer.
    pub code: CapiError,
}

fn refused(what: &'static str) -> FormatError {
    FormatError { what, code: EBADPARAM }
}

/// The `u32` at `offset` of `bytes` (as the framework wrote the struct: see [`super::properties::word`]).
fn word(bytes: &[u8], offset: usize) -> Option<u32> {
    lpai_direct::bytes::Reader::at_offset(bytes, offset).u32()
}

/// The fields both versions carry, checked.
struct Fields {
    data_format: u32,
    bitstream_format: u32,
    channels: u32,
    bits_per_sample: u32,
    q_factor: u32,
    sampling_rate: u32,
    signed: u32,
    interleaving: u32,
}

impl Fields {
    fn check(&self) -> Result<PcmFormat, FormatError> {
        if self.data_format != media_format::FIXED_POINT {
            return Err(refused("only fixed-point PCM is taken (the data format is not FIXED_POINT)"));
        }
        if self.bitstream_format != media_format::PCM {
            return Err(refused("only PCM is taken (the bitstream format is not MEDIA_FMT_ID_PCM)"));
        }
        if self.channels == 0 || self.channels > MAX_CHANNELS {
            return Err(refused("the module takes 1 to 8 channels"));
        }
        if self.signed != 1 {
            return Err(refused("PCM samples must be signed"));
        }
        let sample = match (self.bits_per_sample, self.q_factor) {
            (16, 15) => Sample::Q15,
            (32, q_factor @ (27 | 31)) => Sample::Q32 { q_factor },
            _ => return Err(refused("samples must be 16-bit Q15, or 32-bit Q27 or Q31")),
        };
        if !matches!(self.interleaving, media_format::DEINTERLEAVED_UNPACKED | media_format::DEINTERLEAVED_UNPACKED_V2)
        {
            return Err(refused("channels must be deinterleaved unpacked (one buffer per channel)"));
        }
        if self.sampling_rate == 0 || self.sampling_rate == media_format::UNKNOWN {
            return Err(refused("the sampling rate is not given"));
        }
        Ok(PcmFormat {
            channels: self.channels,
            sample,
            sampling_rate: self.sampling_rate,
            interleaving: self.interleaving,
        })
    }
}

/// Reads an `INPUT_MEDIA_FORMAT_V2` payload: the header, the 32-byte body, then one `u16` channel type per channel.
pub fn from_v2(payload: &[u8]) -> Result<PcmFormat, FormatError> {
    let read = |offset| word(payload, offset).ok_or(FormatError { what: "the payload is too short", code: ENEEDMORE });
    let fields = Fields {
        data_format: read(0)?,
        bitstream_format: read(8)?,
        channels: read(12)?,
        bits_per_sample: read(16)?,
        q_factor: read(20)?,
        sampling_rate: read(24)?,
        signed: read(28)?,
        interleaving: read(32)?,
    };
    let format = fields.check()?;
    if payload.len() < v2_bytes(format.channels) {
        return Err(FormatError { what: "the payload is too short for its channel types", code: ENEEDMORE });
    }
    Ok(format)
}

/// Reads an `INPUT_MEDIA_FORMAT` (version 1) payload: the header, seven fields, then 16 `u16` channel types.
pub fn from_v1(payload: &[u8]) -> Result<PcmFormat, FormatError> {
    if payload.len() < V1_BYTES {
        return Err(FormatError { what: "the payload is too short", code: ENEEDMORE });
    }
    let read = |offset| word(payload, offset).ok_or(FormatError { what: "the payload is too short", code: ENEEDMORE });
    Fields {
        data_format: read(0)?,
        bitstream_format: read(4)?,
        channels: read(8)?,
        bits_per_sample: read(12)?,
        q_factor: read(16)?,
        sampling_rate: read(20)?,
        signed: read(24)?,
        interleaving: read(28)?,
    }
    .check()
}

/// Bytes of a version 2 payload with `channels` channel types (what the output format event carries).
pub const fn v2_bytes(channels: u32) -> usize {
    V2_FIXED_BYTES + 2 * channels as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What SPF sends for 16-bit stereo at 48 kHz: 100 bytes, the unused channel slots garbage.
    fn v2(fields: [u32; 8], channels: u32) -> [u8; 100] {
        let mut bytes = [0xA5u8; 100];
        let words = [0u32, u32::MAX, media_format::PCM];
        for (at, value) in words.iter().chain(fields.iter().skip(2)).enumerate() {
            bytes[at * 4..at * 4 + 4].copy_from_slice(&value.to_ne_bytes());
        }
        bytes[0..4].copy_from_slice(&fields[0].to_ne_bytes());
        for channel in 0..channels as usize {
            bytes[36 + 2 * channel..38 + 2 * channel].copy_from_slice(&(channel as u16 + 1).to_ne_bytes());
        }
        bytes
    }

    /// `[data_format, (unused), channels, bits, q, rate, signed, interleaving]`.
    fn fields(channels: u32, bits: u32, q: u32) -> [u32; 8] {
        [0, 0, channels, bits, q, 48_000, 1, media_format::DEINTERLEAVED_UNPACKED]
    }

    #[test]
    fn what_spf_sends_is_taken() {
        let format = from_v2(&v2(fields(2, 16, 15), 2)).unwrap();
        assert_eq!(format, PcmFormat { channels: 2, sample: Sample::Q15, sampling_rate: 48_000, interleaving: 2 });
        let six = from_v2(&v2(fields(6, 32, 31), 6)).unwrap();
        assert_eq!((six.channels, six.sample), (6, Sample::Q32 { q_factor: 31 }));
        assert_eq!(from_v2(&v2(fields(1, 32, 27), 1)).unwrap().sample, Sample::Q32 { q_factor: 27 });
        let mut unpacked_v2 = fields(8, 16, 15);
        unpacked_v2[7] = media_format::DEINTERLEAVED_UNPACKED_V2;
        assert_eq!(from_v2(&v2(unpacked_v2, 8)).unwrap().channels, 8);
    }

    #[test]
    fn formats_the_module_cannot_handle_are_refused_with_badparam() {
        let mut floating = fields(2, 32, 31);
        floating[0] = media_format::FLOATING_POINT;
        let mut interleaved = fields(2, 16, 15);
        interleaved[7] = media_format::INTERLEAVED;
        let mut packed = fields(2, 16, 15);
        packed[7] = media_format::DEINTERLEAVED_PACKED;
        let mut unsigned = fields(2, 16, 15);
        unsigned[6] = 0;
        let mut no_rate = fields(2, 16, 15);
        no_rate[5] = media_format::UNKNOWN;
        for (case, what) in [
            (floating, "fixed-point"),
            (interleaved, "deinterleaved"),
            (packed, "deinterleaved"),
            (unsigned, "signed"),
            (no_rate, "sampling rate"),
            (fields(9, 16, 15), "1 to 8"),
            (fields(0, 16, 15), "1 to 8"),
            (fields(2, 16, 31), "Q15"),
            (fields(2, 24, 23), "Q15"),
            (fields(2, 32, 15), "Q15"),
        ] {
            let error = from_v2(&v2(case, 2)).unwrap_err();
            assert_eq!(error.code, EBADPARAM, "{what}");
            assert!(error.what.contains(what), "{} does not say {what}", error.what);
        }
    }

    #[test]
    fn short_payloads_ask_for_more() {
        let full = v2(fields(4, 16, 15), 4);
        for length in 0..v2_bytes(4) {
            assert_eq!(from_v2(&full[..length]).unwrap_err().code, ENEEDMORE, "{length} bytes");
        }
        assert!(from_v2(&full[..v2_bytes(4)]).is_ok());
    }

    #[test]
    fn version_1_is_read_at_its_own_offsets() {
        let mut bytes = [0u8; V1_BYTES];
        let words = [0, media_format::PCM, 3, 32, 27, 16_000, 1, media_format::DEINTERLEAVED_UNPACKED];
        for (at, value) in words.iter().enumerate() {
            bytes[at * 4..at * 4 + 4].copy_from_slice(&value.to_ne_bytes());
        }
        let format = from_v1(&bytes).unwrap();
        assert_eq!((format.channels, format.sample, format.sampling_rate), (3, Sample::Q32 { q_factor: 27 }, 16_000));
        assert_eq!(from_v1(&bytes[..V1_BYTES - 1]).unwrap_err().code, ENEEDMORE);
        bytes[4..8].copy_from_slice(&7u32.to_ne_bytes());
        assert_eq!(from_v1(&bytes).unwrap_err().code, EBADPARAM);
    }

    #[test]
    fn scales_are_the_exact_powers_of_two() {
        assert_eq!(Sample::Q15.scale() * 32768.0, 1.0);
        assert_eq!(Sample::Q32 { q_factor: 31 }.scale(), f32::from_bits(0x3000_0000));
        assert_eq!(Sample::Q32 { q_factor: 27 }.scale(), f32::from_bits(0x3200_0000));
        assert_eq!((Sample::Q15.bytes(), Sample::Q32 { q_factor: 31 }.bytes()), (2, 4));
    }
}
