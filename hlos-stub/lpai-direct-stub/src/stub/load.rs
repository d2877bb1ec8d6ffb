//! One load of a context binary: the request (the binary as bytes the stub sends or a path the skel reads, its
//! metadata record when the skel has no libQnnSystem, the load flags) and [`Stub::load`], which sends it by the
//! one of the IDL's four load methods that carries it.

use super::{Stub, StubError};
use lpai_direct::codec::{self, EncodeError, Encoder};
use std::ffi::CStr;

/// The context binary of a load.
#[derive(Clone, Copy, Debug)]
pub enum Binary<'a> {
    /// Bytes the stub sends along.
    Bytes(&'a [u8]),
    /// A file the skel reads itself (a path as the DSP side sees it).
    File(&'a CStr),
}

/// What to load and how: built with [`LoadRequest::bytes`] or [`LoadRequest::file`], then
/// [`LoadRequest::with_record`] and [`LoadRequest::with_flags`] as needed.
#[derive(Clone, Copy, Debug)]
pub struct LoadRequest<'a> {
    /// The context binary.
    pub binary: Binary<'a>,
    /// The binary's metadata record (`lpai_direct::metadata`), for a skel configured without libQnnSystem;
    /// `None`: the skel reads the metadata with its own.
    pub record: Option<&'a [u8]>,
    /// The load flags (`lpai_direct::wire`'s `LOAD_*`, [`super::flags`]).
    pub flags: u32,
}

impl<'a> LoadRequest<'a> {
    /// Sends `binary`; no record, no flags.
    pub fn bytes(binary: &'a [u8]) -> LoadRequest<'a> {
        LoadRequest { binary: Binary::Bytes(binary), record: None, flags: 0 }
    }

    /// Has the skel read the binary at `path`; no record, no flags.
    pub fn file(path: &'a CStr) -> LoadRequest<'a> {
        LoadRequest { binary: Binary::File(path), record: None, flags: 0 }
    }

    /// Sends the binary's metadata record along.
    pub fn with_record(self, record: &'a [u8]) -> LoadRequest<'a> {
        LoadRequest { record: Some(record), ..self }
    }

    /// Loads with `flags`.
    pub fn with_flags(self, flags: u32) -> LoadRequest<'a> {
        LoadRequest { flags, ..self }
    }
}

/// A loaded context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// Its id on the skel.
    pub context: i32,
    /// How many graphs it has.
    pub graph_count: u32,
}

impl Loaded {
    /// The answer in the rout scalars at `context_id` and `graph_count`.
    fn read(encoder: &Encoder<'_>, context_id: usize, graph_count: usize) -> Result<Loaded, EncodeError> {
        Ok(Loaded { context: encoder.rout_i32(context_id)?, graph_count: encoder.rout_u32(graph_count)? })
    }
}

impl Stub {
    /// Loads a context binary as `request` says, by `load`, `load_file`, `load_with_metadata` or
    /// `load_file_with_metadata` (bytes or a path, with a record or without); answers the context's id and number
    /// of graphs.
    pub fn load(&mut self, request: &LoadRequest<'_>) -> Result<Loaded, StubError> {
        let flags = request.flags;
        match (request.binary, request.record) {
            (Binary::Bytes(binary), None) => {
                use codec::load as m;
                self.call(
                    m::METHOD,
                    |e| e.u32(m::FLAGS, flags)?.bytes(m::BINARY, binary).map(drop),
                    |e| Loaded::read(e, m::CONTEXT_ID, m::GRAPH_COUNT),
                )
            }
            (Binary::File(path), None) => {
                use codec::load_file as m;
                self.call(
                    m::METHOD,
                    |e| e.u32(m::FLAGS, flags)?.string(m::PATH, path).map(drop),
                    |e| Loaded::read(e, m::CONTEXT_ID, m::GRAPH_COUNT),
                )
            }
            (Binary::Bytes(binary), Some(record)) => {
                use codec::load_with_metadata as m;
                self.call(
                    m::METHOD,
                    |e| e.u32(m::FLAGS, flags)?.bytes(m::BINARY, binary)?.bytes(m::METADATA, record).map(drop),
                    |e| Loaded::read(e, m::CONTEXT_ID, m::GRAPH_COUNT),
                )
            }
            (Binary::File(path), Some(record)) => {
                use codec::load_file_with_metadata as m;
                self.call(
                    m::METHOD,
                    |e| e.u32(m::FLAGS, flags)?.string(m::PATH, path)?.bytes(m::METADATA, record).map(drop),
                    |e| Loaded::read(e, m::CONTEXT_ID, m::GRAPH_COUNT),
                )
            }
        }
    }
}
