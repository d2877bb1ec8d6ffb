//! The audio module's sliding window: one channel's samples as float32 (x / 2^q_factor), the last `length` of them
//! kept in a ring in memory the window owns or borrows (native-order float bytes, as the quantization reads them),
//! and an inference due every `hop` samples once the window is full.

use super::format::{Channel, Sample};

/// Bytes of one float sample in the ring.
const FLOAT_BYTES: usize = 4;

/// The last samples of one channel, in the ring's memory (the model's: allocated when it is loaded).
pub struct Window<Ring> {
    ring: Ring,
    /// Samples the window holds when full.
    length: usize,
    /// Where the next sample goes (a sample index).
    next: usize,
    /// Samples taken so far, up to the window's length.
    filled: usize,
    /// Samples since the last inference; starts at `hop`, so the first is due when the window fills.
    since: usize,
    hop: usize,
}

impl<Ring: AsRef<[u8]> + AsMut<[u8]>> Window<Ring> {
    /// A window over `ring` (as many whole float samples as it holds) with an inference every `hop` samples
    /// (0: the window's length).
    pub fn new(ring: Ring, hop: usize) -> Window<Ring> {
        let length = ring.as_ref().len() / FLOAT_BYTES;
        let hop = if hop == 0 { length } else { hop };
        Window { ring, length, next: 0, filled: 0, since: hop, hop }
    }

    /// Restarts empty with an inference every `hop` samples (0: the window's length).
    pub fn restart(&mut self, hop: usize) {
        self.hop = if hop == 0 { self.length } else { hop };
        self.reset();
    }

    /// Forgets every sample (ALGORITHMIC_RESET).
    pub fn reset(&mut self) {
        self.next = 0;
        self.filled = 0;
        self.since = self.hop;
    }

    /// Samples the window holds when full.
    pub fn length(&self) -> usize {
        self.length
    }

    /// Takes samples from the front of `samples` (one channel's, as [`Channel`] finds them, each a `sample`)
    /// until an inference is due or the samples run out; answers how many samples it took and whether an
    /// inference is now due (then [`Window::ordered`] gives its input and [`Window::inferred`] must follow). Of the
    /// samples taken, only those that can still be in the window when the next inference runs (the last `length`
    /// before it) are converted.
    pub fn take(&mut self, samples: Channel<'_>, sample: Sample) -> (usize, bool) {
        if self.length == 0 {
            return (samples.len(), false);
        }
        let until_due = (self.length - self.filled).max(self.hop.saturating_sub(self.since)).max(1);
        let count = samples.len().min(until_due);
        // Samples the ring would overwrite before the inference (more than `length` before it): counted, never
        // converted.
        let skipped = count.min(until_due.saturating_sub(self.length));
        // `(next + skipped) % length` without a division (a helper call on Hexagon). Skipping a whole ring or more
        // leaves nothing in it the next inference reads (`length` samples or more are written before it is due),
        // so where the ring goes on from does not matter: its start.
        let next = self.next + skipped;
        self.next = match next.checked_sub(self.length) {
            _ if skipped >= self.length => 0,
            Some(wrapped) => wrapped,
            None => next,
        };
        self.filled = self.filled.saturating_add(skipped).min(self.length);
        self.since = self.since.saturating_add(skipped);
        let scale = sample.scale();
        let kept = samples.split_at(count).0.split_at(skipped).1;
        let mut rest = kept;
        // In runs up to the ring's end, each converted by one loop.
        while let Some(run) = Some((self.length - self.next).min(rest.len())).filter(|&run| run > 0) {
            let (now, later) = rest.split_at(run);
            let at = self.next * FLOAT_BYTES;
            let slots = self.ring.as_mut().get_mut(at..at + run * FLOAT_BYTES).unwrap_or_default();
            match sample {
                Sample::Q15 => convert(slots, now, |sample: [u8; 2]| f32::from(i16::from_ne_bytes(sample)) * scale),
                Sample::Q32 { .. } => convert(slots, now, |sample: [u8; 4]| i32::from_ne_bytes(sample) as f32 * scale),
            }
            self.next = if self.next + run >= self.length { 0 } else { self.next + run };
            rest = later;
        }
        self.filled = self.filled.saturating_add(kept.len()).min(self.length);
        self.since = self.since.saturating_add(kept.len());
        (count, self.due())
    }

    /// Whether an inference is due: the window is full and `hop` samples came since the last.
    pub fn due(&self) -> bool {
        self.length > 0 && self.filled == self.length && self.since >= self.hop
    }

    /// The window's float bytes, oldest sample first, as two runs.
    pub fn ordered(&self) -> (&[u8], &[u8]) {
        let ring = self.ring.as_ref();
        let split = self.next.saturating_mul(FLOAT_BYTES).min(ring.len());
        let (newest, oldest) = ring.split_at(split);
        let whole = self.length.saturating_mul(FLOAT_BYTES).saturating_sub(split);
        (oldest.get(..whole).unwrap_or(oldest), newest)
    }

    /// Marks the due inference done: the next comes `hop` samples later.
    pub fn inferred(&mut self) {
        self.since = 0;
    }
}

/// Writes each `N`-byte sample of `samples`, as `value` makes it a float, into the next 4 bytes of `slots`: one
/// loop for samples one after the other (unpacked, packed, mono), another for samples among other channels'.
fn convert<const N: usize>(slots: &mut [u8], samples: Channel<'_>, value: impl Fn([u8; N]) -> f32) {
    let slots = slots.as_chunks_mut::<FLOAT_BYTES>().0;
    match samples.chunks::<N>() {
        (chunks, 1) => {
            for (slot, sample) in slots.iter_mut().zip(chunks) {
                *slot = value(*sample).to_ne_bytes();
            }
        }
        (chunks, step) => {
            for (slot, sample) in slots.iter_mut().zip(chunks.iter().step_by(step)) {
                *slot = value(*sample).to_ne_bytes();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn q15(samples: &[i16]) -> Vec<u8> {
        samples.iter().flat_map(|sample| sample.to_ne_bytes()).collect()
    }

    fn floats(bytes: &[u8]) -> Vec<f32> {
        bytes.chunks_exact(4).map(|chunk| f32::from_ne_bytes(chunk.try_into().unwrap())).collect()
    }

    /// Feeds `samples` in frames of `frame`, collecting each due window in order.
    fn windows(length: usize, hop: usize, samples: &[i16], frame: usize) -> Vec<Vec<f32>> {
        let mut ring = std::vec![0u8; length * 4];
        let mut window = Window::new(&mut ring[..], hop);
        let mut seen = Vec::new();
        for frame in samples.chunks(frame) {
            let bytes = q15(frame);
            let mut at = 0;
            while at < bytes.len() {
                let (taken, due) = window.take(Channel::contiguous(&bytes[at..], Sample::Q15), Sample::Q15);
                at += taken * 2;
                if due {
                    let (oldest, newest) = window.ordered();
                    seen.push(floats(oldest).into_iter().chain(floats(newest)).collect());
                    window.inferred();
                }
            }
        }
        seen
    }

    fn scaled(range: core::ops::Range<i16>) -> Vec<f32> {
        range.map(|sample| f32::from(sample) / 32768.0).collect()
    }

    #[test]
    fn the_first_inference_waits_for_a_full_window_then_one_every_hop() {
        let samples: Vec<i16> = (0..10).collect();
        assert_eq!(windows(4, 0, &samples, 3), [scaled(0..4), scaled(4..8)]);
        assert_eq!(windows(4, 2, &samples, 5), [scaled(0..4), scaled(2..6), scaled(4..8), scaled(6..10)]);
        assert_eq!(windows(4, 6, &samples, 1), [scaled(0..4), scaled(6..10)]);
        assert_eq!(windows(4, 1, &samples, 10).len(), 7);
    }

    #[test]
    fn frames_of_any_size_give_the_same_windows() {
        let samples: Vec<i16> = (-300..300).map(|x| x * 97).collect();
        let whole = windows(64, 48, &samples, samples.len());
        for frame in [1, 7, 48, 64, 100] {
            assert_eq!(windows(64, 48, &samples, frame), whole, "frames of {frame}");
        }
        assert_eq!(whole.len(), 12);
    }

    #[test]
    fn a_channel_of_an_interleaved_frame_gives_the_windows_of_its_own_samples() {
        let samples: Vec<i16> = (-300..300).map(|x| x * 97).collect();
        let expected = windows(64, 48, &samples, samples.len());
        // Stereo interleaved, the samples on channel 1, channel 0 their negation; frames of 37 sample pairs.
        let interleaved = q15(&samples.iter().flat_map(|&x| [-x, x]).collect::<Vec<i16>>());
        let mut ring = std::vec![0u8; 64 * 4];
        let mut window = Window::new(&mut ring[..], 48);
        let mut seen = Vec::new();
        for frame in interleaved.chunks(37 * 4) {
            let mut channel = Channel::within(frame, 2, 4, frame.len() / 4, Sample::Q15).unwrap();
            while !channel.is_empty() {
                let (taken, due) = window.take(channel, Sample::Q15);
                channel = channel.split_at(taken).1;
                if due {
                    let (oldest, newest) = window.ordered();
                    seen.push(floats(oldest).into_iter().chain(floats(newest)).collect::<Vec<f32>>());
                    window.inferred();
                }
            }
        }
        assert_eq!(seen, expected);
        window.restart(16);
        assert!(!window.due());
        let half = q15(&[1; 32]);
        assert_eq!(window.take(Channel::contiguous(&half, Sample::Q15), Sample::Q15), (32, false), "empty again");
    }

    #[test]
    fn a_hop_longer_than_the_window_skips_samples_no_window_holds_whatever_the_frames() {
        let samples: Vec<i16> = (0..400).collect();
        let expected = [scaled(0..16), scaled(100..116), scaled(200..216), scaled(300..316)];
        for frame in [1, 7, 16, 17, 99, 100, 101, 333, 400] {
            assert_eq!(windows(16, 100, &samples, frame), expected, "frames of {frame}");
        }
    }

    #[test]
    fn samples_become_x_over_two_to_the_q_factor() {
        let mut ring = [0u8; 12];
        let mut window = Window::new(&mut ring[..], 0);
        let bytes: Vec<u8> = [i32::MIN, -1, i32::MAX].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let q31 = Sample::Q32 { q_factor: 31 };
        assert_eq!(window.take(Channel::contiguous(&bytes, q31), q31), (3, true));
        let (oldest, newest) = window.ordered();
        assert_eq!(
            (floats(oldest), floats(newest)),
            (std::vec![-1.0, -(f32::from_bits(0x3000_0000)), 1.0], Vec::new())
        );
        window.reset();
        assert!(!window.due());
        assert_eq!(window.take(Channel::contiguous(&(-32768i16).to_ne_bytes(), Sample::Q15), Sample::Q15), (1, false));
    }

    #[test]
    fn a_ring_of_no_whole_sample_never_infers() {
        let mut ring = [0u8; 3];
        let mut window = Window::new(&mut ring[..], 0);
        assert_eq!(window.take(Channel::contiguous(&[1, 0, 2, 0], Sample::Q15), Sample::Q15), (2, false));
        assert_eq!(window.ordered(), (&[][..], &[][..]));
    }
}
