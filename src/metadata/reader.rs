//! Reading a record: bounds-checked little-endian reads, the whole-record check ([`Record::parse`]) and the
//! iterators over a checked record's graphs and tensors (which re-read it and so cannot fail).

use super::{MetadataError, Quantization, TensorMeta, MAX_GRAPHS, MAX_RANK, MAX_TENSORS};
use super::{HASH_BYTES, HEADER_BYTES, MAGIC, QUANTIZATION_NONE, QUANTIZATION_SCALE_OFFSET, VERSION};
use crate::bytes;
use crate::message::Message;
use crate::qnn::{DataType, TensorType};

/// The byte cursor, its reads answering what is wrong (a message of the table, so that no words are on the DSP).
#[derive(Clone, Copy, Debug)]
struct Cursor<'b>(bytes::Reader<'b>);

const ENDS_EARLY: Message = Message::RecordEndsEarly;

impl<'b> Cursor<'b> {
    fn take(&mut self, count: usize) -> Result<&'b [u8], Message> {
        self.0.take(count).ok_or(ENDS_EARLY)
    }

    fn word(&mut self) -> Result<u32, Message> {
        self.0.u32().ok_or(ENDS_EARLY)
    }

    fn name(&mut self) -> Result<&'b str, Message> {
        let length = match self.0.u8().ok_or(ENDS_EARLY)? {
            0 => return Err(Message::RecordNameEmpty),
            length => usize::from(length),
        };
        let bytes = self.take(length)?;
        if bytes.contains(&0) {
            return Err(Message::RecordNameHoldsNul);
        }
        core::str::from_utf8(bytes).map_err(|_| Message::RecordNameNotUtf8)
    }

    /// A graph's header: name, input count, output count.
    fn graph(&mut self) -> Result<(&'b str, u32, u32), Message> {
        let name = self.name()?;
        let (inputs, outputs) = (self.word()?, self.word()?);
        if inputs as usize > MAX_TENSORS || outputs as usize > MAX_TENSORS {
            return Err(Message::RecordTooManyTensors);
        }
        Ok((name, inputs, outputs))
    }

    /// One tensor, checked.
    fn tensor(&mut self) -> Result<TensorMeta<'b>, Message> {
        let name = self.name()?;
        let id = self.word()?;
        let tensor_type = TensorType(self.word()?);
        if tensor_type.c_name().is_none() {
            return Err(Message::RecordTensorType);
        }
        let data_type = DataType(self.word()?);
        if data_type.element_size().is_none() {
            return Err(Message::RecordElementSize);
        }
        let (kind, scale, offset) = (self.word()?, f32::from_bits(self.word()?), self.word()? as i32);
        let quantization = match kind {
            QUANTIZATION_NONE if scale.to_bits() == 0 && offset == 0 => Quantization::None,
            QUANTIZATION_NONE => return Err(Message::RecordUnquantizedScale),
            QUANTIZATION_SCALE_OFFSET if scale.is_finite() && scale > 0.0 => {
                Quantization::ScaleOffset { scale, offset }
            }
            QUANTIZATION_SCALE_OFFSET => return Err(Message::RecordScaleNotPositive),
            _ => return Err(Message::RecordQuantizationKind),
        };
        let rank = self.word()?;
        if rank as usize > MAX_RANK {
            return Err(Message::RecordRankTooLarge);
        }
        let mut dimensions = [0u32; MAX_RANK];
        for dimension in dimensions.iter_mut().take(rank as usize) {
            *dimension = self.word()?;
        }
        let tensor = TensorMeta { name, id, tensor_type, data_type, rank, dimensions, quantization };
        tensor.native_bytes().ok_or(Message::RecordTensorTooLarge)?;
        Ok(tensor)
    }
}

/// A checked record; reading it again cannot fail.
#[derive(Clone, Copy, Debug)]
pub struct Record<'b> {
    bytes: &'b [u8],
    graph_count: u32,
}

impl<'b> Record<'b> {
    /// Checks a whole record (untrusted bytes): every bound, limit and field; nothing after the last graph.
    pub fn parse(bytes: &'b [u8]) -> Result<Record<'b>, MetadataError> {
        let mut cursor = Cursor(bytes::Reader::new(bytes));
        let error = |cursor: &Cursor<'_>, graph, tensor, what| MetadataError {
            offset: cursor.0.position(),
            graph,
            tensor,
            what,
        };
        let fail = |cursor: &Cursor<'_>, what| error(cursor, None, None, what);
        if cursor.word().map_err(|what| fail(&cursor, what))? != MAGIC {
            return Err(fail(&cursor, Message::RecordNoMagic));
        }
        if cursor.word().map_err(|what| fail(&cursor, what))? != VERSION {
            return Err(fail(&cursor, Message::RecordVersion));
        }
        cursor.take(HASH_BYTES).map_err(|what| fail(&cursor, what))?;
        let graph_count = cursor.word().map_err(|what| fail(&cursor, what))?;
        if graph_count == 0 || graph_count as usize > MAX_GRAPHS {
            return Err(fail(&cursor, Message::RecordGraphCount));
        }
        let mut names = [""; MAX_GRAPHS];
        for graph in 0..graph_count {
            let (name, inputs, outputs) = cursor.graph().map_err(|what| error(&cursor, Some(graph), None, what))?;
            if names.get(..graph as usize).unwrap_or(&[]).contains(&name) {
                return Err(error(&cursor, Some(graph), None, Message::RecordGraphNamesRepeat));
            }
            if let Some(slot) = names.get_mut(graph as usize) {
                *slot = name;
            }
            let start = cursor;
            for tensor in 0..inputs + outputs {
                cursor.tensor().map_err(|what| error(&cursor, Some(graph), Some(tensor), what))?;
            }
            let mut tensors = Tensors { cursor: start, left: inputs + outputs };
            let mut index = 0;
            while let Some(tensor) = tensors.next() {
                if tensors.clone().any(|later| later.id == tensor.id) {
                    return Err(error(&cursor, Some(graph), Some(index), Message::RecordTensorIdsRepeat));
                }
                index += 1;
            }
        }
        if !cursor.0.at_end() {
            return Err(fail(&cursor, Message::RecordBytesAfterLastGraph));
        }
        Ok(Record { bytes, graph_count })
    }

    /// The record's bytes.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// The SHA-256 of the binary it describes.
    pub fn binary_hash(&self) -> [u8; HASH_BYTES] {
        let mut hash = [0u8; HASH_BYTES];
        lpai_direct_idl::copy_prefix(&mut hash, self.bytes.get(8..).unwrap_or(&[]));
        hash
    }

    /// How many graphs it describes.
    pub fn graph_count(&self) -> usize {
        self.graph_count as usize
    }

    /// The graphs, in order.
    pub fn graphs(&self) -> Graphs<'b> {
        Graphs { cursor: Cursor(bytes::Reader::at_offset(self.bytes, HEADER_BYTES)), left: self.graph_count }
    }
}

/// The graphs of a [`Record`].
#[derive(Clone, Debug)]
pub struct Graphs<'b> {
    cursor: Cursor<'b>,
    left: u32,
}

/// One graph of a [`Record`].
#[derive(Clone, Debug)]
pub struct GraphView<'b> {
    /// Its name.
    pub name: &'b str,
    /// Its inputs, in graph order.
    pub inputs: Tensors<'b>,
    /// Its outputs, in graph order.
    pub outputs: Tensors<'b>,
}

impl<'b> Iterator for Graphs<'b> {
    type Item = GraphView<'b>;

    fn next(&mut self) -> Option<GraphView<'b>> {
        self.left = self.left.checked_sub(1)?;
        let (name, input_count, output_count) = self.cursor.graph().ok()?;
        let inputs = Tensors { cursor: self.cursor, left: input_count };
        for _ in 0..input_count {
            self.cursor.tensor().ok()?;
        }
        let outputs = Tensors { cursor: self.cursor, left: output_count };
        for _ in 0..output_count {
            self.cursor.tensor().ok()?;
        }
        Some(GraphView { name, inputs, outputs })
    }
}

/// Tensors of a [`GraphView`] (its inputs or its outputs).
#[derive(Clone, Debug)]
pub struct Tensors<'b> {
    cursor: Cursor<'b>,
    left: u32,
}

impl<'b> Iterator for Tensors<'b> {
    type Item = TensorMeta<'b>;

    fn next(&mut self) -> Option<TensorMeta<'b>> {
        self.left = self.left.checked_sub(1)?;
        self.cursor.tensor().ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Tensors<'_> {}
