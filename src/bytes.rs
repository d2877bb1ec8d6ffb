//! The one little-endian byte cursor of the core's record formats and payloads (the wire records, the job and its
//! report, the metadata record, the shell's frames, the audio module's payloads): [`Reader`] checks every read
//! (`None` past the end, never a panic); [`Sink`] is anything bytes are written to, and [`Writer`] the one that writes
//! into a slice and counts the bytes needed even past its end, so a caller can measure first, then write.

/// Reads little-endian values from a byte slice, front to back.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    /// Reads from the start of `bytes`.
    pub const fn new(bytes: &'b [u8]) -> Reader<'b> {
        Reader { bytes, at: 0 }
    }

    /// Reads `bytes` from byte `at` on.
    pub const fn at_offset(bytes: &'b [u8], at: usize) -> Reader<'b> {
        Reader { bytes, at }
    }

    /// How many bytes were read so far (the next read's offset).
    pub const fn position(&self) -> usize {
        self.at
    }

    /// Every byte, read or not.
    pub const fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// The next `count` bytes.
    pub fn take(&mut self, count: usize) -> Option<&'b [u8]> {
        let end = self.at.checked_add(count)?;
        let taken = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(taken)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// The next byte.
    pub fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[byte]| byte)
    }

    /// The next `u16`.
    pub fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    /// The next `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// The next `i32`.
    pub fn i32(&mut self) -> Option<i32> {
        self.array().map(i32::from_le_bytes)
    }

    /// The next `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// The next `f32`.
    pub fn f32(&mut self) -> Option<f32> {
        self.array().map(f32::from_le_bytes)
    }

    /// A `u32` length, then that many bytes.
    pub fn sized(&mut self) -> Option<&'b [u8]> {
        let length = self.u32()?;
        self.take(usize::try_from(length).ok()?)
    }

    /// [`Reader::sized`] bytes that must be UTF-8.
    pub fn text(&mut self) -> Option<&'b str> {
        core::str::from_utf8(self.sized()?).ok()
    }

    /// Everything not read yet (nothing is left after it).
    pub fn rest(&mut self) -> &'b [u8] {
        let rest = self.bytes.get(self.at..).unwrap_or_default();
        self.at = self.bytes.len();
        rest
    }

    /// Whether every byte was read.
    pub const fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// Somewhere bytes go, with the little-endian writes every format uses; any `FnMut(&[u8])` is one.
pub trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Appends a byte.
    fn u8(&mut self, value: u8) {
        self.put(&[value]);
    }

    /// Appends a `u16`.
    fn u16(&mut self, value: u16) {
        self.put(&value.to_le_bytes());
    }

    /// Appends a `u32`.
    fn u32(&mut self, value: u32) {
        self.put(&value.to_le_bytes());
    }

    /// Appends an `i32`.
    fn i32(&mut self, value: i32) {
        self.put(&value.to_le_bytes());
    }

    /// Appends a `u64`.
    fn u64(&mut self, value: u64) {
        self.put(&value.to_le_bytes());
    }

    /// Appends an `f32`.
    fn f32(&mut self, value: f32) {
        self.put(&value.to_le_bytes());
    }

    /// Appends a `u32` length (saturated at `u32::MAX`; callers bound their lengths), then the bytes.
    fn sized(&mut self, bytes: &[u8]) {
        self.u32(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
        self.put(bytes);
    }
}

impl<F: FnMut(&[u8]) + ?Sized> Sink for F {
    fn put(&mut self, bytes: &[u8]) {
        self(bytes)
    }
}

/// Writes into a slice, counting the bytes needed even past its end.
pub struct Writer<'b> {
    buffer: &'b mut [u8],
    length: usize,
}

impl<'b> Writer<'b> {
    /// Writes from the start of `buffer`.
    pub fn new(buffer: &'b mut [u8]) -> Writer<'b> {
        Writer { buffer, length: 0 }
    }

    /// Writes from byte `at` of `buffer` on (the bytes before are the caller's, a length word to fill in say).
    pub fn at_offset(buffer: &'b mut [u8], at: usize) -> Writer<'b> {
        Writer { buffer, length: at }
    }

    /// Bytes written so far, or needed when they did not fit.
    pub fn needed(&self) -> usize {
        self.length
    }

    /// Whether everything written so far fit.
    pub fn fits(&self) -> bool {
        self.length <= self.buffer.len()
    }

    /// The whole buffer (to fill in what was left for later).
    pub fn buffer(&mut self) -> &mut [u8] {
        self.buffer
    }

    /// What was written, when it all fit.
    pub fn written(&self) -> Option<&[u8]> {
        self.buffer.get(..self.length)
    }
}

impl Writer<'_> {
    /// Appends `N` bytes known at build time: stored in place, no copy call.
    #[inline(always)]
    fn store<const N: usize>(&mut self, bytes: [u8; N]) {
        let end = self.length.saturating_add(N);
        if let Some(target) = self.buffer.get_mut(self.length..end).and_then(<[u8]>::first_chunk_mut::<N>) {
            *target = bytes;
        }
        self.length = end;
    }
}

impl Sink for Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = self.length.saturating_add(bytes.len());
        if let Some(target) = self.buffer.get_mut(self.length..end) {
            lpai_direct_idl::copy_prefix(target, bytes);
        }
        self.length = end;
    }

    #[inline]
    fn u8(&mut self, value: u8) {
        self.store([value]);
    }

    #[inline]
    fn u16(&mut self, value: u16) {
        self.store(value.to_le_bytes());
    }

    #[inline]
    fn u32(&mut self, value: u32) {
        self.store(value.to_le_bytes());
    }

    #[inline]
    fn i32(&mut self, value: i32) {
        self.store(value.to_le_bytes());
    }

    #[inline]
    fn u64(&mut self, value: u64) {
        self.store(value.to_le_bytes());
    }

    #[inline]
    fn f32(&mut self, value: f32) {
        self.store(value.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_and_short_reads_answer_none() {
        let mut buffer = [0u8; 32];
        let mut writer = Writer::new(&mut buffer);
        writer.u8(7);
        writer.u16(0x0102);
        writer.u32(0xDEAD_BEEF);
        writer.i32(-2);
        writer.u64(1 << 40);
        writer.f32(0.5);
        writer.sized(b"ab");
        let needed = writer.needed();
        assert!(writer.fits() && needed == 1 + 2 + 4 + 4 + 8 + 4 + 4 + 2);
        let mut reader = Reader::new(&buffer[..needed]);
        assert_eq!((reader.u8(), reader.u16(), reader.u32()), (Some(7), Some(0x0102), Some(0xDEAD_BEEF)));
        assert_eq!((reader.i32(), reader.u64(), reader.f32()), (Some(-2), Some(1 << 40), Some(0.5)));
        assert_eq!(reader.text(), Some("ab"));
        assert!(reader.at_end() && reader.u8().is_none());
        let mut short = Reader::new(&[1, 2, 3]);
        assert_eq!(short.u32(), None);
        assert_eq!(short.position(), 0, "a read that does not fit moves nothing");
        assert_eq!(Reader::new(&[9, 0, 0, 0, 1]).sized(), None, "a length past the end");
        assert_eq!(short.rest(), &[1, 2, 3]);
        let mut small = [0u8; 2];
        let mut writer = Writer::new(&mut small);
        writer.u32(1);
        assert!(!writer.fits() && writer.needed() == 4);
        let mut collected = [0u8; 9];
        let mut at = 0;
        let mut sink = |bytes: &[u8]| {
            collected[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        sink.u32(5);
        sink.sized(&[1]);
        assert_eq!(collected, [5, 0, 0, 0, 1, 0, 0, 0, 1]);
    }
}
