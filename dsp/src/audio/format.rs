//! The PCM media formats the audio module takes: read from SPF's version 2 or version 1 payload bytes (checked
//! whole, no pointer casts), and refused with the reason when the module cannot handle them; and where each
//! channel's samples lie in a frame of each layout ([`Layout`], [`Channel`]).

use crate::platform::Message;
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
    /// Bytes per sample (a power of two).
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

/// Where a frame's channels lie (CAPI's `data_interleaving`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One buffer, the channels' samples interleaved (`CAPI_INTERLEAVED`).
    Interleaved,
    /// One buffer, all of channel 0's samples, then all of channel 1's, ... (`CAPI_DEINTERLEAVED_PACKED`).
    Packed,
    /// One buffer per channel, each with its own lengths, all the same (`CAPI_DEINTERLEAVED_UNPACKED`).
    Unpacked,
    /// One buffer per channel, the lengths set only in the first (`CAPI_DEINTERLEAVED_UNPACKED_V2`).
    UnpackedV2,
}

impl Layout {
    /// The layout of a `data_interleaving` value; `None` for one CAPI does not define.
    pub const fn of(interleaving: u32) -> Option<Layout> {
        match interleaving {
            media_format::INTERLEAVED => Some(Layout::Interleaved),
            media_format::DEINTERLEAVED_PACKED => Some(Layout::Packed),
            media_format::DEINTERLEAVED_UNPACKED => Some(Layout::Unpacked),
            media_format::DEINTERLEAVED_UNPACKED_V2 => Some(Layout::UnpackedV2),
            _ => None,
        }
    }

    /// Its `data_interleaving` value.
    pub const fn interleaving(self) -> u32 {
        match self {
            Layout::Interleaved => media_format::INTERLEAVED,
            Layout::Packed => media_format::DEINTERLEAVED_PACKED,
            Layout::Unpacked => media_format::DEINTERLEAVED_UNPACKED,
            Layout::UnpackedV2 => media_format::DEINTERLEAVED_UNPACKED_V2,
        }
    }

    /// Buffers a frame of `channels` channels comes in.
    pub const fn buffers(self, channels: usize) -> usize {
        match self {
            Layout::Interleaved | Layout::Packed => 1,
            Layout::Unpacked | Layout::UnpackedV2 => channels,
        }
    }

    /// Samples per channel in a frame whose first buffer holds `length` bytes; `None` unless every channel has a
    /// whole number of them.
    #[inline(always)]
    pub fn samples(self, channels: usize, sample: Sample, length: usize) -> Option<usize> {
        // A shift for the sample's bytes, a division only for several channels in one buffer (every frame: cheap).
        let shift = sample.bytes().trailing_zeros();
        let samples = (length >> shift, length & (sample.bytes() - 1) == 0);
        let (samples, whole) = match self {
            Layout::Interleaved | Layout::Packed if channels != 1 => {
                let per_channel = samples.0.checked_div(channels)?;
                (per_channel, samples.1 && per_channel.checked_mul(channels) == Some(samples.0))
            }
            _ => samples,
        };
        whole.then_some(samples)
    }

    /// Where channel `channel` lies in a frame of `channels` channels and `samples` samples per channel: its
    /// buffer, the byte of its first sample there, and the bytes from one sample to the next.
    #[inline(always)]
    pub fn place(
        self,
        channel: usize,
        channels: usize,
        sample: Sample,
        samples: usize,
    ) -> Option<(usize, usize, usize)> {
        let width = sample.bytes();
        match self {
            Layout::Interleaved => Some((0, channel.checked_mul(width)?, channels.checked_mul(width)?)),
            Layout::Packed => Some((0, channel.checked_mul(samples)?.checked_mul(width)?, width)),
            Layout::Unpacked | Layout::UnpackedV2 => Some((channel, 0, width)),
        }
    }
}

/// One channel's samples in a frame: sample `i` is the [`Sample::bytes`] bytes at `i × stride` of `bytes`.
#[derive(Clone, Copy, Debug)]
pub struct Channel<'a> {
    bytes: &'a [u8],
    stride: usize,
    count: usize,
}

impl<'a> Channel<'a> {
    /// The whole samples of `bytes`, one after the other (a part of one at the end is left out).
    pub fn contiguous(bytes: &'a [u8], sample: Sample) -> Channel<'a> {
        // A shift, not a division (a helper call on Hexagon): a sample is 2 or 4 bytes.
        Channel { bytes, stride: sample.bytes(), count: bytes.len() >> sample.bytes().trailing_zeros() }
    }

    /// `count` samples of `buffer`, the first at byte `start`, one every `stride` bytes (a whole number of
    /// samples); `None` when they do not all lie within `buffer`.
    #[inline(always)]
    pub fn within(buffer: &'a [u8], start: usize, stride: usize, count: usize, sample: Sample) -> Option<Channel<'a>> {
        if stride == 0 || stride & (sample.bytes() - 1) != 0 {
            return None;
        }
        let bytes = buffer.get(start..)?;
        let last_end = match count.checked_sub(1) {
            Some(last) => last.checked_mul(stride)?.checked_add(sample.bytes())?,
            None => 0,
        };
        Some(Channel { bytes: bytes.get(..last_end)?, stride, count })
    }

    /// Its samples.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The first `samples` (at most all) and the rest.
    #[inline(always)]
    pub fn split_at(self, samples: usize) -> (Channel<'a>, Channel<'a>) {
        let first = samples.min(self.count);
        let (before, rest) =
            self.bytes.split_at_checked(first.saturating_mul(self.stride)).unwrap_or((self.bytes, &[]));
        (Channel { bytes: before, count: first, ..self }, Channel { bytes: rest, count: self.count - first, ..self })
    }

    /// Its bytes as `N`-byte samples (`N` is the sample's size) and the step from one of its samples to the next
    /// among them (1: one after the other): its samples are every `step`-th from the first.
    #[inline(always)]
    pub fn chunks<const N: usize>(self) -> (&'a [[u8; N]], usize) {
        (self.bytes.as_chunks::<N>().0, (self.stride / N).max(1))
    }

    /// Each sample's `N` bytes, in order (`N` is the sample's size).
    pub fn samples<const N: usize>(self) -> impl Iterator<Item = [u8; N]> + 'a {
        let (chunks, step) = self.chunks::<N>();
        chunks.iter().step_by(step).take(self.count).copied()
    }
}

/// A format the module takes: fixed-point PCM in any of CAPI's layouts, 1 to [`MAX_CHANNELS`] channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcmFormat {
    /// Channels.
    pub channels: u32,
    /// How samples are stored.
    pub sample: Sample,
    /// Hz, as the framework said (for the votes and the result's timestamp; not used for the model).
    pub sampling_rate: u32,
    /// Where the channels lie in a frame.
    pub layout: Layout,
}

/// Microseconds of a count of samples at a sampling rate, `samples x 1,000,000 / rate` (floored), with the
/// fraction reduced once when the format is set and its division by a multiply and a shift (a division is a helper
/// call on Hexagon): `floor(n / d) = (n x (floor(2^32 / d) + 1)) >> 32` whenever `n x d < 2^32` (the error the
/// rounded-up reciprocal adds, under `n / 2^32`, stays below the `1 / d` the remainder leaves), which holds for the
/// samples of a frame; a larger product is divided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleClock {
    /// 1,000,000 / gcd(1,000,000, rate).
    numerator: u64,
    /// rate / gcd(1,000,000, rate), at least 1.
    denominator: core::num::NonZeroU64,
    /// floor(2^32 / denominator) + 1.
    reciprocal: u64,
    /// The largest product the multiply divides exactly: floor((2^32 - 1) / denominator).
    limit: u64,
}

impl SampleClock {
    /// The clock of `rate` Hz (0 counts as 1).
    pub fn of(rate: u32) -> SampleClock {
        let rate = rate.max(1);
        let (mut a, mut b) = (1_000_000u32, rate);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        // `a` is the gcd, at least 1 (said so for the compiler: no division-by-zero panic path).
        let divisor = a.max(1);
        let denominator = core::num::NonZeroU64::new(u64::from(rate / divisor)).unwrap_or(core::num::NonZeroU64::MIN);
        SampleClock {
            numerator: u64::from(1_000_000 / divisor),
            denominator,
            reciprocal: (1u64 << 32) / denominator + 1,
            limit: u64::from(u32::MAX) / denominator,
        }
    }

    /// Microseconds of `samples` samples, floored (saturated at `u64::MAX`).
    pub fn micros(self, samples: u64) -> u64 {
        let product = samples.saturating_mul(self.numerator);
        if product <= self.limit {
            (product * self.reciprocal) >> 32
        } else {
            product / self.denominator
        }
    }
}

/// Why a format is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// What is wrong: a message of the table with no places (its words are on the HLOS side alone).
    pub what: Message,
    /// The CAPI code to answer.
    pub code: CapiError,
}

fn refused(what: Message) -> FormatError {
    FormatError { what, code: EBADPARAM }
}

/// The refusal of a payload shorter than its fields.
const TOO_SHORT: FormatError = FormatError { what: Message::FormatPayloadShort, code: ENEEDMORE };

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
            return Err(refused(Message::FormatNotFixedPoint));
        }
        if self.bitstream_format != media_format::PCM {
            return Err(refused(Message::FormatNotPcm));
        }
        if self.channels == 0 || self.channels > MAX_CHANNELS {
            return Err(refused(Message::FormatChannels));
        }
        if self.signed != 1 {
            return Err(refused(Message::FormatUnsigned));
        }
        let sample = match (self.bits_per_sample, self.q_factor) {
            (16, 15) => Sample::Q15,
            (32, q_factor @ (27 | 31)) => Sample::Q32 { q_factor },
            _ => return Err(refused(Message::FormatSample)),
        };
        let Some(layout) = Layout::of(self.interleaving) else {
            return Err(refused(Message::FormatInterleaving));
        };
        if self.sampling_rate == 0 || self.sampling_rate == media_format::UNKNOWN {
            return Err(refused(Message::FormatNoSamplingRate));
        }
        Ok(PcmFormat { channels: self.channels, sample, sampling_rate: self.sampling_rate, layout })
    }
}

/// Reads an `INPUT_MEDIA_FORMAT_V2` payload: the header, the 32-byte body, then one `u16` channel type per channel.
pub fn from_v2(payload: &[u8]) -> Result<PcmFormat, FormatError> {
    let read = |offset| word(payload, offset).ok_or(TOO_SHORT);
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
        return Err(FormatError { what: Message::FormatChannelTypesShort, code: ENEEDMORE });
    }
    Ok(format)
}

/// Reads an `INPUT_MEDIA_FORMAT` (version 1) payload: the header, seven fields, then 16 `u16` channel types.
pub fn from_v1(payload: &[u8]) -> Result<PcmFormat, FormatError> {
    if payload.len() < V1_BYTES {
        return Err(TOO_SHORT);
    }
    let read = |offset| word(payload, offset).ok_or(TOO_SHORT);
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

    #[test]
    fn a_sample_clock_says_what_the_division_says() {
        for rate in [0, 1, 7, 8_000, 11_025, 16_000, 22_050, 32_000, 44_100, 48_000, 96_000, 192_000, 384_000, u32::MAX]
        {
            let clock = SampleClock::of(rate);
            for samples in [0u64, 1, 159, 160, 479, 480, 15_999, 16_000, 1 << 20, 1 << 40, u64::MAX] {
                let expected = samples.saturating_mul(1_000_000) / u64::from(rate.max(1));
                if samples.checked_mul(1_000_000).is_some() {
                    assert_eq!(clock.micros(samples), expected, "{samples} samples at {rate} Hz");
                }
            }
            // Every count whose product the multiply takes, up to a bound, and the first it does not.
            let last = clock.limit / clock.numerator;
            for samples in (0..=last.min(200_000)).chain([last, last + 1]) {
                assert_eq!(clock.micros(samples), samples * 1_000_000 / u64::from(rate.max(1)), "{samples} at {rate}");
            }
        }
    }

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
        assert_eq!(
            format,
            PcmFormat { channels: 2, sample: Sample::Q15, sampling_rate: 48_000, layout: Layout::Unpacked }
        );
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
        let mut undefined = fields(2, 16, 15);
        undefined[7] = 4;
        let mut invalid = fields(2, 16, 15);
        invalid[7] = media_format::UNKNOWN;
        let mut unsigned = fields(2, 16, 15);
        unsigned[6] = 0;
        let mut no_rate = fields(2, 16, 15);
        no_rate[5] = media_format::UNKNOWN;
        for (case, what) in [
            (floating, "fixed-point"),
            (undefined, "none of CAPI's layouts"),
            (invalid, "none of CAPI's layouts"),
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
            assert!(error.what.template().contains(what), "{} does not say {what}", error.what.template());
        }
    }

    #[test]
    fn a_refusal_is_a_message_the_module_logs_in_the_words_it_always_had() {
        let error = from_v2(&v2(fields(9, 16, 15), 2)).unwrap_err();
        assert_eq!(error.what, Message::FormatChannels);
        let line = crate::message!(Message::CapiFormatRefused, error.what);
        assert_eq!(
            line.rendered().as_str(),
            "lpai-direct capi: input media format refused: the module takes 1 to 8 channels"
        );
        let short = from_v1(&[0; 8]).unwrap_err();
        let line = crate::message!(Message::CapiFormatRefused, short.what);
        assert_eq!(line.rendered().as_str(), "lpai-direct capi: input media format refused: the payload is too short");
    }

    #[test]
    fn every_layout_is_taken_for_every_channel_count_in_both_versions() {
        for (interleaving, layout) in [
            (media_format::INTERLEAVED, Layout::Interleaved),
            (media_format::DEINTERLEAVED_PACKED, Layout::Packed),
            (media_format::DEINTERLEAVED_UNPACKED, Layout::Unpacked),
            (media_format::DEINTERLEAVED_UNPACKED_V2, Layout::UnpackedV2),
        ] {
            assert_eq!(layout.interleaving(), interleaving);
            for channels in 1..=MAX_CHANNELS {
                let mut case = fields(channels, 16, 15);
                case[7] = interleaving;
                assert_eq!(from_v2(&v2(case, channels)).unwrap().layout, layout, "v2, {channels} channels");
                let mut bytes = [0u8; V1_BYTES];
                let words = [0, media_format::PCM, channels, 16, 15, 16_000, 1, interleaving];
                for (at, value) in words.iter().enumerate() {
                    bytes[at * 4..at * 4 + 4].copy_from_slice(&value.to_ne_bytes());
                }
                assert_eq!(from_v1(&bytes).unwrap().layout, layout, "v1, {channels} channels");
            }
        }
    }

    /// Channel `channel` of a frame of `channels` channels whose sample i of channel c is the Q15 value
    /// 100 c + i, laid out as `layout` says: its values.
    fn read_channel(layout: Layout, channels: usize, samples: usize, channel: usize) -> std::vec::Vec<i16> {
        let value = |c: usize, i: usize| (100 * c + i) as i16;
        let buffers: std::vec::Vec<std::vec::Vec<u8>> = match layout {
            Layout::Interleaved => std::vec![(0..samples)
                .flat_map(|i| (0..channels).map(move |c| value(c, i)))
                .flat_map(i16::to_ne_bytes)
                .collect()],
            Layout::Packed => std::vec![(0..channels)
                .flat_map(|c| (0..samples).map(move |i| value(c, i)))
                .flat_map(i16::to_ne_bytes)
                .collect()],
            Layout::Unpacked | Layout::UnpackedV2 => {
                (0..channels).map(|c| (0..samples).flat_map(|i| value(c, i).to_ne_bytes()).collect()).collect()
            }
        };
        assert_eq!(buffers.len(), layout.buffers(channels));
        assert_eq!(layout.samples(channels, Sample::Q15, buffers[0].len()), Some(samples));
        let (buffer, start, stride) = layout.place(channel, channels, Sample::Q15, samples).unwrap();
        let found = Channel::within(&buffers[buffer], start, stride, samples, Sample::Q15).unwrap();
        found.samples::<2>().map(i16::from_ne_bytes).collect()
    }

    #[test]
    fn each_layout_places_every_channels_samples_where_capi_puts_them() {
        for layout in [Layout::Interleaved, Layout::Packed, Layout::Unpacked, Layout::UnpackedV2] {
            for channels in [1, 2, 3, 8] {
                for channel in 0..channels {
                    let expected: std::vec::Vec<i16> = (0..5).map(|i| (100 * channel + i) as i16).collect();
                    assert_eq!(read_channel(layout, channels, 5, channel), expected, "{layout:?} {channel}/{channels}");
                }
            }
        }
        assert_eq!(Layout::Interleaved.samples(2, Sample::Q15, 6), None, "6 bytes are not whole stereo Q15 frames");
        assert_eq!(Layout::Unpacked.samples(2, Sample::Q32 { q_factor: 31 }, 6), None);
        assert_eq!(Layout::Packed.samples(3, Sample::Q32 { q_factor: 31 }, 0), Some(0));
    }

    #[test]
    fn a_channel_is_split_and_never_read_past_its_buffer() {
        let bytes: std::vec::Vec<u8> = (0u8..12).collect();
        let channel = Channel::within(&bytes, 2, 4, 3, Sample::Q15).unwrap();
        assert_eq!(channel.samples::<2>().collect::<std::vec::Vec<_>>(), [[2, 3], [6, 7], [10, 11]]);
        let (first, rest) = channel.split_at(1);
        assert_eq!((first.len(), rest.len()), (1, 2));
        assert_eq!(rest.samples::<2>().collect::<std::vec::Vec<_>>(), [[6, 7], [10, 11]]);
        assert!(Channel::within(&bytes, 4, 4, 3, Sample::Q15).is_none(), "the last sample would end past 12");
        assert!(Channel::within(&bytes, 0, 1, 2, Sample::Q15).is_none(), "a stride below a sample");
        assert!(Channel::within(&bytes, 0, 3, 2, Sample::Q15).is_none(), "a stride of a sample and a half");
        assert!(Channel::within(&bytes, 13, 2, 0, Sample::Q15).is_none());
        assert!(Channel::within(&bytes, 12, 2, 0, Sample::Q15).unwrap().is_empty());
        assert_eq!(Channel::contiguous(&bytes[..7], Sample::Q15).len(), 3);
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
