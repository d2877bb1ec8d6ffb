//! The C API of the embedding API (`dsp/include/lpai_direct_embed.h`): `lpai_direct_embed_*` functions over
//! [`lpai_direct_skel::embed::Embed`], for firmware written in C that runs an offline-prepared model in its own
//! memory, frame after frame, with no heap, no file access and no IPC.
//!
//! Every function checks its pointers (null, alignment, the handle's magic word) and sizes (checked arithmetic)
//! and answers 0 or a negative `LPAI_DIRECT_EMBED_ERROR_*` code; none can panic. The arena the caller gives
//! [`lpai_direct_embed_create`] holds everything: the handle's state at its start (the last failure's message stays
//! there for [`lpai_direct_embed_last_error`]), then the [`Libraries`](lpai_direct_skel::embed::Libraries), then
//! the embedding's own arena. One thread at a time per handle. The tensor metadata comes from libQnnSystem, or,
//! when create is given no system library, from a metadata record passed with the binary
//! ([`lpai_direct_embed_load_with_metadata`]).
//!
//! With the feature `qemu-example` (qemu-hexagon programs only, never a device build) the library runs on the Linux
//! user-mode platform; the qemu programs link it through `tests/embed-qemu`, which adds the contract model of
//! libQnnLpai and a function that registers it as the built-in libraries `libQnnLpaiContract.so` and
//! `libQnnSystemContract.so`, as firmware registers a libQnnLpai it links in
//! (`lpai_direct_skel::platform::libraries::register_builtin_libraries`).
//!
//! The firmware team's guide (building, linking it into a PD image, memory and stack budgets, the examples) is the
//! book's `docs/src/firmware.md`.
#![no_std]

mod asynchronous;
mod call;
mod errors;
mod frames;
mod handle;
mod lifecycle;
mod messages;
mod queries;
#[cfg(test)]
mod tests;

pub use asynchronous::{
    lpai_direct_embed_poll_frame, lpai_direct_embed_set_input_sets, lpai_direct_embed_start_frame,
    lpai_direct_embed_wait_frame, FrameDoneFn, FRAME_NEEDS_NEXT, FRAME_PENDING, FRAME_READY,
};
pub use errors::{
    lpai_direct_embed_use_messages, Renderer, ERROR_ARENA_FULL, ERROR_BINARY, ERROR_FAILED, ERROR_INVALID_ARGUMENT,
    ERROR_LIBRARY, ERROR_QNN, ERROR_STATE, OK,
};
pub use frames::{
    lpai_direct_embed_arena_used, lpai_direct_embed_execute_frame, lpai_direct_embed_input,
    lpai_direct_embed_last_execute_us, lpai_direct_embed_output,
};
pub use handle::EmbedHandle;
pub use lifecycle::{
    lpai_direct_embed_create, lpai_direct_embed_destroy, lpai_direct_embed_load, lpai_direct_embed_load_padded,
    lpai_direct_embed_load_padded_with_metadata, lpai_direct_embed_load_with_metadata,
    lpai_direct_embed_register_op_package, lpai_direct_embed_set_memory_types, MEMORY_DDR, MEMORY_LLC, MEMORY_PSRAM,
    MEMORY_TCM,
};
pub use messages::lpai_direct_messages_render;
pub use queries::{
    lpai_direct_embed_binary_in_place, lpai_direct_embed_find_graph, lpai_direct_embed_graph_count,
    lpai_direct_embed_graph_name, lpai_direct_embed_last_error, lpai_direct_embed_select_graph,
    lpai_direct_embed_tensor_count, lpai_direct_embed_tensor_info, TensorDescription, DIRECTION_INPUT,
    DIRECTION_OUTPUT,
};
