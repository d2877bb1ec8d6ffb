/* lpai_direct_embed.h: the embedding API of lpai-direct for firmware written in C.
 *
 * Firmware in the audio or sensor PD (with or without an HLOS) runs an offline-prepared QNN model on the LPAI
 * engine itself, frame after frame: no heap, no file access, no IPC per inference. Link the static library
 * liblpai_direct_embed.a (crate dsp/embed, `lpai-direct-embed`).
 *
 *     static unsigned char arena[256 * 1024] __attribute__((aligned(128)));
 *     lpai_direct_embed* embed;
 *     lpai_direct_embed_create(arena, sizeof arena, "libQnnLpai.so", "libQnnSystem.so", &embed);
 *     lpai_direct_embed_load(embed, model, model_bytes);   // kept by the firmware until destroy; no copy when
 *                                                          // it meets the backend's alignment
 *     void* in; const void* out; size_t in_bytes, out_bytes;
 *     lpai_direct_embed_input(embed, 0, &in, &in_bytes);     // bind once: the same buffers every frame
 *     lpai_direct_embed_output(embed, 0, &out, &out_bytes);
 *     for (;;) {
 *         read_sensor(in, in_bytes);                          // native (quantized) bytes
 *         int ready;
 *         if (lpai_direct_embed_execute_frame(embed, &ready) != 0) break;
 *         if (ready) publish(out, out_bytes);                 // 0: LPAI needs more frames (EARLY_TERMINATION)
 *     }
 *     lpai_direct_embed_destroy(embed);
 *
 * Firmware with no libQnnSystem in its PD passes NULL as the system library and loads the binary together with
 * its metadata record (made on a host by `lpai-net-run inspect BIN --system_library FILE --emit_metadata FILE`
 * and linked beside the binary):
 *
 *     lpai_direct_embed_create(arena, sizeof arena, "libQnnLpai.so", NULL, &embed);
 *     lpai_direct_embed_load_with_metadata(embed, model, model_bytes, record, record_bytes);
 *
 * Every function checks its pointers and sizes and answers LPAI_DIRECT_EMBED_OK (0) or a negative
 * LPAI_DIRECT_EMBED_ERROR_*; lpai_direct_embed_last_error then says what went wrong (a successful call clears
 * it). One thread at a time per handle.
 *
 * Not lpai_direct.h: that is the name qaic gives the header it generates from idl/lpai_direct.idl.
 */
#ifndef LPAI_DIRECT_EMBED_H
#define LPAI_DIRECT_EMBED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Answers. */
#define LPAI_DIRECT_EMBED_OK 0
/* A null or misaligned pointer, sizes that do not add up, an index or name the graph lacks, or a handle that is
 * not a live embedding. */
#define LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT (-1)
/* The arena is too small (for the handle, the libraries or the model). */
#define LPAI_DIRECT_EMBED_ERROR_ARENA_FULL (-2)
/* The wrong moment: before a binary is loaded, a second load, after a failed create, or lpai_direct_embed_load on
 * an embedding created with no system library (it needs a metadata record). */
#define LPAI_DIRECT_EMBED_ERROR_STATE (-3)
/* The backend or system library could not be loaded or used. */
#define LPAI_DIRECT_EMBED_ERROR_LIBRARY (-4)
/* The context binary or its metadata record was refused (malformed, too large, PERSISTENT_BINARY refused, too many
 * graphs, a record naming a graph the binary does not have). */
#define LPAI_DIRECT_EMBED_ERROR_BINARY (-5)
/* A QNN call failed; the message names it and QNN's error code. */
#define LPAI_DIRECT_EMBED_ERROR_QNN (-6)
/* Anything else; the message says what. */
#define LPAI_DIRECT_EMBED_ERROR_FAILED (-7)

/* The direction argument of lpai_direct_embed_tensor_count and lpai_direct_embed_tensor_info. */
#define LPAI_DIRECT_EMBED_INPUT 0
#define LPAI_DIRECT_EMBED_OUTPUT 1

/* Memory types of LPAI's scratch and persistent memory (QnnLpaiMem_MemType_t's values). */
#define LPAI_DIRECT_EMBED_MEMORY_DDR 1
#define LPAI_DIRECT_EMBED_MEMORY_LLC 2
#define LPAI_DIRECT_EMBED_MEMORY_TCM 3
#define LPAI_DIRECT_EMBED_MEMORY_PSRAM 4

/* An embedding; it lives at the start of the caller's arena. */
typedef struct lpai_direct_embed lpai_direct_embed;

/* A graph input or output. The pointers stay valid until lpai_direct_embed_destroy. */
typedef struct lpai_direct_embed_tensor {
    const char* name;           /* NUL-terminated */
    uint32_t id;                /* the id graphExecute matches tensors by */
    uint32_t data_type;         /* Qnn_DataType_t: 0x0408 UFIXED_POINT_8, 0x0416 UFIXED_POINT_16, ... */
    uint32_t rank;
    const uint32_t* dimensions; /* rank entries, outermost first */
    size_t bytes;               /* native bytes of one frame */
    int quantized;              /* 1 when scale and offset apply (scale-offset quantization) */
    float scale;                /* value = (quantized value + offset) * scale */
    int32_t offset;             /* QNN's offset: the negated zero point */
} lpai_direct_embed_tensor;

/* Creates an embedding in `arena` (`arena_bytes` bytes the caller leaves alone until destroy): the handle at its
 * start, the rest for the backend, libQnnSystem and the model (the binary's copy when it cannot be used in place,
 * tensor buffers, LPAI scratch and persistent memory). `backend` and `system_library` are library names: a
 * library built into the program under that name first, then the platform's loader. A NULL `system_library`
 * opens no libQnnSystem: every load then takes a metadata record (lpai_direct_embed_load_with_metadata), and
 * lpai_direct_embed_load is refused with LPAI_DIRECT_EMBED_ERROR_STATE. On failure *out is NULL when
 * the arguments are wrong or the arena cannot hold the handle; otherwise *out is set so that
 * lpai_direct_embed_last_error can say why, and the caller destroys it. */
int lpai_direct_embed_create(void* arena, size_t arena_bytes, const char* backend, const char* system_library,
                             lpai_direct_embed** out);

/* Loads the context binary at `binary` (`bytes` bytes), which must stay valid and unchanged until destroy, and
 * selects graph 0. The backend gets the binary itself when it starts at the backend's start alignment and
 * `bytes` is a multiple of its size alignment; otherwise a copy in the arena (and a warning in the log). One
 * binary per embedding. */
int lpai_direct_embed_load(lpai_direct_embed* embed, const void* binary, size_t bytes);

/* The same for a binary of `binary_bytes` at the start of a buffer of `buffer_bytes` (the rest padding the
 * caller owns): used in place when the buffer covers the binary rounded up to the size alignment. */
int lpai_direct_embed_load_padded(lpai_direct_embed* embed, const void* binary, size_t binary_bytes,
                                  size_t buffer_bytes);

/* lpai_direct_embed_load with the tensor metadata from the metadata record at `record` (`record_bytes` bytes, as
 * `lpai-net-run inspect BIN --emit_metadata FILE` writes it) instead of libQnnSystem, which then need not exist
 * (create with a NULL system library). The binary, as for lpai_direct_embed_load, must stay valid and unchanged
 * until destroy; the record is read only during this call (what the embedding needs of it is copied into the
 * arena), so it may be freed or reused afterwards. The record must not lie in the arena. It is checked whole first
 * (LPAI_DIRECT_EMBED_ERROR_BINARY, the message saying at which byte and what is wrong), then against the binary: the
 * record carries the SHA-256 of the binary it was made from, and a binary with another hash is refused before the
 * backend sees it (LPAI_DIRECT_EMBED_ERROR_BINARY), so firmware only hands the backend a binary that was checked
 * where the record was written; then against the backend
 * (a graph the binary does not have: LPAI_DIRECT_EMBED_ERROR_BINARY, naming the graph; tensor ids the backend
 * refuses: the first execute fails, naming the graph). */
int lpai_direct_embed_load_with_metadata(lpai_direct_embed* embed, const void* binary, size_t binary_bytes,
                                         const void* record, size_t record_bytes);

/* The same for a padded binary, as lpai_direct_embed_load_padded. */
int lpai_direct_embed_load_padded_with_metadata(lpai_direct_embed* embed, const void* binary, size_t binary_bytes,
                                                size_t buffer_bytes, const void* record, size_t record_bytes);

/* Where the next load puts LPAI's scratch and persistent memory (both in the arena, handed to the backend with
 * these memory types; LPAI_DIRECT_EMBED_MEMORY_DDR each until set). In island mode the pools must lie in memory that
 * stays powered in island, and TCM is small: the device's documentation says which. A value that is none of the
 * four is LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT; after a load, LPAI_DIRECT_EMBED_ERROR_STATE. */
int lpai_direct_embed_set_memory_types(lpai_direct_embed* embed, uint32_t scratch, uint32_t persistent);

/* Registers a QNN op package with the embedding's backend (QnnBackend_registerOpPackage): `path` is the package
 * library, as the backend opens it,
 * `interface_provider` the function it exports, `target` the target it was built for (NULL: the backend's default).
 * A binary whose graphs use custom ops needs their packages registered before the load; the package stays
 * registered until destroy. After a load, LPAI_DIRECT_EMBED_ERROR_STATE; a package the backend refuses,
 * LPAI_DIRECT_EMBED_ERROR_LIBRARY with the package and QNN's error in the message. */
int lpai_direct_embed_register_op_package(lpai_direct_embed* embed, const char* path, const char* interface_provider,
                                          const char* target);

/* *in_place = 1 when the backend got the caller's binary itself, 0 when a copy in the arena. */
int lpai_direct_embed_binary_in_place(lpai_direct_embed* embed, int* in_place);

/* Graphs of the loaded binary; the selected one is what the tensor and execute calls work on. */
int lpai_direct_embed_graph_count(lpai_direct_embed* embed, size_t* count);
int lpai_direct_embed_select_graph(lpai_direct_embed* embed, size_t index);
/* The selected graph's NUL-terminated name, valid until destroy. */
int lpai_direct_embed_graph_name(lpai_direct_embed* embed, const char** name);
int lpai_direct_embed_find_graph(lpai_direct_embed* embed, const char* name, size_t* index);

/* Inputs (LPAI_DIRECT_EMBED_INPUT) or outputs (LPAI_DIRECT_EMBED_OUTPUT) of the selected graph. */
int lpai_direct_embed_tensor_count(lpai_direct_embed* embed, int direction, size_t* count);
int lpai_direct_embed_tensor_info(lpai_direct_embed* embed, int direction, size_t index,
                                  lpai_direct_embed_tensor* info);

/* Binds input or output `index` of the selected graph: its native buffer and size, the same memory for every frame
 * until destroy. Fill inputs before each execute; outputs hold the last ready frame's result. */
int lpai_direct_embed_input(lpai_direct_embed* embed, size_t index, void** data, size_t* bytes);
int lpai_direct_embed_output(lpai_direct_embed* embed, size_t index, const void** data, size_t* bytes);

/* Runs graphExecute once on the bound inputs: *ready = 1 when the outputs are ready, 0 when LPAI needs more
 * frames first (EARLY_TERMINATION: feed the next frame and call again). Allocates nothing, reads no file. */
int lpai_direct_embed_execute_frame(lpai_direct_embed* embed, int* ready);

/* The DSP-clock time of the last execute that made the outputs ready, in microseconds. */
int lpai_direct_embed_last_execute_us(lpai_direct_embed* embed, uint64_t* micros);

/* Arena bytes used so far (the high-water mark, the handle included) and the arena's size. */
int lpai_direct_embed_arena_used(lpai_direct_embed* embed, size_t* used, size_t* capacity);

/* The last failed call's message (empty after a success), NUL-terminated, valid until the next call on the
 * handle; a fixed text for anything that is not a live handle. The library carries no message text: the message is
 * the record of which message and its values, given as a log line, `lpai:` and hex digits, which
 * `lpai-net-run render-log` puts in words on a host; after lpai_direct_embed_use_messages it is the words. */
const char* lpai_direct_embed_last_error(const lpai_direct_embed* embed);

/* Renders a message record in words: `record` (`length` bytes) into `out`, NUL-terminated, at most `capacity` bytes
 * with the NUL; answers the text's length. The library's message table: nothing else in it refers to this function,
 * so an image linked with --gc-sections carries the words only when the firmware names it (below). */
size_t lpai_direct_messages_render(const uint8_t* record, size_t length, char* out, size_t capacity);

/* Has every handle's last error rendered in words by `render` (lpai_direct_messages_render, from the optional
 * library); NULL goes back to the record as a log line. Call it once, before the handles fail. */
void lpai_direct_embed_use_messages(size_t (*render)(const uint8_t* record, size_t length, char* out, size_t capacity));

/* Frees the context, then libQnnSystem (if create opened one), then the backend. The arena and the binary are the
 * caller's again. Refused (LPAI_DIRECT_EMBED_ERROR_STATE) while a started frame was not taken: wait for it first. */
int lpai_direct_embed_destroy(lpai_direct_embed* embed);

/* Asynchronous frames (QnnGraph_executeAsync).
 *
 *     lpai_direct_embed_set_input_sets(embed, 2);            // before the load: fill one set while one runs
 *     lpai_direct_embed_load(embed, model, model_bytes);
 *     lpai_direct_embed_input(embed, 0, &in, &in_bytes);     // the set the next frame reads
 *     read_sensor(in, in_bytes);
 *     lpai_direct_embed_start_frame(embed, frame_done, &my_semaphore);  // returns at once
 *     for (;;) {
 *         lpai_direct_embed_input(embed, 0, &in, &in_bytes); // with 2 sets: the other set, free now
 *         read_sensor(in, in_bytes);
 *         int ready;
 *         lpai_direct_embed_wait_frame(embed, &ready);       // blocks (or poll_frame, or sleep until frame_done)
 *         if (ready) publish(out, out_bytes);                // 0: EARLY_TERMINATION, as execute_frame
 *         lpai_direct_embed_start_frame(embed, frame_done, &my_semaphore);
 *     }
 *
 * A backend without graphExecuteAsync (or one that answers QNN_COMMON_ERROR_NOT_SUPPORTED) runs the frame inside
 * start_frame (one info line says so at the first frame); the calls answer the same. While a started frame was not
 * taken (by poll_frame answering READY or NEEDS_NEXT, or by wait_frame), a second start_frame, select_graph, load,
 * destroy, execute_frame, lpai_direct_embed_output and (with one input set) lpai_direct_embed_input are refused with
 * LPAI_DIRECT_EMBED_ERROR_STATE and a message naming what was refused. Reading outputs or writing the running input
 * set through pointers bound earlier cannot be refused: do not. */

/* What lpai_direct_embed_poll_frame answers; NEEDS_NEXT and READY are execute_frame's `ready` 0 and 1. */
#define LPAI_DIRECT_EMBED_FRAME_NEEDS_NEXT 0
#define LPAI_DIRECT_EMBED_FRAME_READY 1
#define LPAI_DIRECT_EMBED_FRAME_PENDING 2

/* Called once when a started frame completes, with `user` and QNN's code: 0 the outputs are ready, 6038
 * (QNN_GRAPH_ERROR_EARLY_TERMINATION) feed the next frame, anything else the error the execution ended with (take
 * the frame with poll_frame or wait_frame for the message). It runs on the backend's own thread, or inside
 * start_frame when the backend completed the frame within the call: it may note the completion (set a flag, post
 * a semaphore, wake a thread) and must not call any lpai_direct_embed_* function on this handle, block, or take
 * long; the outputs are written and the frame reads as complete when it runs, so one poll_frame made after it has
 * run takes the frame (never PENDING). */
typedef void (*lpai_direct_embed_frame_done)(void* user, uint32_t qnn_code);

/* Input sets the next load gives each graph: 1 (the default) or 2, so that the firmware fills one while a started
 * frame reads the other. The second set costs each input's buffer (padded to the backend's granule) and its tensor
 * description (a Qnn_Tensor_t, 92 bytes on Hexagon) once more in the arena. With 2 sets
 * lpai_direct_embed_input answers the set the next frame reads, which changes at each start_frame: ask again. */
int lpai_direct_embed_set_input_sets(lpai_direct_embed* embed, uint32_t sets);

/* Starts one execution of the selected graph on its current input set and returns at once; `done` (may be NULL)
 * is called as lpai_direct_embed_frame_done says. Allocates nothing, reads no file. */
int lpai_direct_embed_start_frame(lpai_direct_embed* embed, lpai_direct_embed_frame_done done, void* user);

/* Without blocking: *frame = LPAI_DIRECT_EMBED_FRAME_PENDING while the started frame executes, else READY or
 * NEEDS_NEXT, and the frame is taken. LPAI_DIRECT_EMBED_ERROR_STATE with no frame started. */
int lpai_direct_embed_poll_frame(lpai_direct_embed* embed, int* frame);

/* Blocks (the thread sleeps; nothing spins) until the started frame completes and takes it: *ready as
 * lpai_direct_embed_execute_frame answers it. Waits at most 10 s: then LPAI_DIRECT_EMBED_ERROR_FAILED with a message
 * naming the graph, the frame still in flight (wait or poll again; destroy stays refused until it is taken). */
int lpai_direct_embed_wait_frame(lpai_direct_embed* embed, int* ready);

#ifdef __cplusplus
}
#endif

#endif /* LPAI_DIRECT_EMBED_H */
