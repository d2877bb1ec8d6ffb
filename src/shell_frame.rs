//! The frames between the host's `qemu` transport and the PD shell (the virtual aDSP): one request, one reply,
//! over the shell's stdin and stdout. Both sides use this module, so they cannot drift.
//!
//! Every frame is a little-endian `u32` byte count followed by that many bytes.
//! - Request body: `u32 kind`, then
//!   - [`KIND_OPEN`]: the URI's bytes (no NUL; the shell adds one);
//!   - [`KIND_INVOKE`]: `u64 handle`, `u32 scalars`; `u32 region count`, then per region `u32 length`,
//!     `u32 carries bytes` (0 or 1) and, when 1, `length` bytes; `u32 buffer count`, then per buffer `u32 region`
//!     ([`NO_REGION`] for a null pointer), `u32 offset` in it, `u32 length`. A region is the memory of one
//!     buffer, or of several that overlap (so the skel sees the overlap the caller made); the shell puts
//!     canaries around each. Inputs come first, then outputs, as in the `sc` word, whose counts the entries must
//!     match; an entry for each handle the word counts follows them, always `NO_REGION, 0, 0` (the shell passes
//!     a zero handle: the skel's methods take none, so a call with handles is refused by its codec);
//!   - [`KIND_CLOSE`]: `u64 handle`;
//!   - [`KIND_RESOURCES`]: nothing more (the tests' leak checks ask the shell what it holds).
//! - Reply body: `i32 status`, then for open the `u64 handle`; for invoke `u32 guard` ([`GUARD_CANARY`],
//!   [`GUARD_INPUT_CHANGED`]) and each output buffer's bytes (its length; none for a null one), whatever the
//!   status; nothing for close; for resources (status 0) the [`ShellResources`]: `u32 heap blocks`, `u64 heap
//!   bytes`, `u32 files open`, `u32 libraries loaded`.

use crate::bytes::{self, Sink};

/// The body of the one frame the shell writes, unasked, once the skel is loaded and it is ready for requests.
/// A shell that cannot load the skel writes one line to stderr and exits instead.
pub const READY: &[u8] = b"lpai-pd-shell ready 1";

/// Largest frame body either side accepts.
pub const MAX_FRAME_BYTES: u32 = 64 << 20;
/// Most buffers (and so regions) one invoke frame describes (the `sc` word's 8-bit in and out counts).
pub const MAX_BUFFERS: u32 = 510;

/// Request kind: open a handle on the skel.
pub const KIND_OPEN: u32 = 1;
/// Request kind: invoke a method.
pub const KIND_INVOKE: u32 = 2;
/// Request kind: close a handle.
pub const KIND_CLOSE: u32 = 3;
/// Request kind: what the shell holds right now ([`ShellResources`]).
pub const KIND_RESOURCES: u32 = 4;

/// What the PD shell holds for the libraries it loaded, at the moment it is asked: the PD's heap (`malloc`
/// blocks not yet freed and their bytes), the `apps_std` files open and the libraries `dlopen` holds. A skel that
/// frees everything at close brings them back to what they were before its first open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShellResources {
    /// `malloc` blocks not yet freed.
    pub heap_blocks: u32,
    /// Their bytes (as asked for, without the shell's headers).
    pub heap_bytes: u64,
    /// Files `apps_std_fopen` opened and `apps_std_fclose` has not closed.
    pub files: u32,
    /// Libraries `dlopen` holds (the skel itself is not one of them).
    pub libraries: u32,
}

impl ShellResources {
    /// Writes the counts (after the reply's status).
    pub fn write(&self, writer: &mut FrameWriter<'_>) {
        writer.u32(self.heap_blocks);
        writer.u64(self.heap_bytes);
        writer.u32(self.files);
        writer.u32(self.libraries);
    }

    /// Reads the counts [`ShellResources::write`] wrote.
    pub fn read(reader: &mut FrameReader<'_>) -> Option<ShellResources> {
        Some(ShellResources {
            heap_blocks: reader.u32()?,
            heap_bytes: reader.u64()?,
            files: reader.u32()?,
            libraries: reader.u32()?,
        })
    }
}

/// Reply guard bit: a canary before or after some buffer was overwritten.
pub const GUARD_CANARY: u32 = 1;
/// Reply guard bit: the skel wrote into a region that holds only input buffers.
pub const GUARD_INPUT_CHANGED: u32 = 2;

/// Writes a frame into a byte slice, counting what it needs even past the end: write once into an empty slice
/// to learn the size, then into a slice of that size.
pub struct FrameWriter<'b>(bytes::Writer<'b>);

impl<'b> FrameWriter<'b> {
    /// Writes from the start of `buffer`; the first four bytes are the body's length, filled by [`finish`].
    ///
    /// [`finish`]: FrameWriter::finish
    pub fn new(buffer: &'b mut [u8]) -> FrameWriter<'b> {
        FrameWriter(bytes::Writer::at_offset(buffer, 4))
    }

    /// Appends bytes.
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.0.put(bytes);
    }

    /// Appends a `u32`.
    pub fn u32(&mut self, value: u32) {
        self.0.u32(value);
    }

    /// Appends a `u64`.
    pub fn u64(&mut self, value: u64) {
        self.0.u64(value);
    }

    /// Bytes the whole frame needs (length word included).
    pub fn needed(&self) -> usize {
        self.0.needed()
    }

    /// Fills in the length word; `None` when the frame did not fit the slice or is over [`MAX_FRAME_BYTES`].
    pub fn finish(mut self) -> Option<usize> {
        let length = self.0.needed();
        let body = u32::try_from(length - 4).ok().filter(|&body| body <= MAX_FRAME_BYTES)?;
        self.0.buffer().get_mut(..4)?.copy_from_slice(&body.to_le_bytes());
        self.0.fits().then_some(length)
    }
}

/// Reads a frame body (the bytes after the length word): the core's byte cursor.
pub type FrameReader<'b> = bytes::Reader<'b>;

/// The length a frame's first four bytes announce, if within [`MAX_FRAME_BYTES`].
pub fn body_length(header: [u8; 4]) -> Option<usize> {
    Some(u32::from_le_bytes(header)).filter(|&length| length <= MAX_FRAME_BYTES).map(|length| length as usize)
}

/// A buffer's region when it is a null pointer.
pub const NO_REGION: u32 = u32::MAX;

/// One region of memory of an invoke request: a buffer, or the union of buffers that overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionSpec<'b> {
    /// Bytes.
    pub length: u32,
    /// Its bytes as the caller holds them when the region holds an input; `None`: zero-filled.
    pub contents: Option<&'b [u8]>,
}

/// One `remote_arg` buffer of an invoke request: where in which region it lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferSpec {
    /// The region ([`NO_REGION`]: a null pointer).
    pub region: u32,
    /// Offset of the buffer in its region.
    pub offset: u32,
    /// The `remote_arg` length.
    pub length: u32,
}

/// A decoded request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request<'b> {
    /// Open a handle on `uri`.
    Open {
        /// The URI's bytes, without a NUL.
        uri: &'b [u8],
    },
    /// Invoke one method.
    Invoke(Invoke<'b>),
    /// Close a handle.
    Close {
        /// The skel handle.
        handle: u64,
    },
    /// Report what the shell holds ([`ShellResources`]).
    Resources,
}

/// A decoded invoke request, checked whole: every region and buffer is there, each buffer lies inside its
/// region, and the buffers are as many as the `sc` word says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invoke<'b> {
    /// The skel handle.
    pub handle: u64,
    /// The `sc` word.
    pub scalars: u32,
    /// How many of the buffers are inputs (the first ones).
    pub inputs: u32,
    region_count: u32,
    regions: &'b [u8],
    buffer_count: u32,
    buffers: &'b [u8],
}

const BUFFER_RECORD_BYTES: usize = 12;

impl<'b> Invoke<'b> {
    /// The regions, in order.
    pub fn regions(&self) -> impl Iterator<Item = RegionSpec<'b>> + 'b {
        let mut reader = FrameReader::new(self.regions);
        (0..self.region_count).map_while(move |_| read_region(&mut reader))
    }

    /// The buffers, in order (inputs first).
    pub fn buffers(&self) -> impl Iterator<Item = BufferSpec> + 'b {
        let mut reader = FrameReader::new(self.buffers);
        (0..self.buffer_count).map_while(move |_| {
            Some(BufferSpec { region: reader.u32()?, offset: reader.u32()?, length: reader.u32()? })
        })
    }

    /// How many buffers there are.
    pub fn buffer_count(&self) -> u32 {
        self.buffer_count
    }

    /// How many regions there are.
    pub fn region_count(&self) -> u32 {
        self.region_count
    }
}

fn read_region<'b>(reader: &mut FrameReader<'b>) -> Option<RegionSpec<'b>> {
    let (length, carries) = (reader.u32()?, reader.u32()?);
    let contents = match carries {
        0 => None,
        1 => Some(reader.take(length as usize)?),
        _ => return None,
    };
    Some(RegionSpec { length, contents })
}

fn decode_invoke<'b>(reader: &mut FrameReader<'b>) -> Option<Invoke<'b>> {
    let (handle, scalars) = (reader.u64()?, reader.u32()?);
    let inputs = (scalars >> 16) & 0xFF;
    let outputs = (scalars >> 8) & 0xFF;
    let handles = ((scalars >> 4) & 0xF) + (scalars & 0xF);
    let region_count = reader.u32()?;
    let regions_start = reader.position();
    let mut lengths = [0u32; MAX_BUFFERS as usize];
    for index in 0..region_count as usize {
        *lengths.get_mut(index)? = read_region(reader)?.length;
    }
    let regions = reader.bytes().get(regions_start..reader.position())?;
    let buffer_count = reader.u32()?;
    let buffers_proper = inputs + outputs;
    if buffers_proper + handles != buffer_count {
        return None;
    }
    let buffers = reader.take(buffer_count as usize * BUFFER_RECORD_BYTES)?;
    let invoke = Invoke { handle, scalars, inputs, region_count, regions, buffer_count, buffers };
    let inside = |buffer: BufferSpec| match buffer.region {
        NO_REGION => buffer.offset == 0,
        region => lengths
            .get(region as usize)
            .filter(|_| region < region_count)
            .is_some_and(|&length| buffer.offset.checked_add(buffer.length).is_some_and(|end| end <= length)),
    };
    let handle_entry = |buffer: BufferSpec| buffer == BufferSpec { region: NO_REGION, offset: 0, length: 0 };
    let mut index = 0u32;
    invoke
        .buffers()
        .all(|buffer| {
            index += 1;
            if index > buffers_proper {
                handle_entry(buffer)
            } else {
                inside(buffer)
            }
        })
        .then_some(invoke)
}

impl<'b> Request<'b> {
    /// Decodes a request body; `None` when it is malformed (unknown kind, short, trailing bytes, an entry count
    /// that does not match the `sc` word, a buffer outside its region, a handle entry that is not empty, too many
    /// regions).
    pub fn decode(body: &'b [u8]) -> Option<Request<'b>> {
        let mut reader = FrameReader::new(body);
        let request = match reader.u32()? {
            KIND_OPEN => Request::Open { uri: reader.rest() },
            KIND_INVOKE => Request::Invoke(decode_invoke(&mut reader)?),
            KIND_CLOSE => Request::Close { handle: reader.u64()? },
            KIND_RESOURCES => Request::Resources,
            _ => return None,
        };
        reader.at_end().then_some(request)
    }
}

/// Writes an open request.
pub fn write_open(writer: &mut FrameWriter<'_>, uri: &[u8]) {
    writer.u32(KIND_OPEN);
    writer.bytes(uri);
}

/// Writes an invoke request: the regions (length and, for a region holding an input, its bytes), then the
/// buffers.
pub fn write_invoke<'c>(
    writer: &mut FrameWriter<'_>,
    handle: u64,
    scalars: u32,
    regions: impl ExactSizeIterator<Item = RegionSpec<'c>>,
    buffers: impl ExactSizeIterator<Item = BufferSpec>,
) {
    writer.u32(KIND_INVOKE);
    writer.u64(handle);
    writer.u32(scalars);
    writer.u32(regions.len() as u32);
    for region in regions {
        writer.u32(region.length);
        writer.u32(u32::from(region.contents.is_some()));
        if let Some(contents) = region.contents {
            writer.bytes(contents);
        }
    }
    writer.u32(buffers.len() as u32);
    for buffer in buffers {
        writer.u32(buffer.region);
        writer.u32(buffer.offset);
        writer.u32(buffer.length);
    }
}

/// Writes a close request.
pub fn write_close(writer: &mut FrameWriter<'_>, handle: u64) {
    writer.u32(KIND_CLOSE);
    writer.u64(handle);
}

/// Writes a resources request.
pub fn write_resources(writer: &mut FrameWriter<'_>) {
    writer.u32(KIND_RESOURCES);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(write: impl Fn(&mut FrameWriter<'_>)) -> ([u8; 256], usize) {
        let mut measure = FrameWriter::new(&mut []);
        write(&mut measure);
        let mut buffer = [0u8; 256];
        let mut writer = FrameWriter::new(&mut buffer[..measure.needed()]);
        write(&mut writer);
        let length = writer.finish().expect("fits");
        (buffer, length)
    }

    const INPUT: [u8; 3] = [1, 2, 3];

    fn write_example(writer: &mut FrameWriter<'_>, scalars: u32, last_offset: u32) {
        let regions = [RegionSpec { length: 3, contents: Some(&INPUT[..]) }, RegionSpec { length: 16, contents: None }];
        let buffers = [
            BufferSpec { region: 0, offset: 0, length: 3 },
            BufferSpec { region: NO_REGION, offset: 0, length: 9 },
            BufferSpec { region: 1, offset: 0, length: 16 },
            BufferSpec { region: 1, offset: last_offset, length: 4 },
        ];
        write_invoke(writer, 7, scalars, regions.into_iter(), buffers.into_iter());
    }

    #[test]
    fn an_invoke_round_trips_with_its_regions_and_buffers() {
        let (bytes, length) = frame(|writer| write_example(writer, 0x0202_0200, 12));
        assert_eq!(body_length(bytes[..4].try_into().unwrap()), Some(length - 4));
        let Some(Request::Invoke(invoke)) = Request::decode(&bytes[4..length]) else { panic!("an invoke") };
        assert_eq!((invoke.handle, invoke.scalars, invoke.inputs), (7, 0x0202_0200, 2));
        let mut regions = invoke.regions();
        assert_eq!(regions.next(), Some(RegionSpec { length: 3, contents: Some(&INPUT[..]) }));
        assert_eq!(regions.next(), Some(RegionSpec { length: 16, contents: None }));
        assert_eq!(regions.next(), None);
        let mut buffers = invoke.buffers();
        assert_eq!(buffers.nth(1), Some(BufferSpec { region: NO_REGION, offset: 0, length: 9 }));
        assert_eq!(buffers.nth(1), Some(BufferSpec { region: 1, offset: 12, length: 4 }));
        assert_eq!(invoke.buffer_count(), 4);
    }

    #[test]
    fn malformed_requests_are_refused() {
        // A buffer reaching past its region; entry counts that differ from the sc word's buffers and handles.
        for (scalars, last_offset) in [(0x0202_0200, 13), (0x0202_0100, 12), (0x0202_0201, 12), (0x0202_0101, 12)] {
            let (bytes, length) = frame(|writer| write_example(writer, scalars, last_offset));
            assert_eq!(Request::decode(&bytes[4..length]), None, "sc {scalars:#x} offset {last_offset}");
        }
        let (bytes, length) = frame(|writer| write_example(writer, 0x0202_0200, 12));
        for cut in 4..length - 1 {
            assert_eq!(Request::decode(&bytes[4..cut]), None, "cut at {cut}");
        }
        assert_eq!(Request::decode(&9u32.to_le_bytes()), None);
    }

    #[test]
    fn open_and_close_round_trip_and_oversized_lengths_are_refused() {
        let (bytes, length) = frame(|writer| write_open(writer, b"file:///x?y"));
        assert_eq!(Request::decode(&bytes[4..length]), Some(Request::Open { uri: b"file:///x?y" }));
        let (bytes, length) = frame(|writer| write_close(writer, u64::MAX));
        assert_eq!(Request::decode(&bytes[4..length]), Some(Request::Close { handle: u64::MAX }));
        assert_eq!(body_length((MAX_FRAME_BYTES + 1).to_le_bytes()), None);
        let (bytes, length) = frame(write_resources);
        assert_eq!(Request::decode(&bytes[4..length]), Some(Request::Resources));
        assert_eq!(Request::decode(&[&bytes[4..length], &[0][..]].concat()), None, "trailing bytes");
        let counts = ShellResources { heap_blocks: 3, heap_bytes: 1 << 33, files: 1, libraries: 2 };
        let (bytes, length) = frame(|writer| counts.write(writer));
        let mut reader = FrameReader::new(&bytes[4..length]);
        assert_eq!((ShellResources::read(&mut reader), reader.at_end()), (Some(counts), true));
        assert_eq!(ShellResources::read(&mut FrameReader::new(&bytes[4..length - 1])), None);
        let mut small = [0u8; 6];
        let mut writer = FrameWriter::new(&mut small);
        write_close(&mut writer, 1);
        assert_eq!(writer.finish(), None);
    }
}
