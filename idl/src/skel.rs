//! Skel side: validates a call exactly as a qaic-generated skel does, then hands out its parameters.
//!
//! Checked before anything is read: the exact number of input and output buffers and handles; every buffer
//! pointer non-null unless its length is 0; no two buffers overlapping; primary buffers at least as large as
//! their layout; each sequence buffer at least count × element size; each string non-empty and ending in NUL.
//! Any miss answers `AEE_EBADPARM` and nothing is touched.

use crate::aee::EBADPARM;
use crate::layout::{BufferParam, Direction, Plan};
use crate::remote::{RemoteArg, RemoteBuf, Scalars};
use core::ffi::CStr;
use core::marker::PhantomData;

/// A validated call: its plan and the caller's `remote_arg` array, whose buffers [`decode`] checked; every
/// parameter is read or written in place, so nothing is copied.
pub struct Decoded<'a> {
    plan: &'a Plan,
    /// The plan's input buffers, then its output buffers (`decode` checked the `sc` word says so).
    args: *mut RemoteArg,
    /// Output arguments already handed out (bit per argument); the primary output's bit is set from the start.
    taken: u32,
    buffers: PhantomData<&'a mut [u8]>,
}

/// Why `decode` refused a call; every refusal answers `AEE_EBADPARM`. Its words are messages of the core's table
/// (`Refused*`), which the skel says by id.
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
}

/// Validates `args` against the method `plan` describes and `scalars`; on success every parameter can be read.
///
/// # Safety
/// `args` must point to the `remote_arg` array that `scalars` describes (as the FastRPC framework, or the
/// local transport, passes it), and each buffer must be valid for reads and writes of its length for `'a`.
#[inline]
pub unsafe fn decode<'a>(plan: &'a Plan, scalars: u32, args: *mut RemoteArg) -> Result<Decoded<'a>, Refusal> {
    let word = Scalars::of(scalars);
    let expected = Scalars::of(plan.scalars());
    if word.method != plan.id()
        || word.in_buffers != expected.in_buffers
        || word.out_buffers != expected.out_buffers
        || word.in_handles != 0
        || word.out_handles != 0
        || !plan.is_supported()
    {
        return Err(Refusal::Counts);
    }
    let count = word.arg_count();
    if count > 0 && args.is_null() {
        return Err(Refusal::NullBuffer);
    }
    // SAFETY: `scalars` describes `count` arguments at `args` (the caller's promise); buffers only.
    let span = |index: usize| unsafe { (*args.add(index)).buf };
    for index in 0..count {
        let buffer = span(index);
        if buffer.pv.is_null() && buffer.len != 0 {
            return Err(Refusal::NullBuffer);
        }
        (buffer.pv as usize).checked_add(buffer.len).ok_or(Refusal::PastAddressSpace)?;
    }
    // Input buffers are only read, so they may share memory; an output buffer must overlap no other buffer.
    let in_count = word.in_buffers as usize;
    for index in in_count..count {
        let output = span(index);
        let (start, end) = (output.pv as usize, output.pv as usize + output.len);
        let overlaps = (0..count).filter(|&other| other != index).any(|other| {
            let other = span(other);
            let (other_start, other_end) = (other.pv as usize, other.pv as usize + other.len);
            other_start != other_end && start < other_end && other_start < end
        });
        if overlaps && start != end {
            return Err(Refusal::Overlap);
        }
    }
    let totals = plan.totals();
    let primary_out_bit = plan.primary_out_arg().map_or(0, |arg| 1u32 << arg);
    let decoded = Decoded { plan, args, taken: primary_out_bit, buffers: PhantomData };
    if decoded.primary_in().len() < totals.primary_in_bytes || decoded.primary_out_length() < totals.primary_out_bytes {
        return Err(Refusal::ShortPrimary);
    }
    for BufferParam { arg, count_offset, element_bytes, output, string } in
        (0..plan.param_count()).filter_map(|index| plan.buffer_param(index))
    {
        let count = decoded.count_at(count_offset).map_err(|_| Refusal::ShortPrimary)?;
        let needed = count.checked_mul(element_bytes).ok_or(Refusal::ShortSequence)?;
        let length = decoded.buffer(arg).filter(|_| (arg < in_count) != output).map(|buffer| buffer.len);
        if length.ok_or(Refusal::ShortSequence)? < needed {
            return Err(Refusal::ShortSequence);
        }
        if string {
            let last = decoded.input(arg).and_then(|b| needed.checked_sub(1).and_then(|end| b.get(end)));
            if last != Some(&0) {
                return Err(Refusal::Unterminated);
            }
        }
    }
    Ok(decoded)
}

#[inline]
fn field<const N: usize>(bytes: &[u8], offset: usize) -> Option<[u8; N]> {
    bytes.get(offset..offset.checked_add(N)?)?.try_into().ok()
}

impl<'a> Decoded<'a> {
    /// Buffer argument `arg`, if the call has it.
    #[inline]
    fn buffer(&self, arg: usize) -> Option<RemoteBuf> {
        let count = self.plan.in_buffers() + self.plan.out_buffers();
        // SAFETY: `decode` checked that `args` holds the plan's buffer arguments.
        (arg < count).then(|| unsafe { (*self.args.add(arg)).buf })
    }

    /// Input buffer `arg`'s bytes.
    #[inline]
    fn input(&self, arg: usize) -> Option<&'a [u8]> {
        let buffer = self.buffer(arg).filter(|_| arg < self.plan.in_buffers())?;
        if buffer.len == 0 {
            return Some(&[]);
        }
        // SAFETY: `decode` checked it is non-null and inside the address space; the caller of `decode` promised it
        // valid for reads for 'a; input buffers are only ever read, so shared slices of them may coexist.
        Some(unsafe { core::slice::from_raw_parts(buffer.pv.cast::<u8>(), buffer.len) })
    }

    /// Hands out output buffer `arg` once.
    fn take_output(&mut self, arg: usize) -> Option<&'a mut [u8]> {
        let bit = 1u32.checked_shl(u32::try_from(arg).ok()?)?;
        let buffer = self.buffer(arg).filter(|_| arg >= self.plan.in_buffers() && self.taken & bit == 0)?;
        self.taken |= bit;
        if buffer.len == 0 {
            return Some(&mut []);
        }
        // SAFETY: as in `input`, valid for writes too; `decode` checked that no other buffer overlaps an output,
        // and `taken` hands each output out once, so this is the only reference to it.
        Some(unsafe { core::slice::from_raw_parts_mut(buffer.pv.cast::<u8>(), buffer.len) })
    }

    #[inline]
    fn primary_in(&self) -> &'a [u8] {
        match self.plan.totals().primary_in_bytes {
            0 => &[],
            _ => self.input(0).unwrap_or(&[]),
        }
    }

    #[inline]
    fn primary_out_length(&self) -> usize {
        self.plan.primary_out_arg().and_then(|arg| self.buffer(arg)).map_or(0, |buffer| buffer.len)
    }

    #[inline]
    fn count_at(&self, offset: usize) -> Result<usize, u32> {
        field::<4>(self.primary_in(), offset).map(|b| u32::from_le_bytes(b) as usize).ok_or(EBADPARM)
    }

    #[inline]
    fn in_scalar<const N: usize>(&self, index: usize) -> Result<[u8; N], u32> {
        let offset = self.plan.scalar_offset(index, false, N).ok_or(EBADPARM)?;
        field::<N>(self.primary_in(), offset).ok_or(EBADPARM)
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

    /// The argument carrying sequence or string `index` travelling in `direction`, and its length: count ×
    /// element bytes.
    fn sequence(&self, index: usize, direction: Direction) -> Result<(usize, usize), u32> {
        let (arg, count_offset, element) = self.plan.sequence(index, direction == Direction::Rout).ok_or(EBADPARM)?;
        Ok((arg, self.count_at(count_offset)?.checked_mul(element).ok_or(EBADPARM)?))
    }

    /// The elements of `in` sequence `index` (exactly count × element bytes), for the whole call.
    pub fn bytes(&self, index: usize) -> Result<&'a [u8], u32> {
        let (arg, length) = self.sequence(index, Direction::In)?;
        self.input(arg).and_then(|buffer| buffer.get(..length)).ok_or(EBADPARM)
    }

    /// `in` string `index`, NUL-terminated (checked by [`decode`]), for the whole call.
    pub fn string(&self, index: usize) -> Result<&'a CStr, u32> {
        if !self.plan.is_string(index) {
            return Err(EBADPARM);
        }
        CStr::from_bytes_until_nul(self.bytes(index)?).map_err(|_| EBADPARM)
    }

    /// `rout` sequence `index`: the caller's buffer, count × element bytes long. Each can be taken once.
    pub fn take_rout_bytes(&mut self, index: usize) -> Result<&'a mut [u8], u32> {
        let (arg, length) = self.sequence(index, Direction::Rout)?;
        self.take_output(arg).and_then(|buffer| buffer.get_mut(..length)).ok_or(EBADPARM)
    }

    #[inline]
    fn set_rout<const N: usize>(&mut self, index: usize, bytes: [u8; N]) -> Result<(), u32> {
        let offset = self.plan.scalar_offset(index, true, N).ok_or(EBADPARM)?;
        let arg = self.plan.primary_out_arg().ok_or(EBADPARM)?;
        let buffer = self.buffer(arg).ok_or(EBADPARM)?;
        let end = offset.checked_add(N).filter(|&end| end <= buffer.len).ok_or(EBADPARM)?;
        // SAFETY: the primary output is an output buffer `decode` checked (non-null as it is longer than `end`,
        // overlapping no other buffer, valid for writes for 'a by its caller's promise) and that `take_output`
        // never hands out: this short-lived slice is the only reference to it.
        let target = unsafe { core::slice::from_raw_parts_mut(buffer.pv.cast::<u8>(), end) };
        crate::copy_prefix(&mut target[offset..], &bytes);
        Ok(())
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
    use crate::layout::{Direction, Kind, Method, Param, Plan};
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

    const PLAN: Plan = Plan::of(&COPY);

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
        assert!(unsafe { super::decode(&PLAN, COPY.scalars(), args.as_mut_ptr()) }.is_ok());
        args[3] = RemoteArg::buffer(primary.as_mut_ptr().cast(), 4);
        // SAFETY: as above; the output now overlaps the primary input.
        let overlapping = unsafe { super::decode(&PLAN, COPY.scalars(), args.as_mut_ptr()) };
        assert_eq!(overlapping.err(), Some(super::Refusal::Overlap));
    }
}
