/* lpai_direct_capi.h: the ids of lpai-direct's audio-framework module (AudioReach CAPI) for integrators.
 *
 * The module (AMDB tag capi_lpai_direct; entry points capi_lpai_direct_get_static_properties and
 * capi_lpai_direct_init, with the prototypes of SPF's capi.h) runs a QNN model on LPAI every hop of PCM
 * samples and passes the audio through unchanged, in any of CAPI's PCM layouts (interleaved, deinterleaved packed,
 * unpacked, unpacked V2). The ids sit in the range AudioReach leaves to customers (owner nibble 1). The book's
 * audio chapter (docs/src/audio.md) says what the module answers SPF and when it raises each event.
 */
#ifndef LPAI_DIRECT_CAPI_H
#define LPAI_DIRECT_CAPI_H

#include <stdint.h>

/* The module's id in an SPF graph. */
#define MODULE_ID_LPAI_DIRECT 0x17001F00u

/* set_param: a NUL-terminated path of the QNN context binary, which the PD opens. */
#define PARAM_ID_LPAI_DIRECT_MODEL_PATH 0x18001F01u
/* set_param: the context binary's bytes. The payload lives only during the call, so the module keeps an aligned
 * copy, unless PARAM_PERSISTENCE_INFO registered the parameter as persistent: then it uses the memory in place. */
#define PARAM_ID_LPAI_DIRECT_MODEL 0x18001F02u
/* set_param: NUL-terminated key=value lines, replacing the whole configuration; an unknown key is refused. With a
 * model loaded only channel and hop may change (at once, the window restarting empty); a change to any other key
 * is refused with EBADPARAM: set it before PARAM_ID_LPAI_DIRECT_MODEL, or close the graph.
 *   backend=PATH          the QNN backend library (default libQnnLpai.so)
 *   system_library=PATH   libQnnSystem (default libQnnSystem.so); empty: send PARAM_ID_LPAI_DIRECT_METADATA
 *   channel=N             the channel the model reads (default 0)
 *   hop=N                 samples between inferences (default: the model's window, its first input's elements)
 *   island=0|1            vote for island operation (the vote is raised only in an island container)
 *   fps=N ftrt_ratio=N client_type=N affinity=N core_selection=N   LPAI performance settings
 *   load_stack=N          bytes of the stack the module opens the backend and loads and frees models on, apart
 *                         from SPF's thread (16384 to 1048576, default 65536); only a device can size it for
 *                         libQnnLpai: a load that uses all of it fails with EFAILED and says so */
#define PARAM_ID_LPAI_DIRECT_CONFIG 0x18001F03u
/* get_param: the last result, a struct lpai_direct_capi_result then output_bytes of float32 values (the first
 * output tensor, dequantized). Before the first inference the whole record is zeros (inferences 0); before a model
 * is loaded the answer is ENOTREADY. */
#define PARAM_ID_LPAI_DIRECT_RESULT 0x18001F04u
/* set_param: the model's metadata record (lpai-net-run inspect BIN --emit_metadata FILE), when system_library is
 * empty. */
#define PARAM_ID_LPAI_DIRECT_METADATA 0x18001F05u
/* The event a client registers for with REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2: after each inference the module
 * raises DATA_TO_DSP_CLIENT_V2 with this event id and the result record as its payload. */
#define EVENT_ID_LPAI_DIRECT_RESULT 0x18001F06u

/* The result record's fixed part, little-endian, 24 bytes; output_bytes of float32 values follow it. */
struct lpai_direct_capi_result {
    uint32_t inferences;   /* inferences run so far */
    uint32_t output_bytes; /* bytes of float32 output after this header */
    uint64_t timestamp_us; /* the timestamp of the window's last sample */
    uint64_t dsp_ticks;    /* DSP clock ticks of its graphExecute */
};
_Static_assert(sizeof(struct lpai_direct_capi_result) == 24, "lpai_direct_capi_result is 24 bytes");

#endif /* LPAI_DIRECT_CAPI_H */
