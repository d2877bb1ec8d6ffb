//! Writing a CAPI session on the host (`crate::capi_session` runs it): steps, and frames of deinterleaved audio cut
//! from whole channels, and the payloads SPF sends a module. Host only (it grows a `Vec`).

use crate::capi_session::STEP_PROCESS;
use lpai_direct::capi::{media_format, RegisterEventToDspClientV2};
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
