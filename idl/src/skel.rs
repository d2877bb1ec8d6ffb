//! Skel side: validates a call exactly as a qaic-generated skel does, then hands out its parameters.
//!
//! Checked before anything is read: the exact number of input and output buffers and handles; every buffer
//! pointer non-null unless its length is 0; no two buffers overlapping; primary buffers at least as large as
//! their layout; each sequence buffer at least count × element size; each string non-empty and ending in NUL.
//! Any miss answers `AEE_EBADPARM` and nothing is touched.

use crate::aee::EBADPARM;
use crate::layout::{Direction, Kind, Method, Slot, MAX_BUFFERS};
use crate::remote::{RemoteArg, Scalars};
use core::ffi::CStr;

/// A validated call: the bytes of every buffer, borrowed for the call's duration.
pub struct Decoded<'a> {
    method: &'a Method,
    primary_in: &'a [u8],
    primary_out: &'a mut [u8],
    /// Input buffers (read-only), by argument index.
    inputs: [Option<&'a [u8]>; 2 * MAX_BUFFERS],
    /// Output buffers, by argument index; each handed out once.
    outputs: [Option<&'a mut [u8]>; 2 * MAX_BUFFERS],
}

/// Why `decode` refused a call; every refusal answers `AEE_EBADPARM`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The `sc` word's method, buffer or handle counts do not match the method.
    Counts,
    /// A buffer has a length but no address.
    NullBuffer,
    /// An output buffer overlaps another buffer.
    Overlap,
    /// A buffer's address plus its length runs past the end of the address space.
    PastAddressSpace,
    /// A primary buffer is shorter than its layout.
    ShortPrimary,
    /// A sequence or string buffer is shorter than its count says (or the count overflows).
    ShortSequence,
    /// A string does not end in NUL where its count says.
    Unterminated,
}

impl Refusal {
    /// The AEE code the call answers.
    pub const fn aee(self) -> u32 {
        EBADPARM
    }

    /// What was wrong, for messages.
    pub const fn describe(self) -> &'static str {
        match self {
            Refusal::Counts => "the sc word's buffer or handle counts do not match the method",
            Refusal::NullBuffer => "a buffer has a length but a null address",
            Refusal::Overlap => "outputs overlap another buffer",
            Refusal::PastAddressSpace => "a buffer runs past the end of the address space",
            Refusal::ShortPrimary => "a primary buffer is shorter than its layout",
            Refusal::ShortSequence => "a sequence or string is shorter than its count",
            Refusal::Unterminated => "a string does not end in NUL",
        }
    }
}

/// Validates `args` against `method` and `scalars`; on success every parameter can be read.
///
/// # Safety
/// `args` must point to the `remote_arg` array that `scalars` describes (as the FastRPC framework, or the
/// local transport, passes it), and each buffer must be valid for reads and writes of its length for `'a`.
pub unsafe fn decode<'a>(method: &'a Method, scalars: u32, args: *mut RemoteArg) -> Result<Decoded<'a>, Refusal> {
    let word = Scalars::of(scalars);
    let expected = Scalars::of(method.scalars());
    if word.method != method.id
        || word.in_buffers != expected.in_buffers
        || word.out_buffers != expected.out_buffers
        || word.in_handles != 0
        || word.out_handles != 0
        || !method.is_supported()
    {
        return Err(Refusal::Counts);
    }
    let count = word.arg_count();
    if count > 0 && args.is_null() {
        return Err(Refusal::NullBuffer);
    }
    let mut spans = [(0usize, 0usize); 2 * MAX_BUFFERS];
    for (index, span) in spans.iter_mut().enumerate().take(count) {
        // SAFETY: `scalars` describes `count` arguments at `args` (the caller's promise); buffers only.
        let buffer = unsafe { (*args.add(index)).buf };
        if buffer.pv.is_null() && buffer.len != 0 {
            return Err(Refusal::NullBuffer);
        }
        let start = buffer.pv as usize;
        *span = (start, start.checked_add(buffer.len).ok_or(Refusal::PastAddressSpace)?);
    }
    // Input buffers are only read, so they may share memory; an output buffer must overlap no other buffer.
    let in_count = word.in_buffers as usize;
    for (index, &(start, end)) in spans.iter().enumerate().take(count) {
        let earlier = spans.get(..index).unwrap_or(&[]);
        let overlaps = earlier.iter().enumerate().any(|(other, &(other_start, other_end))| {
            let either_output = index >= in_count || other >= in_count;
            either_output && other_start != other_end && start < other_end && other_start < end
        });
        if overlaps && start != end {
            return Err(Refusal::Overlap);
        }
    }
    let mut inputs: [Option<&'a [u8]>; 2 * MAX_BUFFERS] = [None; 2 * MAX_BUFFERS];
    let mut buffers: [Option<&'a mut [u8]>; 2 * MAX_BUFFERS] = Default::default();
    for index in 0..count {
        // SAFETY: validated above: non-null (or empty), non-overlapping, valid for 'a by the caller's promise.
        let buffer = unsafe { (*args.add(index)).buf };
        if index < in_count {
            let input: &'a [u8] = if buffer.len == 0 {
                &[]
            } else {
                // SAFETY: as above; input buffers are only read, so a shared slice is all that is made.
                unsafe { core::slice::from_raw_parts(buffer.pv.cast::<u8>(), buffer.len) }
            };
            if let Some(slot) = inputs.get_mut(index) {
                *slot = Some(input);
            }
        } else {
            let output: &'a mut [u8] = if buffer.len == 0 {
                &mut []
            } else {
                // SAFETY: as above; output buffers overlap nothing else, so this is the only reference.
                unsafe { core::slice::from_raw_parts_mut(buffer.pv.cast::<u8>(), buffer.len) }
            };
            if let Some(slot) = buffers.get_mut(index) {
                *slot = Some(output);
            }
        }
    }
    let totals = method.totals();
    let primary_in: &'a [u8] = match totals.primary_in_bytes {
        0 => &[],
        _ => inputs.first_mut().and_then(Option::take).ok_or(Refusal::ShortPrimary)?,
    };
    let primary_out: &'a mut [u8] = match method.primary_out_arg() {
        None => &mut [],
        Some(arg) => buffers.get_mut(arg).and_then(Option::take).ok_or(Refusal::ShortPrimary)?,
    };
    if primary_in.len() < totals.primary_in_bytes || primary_out.len() < totals.primary_out_bytes {
        return Err(Refusal::ShortPrimary);
    }
    let decoded = Decoded { method, primary_in, primary_out, inputs, outputs: buffers };
    for index in 0..method.params.len() {
        if let Some(Slot::Buffer { arg, count_offset, direction }) = method.slot(index) {
            let count = decoded.count_at(count_offset).map_err(|_| Refusal::ShortPrimary)?;
            let element = element_bytes(method, index).map_err(|_| Refusal::Counts)?;
            let needed = count.checked_mul(element).ok_or(Refusal::ShortSequence)?;
            let length = match direction {
                Direction::In => decoded.input(arg).map(<[u8]>::len),
                Direction::Rout => decoded.outputs.get(arg).and_then(Option::as_deref).map(<[u8]>::len),
            };
            if length.ok_or(Refusal::ShortSequence)? < needed {
                return Err(Refusal::ShortSequence);
            }
            if method.params.get(index).map(|p| p.kind) == Some(Kind::String) {
                let last = decoded.input(arg).and_then(|b| needed.checked_sub(1).and_then(|end| b.get(end)));
                if last != Some(&0) {
                    return Err(Refusal::Unterminated);
                }
            }
        }
    }
    Ok(decoded)
}

fn element_bytes(method: &Method, index: usize) -> Result<usize, u32> {
    method.params.get(index).and_then(|param| param.kind.element_bytes()).ok_or(EBADPARM)
}

fn field<const N: usize>(bytes: &[u8], offset: usize) -> Option<[u8; N]> {
    bytes.get(offset..offset.checked_add(N)?)?.try_into().ok()
}

impl<'a> Decoded<'a> {
    fn input(&self, arg: usize) -> Option<&'a [u8]> {
        self.inputs.get(arg).copied().flatten()
    }

    fn count_at(&self, offset: usize) -> Result<usize, u32> {
        field::<4>(self.primary_in, offset).map(|b| u32::from_le_bytes(b) as usize).ok_or(EBADPARM)
    }

    fn in_scalar<const N: usize>(&self, index: usize) -> Result<[u8; N], u32> {
        let kind = self.method.params.get(index).map(|p| (p.direction, p.kind.scalar_bytes()));
        match (self.method.slot(index), kind) {
            (Some(Slot::PrimaryIn { offset }), Some((Direction::In, Some(size)))) if size == N => {
                field::<N>(self.primary_in, offset).ok_or(EBADPARM)
            }
            _ => Err(EBADPARM),
        }
    }

    /// `in` 32-bit scalar `index`, unsigned.
    pub fn u32(&self, index: usize) -> Result<u32, u32> {
        self.in_scalar::<4>(index).map(u32::from_le_bytes)
    }

    /// `in` 32-bit scalar `index`, signed.
    pub fn i32(&self, index: usize) -> Result<i32, u32> {
        self.in_scalar::<4>(index).map(i32::from_le_bytes)
    }

    /// `in` 64-bit scalar `index`.
    pub fn u64(&self, index: usize) -> Result<u64, u32> {
        self.in_scalar::<8>(index).map(u64::from_le_bytes)
    }

    /// The elements of `in` sequence `index` (exactly count × element bytes), for the whole call.
    pub fn bytes(&self, index: usize) -> Result<&'a [u8], u32> {
        match self.method.slot(index) {
            Some(Slot::Buffer { arg, count_offset, direction: Direction::In }) => {
                let length = self.count_at(count_offset)? * element_bytes(self.method, index)?;
                self.input(arg).and_then(|b| b.get(..length)).ok_or(EBADPARM)
            }
            _ => Err(EBADPARM),
        }
    }

    /// `in` string `index`, NUL-terminated (checked by [`decode`]), for the whole call.
    pub fn string(&self, index: usize) -> Result<&'a CStr, u32> {
        if self.method.params.get(index).map(|p| p.kind) != Some(Kind::String) {
            return Err(EBADPARM);
        }
        CStr::from_bytes_until_nul(self.bytes(index)?).map_err(|_| EBADPARM)
    }

    /// `rout` sequence `index`: the caller's buffer, count × element bytes long. Each can be taken once.
    pub fn take_rout_bytes(&mut self, index: usize) -> Result<&'a mut [u8], u32> {
        match self.method.slot(index) {
            Some(Slot::Buffer { arg, count_offset, direction: Direction::Rout }) => {
                let length = self.count_at(count_offset)? * element_bytes(self.method, index)?;
                let buffer = self.outputs.get_mut(arg).and_then(Option::take).ok_or(EBADPARM)?;
                buffer.get_mut(..length).ok_or(EBADPARM)
            }
            _ => Err(EBADPARM),
        }
    }

    fn set_rout<const N: usize>(&mut self, index: usize, bytes: [u8; N]) -> Result<(), u32> {
        let kind = self.method.params.get(index).map(|p| (p.direction, p.kind.scalar_bytes()));
        match (self.method.slot(index), kind) {
            (Some(Slot::PrimaryOut { offset }), Some((Direction::Rout, Some(size)))) if size == N => {
                let target = self.primary_out.get_mut(offset..offset + N).ok_or(EBADPARM)?;
                crate::copy_prefix(target, &bytes);
                Ok(())
            }
            _ => Err(EBADPARM),
        }
    }

    /// Sets `rout` 32-bit scalar `index`, unsigned.
    pub fn set_u32(&mut self, index: usize, value: u32) -> Result<(), u32> {
        self.set_rout(index, value.to_le_bytes())
    }

    /// Sets `rout` 32-bit scalar `index`, signed.
    pub fn set_i32(&mut self, index: usize, value: i32) -> Result<(), u32> {
        self.set_rout(index, value.to_le_bytes())
    }

    /// Sets `rout` 64-bit scalar `index`.
    pub fn set_u64(&mut self, index: usize, value: u64) -> Result<(), u32> {
        self.set_rout(index, value.to_le_bytes())
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::{Direction, Kind, Method, Param};
    use crate::remote::RemoteArg;

    const COPY: Method = Method {
        name: "copy",
        id: 2,
        params: &[
            Param { name: "a", direction: Direction::In, kind: Kind::String },
            Param { name: "b", direction: Direction::In, kind: Kind::String },
            Param { name: "out", direction: Direction::Rout, kind: Kind::Sequence { element_bytes: 1 } },
        ],
    };

    #[test]
    fn inputs_may_share_memory_but_an_output_may_not_overlap_anything() {
        let text = *b"same\0";
        let mut primary = [5u8, 0, 0, 0, 5, 0, 0, 0, 4, 0, 0, 0];
        let mut out = [0u8; 8];
        let shared = RemoteArg::buffer(text.as_ptr().cast_mut().cast(), text.len());
        let mut args = [
            RemoteArg::buffer(primary.as_mut_ptr().cast(), primary.len()),
            shared,
            shared,
            RemoteArg::buffer(out.as_mut_ptr().cast(), 8),
        ];
        // SAFETY: every argument points at a live buffer of its length.
        assert!(unsafe { super::decode(&COPY, COPY.scalars(), args.as_mut_ptr()) }.is_ok());
        args[3] = RemoteArg::buffer(primary.as_mut_ptr().cast(), 4);
        // SAFETY: as above; the output now overlaps the primary input.
        let overlapping = unsafe { super::decode(&COPY, COPY.scalars(), args.as_mut_ptr()) };
        assert_eq!(overlapping.err(), Some(super::Refusal::Overlap));
    }
}
