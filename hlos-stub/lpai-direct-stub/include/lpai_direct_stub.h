/*
 * lpai-direct stub: C API for HLOS applications (C or C++) that run QNN context binaries on the aDSP's LPAI
 * engine through the lpai-direct skel. Link with -llpai_direct_stub.
 *
 * Every function returns 0 on success or an error code (an AEE code from the skel, e.g. 0x8000040E for a bad
 * parameter); lpai_direct_stub_last_error() then gives a message saying what went wrong.
 *
 * Output sizes: the skel's describe, profile and last_error methods answer success with a short or null output
 * buffer and report the size they needed (idl/lpai_direct.idl). This library compares and asks again with room
 * enough (a last_error message is cut at 512 bytes); a C caller of a stub qaic generates from the IDL must compare
 * the *_bytes out-value with its buffer itself.
 */
#ifndef LPAI_DIRECT_STUB_H
#define LPAI_DIRECT_STUB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open skel handle. */
typedef struct lpai_direct_stub lpai_direct_stub;

/* load flags */
#define LPAI_DIRECT_LOAD_PERSISTENT_BINARY 1u /* ask for QNN's PERSISTENT_BINARY context config */
#define LPAI_DIRECT_LOAD_ISLAND 2u            /* every graph in LPAI island mode */
/* execute flags */
#define LPAI_DIRECT_FLOAT_INPUTS 1u  /* inputs are float32; the skel quantizes them */
#define LPAI_DIRECT_FLOAT_OUTPUTS 2u /* outputs as float32; the skel dequantizes them */

/* Opens the skel. transport: "fastrpc" (the skel on a DSP), "local" (the host build of the skel,
 * liblpai_direct_skel.so, loaded into this process with dlopen and called with the same encoded arguments),
 * "qemu" (the virtual aDSP: the v73 Hexagon skel in target/virtual-adsp/ loaded by the PD shell under
 * qemu-hexagon), or NULL for the default (fastrpc on aarch64 when libadsprpc/libcdsprpc loads, local otherwise). domain: "adsp",
 * "mdsp", "sdsp", "cdsp", "cdsp1", or NULL for "adsp". The local transport loads the file named by the
 * LPAI_DIRECT_SKEL environment variable when it is set and not empty (and fails if that file does not exist);
 * otherwise liblpai_direct_skel.so beside the running executable, then in the target/release/ directory of the
 * workspace the stub was built in. On failure *stub is NULL and the message (naming each file tried) is
 * available from lpai_direct_stub_last_error(NULL). */
int lpai_direct_stub_open(const char* transport, const char* domain, lpai_direct_stub** stub);

/* Opens the skel through the local transport on the host skel library at skel_path (NULL: the search
 * lpai_direct_stub_open does). The library stays loaded until the stub is closed. */
int lpai_direct_stub_open_local(const char* skel_path, lpai_direct_stub** stub);

/* The QNN libraries the skel loads (libQnnLpai.so and libQnnSystem.so on the aDSP), QNN log level (0..5) and
 * profiling level (0 off, 1 basic, 2 detailed), and the arena bytes per context (0: the skel chooses). */
int lpai_direct_stub_configure(lpai_direct_stub* stub, const char* backend, const char* system_library,
                               uint32_t log_level, uint32_t profiling_level, uint32_t arena_bytes);

/* Registers a QNN op package with the skel's backend (interface 1.2): path is the package library as the DSP side
 * names it, interface_provider the function it exports, target the target it was built for (NULL: the backend's
 * default). Call it after configure and before any load (a loaded context makes the skel refuse it); a package the
 * backend refuses fails with the package and QNN's error in lpai_direct_stub_last_error(). */
int lpai_direct_stub_register_op_package(lpai_direct_stub* stub, const char* path, const char* interface_provider,
                                         const char* target);

/* Sends a context binary; returns its id and number of graphs. */
int lpai_direct_stub_load(lpai_direct_stub* stub, const void* binary, size_t binary_bytes, uint32_t flags,
                          int32_t* context_id, uint32_t* graph_count);

/* Has the skel read a context binary from its own file system. */
int lpai_direct_stub_load_file(lpai_direct_stub* stub, const char* path, uint32_t flags, int32_t* context_id,
                               uint32_t* graph_count);

/* Sizes of one graph's inputs and outputs, back to back, for the given execute flags. */
int lpai_direct_stub_io_bytes(lpai_direct_stub* stub, int32_t context_id, uint32_t graph, uint32_t flags,
                              size_t* input_bytes, size_t* output_bytes);

/* One inference: every input back to back in, every output back to back out; dsp_ticks (may be NULL) gets
 * the DSP clock ticks around graphExecute and output_bytes the bytes written. */
int lpai_direct_stub_execute(lpai_direct_stub* stub, int32_t context_id, uint32_t graph, uint32_t flags,
                             const void* inputs, size_t input_bytes, void* outputs, size_t output_capacity,
                             size_t* output_bytes, uint64_t* dsp_ticks);

/* Frees a context. */
int lpai_direct_stub_unload(lpai_direct_stub* stub, int32_t context_id);

/* The message of the last failure on this stub (or of the last failed open when stub is NULL); valid until the
 * next call on the same stub. Never NULL. */
const char* lpai_direct_stub_last_error(const lpai_direct_stub* stub);

/* Closes the skel handle and frees the stub. */
void lpai_direct_stub_close(lpai_direct_stub* stub);

#ifdef __cplusplus
}
#endif

#endif /* LPAI_DIRECT_STUB_H */
