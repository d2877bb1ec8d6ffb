//! One `process` call's PCM as the audio module reads it and passes it on: the input stream's buffers checked
//! against the media format's layout, a channel's samples found where [`Layout::place`] puts them, and the output:
//! the same bytes in the same layout with the lengths SPF reads for it, and the markers a module must propagate.
//! What runs every frame is inlined into `process` (as are `format`'s `Layout` and `Channel` helpers): a call's
//! prologue and epilogue each frame cost more packets than its work (`lpai-packet-bench`).

use super::format::{Channel, Layout, PcmFormat};
use core::ptr::NonNull;
use lpai_direct::capi::{Buffer, CapiError, StreamData, EBADPARAM, ENEEDMORE, EOK};

/// The stream flags a module must propagate from its input to its output: marker_1, marker_2 and marker_3 (bits 3
/// to 5). The framework owns every other flag of the output (end of frame, end of stream, erasure, the timestamp's
/// flags, the stream data version) for a module without the metadata extension.
pub const MARKERS: u32 = 0b111 << 3;

/// Why a frame cannot be read.
pub const FEWER_BUFFERS: &str =
    "the stream has fewer buffers than the layout needs (1 for interleaved or packed, one per channel for unpacked)";
/// See [`FEWER_BUFFERS`].
pub const BAD_BUFFER: &str = "a buffer is null or its actual_data_len is more than its max_data_len";
/// See [`FEWER_BUFFERS`].
pub const NOT_WHOLE: &str = "the frame is not a whole number of samples on every channel";
/// See [`FEWER_BUFFERS`].
pub const UNEQUAL: &str = "the channel buffers of an unpacked frame differ in length";

/// An input frame, checked: the buffers its layout uses, each holding `length` filled bytes.
pub struct Frame<'c> {
    buffers: *const Buffer,
    /// Filled bytes of each buffer the layout uses (the same in all).
    length: usize,
    /// The module's format, borrowed (a copy would cost a call to memcpy every frame).
    format: &'c PcmFormat,
    /// Samples per channel.
    pub samples: usize,
    lent: core::marker::PhantomData<&'c [u8]>,
}

impl<'c> Frame<'c> {
    /// The frame of `stream` in `format`: the buffers its layout uses, their filled bytes (for unpacked V2 every
    /// length is the first buffer's: SPF sets only those); what is wrong when it cannot be read.
    ///
    /// # Safety
    /// `stream` is a valid stream whose `buffer_count` buffers are valid, each buffer's `data` null or
    /// `max_data_len` bytes (for unpacked V2, the first buffer's `max_data_len` bytes), not written during `'c`.
    #[inline(always)]
    pub unsafe fn read(stream: &StreamData, format: &'c PcmFormat) -> Result<Frame<'c>, &'static str> {
        let channels = format.channels as usize;
        let used = format.layout.buffers(channels);
        if stream.buffers.is_null() || (stream.buffer_count as usize) < used.max(1) {
            return Err(FEWER_BUFFERS);
        }
        // SAFETY: buffer 0 of at least one (checked), valid (the caller's promise).
        let Buffer { actual_data_len: length, max_data_len: room, .. } = unsafe { stream.buffers.read() };
        for index in 0..used {
            // SAFETY: buffer `index` < `buffer_count` (checked), valid (the caller's promise).
            let own = unsafe { stream.buffers.add(index).read() };
            let (actual, max) = match format.layout {
                Layout::UnpackedV2 => (length, room),
                _ => (own.actual_data_len, own.max_data_len),
            };
            if actual != length {
                return Err(UNEQUAL);
            }
            if actual > max || (actual > 0 && own.data.is_null()) {
                return Err(BAD_BUFFER);
            }
        }
        let length = length as usize;
        let samples = format.layout.samples(channels, format.sample, length).ok_or(NOT_WHOLE)?;
        Ok(Frame { buffers: stream.buffers, length, format, samples, lent: core::marker::PhantomData })
    }

    /// The filled bytes of buffer `index` (one the layout uses); `None` past them.
    #[inline(always)]
    fn bytes(&self, index: usize) -> Option<&'c [u8]> {
        if index >= self.format.layout.buffers(self.format.channels as usize) {
            return None;
        }
        // SAFETY: a buffer the layout uses, which `read` found among the stream's (the caller's promise: valid).
        let data = unsafe { self.buffers.add(index).read() }.data;
        if self.length == 0 {
            return Some(&[]);
        }
        // SAFETY: `read` checked the buffer holds `length` bytes at `data` (not null), lent and unwritten for `'c`.
        Some(unsafe { core::slice::from_raw_parts(data.cast::<u8>(), self.length) })
    }

    /// Channel `index`'s samples; `None` past the format's channels.
    #[inline(always)]
    pub fn channel(&self, index: usize) -> Option<Channel<'c>> {
        let PcmFormat { channels, layout, sample, .. } = *self.format;
        if index >= channels as usize {
            return None;
        }
        let (buffer, start, stride) = layout.place(index, channels as usize, sample, self.samples)?;
        Channel::within(self.bytes(buffer)?, start, stride, self.samples, sample)
    }

    /// Passes the frame to `output` untouched, in the same layout: in place (the same memory) only the lengths are
    /// set, otherwise the bytes are copied. The lengths set are those SPF reads: every buffer the layout uses, only
    /// the first for unpacked V2. When a buffer has too little room (ENEEDMORE), every one of them is set to 0.
    ///
    /// # Safety
    /// `output` is a valid stream whose `buffer_count` buffers are valid, each buffer's `data` null or
    /// `max_data_len` bytes (for unpacked V2 the first buffer's `max_data_len`), each either the same memory as the
    /// input buffer of its index or memory apart from every input.
    #[inline(always)]
    pub unsafe fn pass_through(&self, output: NonNull<StreamData>) -> CapiError {
        let PcmFormat { channels, layout, .. } = *self.format;
        // SAFETY: a valid stream (the caller's promise), read by value.
        let target = unsafe { output.read() };
        // SAFETY: forwarded.
        let Some(first) = (unsafe { buffer(&target, 0) }) else {
            return EBADPARAM;
        };
        let mut result = EOK;
        for (index, source) in
            (0..layout.buffers(channels as usize)).filter_map(|index| Some((index, self.bytes(index)?)))
        {
            // SAFETY: forwarded.
            let Some(slot) = (unsafe { buffer(&target, index) }) else {
                // SAFETY: forwarded.
                unsafe { clear(output, self.format) };
                return EBADPARAM;
            };
            let room = if layout == Layout::UnpackedV2 { first.max_data_len } else { slot.max_data_len };
            let length = source.len();
            let mut written = u32::try_from(length).unwrap_or(u32::MAX);
            if written > room || (length > 0 && slot.data.is_null()) {
                (result, written) = (result | ENEEDMORE, 0);
            } else if length > 0 && slot.data.cast_const().cast::<u8>() != source.as_ptr() {
                // SAFETY: `length` readable bytes at the input and room for them at the output (checked against
                // the lengths that hold for it); the output is memory apart from the input (the caller's promise).
                unsafe { core::ptr::copy_nonoverlapping(source.as_ptr(), slot.data.cast::<u8>(), length) };
            }
            if layout != Layout::UnpackedV2 || index == 0 {
                // SAFETY: buffer `index` < `buffer_count` of the output stream (found above): its length field.
                unsafe { core::ptr::addr_of_mut!((*target.buffers.add(index)).actual_data_len).write(written) };
            }
        }
        if result != EOK {
            // Channels of unequal lengths are against SPF's contract: a buffer too short makes every length 0.
            // SAFETY: forwarded.
            unsafe { clear(output, self.format) };
        }
        result
    }
}

/// Sets to 0 the output lengths SPF reads for `format`'s layout (after a frame the module could not read).
///
/// # Safety
/// As for [`Frame::pass_through`].
pub unsafe fn clear(output: NonNull<StreamData>, format: &PcmFormat) {
    // SAFETY: a valid stream (the caller's promise), read by value.
    let target = unsafe { output.read() };
    let read_by_spf = match format.layout {
        Layout::UnpackedV2 => 1,
        layout => layout.buffers(format.channels as usize),
    };
    let count = read_by_spf.min(target.buffer_count as usize);
    for index in 0..if target.buffers.is_null() { 0 } else { count } {
        // SAFETY: buffer `index` < `buffer_count` of the output stream: its length field.
        unsafe { core::ptr::addr_of_mut!((*target.buffers.add(index)).actual_data_len).write(0) };
    }
}

/// Copies the markers ([`MARKERS`]) of `input` to `output`, leaving its other flags as the framework set them.
///
/// # Safety
/// `output` is a valid stream.
pub unsafe fn propagate_markers(input: &StreamData, output: NonNull<StreamData>) {
    // SAFETY: the output stream's flags (the caller's promise).
    unsafe {
        let flags = core::ptr::addr_of_mut!((*output.as_ptr()).flags);
        flags.write((flags.read() & !MARKERS) | (input.flags & MARKERS));
    }
}

/// Buffer `index` of `stream`, by value; `None` past the stream's buffers.
///
/// # Safety
/// `stream` is a valid stream whose `buffer_count` buffers at `buffers` are valid.
unsafe fn buffer(stream: &StreamData, index: usize) -> Option<Buffer> {
    if stream.buffers.is_null() || index >= stream.buffer_count as usize {
        return None;
    }
    // SAFETY: `buffer_count` buffers at `buffers` (the caller's promise); `index` is below it.
    Some(unsafe { stream.buffers.add(index).read() })
}
