//! The graph and tensor records of a model file, read with checked accesses and validated field by field.

use super::{malformed, Malformed, Name, MAX_IO, MAX_RANK, MAX_SHIFT, MAX_TENSOR_BYTES, MIN_PERSISTENT_BYTES};
use super::{NAME_BYTES, UFIXED_POINT_16, UFIXED_POINT_8};

/// One graph record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphRecord {
    /// Graph name (NUL-padded).
    pub name: Name,
    /// SCRATCH_MEM_SIZE.
    pub scratch_bytes: u32,
    /// PERSISTENT_MEM_SIZE.
    pub persistent_bytes: u32,
    /// Every `early_every`-th graphExecute answers EARLY_TERMINATION (0: never).
    pub early_every: u32,
    /// Inputs.
    pub input_count: u32,
    /// Outputs.
    pub output_count: u32,
}

/// One tensor record, with its element and byte counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorRecord {
    /// Tensor name (NUL-padded).
    pub name: Name,
    /// Tensor id.
    pub id: u32,
    /// `Qnn_DataType_t` ([`UFIXED_POINT_8`] or [`UFIXED_POINT_16`]).
    pub data_type: u32,
    /// Quantization scale.
    pub scale: f32,
    /// Quantization offset (the negated zero point).
    pub offset: i32,
    /// Dimensions in use.
    pub rank: u32,
    /// Dimensions (unused ones 0).
    pub dims: [u32; MAX_RANK],
    /// Outputs: the index of the input they read.
    pub source: u32,
    /// Formula multiplier.
    pub multiplier: i32,
    /// Formula addend.
    pub addend: i32,
    /// Formula right shift.
    pub shift: u32,
    /// Formula step per frame.
    pub step: i32,
    /// Elements (product of the used dimensions).
    pub elements: u32,
    /// Bytes (elements times the element size).
    pub bytes: u32,
}

impl TensorRecord {
    /// Whether elements are 16-bit.
    pub fn is_wide(&self) -> bool {
        self.data_type == UFIXED_POINT_16
    }
}

pub(super) fn word(bytes: &[u8], at: usize) -> Option<u32> {
    let four = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(<[u8; 4]>::try_from(four).ok()?))
}

pub(super) fn name_at(bytes: &[u8], at: usize) -> Option<Name> {
    <Name>::try_from(bytes.get(at..at.checked_add(NAME_BYTES)?)?).ok()
}

/// The part of a name before its first NUL.
pub fn name_text(name: &Name) -> &[u8] {
    let end = name.iter().position(|&byte| byte == 0).unwrap_or(NAME_BYTES);
    name.get(..end).unwrap_or(&[])
}

/// A name is printable ASCII, not empty, then NULs only (at least one).
pub(super) fn check_name(name: &Name, at: usize) -> Result<(), Malformed> {
    let text = name_text(name);
    if text.is_empty() || text.len() == NAME_BYTES {
        return Err(malformed("name empty or without a NUL", at, text.len() as u64));
    }
    if let Some(bad) = text.iter().position(|byte| !(0x20..=0x7E).contains(byte)) {
        return Err(malformed("name has a byte that is not printable ASCII", at.saturating_add(bad), 0));
    }
    if name.iter().skip(text.len()).any(|&byte| byte != 0) {
        return Err(malformed("name is not NUL-padded", at, 0));
    }
    Ok(())
}

pub(super) fn read_graph(bytes: &[u8], at: usize) -> Result<GraphRecord, Malformed> {
    let field = |offset: usize| at.checked_add(offset).and_then(|place| word(bytes, place));
    let truncated = malformed("file ends inside a graph record", at, bytes.len() as u64);
    let name = name_at(bytes, at).ok_or(truncated)?;
    let (Some(scratch_bytes), Some(persistent_bytes), Some(early_every), Some(input_count), Some(output_count)) =
        (field(32), field(36), field(40), field(44), field(48))
    else {
        return Err(truncated);
    };
    check_name(&name, at)?;
    if persistent_bytes < MIN_PERSISTENT_BYTES {
        return Err(malformed(
            "persistent_bytes below the 16-byte persistent header",
            at + 36,
            persistent_bytes.into(),
        ));
    }
    if input_count == 0 || input_count as usize > MAX_IO {
        return Err(malformed("input_count not in 1..=4", at + 44, input_count.into()));
    }
    if output_count == 0 || output_count as usize > MAX_IO {
        return Err(malformed("output_count not in 1..=4", at + 48, output_count.into()));
    }
    Ok(GraphRecord { name, scratch_bytes, persistent_bytes, early_every, input_count, output_count })
}

pub(super) fn read_tensor(bytes: &[u8], at: usize, input: bool, input_count: u32) -> Result<TensorRecord, Malformed> {
    let field = |offset: usize| at.checked_add(offset).and_then(|place| word(bytes, place));
    let truncated = malformed("file ends inside a tensor record", at, bytes.len() as u64);
    let name = name_at(bytes, at).ok_or(truncated)?;
    let mut words = [0u32; 14];
    for (index, slot) in words.iter_mut().enumerate() {
        *slot = field(32 + 4 * index).ok_or(truncated)?;
    }
    let [id, data_type, scale, offset, rank, d0, d1, d2, d3, source, multiplier, addend, shift, step] = words;
    check_name(&name, at)?;
    let element_size: u64 = match data_type {
        UFIXED_POINT_8 => 1,
        UFIXED_POINT_16 => 2,
        _ => return Err(malformed("data_type is not UFIXED_POINT_8 or UFIXED_POINT_16", at + 36, data_type.into())),
    };
    let scale = f32::from_bits(scale);
    if !scale.is_finite() || scale <= 0.0 {
        return Err(malformed("scale is not a finite positive number", at + 40, scale.to_bits().into()));
    }
    if rank == 0 || rank as usize > MAX_RANK {
        return Err(malformed("rank not in 1..=4", at + 48, rank.into()));
    }
    let dims = [d0, d1, d2, d3];
    let mut elements: u64 = 1;
    for (index, &dimension) in dims.iter().enumerate() {
        let used = index < rank as usize;
        if used == (dimension == 0) {
            return Err(malformed(
                "a used dimension is 0 or an unused one is not",
                at + 52 + 4 * index,
                dimension.into(),
            ));
        }
        elements = elements.saturating_mul(u64::from(dimension.max(1)));
    }
    let size = elements.saturating_mul(element_size);
    if size > MAX_TENSOR_BYTES {
        return Err(malformed("tensor larger than 1 MiB", at + 52, size));
    }
    if (input && source != 0) || (!input && source >= input_count) {
        return Err(malformed("source is not 0 (input) or an input index (output)", at + 68, source.into()));
    }
    if shift > MAX_SHIFT {
        return Err(malformed("shift above 31", at + 80, shift.into()));
    }
    Ok(TensorRecord {
        name,
        id,
        data_type,
        scale,
        offset: offset as i32,
        rank,
        dims,
        source,
        multiplier: multiplier as i32,
        addend: addend as i32,
        shift,
        step: step as i32,
        // Both fit: at most 1 MiB.
        elements: elements as u32,
        bytes: size as u32,
    })
}
