//! Writing a CAPI session on the host (`crate::capi_session` runs it): steps, and frames of deinterleaved audio cut
//! from whole channels, and the payloads SPF sends a module. Host only (it grows a `Vec`).

use crate::capi_session::{port_word, DEINTERLEAVED_PACKED, DEINTERLEAVED_UNPACKED, STEP_GET_PROPERTY, STEP_PROCESS};
use crate::capi_session::{STEP_PROCESS_LAYOUT, STEP_REGISTER_AS_SPF, STEP_SET_PROPERTY_AS_SPF};
use lpai_direct::capi::{media_format, PortInfo, RegisterEventToDspClientV2};
use std::vec::Vec;

/// A session being written.
#[derive(Clone, Debug, Default)]
pub struct SessionWriter {
    bytes: Vec<u8>,
}

impl SessionWriter {
    /// Appends one step: `kind`, `value` and its bytes, padded to 4.
    pub fn step(&mut self, kind: u32, value: u32, bytes: &[u8]) -> &mut SessionWriter {
        let length = u32::try_from(bytes.len()).expect("a step's bytes fit a u32 length");
        for word in [kind, value, length] {
            self.bytes.extend(word.to_le_bytes());
        }
        self.bytes.extend(bytes);
        self.bytes.resize(self.bytes.len().next_multiple_of(4), 0);
        self
    }

    /// Appends process steps of `frame` samples per channel (the last one shorter when the channels end first),
    /// from deinterleaved channels of native samples `sample_bytes` each, sampled at `rate` Hz from `timestamp`
    /// microseconds.
    pub fn frames(
        &mut self,
        channels: &[Vec<u8>],
        sample_bytes: usize,
        frame: usize,
        rate: u32,
        timestamp: i64,
    ) -> &mut SessionWriter {
        let length = channels.first().map_or(0, |channel| channel.len() / sample_bytes);
        for start in (0..length).step_by(frame.max(1)) {
            let end = (start + frame).min(length);
            let at = timestamp + (start as i64) * 1_000_000 / i64::from(rate);
            let mut bytes = at.to_le_bytes().to_vec();
            for channel in channels {
                bytes.extend(&channel[start * sample_bytes..end * sample_bytes]);
            }
            self.step(STEP_PROCESS, channels.len() as u32, &bytes);
        }
        self
    }

    /// Appends process steps laid out in `layout` ([`STEP_PROCESS_LAYOUT`]): `frames` lists `(samples per channel,
    /// calls)`, the last size repeated until the channels end (the last call shorter when they end first);
    /// `flags(call, calls)` gives each call's input stream flags. The channels are deinterleaved native samples of
    /// `sample_bytes` each, sampled at `rate` Hz from `timestamp` microseconds.
    #[allow(clippy::too_many_arguments)]
    pub fn layout_frames(
        &mut self,
        channels: &[Vec<u8>],
        sample_bytes: usize,
        frames: &[(usize, usize)],
        rate: u32,
        timestamp: i64,
        layout: u32,
        flags: impl Fn(usize, usize) -> u32,
    ) -> &mut SessionWriter {
        let length = channels.first().map_or(0, |channel| channel.len() / sample_bytes);
        let frame_of = |mut call: usize| {
            for &(size, calls) in &frames[..frames.len() - 1] {
                match call < calls {
                    true => return size.max(1),
                    false => call -= calls,
                }
            }
            frames[frames.len() - 1].0.max(1)
        };
        let mut starts = Vec::new();
        let mut start = 0;
        while start < length {
            starts.push(start);
            start += frame_of(starts.len() - 1);
        }
        for (call, &start) in starts.iter().enumerate() {
            let end = (start + frame_of(call)).min(length);
            let at = timestamp + (start as i64) * 1_000_000 / i64::from(rate);
            let mut bytes =
                [layout, flags(call, starts.len())].iter().flat_map(|word| word.to_le_bytes()).collect::<Vec<u8>>();
            bytes.extend(at.to_le_bytes());
            let sample = |channel: &Vec<u8>, n: usize| channel[n * sample_bytes..(n + 1) * sample_bytes].to_vec();
            if layout == DEINTERLEAVED_PACKED || layout == DEINTERLEAVED_UNPACKED {
                for channel in channels {
                    bytes.extend((start..end).flat_map(|n| sample(channel, n)));
                }
            } else {
                bytes.extend((start..end).flat_map(|n| channels.iter().flat_map(move |channel| sample(channel, n))));
            }
            self.step(STEP_PROCESS_LAYOUT, channels.len() as u32, &bytes);
        }
        self
    }

    /// Appends a [`STEP_SET_PROPERTY_AS_SPF`]: property `id` on `port` with `payload`, its `max_data_len` `max`.
    pub fn set_property_as_spf(&mut self, id: u32, port: PortInfo, max: u32, payload: &[u8]) -> &mut SessionWriter {
        let mut bytes = [id, port_word(port)].iter().flat_map(|word| word.to_le_bytes()).collect::<Vec<u8>>();
        bytes.extend(payload);
        self.step(STEP_SET_PROPERTY_AS_SPF, max, &bytes)
    }

    /// Appends a [`STEP_REGISTER_AS_SPF`]: the client at `address` with `token` (de)registering for `event`, the
    /// payload's `max_data_len` `max`, the event configuration `config` (its own `max_data_len` `config_max`).
    #[allow(clippy::too_many_arguments)]
    pub fn register_as_spf(
        &mut self,
        address: u64,
        token: u32,
        event: u32,
        is_register: bool,
        max: u32,
        config_max: u32,
        config: &[u8],
    ) -> &mut SessionWriter {
        let words = [address as u32, (address >> 32) as u32, token, event, u32::from(is_register), config_max];
        let mut bytes = words.iter().flat_map(|word| word.to_le_bytes()).collect::<Vec<u8>>();
        bytes.extend(config);
        self.step(STEP_REGISTER_AS_SPF, max, &bytes)
    }

    /// Appends a [`STEP_GET_PROPERTY`]: property `id` on `port` into `room` bytes.
    pub fn get_property(&mut self, id: u32, port: PortInfo, room: usize) -> &mut SessionWriter {
        let mut bytes = port_word(port).to_le_bytes().to_vec();
        bytes.resize(4 + room, 0);
        self.step(STEP_GET_PROPERTY, id, &bytes)
    }

    /// The session's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// An INPUT_MEDIA_FORMAT_V2 payload for PCM at 48 kHz: the V2 header, the PCM format, and 32 channel slots (those
/// past `channels` garbage, which a module must not read).
pub fn media_format_v2(data_format: u32, channels: u32, bits: u32, q: u32, interleaving: u32) -> Vec<u8> {
    let words = [data_format, u32::MAX, media_format::PCM, channels, bits, q, 48_000, 1, interleaving];
    let mut bytes: Vec<u8> = words.iter().flat_map(|word| word.to_ne_bytes()).collect();
    bytes.extend((0..32u16).flat_map(|slot| if u32::from(slot) < channels { slot + 1 } else { 0xA5A5 }.to_ne_bytes()));
    bytes
}

/// A REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 payload registering the client at `address` with `token` for `event`.
pub fn client_registration(address: u64, token: u32, event: u32) -> Vec<u8> {
    let mut registration = Vec::new();
    registration.extend(address.to_ne_bytes());
    registration.extend(token.to_ne_bytes());
    registration.extend(event.to_ne_bytes());
    registration.resize(size_of::<RegisterEventToDspClientV2>(), 0);
    // is_register
    registration[16] = 1;
    registration
}
