//! CAPI property lists and payload buffers as the module reads and answers them: every pointer and length the
//! framework passes is checked before a slice is made of it, so the module's own code works on slices alone.

use lpai_direct::capi::{Buffer, CapiError, PortInfo, Property, PropertyList, EBADPARAM, ENEEDMORE};
use lpai_direct::codec::copy_prefix;

/// A payload buffer the framework lends for one call.
pub struct Payload<'c> {
    buffer: &'c mut Buffer,
}

impl<'c> Payload<'c> {
    /// The buffer behind `buffer`, or `None` when it is null.
    ///
    /// # Safety
    /// `buffer` is null or a valid `capi_buf_t` whose `data` is null or `max_data_len` bytes that the framework
    /// lends for the call (`'c`), used by nothing else meanwhile.
    pub unsafe fn new(buffer: *mut Buffer) -> Option<Payload<'c>> {
        // SAFETY: the caller's promise.
        unsafe { buffer.as_mut() }.map(|buffer| Payload { buffer })
    }

    /// The bytes the framework filled (`actual_data_len`); empty for a null buffer, refused when the length is
    /// more than the buffer holds.
    pub fn data(&self) -> Result<&[u8], CapiError> {
        let Buffer { data, actual_data_len, max_data_len } = *self.buffer;
        if actual_data_len > max_data_len {
            return Err(EBADPARAM);
        }
        if data.is_null() || actual_data_len == 0 {
            return Ok(&[]);
        }
        // SAFETY: `data` is `max_data_len` ≥ `actual_data_len` bytes lent for `'c` (`new`'s contract).
        Ok(unsafe { core::slice::from_raw_parts(data.cast::<u8>(), actual_data_len as usize) })
    }

    /// The whole buffer to write into (`max_data_len` bytes); empty for a null buffer.
    pub fn room(&mut self) -> &mut [u8] {
        let Buffer { data, max_data_len, .. } = *self.buffer;
        if data.is_null() {
            return &mut [];
        }
        // SAFETY: `data` is `max_data_len` bytes lent for `'c`, used by nothing else (`new`'s contract).
        unsafe { core::slice::from_raw_parts_mut(data.cast::<u8>(), max_data_len as usize) }
    }

    /// Answers `bytes`: written at the start and `actual_data_len` set; `ENEEDMORE` (writing nothing) when the
    /// buffer is smaller.
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

    /// Sets `actual_data_len` (at most the buffer's size).
    pub fn set_length(&mut self, bytes: usize) {
        self.buffer.actual_data_len = u32::try_from(bytes).unwrap_or(u32::MAX).min(self.buffer.max_data_len);
    }
}

/// The properties of a list, each with its id, port and payload.
///
/// # Safety
/// `list` is null or a valid `capi_proplist_t` whose `props_num` properties are valid for the call (`'c`), each
/// payload as [`Payload::new`] requires; nothing else uses them meanwhile.
pub unsafe fn entries<'c>(list: *mut PropertyList) -> impl Iterator<Item = (u32, PortInfo, Option<Payload<'c>>)> {
    // SAFETY: the caller's promise.
    let list = unsafe { list.as_ref() };
    let properties: &'c mut [Property] = match list {
        Some(list) if !list.properties.is_null() && list.count > 0 => {
            // SAFETY: `count` properties at `properties`, lent for the call (the caller's promise).
            unsafe { core::slice::from_raw_parts_mut(list.properties, list.count as usize) }
        }
        _ => &mut [],
    };
    properties.iter_mut().map(|property| {
        // SAFETY: the property's payload buffer, lent for the call (the caller's promise).
        let payload = unsafe { Payload::new(&mut property.payload) };
        (property.id, property.port_info, payload)
    })
}

/// A `u32` payload's value: the first four bytes, as the framework wrote them (the core's little-endian cursor:
/// every target this module is built for is little-endian).
pub fn word(bytes: &[u8]) -> Option<u32> {
    lpai_direct::bytes::Reader::new(bytes).u32()
}
