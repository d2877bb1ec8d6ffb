//! Queries about the handle and the loaded binary: the last failure's message, whether the backend runs the binary
//! in place, its graphs (count, names, the selected one) and the selected graph's tensors.

use crate::call::{answer, c_string, query, Out};
use crate::errors::{code, ERROR_INVALID_ARGUMENT};
use crate::handle::{state, state_ref, EmbedHandle};
use core::ffi::{c_char, c_int};
use lpai_direct_skel::embed::Direction;
use lpai_direct_skel::platform::Message;
use lpai_direct_skel::runtime::{RuntimeError, TensorInfo};

/// `lpai_direct_embed_tensor`: what [`lpai_direct_embed_tensor_info`] fills in.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TensorDescription {
    /// The tensor's NUL-terminated name (valid until destroy).
    pub name: *const c_char,
    /// The id graphExecute matches tensors by.
    pub id: u32,
    /// `Qnn_DataType_t` (0x0408 UFIXED_POINT_8, ...).
    pub data_type: u32,
    /// Number of dimensions.
    pub rank: u32,
    /// `rank` dimensions, outermost first (valid until destroy).
    pub dimensions: *const u32,
    /// Native bytes of one frame of the tensor.
    pub bytes: usize,
    /// 1 when `scale` and `offset` apply (scale-offset quantization), else 0.
    pub quantized: c_int,
    /// `value = (quantized + offset) * scale`.
    pub scale: f32,
    /// QNN's offset: the negated zero point.
    pub offset: i32,
}

impl From<TensorInfo<'_>> for TensorDescription {
    fn from(tensor: TensorInfo<'_>) -> TensorDescription {
        TensorDescription {
            name: tensor.c_name.unwrap_or(c"").as_ptr(),
            id: tensor.id,
            data_type: tensor.data_type.0,
            rank: u32::try_from(tensor.dimensions.len()).unwrap_or(u32::MAX),
            dimensions: tensor.dimensions.as_ptr(),
            bytes: tensor.bytes,
            quantized: c_int::from(tensor.quantization.is_some()),
            scale: tensor.quantization.map_or(1.0, |quantization| quantization.scale),
            offset: tensor.quantization.map_or(0, |quantization| quantization.offset),
        }
    }
}

/// The `lpai_direct_embed_tensor_info` direction of a graph input.
pub const DIRECTION_INPUT: c_int = 0;
/// The `lpai_direct_embed_tensor_info` direction of a graph output.
pub const DIRECTION_OUTPUT: c_int = 1;

/// The direction a C `direction` names; `None` for neither [`DIRECTION_INPUT`] nor [`DIRECTION_OUTPUT`].
fn direction_of(direction: c_int) -> Option<Direction> {
    match direction {
        DIRECTION_INPUT => Some(Direction::Input),
        DIRECTION_OUTPUT => Some(Direction::Output),
        _ => None,
    }
}

/// Writes 1 to `in_place` when the backend got the caller's binary itself, 0 when a copy in the arena.
///
/// # Safety
/// `embed` is a handle from create; `in_place` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_binary_in_place(embed: *mut EmbedHandle, in_place: *mut c_int) -> c_int {
    // SAFETY: the caller's promises about the handle and `in_place`.
    unsafe {
        query(embed, "binary_in_place", in_place, Message::EmbedInPlaceArgument, |embedding| {
            Ok(c_int::from(embedding.binary_in_place() == Some(true)))
        })
    }
}

/// Writes the number of graphs in the loaded binary to `count`.
///
/// # Safety
/// `embed` is a handle from create; `count` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_graph_count(embed: *mut EmbedHandle, count: *mut usize) -> c_int {
    // SAFETY: the caller's promises about the handle and `count`.
    unsafe {
        query(embed, "graph_count", count, Message::EmbedGraphCountArgument, |embedding| Ok(embedding.graph_count()))
    }
}

/// Writes the selected graph's NUL-terminated name (valid until destroy) to `name`.
///
/// # Safety
/// `embed` is a handle from create; `name` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_graph_name(embed: *mut EmbedHandle, name: *mut *const c_char) -> c_int {
    // SAFETY: the caller's promises about the handle and `name`.
    unsafe {
        query(embed, "graph_name", name, Message::EmbedGraphNameArgument, |embedding| {
            Ok(embedding.graph_c_name()?.as_ptr())
        })
    }
}

/// Selects graph `index` for the tensor and execute calls (graph 0 after a load).
///
/// # Safety
/// `embed` is a handle from create.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_select_graph(embed: *mut EmbedHandle, index: usize) -> c_int {
    // SAFETY: the caller's promise about the handle.
    match unsafe { state(embed) } {
        Some(state) => code(state.run("select_graph", |embedding| embedding.select_graph(index))),
        None => ERROR_INVALID_ARGUMENT,
    }
}

/// Writes the index of the graph called `name` to `index`.
///
/// # Safety
/// `embed` is a handle from create; `name` is null or NUL-terminated; `index` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_find_graph(
    embed: *mut EmbedHandle,
    name: *const c_char,
    index: *mut usize,
) -> c_int {
    // SAFETY: the caller's promises about the handle, `name` and `index`.
    unsafe {
        answer(
            embed,
            "find_graph",
            || Some((c_string(name)?.to_str().ok()?, Out::new(index)?)),
            Message::EmbedFindGraphArgument,
            |embedding, name| embedding.graph_index(name).ok_or(RuntimeError::NoSuchGraph),
        )
    }
}

/// Writes the number of inputs (`direction` 0) or outputs (1) of the selected graph to `count`.
///
/// # Safety
/// `embed` is a handle from create; `count` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_tensor_count(
    embed: *mut EmbedHandle,
    direction: c_int,
    count: *mut usize,
) -> c_int {
    // SAFETY: the caller's promises about the handle and `count`.
    unsafe {
        answer(
            embed,
            "tensor_count",
            || Some((direction_of(direction)?, Out::new(count)?)),
            Message::EmbedTensorCountArgument,
            |embedding, direction| Ok(embedding.tensor_count(direction)),
        )
    }
}

/// Describes input (`direction` 0) or output (1) `index` of the selected graph into `info`; its pointers stay
/// valid until destroy.
///
/// # Safety
/// `embed` is a handle from create; `info` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_tensor_info(
    embed: *mut EmbedHandle,
    direction: c_int,
    index: usize,
    info: *mut TensorDescription,
) -> c_int {
    // SAFETY: the caller's promises about the handle and `info`.
    unsafe {
        answer(
            embed,
            "tensor_info",
            || Some((direction_of(direction)?, Out::new(info)?)),
            Message::EmbedTensorInfoArgument,
            |embedding, direction| Ok(embedding.tensor(direction, index)?.into()),
        )
    }
}

/// The last failed call's message (empty after a success), NUL-terminated, valid until the next call on the
/// handle; a fixed text for a handle that is not a live embedding.
///
/// # Safety
/// `embed` is null or a handle from create.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_last_error(embed: *const EmbedHandle) -> *const c_char {
    // SAFETY: the caller's promise about the handle.
    match unsafe { state_ref(embed) } {
        Some(state) => state.message.as_ptr(),
        None => c"not a live lpai_direct_embed handle".as_ptr(),
    }
}
