//! CAPI property lists and payload buffers as the module reads and answers them: every pointer and length the
//! framework passes is checked before a slice is made of it, so the module's own code works on slices alone. A
//! payload the module reads is its `actual_data_len` bytes and nothing else (SPF leaves `max_data_len` unset on
//! some of them, event registration's for one); a payload it writes into is checked whole (`actual <= max`).

use lpai_direct::capi::{Buffer, CapiError, PortInfo, Property, PropertyList, EBADPARAM, ENEEDMORE};
use lpai_direct::codec::copy_prefix;

/// What the module does with a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// It reads `actual_data_len` bytes (set_param, set_properties): `max_data_len` is never read.
    Read,
    /// It writes an answer into `max_data_len` bytes (get_param, get_properties, the static queries).
    Write,
}

/// A payload buffer the framework lends for one call.
pub struct Payload<'c> {
    buffer: &'c mut Buffer,
    access: Access,
}

impl<'c> Payload<'c> {
    /// The buffer behind `buffer` to read, or `None` when it is null.
    ///
    /// # Safety
    /// `buffer` is null or a valid `capi_buf_t` whose `data` is null or `actual_data_len` readable bytes that the
    /// framework lends for the call (`'c`), written by nothing else meanwhile.
    pub unsafe fn to_read(buffer: *mut Buffer) -> Option<Payload<'c>> {
        // SAFETY: forwarded.
        unsafe { Payload::new(buffer, Access::Read) }
    }

    /// The buffer behind `buffer` to answer into, or `None` when it is null.
    ///
    /// # Safety
    /// `buffer` is null or a valid `capi_buf_t` whose `data` is null or `max_data_len` bytes that the framework
    /// lends for the call (`'c`), used by nothing else meanwhile.
    pub unsafe fn to_write(buffer: *mut Buffer) -> Option<Payload<'c>> {
        // SAFETY: forwarded.
        unsafe { Payload::new(buffer, Access::Write) }
    }

    /// # Safety
    /// As [`Payload::to_read`] or [`Payload::to_write`] require for `access`.
    unsafe fn new(buffer: *mut Buffer, access: Access) -> Option<Payload<'c>> {
        // SAFETY: the caller's promise.
        unsafe { buffer.as_mut() }.map(|buffer| Payload { buffer, access })
    }

    /// The bytes the framework filled (`actual_data_len`); empty for a null buffer. A payload to write is refused
    /// when that length is more than the buffer holds.
    pub fn data(&self) -> Result<&[u8], CapiError> {
        self.first(usize::MAX)
    }

    /// The first `limit` bytes the framework filled (all of them when it filled fewer), as [`Payload::data`]: for
    /// a payload whose `actual_data_len` counts more than its struct holds (event registration's).
    pub fn first(&self, limit: usize) -> Result<&[u8], CapiError> {
        let Buffer { data, actual_data_len, max_data_len } = *self.buffer;
        if self.access == Access::Write && actual_data_len > max_data_len {
            return Err(EBADPARAM);
        }
        let length = (actual_data_len as usize).min(limit);
        if data.is_null() || length == 0 {
            return Ok(&[]);
        }
        // SAFETY: `data` is `actual_data_len` ≥ `length` readable bytes lent for `'c` (the constructors'
        // contracts; for a payload to write, `max_data_len` ≥ `actual_data_len` bytes, checked above).
        Ok(unsafe { core::slice::from_raw_parts(data.cast::<u8>(), length) })
    }

    /// The whole buffer to write into (`max_data_len` bytes); empty for a null buffer or a payload to read.
    pub fn room(&mut self) -> &mut [u8] {
        let Buffer { data, max_data_len, .. } = *self.buffer;
        if data.is_null() || self.access == Access::Read {
            return &mut [];
        }
        // SAFETY: `data` is `max_data_len` bytes lent for `'c`, used by nothing else (`to_write`'s contract).
        unsafe { core::slice::from_raw_parts_mut(data.cast::<u8>(), max_data_len as usize) }
    }

    /// Answers `bytes`: written at the start and `actual_data_len` set; `ENEEDMORE` (writing nothing, the length
    /// 0) when the buffer is smaller.
    pub fn answer(&mut self, bytes: &[u8]) -> Result<(), CapiError> {
        let room = self.room();
        let Some(target) = room.get_mut(..bytes.len()) else {
            self.buffer.actual_data_len = 0;
            return Err(ENEEDMORE);
        };
        copy_prefix(target, bytes);
        self.buffer.actual_data_len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        Ok(())
    }

    /// Sets `actual_data_len`: at most the buffer's size for a payload to write, at most what it holds for one to
    /// read (whose `max_data_len` is not read).
    pub fn set_length(&mut self, bytes: usize) {
        let limit = match self.access {
            Access::Read => self.buffer.actual_data_len,
            Access::Write => self.buffer.max_data_len,
        };
        self.buffer.actual_data_len = u32::try_from(bytes).unwrap_or(u32::MAX).min(limit);
    }
}

/// The properties of a list, each with its id, port and payload, to read or to write as `access` says.
///
/// # Safety
/// `list` is null or a valid `capi_proplist_t` whose `props_num` properties are valid for the call (`'c`), each
/// payload as [`Payload::to_read`] or [`Payload::to_write`] requires for `access`; nothing else uses them meanwhile.
pub unsafe fn entries<'c>(
    list: *mut PropertyList,
    access: Access,
) -> impl Iterator<Item = (u32, PortInfo, Option<Payload<'c>>)> {
    // SAFETY: the caller's promise.
    let list = unsafe { list.as_ref() };
    let properties: &'c mut [Property] = match list {
        Some(list) if !list.properties.is_null() && list.count > 0 => {
            // SAFETY: `count` properties at `properties`, lent for the call (the caller's promise).
            unsafe { core::slice::from_raw_parts_mut(list.properties, list.count as usize) }
        }
        _ => &mut [],
    };
    properties.iter_mut().map(move |property| {
        // SAFETY: the property's payload buffer, lent for the call as `access` requires (the caller's promise).
        let payload = unsafe { Payload::new(&mut property.payload, access) };
        (property.id, property.port_info, payload)
    })
}

/// A `u32` payload's value: the first four bytes, as the framework wrote them (the core's little-endian cursor:
/// every target this module is built for is little-endian).
pub fn word(bytes: &[u8]) -> Option<u32> {
    lpai_direct::bytes::Reader::new(bytes).u32()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_to_read_never_looks_at_max_data_len_and_one_to_write_is_checked_whole() {
        let mut bytes = [1u8, 2, 3, 4, 5];
        for max_data_len in [0, 2, 5, 0xDEAD_BEEF] {
            let mut buffer = Buffer { data: bytes.as_mut_ptr().cast(), actual_data_len: 4, max_data_len };
            // SAFETY: 4 readable bytes at `data`, alive for the test.
            let mut payload = unsafe { Payload::to_read(&mut buffer) }.unwrap();
            assert_eq!(payload.data(), Ok(&[1u8, 2, 3, 4][..]), "max_data_len {max_data_len}");
            assert_eq!(payload.first(3), Ok(&[1u8, 2, 3][..]));
            assert_eq!(payload.first(9), Ok(&[1u8, 2, 3, 4][..]));
            assert!(payload.room().is_empty(), "a payload to read has no room to write");
            payload.set_length(9);
            assert_eq!(buffer.actual_data_len, 4, "a payload to read only gets shorter");
        }
        let mut buffer = Buffer { data: bytes.as_mut_ptr().cast(), actual_data_len: 4, max_data_len: 3 };
        // SAFETY: 5 bytes at `data`, alive for the test.
        let payload = unsafe { Payload::to_write(&mut buffer) }.unwrap();
        assert_eq!(payload.data(), Err(EBADPARAM));
        let mut buffer = Buffer { data: bytes.as_mut_ptr().cast(), actual_data_len: 0, max_data_len: 5 };
        // SAFETY: as above.
        let mut payload = unsafe { Payload::to_write(&mut buffer) }.unwrap();
        assert_eq!(payload.answer(&[9; 6]), Err(ENEEDMORE));
        assert_eq!(payload.answer(&[9; 2]), Ok(()));
        assert_eq!((bytes, buffer.actual_data_len), ([9, 9, 3, 4, 5], 2));
    }
}
