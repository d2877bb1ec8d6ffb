//! Writes model files (see [`crate::format`]) from a description, for tests and self-tests: [`write()`] writes
//! version 1 (made for the model's own API versions), [`write_version_2`] version 2 with the API versions given,
//! [`write_version_3`] version 3 with the API versions and the custom ops its graphs use.
//!
//! The writer does not validate: it writes what it is told (so tests can make malformed files on purpose) and only
//! refuses what does not fit the fields. [`crate::format::Lpcm::parse`] says whether the result is well-formed.

use crate::format::{ApiVersions, API_VERSIONS_BYTES, GRAPH_BYTES, HEADER_BYTES, MAGIC, MAX_RANK, NAME_BYTES};
use crate::format::{CUSTOM_OP_BYTES, TENSOR_BYTES, VERSION, VERSION_2, VERSION_3};

/// A tensor to write.
#[derive(Clone, Copy, Debug)]
pub struct TensorSpec<'s> {
    /// Name (at most 31 bytes).
    pub name: &'s str,
    /// Tensor id.
    pub id: u32,
    /// `Qnn_DataType_t`.
    pub data_type: u32,
    /// Scale.
    pub scale: f32,
    /// Offset.
    pub offset: i32,
    /// Dimensions (at most 4; the rank is their number).
    pub dims: &'s [u32],
    /// Outputs: the input they read.
    pub source: u32,
    /// Formula multiplier.
    pub multiplier: i32,
    /// Formula addend.
    pub addend: i32,
    /// Formula shift.
    pub shift: u32,
    /// Formula step per frame.
    pub step: i32,
}

/// A graph to write.
#[derive(Clone, Copy, Debug)]
pub struct GraphSpec<'s> {
    /// Name (at most 31 bytes).
    pub name: &'s str,
    /// SCRATCH_MEM_SIZE.
    pub scratch_bytes: u32,
    /// PERSISTENT_MEM_SIZE.
    pub persistent_bytes: u32,
    /// EARLY_TERMINATION period (0: never).
    pub early_every: u32,
    /// Inputs.
    pub inputs: &'s [TensorSpec<'s>],
    /// Outputs.
    pub outputs: &'s [TensorSpec<'s>],
}

/// A custom op a graph uses (version 3): `package::op`, which a registered op package must provide.
#[derive(Clone, Copy, Debug)]
pub struct CustomOpSpec<'s> {
    /// The index of the graph (in the `graphs` written) that uses it.
    pub graph: u32,
    /// The op package's name (at most 31 bytes), e.g. `lpai.test`.
    pub package: &'s str,
    /// The op's name (at most 31 bytes), e.g. `TestGain`.
    pub op: &'s str,
}

/// Bytes a version 1 file with `graphs` and `payload` payload bytes takes.
pub fn file_bytes(graphs: &[GraphSpec<'_>], payload: usize) -> usize {
    let records = graphs.iter().map(|graph| {
        let tensors = graph.inputs.len().saturating_add(graph.outputs.len());
        GRAPH_BYTES.saturating_add(TENSOR_BYTES.saturating_mul(tensors))
    });
    records.fold(HEADER_BYTES.saturating_add(payload), usize::saturating_add)
}

/// Bytes a version 2 file with `graphs` and `payload` payload bytes takes: [`file_bytes`] and the API versions.
pub fn file_bytes_version_2(graphs: &[GraphSpec<'_>], payload: usize) -> usize {
    file_bytes(graphs, payload).saturating_add(API_VERSIONS_BYTES)
}

/// Bytes a version 3 file with `graphs`, `custom_ops` and `payload` payload bytes takes: [`file_bytes_version_2`],
/// the custom op count and the entries.
pub fn file_bytes_version_3(graphs: &[GraphSpec<'_>], custom_ops: &[CustomOpSpec<'_>], payload: usize) -> usize {
    let entries = CUSTOM_OP_BYTES.saturating_mul(custom_ops.len()).saturating_add(4);
    file_bytes_version_2(graphs, payload).saturating_add(entries)
}

struct Cursor<'o> {
    out: &'o mut [u8],
    at: usize,
    fits: bool,
}

impl Cursor<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = self.at.saturating_add(bytes.len());
        match self.out.get_mut(self.at..end) {
            Some(place) => place.copy_from_slice(bytes),
            None => self.fits = false,
        }
        self.at = end;
    }

    fn word(&mut self, value: u32) {
        self.put(&value.to_le_bytes());
    }

    fn name(&mut self, name: &str) {
        let mut field = [0u8; NAME_BYTES];
        match field.get_mut(..name.len()) {
            Some(place) if name.len() < NAME_BYTES => place.copy_from_slice(name.as_bytes()),
            _ => self.fits = false,
        }
        self.put(&field);
    }
}

/// Writes a version 1 file filling all of `out`: the header (`total_bytes` = `out.len()`), the records, then a
/// payload pattern in the bytes left; answers where the payload starts. `None` when something does not fit (a long
/// name, more than 4 dimensions, more than 4 GiB, or `out` too small for the records).
pub fn write(graphs: &[GraphSpec<'_>], out: &mut [u8]) -> Option<usize> {
    write_file(graphs, None, None, out)
}

/// Writes a version 2 file made for `versions` filling all of `out`, as [`write()`] does, with the API versions
/// between the header and the records (`out` sized by [`file_bytes_version_2`]).
pub fn write_version_2(graphs: &[GraphSpec<'_>], versions: ApiVersions, out: &mut [u8]) -> Option<usize> {
    write_file(graphs, Some(versions), None, out)
}

/// Writes a version 3 file made for `versions` whose graphs use `custom_ops`, filling all of `out` as [`write()`]
/// does (`out` sized by [`file_bytes_version_3`]); [`ApiVersions::MODEL`] makes a binary the model loads.
pub fn write_version_3(
    graphs: &[GraphSpec<'_>],
    versions: ApiVersions,
    custom_ops: &[CustomOpSpec<'_>],
    out: &mut [u8],
) -> Option<usize> {
    write_file(graphs, Some(versions), Some(custom_ops), out)
}

/// A whole version 3 file with `payload` payload bytes, made for the model's own API versions (host only).
#[cfg(not(target_arch = "hexagon"))]
pub fn version_3_file(
    graphs: &[GraphSpec<'_>],
    custom_ops: &[CustomOpSpec<'_>],
    payload: usize,
) -> Option<std::vec::Vec<u8>> {
    let mut bytes = std::vec![0; file_bytes_version_3(graphs, custom_ops, payload)];
    write_version_3(graphs, ApiVersions::MODEL, custom_ops, &mut bytes)?;
    Some(bytes)
}

/// Version 1 without `versions`, version 2 with them, version 3 with them and `custom_ops`.
fn write_file(
    graphs: &[GraphSpec<'_>],
    versions: Option<ApiVersions>,
    custom_ops: Option<&[CustomOpSpec<'_>]>,
    out: &mut [u8],
) -> Option<usize> {
    let total = u32::try_from(out.len()).ok()?;
    for (index, byte) in out.iter_mut().enumerate() {
        *byte = (index as u8).wrapping_mul(29).wrapping_add(7);
    }
    let mut cursor = Cursor { out, at: 0, fits: true };
    cursor.put(&MAGIC);
    cursor.word(match (versions, custom_ops) {
        (_, Some(_)) => VERSION_3,
        (Some(_), None) => VERSION_2,
        (None, None) => VERSION,
    });
    cursor.word(total);
    cursor.word(u32::try_from(graphs.len()).ok()?);
    if let Some(ApiVersions { core, backend }) = versions {
        for version in [core, backend] {
            cursor.word(version.major);
            cursor.word(version.minor);
            cursor.word(version.patch);
        }
    }
    if let Some(custom_ops) = custom_ops {
        cursor.word(u32::try_from(custom_ops.len()).ok()?);
        for op in custom_ops {
            cursor.word(op.graph);
            cursor.name(op.package);
            cursor.name(op.op);
        }
    }
    for graph in graphs {
        cursor.name(graph.name);
        cursor.word(graph.scratch_bytes);
        cursor.word(graph.persistent_bytes);
        cursor.word(graph.early_every);
        cursor.word(u32::try_from(graph.inputs.len()).ok()?);
        cursor.word(u32::try_from(graph.outputs.len()).ok()?);
        for tensor in graph.inputs.iter().chain(graph.outputs) {
            if tensor.dims.len() > MAX_RANK {
                return None;
            }
            cursor.name(tensor.name);
            cursor.word(tensor.id);
            cursor.word(tensor.data_type);
            cursor.word(tensor.scale.to_bits());
            cursor.word(tensor.offset as u32);
            cursor.word(tensor.dims.len() as u32);
            for index in 0..MAX_RANK {
                cursor.word(tensor.dims.get(index).copied().unwrap_or(0));
            }
            cursor.word(tensor.source);
            cursor.word(tensor.multiplier as u32);
            cursor.word(tensor.addend as u32);
            cursor.word(tensor.shift);
            cursor.word(tensor.step as u32);
        }
    }
    cursor.fits.then_some(cursor.at)
}
