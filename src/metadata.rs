//! The metadata record: what libQnnSystem says about a context binary (its graphs and their input and output
//! tensors), read where libQnnSystem exists (the HLOS, or a host running `lpai-net-run inspect`) and handed to a
//! skel or firmware that has none. One writer ([`Writer`], any side) and one reader ([`Record::parse`]: no
//! allocation, every read bounds-checked, the whole record checked before anything of it is used).
//!
//! Layout, little-endian, no padding:
//! ```text
//! record: "LPMD"  u32 version (2)  u8 × 32 binary_sha256  u32 graph_count (1..=8)  graph × graph_count
//! graph:  name  u32 input_count  u32 output_count  tensor × input_count (inputs)  tensor × output_count (outputs)
//! tensor: name  u32 id  u32 tensor_type  u32 data_type  u32 quantization  f32 scale  i32 offset
//!         u32 rank (0..=8)  u32 × rank dimensions (outermost first)
//! name:   u8 length (1..=255)  UTF-8 bytes, no NUL
//! ```
//! Tensors come in graph order. `quantization` is 0 (none: scale and offset are 0) or 1 (QNN's SCALE_OFFSET:
//! `value = (q + offset) × scale`, scale finite and positive); other QNN encodings are refused. `tensor_type` is a
//! `Qnn_TensorType_t` and `data_type` a `Qnn_DataType_t` with a known element size; a tensor holds at most
//! `u32::MAX` bytes (QNN's `dataSize`). Graph names are unique, and tensor ids unique within a graph. Nothing may
//! follow the last graph.
//!
//! `binary_sha256` is the SHA-256 of the context binary the record describes ([`binary_hash`]): the record is made
//! where the binary was read and checked (by libQnnSystem, in a process of its own on the HLOS), and whoever loads
//! with it (the skel, firmware through the embedding API) hashes the binary it is about to hand the backend and
//! refuses it unless the hashes agree, so the PD only ever parses a binary that was checked.

pub mod from_qnn;
mod reader;
#[cfg(test)]
mod tests;

pub use reader::{GraphView, Graphs, Record, Tensors};

use crate::bytes::{self, Sink};
use crate::message::Message;
use crate::qnn::{DataType, TensorType};

/// The first word of a record.
pub const MAGIC: u32 = u32::from_le_bytes(*b"LPMD");
/// The layout version this module reads and writes.
pub const VERSION: u32 = 2;
/// Bytes of the binary's SHA-256 in a record.
pub const HASH_BYTES: usize = 32;
/// Bytes before the first graph: magic, version, hash, graph count.
const HEADER_BYTES: usize = 12 + HASH_BYTES;

/// The SHA-256 of a context binary, as a record carries it.
pub fn binary_hash(binary: &[u8]) -> [u8; HASH_BYTES] {
    crate::sha256::digest(binary)
}
/// Most graphs in one record (the runtime's limit per context).
pub const MAX_GRAPHS: usize = 8;
/// Most inputs, and most outputs, of one graph.
pub const MAX_TENSORS: usize = 64;
/// Most dimensions of one tensor.
pub const MAX_RANK: usize = crate::wire::MAX_RANK;
/// Longest name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// `quantization` of an unquantized tensor.
const QUANTIZATION_NONE: u32 = 0;
/// `quantization` of a SCALE_OFFSET tensor.
const QUANTIZATION_SCALE_OFFSET: u32 = 1;

/// A tensor's quantization.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quantization {
    /// Not quantized (QNN: encoding undefined).
    None,
    /// QNN's SCALE_OFFSET: `value = (q + offset) × scale`.
    ScaleOffset {
        /// The scale.
        scale: f32,
        /// QNN's offset (the negated zero point).
        offset: i32,
    },
}

/// One input or output tensor of a graph.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorMeta<'t> {
    /// Its name in the binary.
    pub name: &'t str,
    /// The id graphExecute matches it by.
    pub id: u32,
    /// `Qnn_TensorType_t`.
    pub tensor_type: TensorType,
    /// `Qnn_DataType_t`.
    pub data_type: DataType,
    /// Entries of `dimensions` in use.
    pub rank: u32,
    /// Dimensions, outermost first; entries past `rank` are 0.
    pub dimensions: [u32; MAX_RANK],
    /// Its quantization.
    pub quantization: Quantization,
}

impl TensorMeta<'_> {
    /// The dimensions in use.
    pub fn dimensions(&self) -> &[u32] {
        self.dimensions.get(..self.rank as usize).unwrap_or(&self.dimensions)
    }

    /// Native bytes (elements × element size); `None` for an unknown data type or more than `u32::MAX` bytes.
    pub fn native_bytes(&self) -> Option<u32> {
        let size = self.data_type.element_size()? as u64;
        let bytes = self.dimensions().iter().try_fold(size, |product, &dimension| {
            product.checked_mul(u64::from(dimension)).filter(|&bytes| bytes <= u64::from(u32::MAX))
        })?;
        u32::try_from(bytes).ok()
    }
}

/// Why a record was refused: where, in which graph and tensor (indices; tensors count inputs then outputs),
/// and what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetadataError {
    /// Byte offset in the record where reading stopped.
    pub offset: usize,
    /// The graph being read, if any.
    pub graph: Option<u32>,
    /// The tensor being read, if any: its index among the graph's inputs then outputs.
    pub tensor: Option<u32>,
    /// What is wrong: a message of the table, with no places (its words are its template, rendered on the HLOS
    /// side; the DSP says it as a message).
    pub what: Message,
}

impl core::fmt::Display for MetadataError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "byte {}", self.offset)?;
        if let Some(graph) = self.graph {
            write!(f, ", graph {graph}")?;
        }
        if let Some(tensor) = self.tensor {
            write!(f, ", tensor {tensor}")?;
        }
        write!(f, ": {}", self.what.template())
    }
}

/// Writes a record into a buffer, counting the bytes needed even past its end (so a caller can measure first).
/// Call [`Writer::header`], then per graph [`Writer::graph`] and its tensors (inputs, then outputs), then
/// [`Writer::finish`], which checks what was written with [`Record::parse`].
pub struct Writer<'b> {
    out: bytes::Writer<'b>,
    /// Where a name longer than [`MAX_NAME_BYTES`] was given, if one was.
    long_name: Option<usize>,
}

/// Why [`Writer::finish`] gave no record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The buffer holds fewer bytes than the record needs.
    TooSmall {
        /// The bytes the record needs.
        needed: usize,
    },
    /// What was written is not a valid record.
    Invalid(MetadataError),
}

impl<'b> Writer<'b> {
    /// Writes from the start of `buffer` (which may be empty, to measure).
    pub fn new(buffer: &'b mut [u8]) -> Writer<'b> {
        Writer { out: bytes::Writer::new(buffer), long_name: None }
    }

    fn word(&mut self, word: u32) {
        self.out.u32(word);
    }

    fn name(&mut self, name: &str) {
        match u8::try_from(name.len()) {
            Ok(length) => self.out.u8(length),
            Err(_) => {
                self.long_name.get_or_insert(self.out.needed());
                self.out.u8(0);
            }
        }
        self.out.put(name.as_bytes());
    }

    /// The record's header, for `graph_count` graphs of the binary whose [`binary_hash`] is `binary_hash`.
    pub fn header(&mut self, graph_count: u32, binary_hash: &[u8; HASH_BYTES]) {
        self.word(MAGIC);
        self.word(VERSION);
        self.out.put(binary_hash);
        self.word(graph_count);
    }

    /// A graph's header; its `inputs + outputs` tensors follow.
    pub fn graph(&mut self, name: &str, inputs: u32, outputs: u32) {
        self.name(name);
        self.word(inputs);
        self.word(outputs);
    }

    /// One tensor.
    pub fn tensor(&mut self, tensor: &TensorMeta<'_>) {
        self.name(tensor.name);
        let (kind, scale, offset) = match tensor.quantization {
            Quantization::None => (QUANTIZATION_NONE, 0.0f32, 0),
            Quantization::ScaleOffset { scale, offset } => (QUANTIZATION_SCALE_OFFSET, scale, offset),
        };
        for word in [tensor.id, tensor.tensor_type.0, tensor.data_type.0, kind, scale.to_bits(), offset as u32] {
            self.word(word);
        }
        self.word(tensor.rank);
        for &dimension in tensor.dimensions() {
            self.word(dimension);
        }
    }

    /// Bytes the record needs so far.
    pub fn needed(&self) -> usize {
        self.out.needed()
    }

    /// The record's length once it fits and reads back as a valid record.
    pub fn finish(self) -> Result<usize, WriteError> {
        if let Some(offset) = self.long_name {
            let what = Message::RecordNameTooLong;
            return Err(WriteError::Invalid(MetadataError { offset, graph: None, tensor: None, what }));
        }
        let needed = self.out.needed();
        let written = self.out.written().ok_or(WriteError::TooSmall { needed })?;
        Record::parse(written).map(|_| needed).map_err(WriteError::Invalid)
    }
}
