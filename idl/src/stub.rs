//! Stub side: lays out one call's primary buffers and `remote_arg` array from a [`Method`], and reads the
//! `rout` scalars back, with the same layout functions the skel validates against.

use crate::layout::{Direction, Kind, Method, Slot, MAX_BUFFERS, MAX_PRIMARY_BYTES};
use crate::remote::RemoteArg;
use core::ffi::{c_void, CStr};
use core::marker::PhantomData;
use core::ptr;

/// One call being built; the buffers it points at are borrowed for `'a`.
pub struct Encoder<'a> {
    method: &'a Method,
    primary_in: [u8; MAX_PRIMARY_BYTES],
    primary_out: [u8; MAX_PRIMARY_BYTES],
    buffers: [(*mut c_void, usize); 2 * MAX_BUFFERS],
    _borrows: PhantomData<&'a mut [u8]>,
}

/// Why a parameter could not be set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// No parameter at that index has that kind and direction.
    WrongParameter {
        /// The parameter index.
        index: usize,
    },
    /// A sequence longer than a u32 count can say.
    TooLong {
        /// The parameter index.
        index: usize,
    },
    /// A sequence whose byte length is not a whole number of elements.
    PartialElement {
        /// The parameter index.
        index: usize,
    },
}

impl<'a> Encoder<'a> {
    /// Starts a call to `method`.
    pub fn new(method: &'a Method) -> Encoder<'a> {
        Encoder {
            method,
            primary_in: [0; MAX_PRIMARY_BYTES],
            primary_out: [0; MAX_PRIMARY_BYTES],
            buffers: [(ptr::null_mut(), 0); 2 * MAX_BUFFERS],
            _borrows: PhantomData,
        }
    }

    fn set_in<const N: usize>(&mut self, index: usize, bytes: [u8; N]) -> Result<&mut Self, EncodeError> {
        let param = self.method.params.get(index);
        match (self.method.slot(index), param.map(|p| (p.direction, p.kind.scalar_bytes()))) {
            (Some(Slot::PrimaryIn { offset }), Some((Direction::In, Some(size)))) if size == N => {
                let target =
                    self.primary_in.get_mut(offset..offset + N).ok_or(EncodeError::WrongParameter { index })?;
                crate::copy_prefix(target, &bytes);
                Ok(self)
            }
            _ => Err(EncodeError::WrongParameter { index }),
        }
    }

    /// Sets `in` 32-bit scalar `index`, unsigned.
    pub fn u32(&mut self, index: usize, value: u32) -> Result<&mut Self, EncodeError> {
        self.set_in(index, value.to_le_bytes())
    }

    /// Sets `in` 32-bit scalar `index`, signed.
    pub fn i32(&mut self, index: usize, value: i32) -> Result<&mut Self, EncodeError> {
        self.set_in(index, value.to_le_bytes())
    }

    /// Sets `in` 64-bit scalar `index`.
    pub fn u64(&mut self, index: usize, value: u64) -> Result<&mut Self, EncodeError> {
        self.set_in(index, value.to_le_bytes())
    }

    fn set_buffer(
        &mut self,
        index: usize,
        direction: Direction,
        pointer: *mut c_void,
        bytes: usize,
    ) -> Result<&mut Self, EncodeError> {
        let element = self.method.params.get(index).and_then(|p| p.kind.element_bytes());
        match (self.method.slot(index), element) {
            (Some(Slot::Buffer { arg, count_offset, direction: wanted }), Some(element)) if wanted == direction => {
                if !bytes.is_multiple_of(element) {
                    return Err(EncodeError::PartialElement { index });
                }
                let count = u32::try_from(bytes / element).map_err(|_| EncodeError::TooLong { index })?;
                let wrong = EncodeError::WrongParameter { index };
                let target = self.primary_in.get_mut(count_offset..count_offset + 4).ok_or(wrong)?;
                crate::copy_prefix(target, &count.to_le_bytes());
                *self.buffers.get_mut(arg).ok_or(wrong)? = (pointer, bytes);
                Ok(self)
            }
            _ => Err(EncodeError::WrongParameter { index }),
        }
    }

    /// Sets `in` sequence `index` (its length must be a whole number of elements).
    pub fn bytes(&mut self, index: usize, data: &'a [u8]) -> Result<&mut Self, EncodeError> {
        if self.method.params.get(index).map(|p| p.kind) == Some(Kind::String) {
            return Err(EncodeError::WrongParameter { index });
        }
        self.set_buffer(index, Direction::In, data.as_ptr().cast_mut().cast(), data.len())
    }

    /// Sets `in` string `index` (sent with its NUL, which its count includes).
    pub fn string(&mut self, index: usize, text: &'a CStr) -> Result<&mut Self, EncodeError> {
        if self.method.params.get(index).map(|p| p.kind) != Some(Kind::String) {
            return Err(EncodeError::WrongParameter { index });
        }
        let with_nul = text.to_bytes_with_nul();
        self.set_buffer(index, Direction::In, with_nul.as_ptr().cast_mut().cast(), with_nul.len())
    }

    /// Sets `rout` sequence `index`: the callee may fill up to its length.
    pub fn rout_bytes(&mut self, index: usize, buffer: &'a mut [u8]) -> Result<&mut Self, EncodeError> {
        self.set_buffer(index, Direction::Rout, buffer.as_mut_ptr().cast(), buffer.len())
    }

    /// The `sc` word and the `remote_arg` array for the call. The array points into this encoder, which must
    /// not move or be dropped until the call returns.
    pub fn args(&mut self) -> (u32, [RemoteArg; 2 * MAX_BUFFERS], usize) {
        let totals = self.method.totals();
        let mut args = [RemoteArg::buffer(ptr::null_mut(), 0); 2 * MAX_BUFFERS];
        for (arg, &(pointer, bytes)) in args.iter_mut().zip(self.buffers.iter()) {
            *arg = RemoteArg::buffer(pointer, bytes);
        }
        if totals.primary_in_bytes > 0 {
            args[0] = RemoteArg::buffer(self.primary_in.as_mut_ptr().cast(), totals.primary_in_bytes);
        }
        if let Some(arg) = self.method.primary_out_arg() {
            args[arg] = RemoteArg::buffer(self.primary_out.as_mut_ptr().cast(), totals.primary_out_bytes);
        }
        (self.method.scalars(), args, self.method.in_buffers() + self.method.out_buffers())
    }

    fn rout<const N: usize>(&self, index: usize) -> Result<[u8; N], EncodeError> {
        let param = self.method.params.get(index);
        match (self.method.slot(index), param.map(|p| (p.direction, p.kind.scalar_bytes()))) {
            (Some(Slot::PrimaryOut { offset }), Some((Direction::Rout, Some(size)))) if size == N => {
                let mut bytes = [0u8; N];
                bytes.copy_from_slice(&self.primary_out[offset..offset + N]);
                Ok(bytes)
            }
            _ => Err(EncodeError::WrongParameter { index }),
        }
    }

    /// `rout` 32-bit scalar `index` after the call, unsigned.
    pub fn rout_u32(&self, index: usize) -> Result<u32, EncodeError> {
        self.rout::<4>(index).map(u32::from_le_bytes)
    }

    /// `rout` 32-bit scalar `index` after the call, signed.
    pub fn rout_i32(&self, index: usize) -> Result<i32, EncodeError> {
        self.rout::<4>(index).map(i32::from_le_bytes)
    }

    /// `rout` 64-bit scalar `index` after the call.
    pub fn rout_u64(&self, index: usize) -> Result<u64, EncodeError> {
        self.rout::<8>(index).map(u64::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::{Direction, Kind, Method, Param};

    const EXECUTE: Method = Method {
        name: "execute",
        id: 7,
        params: &[
            Param { name: "context_id", direction: Direction::In, kind: Kind::Word },
            Param { name: "inputs", direction: Direction::In, kind: Kind::Sequence { element_bytes: 1 } },
            Param { name: "label", direction: Direction::In, kind: Kind::String },
            Param { name: "outputs", direction: Direction::Rout, kind: Kind::Sequence { element_bytes: 1 } },
            Param { name: "ticks", direction: Direction::Rout, kind: Kind::Double },
            Param { name: "attempts", direction: Direction::Rout, kind: Kind::Word },
        ],
    };

    #[test]
    fn what_the_stub_encodes_the_skel_decodes() {
        let inputs = [1u8, 2, 3];
        let mut outputs = [0u8; 5];
        let mut encoder = super::Encoder::new(&EXECUTE);
        encoder.i32(0, -7).unwrap().bytes(1, &inputs).unwrap().string(2, c"hi").unwrap();
        encoder.rout_bytes(3, &mut outputs).unwrap();
        assert!(encoder.u32(1, 3).is_err() && encoder.bytes(2, &inputs).is_err() && encoder.rout_u32(4).is_err());
        let (scalars, mut args, count) = encoder.args();
        assert_eq!((scalars, count), (0x0703_0200, 5));
        {
            let plan = crate::layout::Plan::of(&EXECUTE);
            // SAFETY: args describes live buffers owned by this test.
            let mut call = unsafe { crate::skel::decode(&plan, scalars, args.as_mut_ptr()) }.unwrap();
            assert_eq!(call.i32(0), Ok(-7));
            assert_eq!(call.bytes(1), Ok(&[1u8, 2, 3][..]));
            assert_eq!(call.string(2).unwrap().to_bytes(), b"hi");
            call.take_rout_bytes(3).unwrap().copy_from_slice(b"hello");
            assert!(call.take_rout_bytes(3).is_err(), "a rout buffer is handed out once");
            call.set_u64(4, 1 << 40).unwrap();
            call.set_u32(5, 3).unwrap();
            assert!(call.set_u32(4, 1).is_err() && call.u32(0).is_ok() && call.u64(0).is_err());
        } // The skel's view of the buffers ends here, before the stub reads them.
        assert_eq!(encoder.rout_u64(4), Ok(1 << 40));
        assert_eq!(encoder.rout_u32(5), Ok(3));
        assert_eq!(&outputs, b"hello");
    }
}
