/* capi_harness.c: drives liblpai_direct_capi.so as AudioReach's SPF drives a CAPI module, with guard bytes
 * around every buffer it lends the module, checked after every call that may write.
 *
 *   capi_harness CONFIG MODEL PCM CHANNELS BITS Q FRAMES RESULTS AUDIO_OUT [DATA_FORMAT INTERLEAVING [CASE ARGS..]]
 *
 * The module's own memory and libraries are counted by the host build (lpai_direct_capi_host_resources):
 * all of them must be given back by end, twice over (two lives of the module). Each life runs on a stack of exactly
 * the size SPF gives the container thread for the module's STACK_SIZE, with a guard page below it (see
 * `session_on_spf_stack`): "spf thread N used U" says how much of it the life used, and "load stack used L" the
 * most the module used of the stack of its own it loads and frees models on.
 *
 * CONFIG: the module's key=value configuration (a text file); MODEL: the context binary; PCM: interleaved
 * samples (16-bit or 32-bit, native order), laid out for each process call as the media format's INTERLEAVING
 * says (see `lay_out`); FRAMES: samples per channel of each process call, `N` or a list `N[xK],...` (K calls of N
 * samples each, the last size repeated until the PCM ends). Every result record the module raises goes to
 * RESULTS, one after another; the audio that comes out of process, interleaved again, goes to AUDIO_OUT.
 * DATA_FORMAT and INTERLEAVING (default 0 and 2: fixed point, deinterleaved unpacked) set the media format; when
 * the module refuses it, the harness says "format refused 0x..." and ends the module. CASE (default "plain")
 * adds one thing the real SPF does to the session (see `enum kase`); every failure message starts with it.
 * Every KPPS and BANDWIDTH vote is printed, "vote kpps K frame F" / "vote bandwidth CODE DATA frame F", F the
 * samples per channel of the process call that raised it (0 outside process). Exit 0 when every check held, 1
 * otherwise, with the reason.
 *
 * The CAPI declarations below are written from the facts of the interface (project notes on audioreach-engine's
 * public headers), not copied from any header. The SPF facts each case rests on were read in audioreach-engine
 * (944fff9); paths are shortened: GT/ = fwk/spf/containers/cmn/topologies/gen_topo/, CU/ =
 * fwk/spf/containers/cmn/container_utils/core/src/, GC/ = fwk/spf/containers/gen_cntr/.
 */
#define _GNU_SOURCE /* ucontext, sigaltstack, MAP_ANONYMOUS under -std=c11 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

typedef uint32_t capi_err_t;
typedef struct { int8_t *data_ptr; uint32_t actual_data_len; uint32_t max_data_len; } capi_buf_t;
typedef struct { uint8_t is_valid; uint8_t is_input_port; uint32_t port_index; } capi_port_info_t;
typedef struct { uint32_t id; capi_buf_t payload; capi_port_info_t port_info; } capi_prop_t;
typedef struct { uint32_t props_num; capi_prop_t *prop_ptr; } capi_proplist_t;
typedef struct {
    uint32_t flags; int64_t timestamp; capi_buf_t *buf_ptr; uint32_t bufs_num; void *metadata_list_ptr;
} capi_stream_data_v2_t;
typedef struct capi_t capi_t;
typedef struct {
    capi_err_t (*process)(capi_t *, capi_stream_data_v2_t *input[], capi_stream_data_v2_t *output[]);
    capi_err_t (*end)(capi_t *);
    capi_err_t (*set_param)(capi_t *, uint32_t, const capi_port_info_t *, capi_buf_t *);
    capi_err_t (*get_param)(capi_t *, uint32_t, const capi_port_info_t *, capi_buf_t *);
    capi_err_t (*set_properties)(capi_t *, capi_proplist_t *);
    capi_err_t (*get_properties)(capi_t *, capi_proplist_t *);
} capi_vtbl_t;
struct capi_t { const capi_vtbl_t *vtbl_ptr; };
typedef struct { capi_port_info_t port_info; capi_buf_t payload; } capi_event_info_t;
typedef capi_err_t (*capi_event_cb)(void *, uint32_t, capi_event_info_t *);
typedef struct { capi_event_cb event_cb; void *event_context; } capi_event_callback_info_t;
typedef struct { uint64_t dest_address; uint32_t token; uint32_t event_id; capi_buf_t payload; }
    capi_event_data_to_dsp_client_v2_t;
typedef struct { uint64_t dest_address; uint32_t token; uint32_t event_id; uint8_t is_register; capi_buf_t event_cfg; }
    capi_register_event_to_dsp_client_v2_t;

capi_err_t capi_lpai_direct_get_static_properties(capi_proplist_t *init, capi_proplist_t *statics);
capi_err_t capi_lpai_direct_init(capi_t *instance, capi_proplist_t *init);
/* The host build's count of what the module's runtime holds: memory blocks, their bytes, libraries; then the most
 * it used of its load stack. */
size_t lpai_direct_capi_host_resources(uint64_t *counts, size_t capacity);

enum {
    INIT_MEMORY_REQUIREMENT = 0, STACK_SIZE = 1, IS_INPLACE = 3, REQUIRES_DATA_BUFFERING = 4,
    NUM_NEEDED_FRAMEWORK_EXTENSIONS = 5, INTERFACE_EXTENSIONS = 7, EVENT_CALLBACK_INFO = 0x10001,
    PORT_NUM_INFO = 0x10002, HEAP_ID = 0x10003, INPUT_MEDIA_FORMAT_V2 = 0x10008, MODULE_INSTANCE_ID = 0x10009,
    LOGGING_INFO = 0x1000A, ALGORITHMIC_RESET = 0x20001, REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 = 0x20004,
    PORT_DATA_THRESHOLD = 0x30002, OUTPUT_MEDIA_FORMAT_SIZE = 0x30003, OUTPUT_MEDIA_FORMAT = 0x40001,
    OUTPUT_MEDIA_FORMAT_V2 = 0x40003,
};
enum {
    EVENT_KPPS = 0, EVENT_BANDWIDTH = 1, EVENT_PROCESS_STATE = 5, EVENT_OUTPUT_MEDIA_FORMAT_UPDATED_V2 = 13,
    EVENT_DATA_TO_DSP_CLIENT_V2 = 15,
};
enum { FLAG_TIMESTAMP_VALID = 1u << 0, FLAG_END_OF_FRAME = 1u << 1, FLAG_MARKER_EOS = 1u << 2,
       FLAG_ERASURE = 1u << 6, FLAG_VERSION_2 = 1u << 7, FLAG_TIMESTAMP_CONTINUE = 1u << 9 };
enum { INTERLEAVED = 0, DEINTERLEAVED_PACKED = 1, DEINTERLEAVED_UNPACKED = 2 };
#define PARAM_ID_LPAI_DIRECT_MODEL 0x18001F02u
#define PARAM_ID_LPAI_DIRECT_CONFIG 0x18001F03u
#define PARAM_ID_LPAI_DIRECT_RESULT 0x18001F04u
#define EVENT_ID_LPAI_DIRECT_RESULT 0x18001F06u
#define CLIENT_ADDRESS 0x1122334455667788ull
#define CLIENT_TOKEN 42u

/* The cases: each is the plain session plus one thing the real SPF does that the plain session does not. */
enum kase {
    /* The plain session (the layouts are its INTERLEAVING argument: see `lay_out`). */
    CASE_PLAIN,
    /* Event registration as SPF makes it, max_data_len left unset: see `register_as_spf`. */
    CASE_REGISTRATION,
    /* The output format asked for before any input format: see `query_output_format`. */
    CASE_FORMAT_QUERY,
    /* get_param of the result after start, before the first inference: see `result_before_inference`. */
    CASE_RESULT_BEFORE_INFERENCE,
    /* End of frame and end of stream set on the input: see `input_flags`. */
    CASE_STREAM_FLAGS,
    /* The configuration sent after start: ARGS are two files, a configuration the module must refuse (a model
     * key) and one it must take (channel, hop); see `configure_after_start`. */
    CASE_CONFIG_AFTER_START,
};
static enum kase kase = CASE_PLAIN;
static const char *case_name = "plain";
static const char *later_refused, *later_taken;

/* Guarded memory: GUARD bytes of 0xA5 on both sides of what the module is lent. */
#define GUARD 64
#define MAX_GUARDED 96
static struct { unsigned char *block; size_t bytes; } guarded[MAX_GUARDED];
static int guarded_count;

static void *lend(size_t bytes) {
    unsigned char *block = malloc(bytes + 2 * GUARD);
    if (!block || guarded_count == MAX_GUARDED) { fprintf(stderr, "harness: out of memory\n"); exit(1); }
    memset(block, 0xA5, GUARD);
    memset(block + GUARD, 0, bytes);
    memset(block + GUARD + bytes, 0xA5, GUARD);
    guarded[guarded_count].block = block;
    guarded[guarded_count++].bytes = bytes;
    return block + GUARD;
}

static void check_guards(const char *after) {
    for (int i = 0; i < guarded_count; i++) {
        const unsigned char *block = guarded[i].block;
        for (size_t at = 0; at < GUARD; at++) {
            if (block[at] != 0xA5 || block[GUARD + guarded[i].bytes + at] != 0xA5) {
                fprintf(stderr, "harness [%s]: a guard byte of buffer %d changed after %s\n", case_name, i, after);
                exit(1);
            }
        }
    }
}

static void give_back(void) {
    for (int i = 0; i < guarded_count; i++) free(guarded[i].block);
    guarded_count = 0;
}

static int fail(const char *what, capi_err_t code) {
    fprintf(stderr, "harness [%s]: %s answered 0x%x\n", case_name, what, code);
    return 1;
}

static unsigned char *read_file(const char *path, size_t *bytes) {
    FILE *file = fopen(path, "rb");
    if (!file) { fprintf(stderr, "harness: cannot open %s\n", path); exit(1); }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *data = malloc(length > 0 ? (size_t)length : 1);
    if (!data || fread(data, 1, (size_t)length, file) != (size_t)length) { fprintf(stderr, "harness: cannot read %s\n", path); exit(1); }
    fclose(file);
    *bytes = (size_t)length;
    return data;
}

/* Events: results appended to the results file; the others counted; votes printed. */
static FILE *results;
static int results_written, process_state = -1, format_events;
static unsigned char raised_format[100]; /* the last output format raised */
static uint32_t raised_format_bytes;
static size_t frame_in_process; /* samples per channel of the process call running, 0 outside process */
/* Set while end() runs: SPF's generic topology destroys the module's bypass before end(), so an event raised there
 * (a PROCESS_STATE "disabled" creates a new bypass that nothing frees) is a leak in a real graph.
 * GT/core/src/gen_topo.c gen_topo_destroy_module: gen_topo_check_destroy_bypass_module, then end();
 * GT/core/src/gen_topo_capi_cb_handler.c gen_topo_handle_process_state_event → gen_topo_check_create_bypass_module. */
static int ending;

static capi_err_t on_event(void *context, uint32_t id, capi_event_info_t *info) {
    if (context != (void *)&results) { fprintf(stderr, "harness [%s]: the event context is not ours\n", case_name); exit(1); }
    if (ending) {
        fprintf(stderr, "harness [%s]: event 0x%x raised inside end(), after SPF destroyed the bypass\n", case_name,
                (unsigned)id);
        exit(1);
    }
    if (info->payload.actual_data_len > info->payload.max_data_len) return 2;
    if (id == EVENT_PROCESS_STATE) process_state = info->payload.data_ptr[0];
    if (id == EVENT_OUTPUT_MEDIA_FORMAT_UPDATED_V2) {
        format_events++;
        raised_format_bytes = info->payload.actual_data_len < 100 ? info->payload.actual_data_len : 100;
        memcpy(raised_format, info->payload.data_ptr, raised_format_bytes);
    }
    /* The votes. SPF runs a module with a 1-byte threshold on the container's frame: with no threshold module,
     * GC/core/src/gen_cntr_buf_util.c gen_cntr_handle_port_data_thresh_change takes gen_cntr_get_default_port_threshold,
     * sr/1000 samples times TOPO_PERF_MODE_TO_FRAME_DURATION_MS (topo_utils.h: 5 ms for LOW_POWER, the default
     * perf mode of graph_utils.c gu_create_graph; 1 ms for low latency), or the container's
     * APM_CONTAINER_PROP_ID_FRAME_SIZE (e.g. 10 ms). No event or property tells the module the frame: it sees the
     * buffer lengths. SPF keeps the last KPPS and BANDWIDTH and never asks again
     * (GT/core/src/gen_topo_capi_cb_handler.c, CAPI_EVENT_KPPS / CAPI_EVENT_BANDWIDTH), so the module must vote
     * again when the frame changes, which the FRAMES list does (e.g. 1, 5, then 10 ms). */
    if (id == EVENT_KPPS && info->payload.actual_data_len >= 4) {
        uint32_t kpps;
        memcpy(&kpps, info->payload.data_ptr, 4);
        printf("vote kpps %u frame %zu\n", kpps, frame_in_process);
    }
    if (id == EVENT_BANDWIDTH && info->payload.actual_data_len >= 8) {
        uint32_t bandwidth[2];
        memcpy(bandwidth, info->payload.data_ptr, 8);
        printf("vote bandwidth %u %u frame %zu\n", bandwidth[0], bandwidth[1], frame_in_process);
    }
    if (id == EVENT_DATA_TO_DSP_CLIENT_V2) {
        const capi_event_data_to_dsp_client_v2_t *data = (const void *)info->payload.data_ptr;
        if (data->dest_address != CLIENT_ADDRESS || data->token != CLIENT_TOKEN || data->event_id != EVENT_ID_LPAI_DIRECT_RESULT) {
            fprintf(stderr, "harness [%s]: a result event for another client\n", case_name);
            exit(1);
        }
        fwrite(data->payload.data_ptr, 1, data->payload.actual_data_len, results);
        results_written++;
    }
    return 0;
}

static capi_prop_t property(uint32_t id, void *data, uint32_t bytes) {
    capi_prop_t prop = {id, {(int8_t *)data, bytes, bytes}, {0, 0, 0}};
    return prop;
}

static uint32_t static_word(uint32_t id) {
    uint32_t *word = lend(4);
    capi_prop_t prop = property(id, word, 4);
    capi_proplist_t list = {1, &prop};
    capi_err_t code = capi_lpai_direct_get_static_properties(NULL, &list);
    if (code != 0) { fail("get_static_properties", code); exit(1); }
    return *word;
}

/* The run's inputs, read once. */
static uint32_t channels, bits, q, data_format, interleaving;
static size_t sample, config_bytes, model_bytes, pcm_bytes;
static unsigned char *config_text, *model_file, *pcm;
#define MAX_FRAME_SIZES 16
static size_t frame_sizes[MAX_FRAME_SIZES], frame_repeats[MAX_FRAME_SIZES], frame_size_count, largest_frame;

/* Samples per channel of process call `call`: the FRAMES list in turn, its last size repeated. */
static size_t frame_of(size_t call) {
    for (size_t i = 0; i + 1 < frame_size_count; i++) {
        if (call < frame_repeats[i]) return frame_sizes[i];
        call -= frame_repeats[i];
    }
    return frame_sizes[frame_size_count - 1];
}

/* Sends the configuration text in `path` through set_param; answers the module's code. */
static capi_err_t configure(const capi_vtbl_t *vtbl, capi_t *instance, const char *path) {
    size_t bytes;
    unsigned char *text = read_file(path, &bytes);
    char *config = lend(bytes + 1);
    memcpy(config, text, bytes);
    free(text);
    capi_port_info_t no_port = {0, 0, 0};
    capi_buf_t buffer = {(int8_t *)config, (uint32_t)bytes + 1, (uint32_t)bytes + 1};
    capi_err_t code = vtbl->set_param(instance, PARAM_ID_LPAI_DIRECT_CONFIG, &no_port, &buffer);
    check_guards("the configuration");
    return code;
}

/* CASE_REGISTRATION. SPF's gen_topo_capi_register_event_v2 (GT/core/src/gen_topo_capi.c, reached from
 * APM_CMD_REGISTER_MODULE_EVENTS through CU/cu_cmd_handler.c cu_register_module_events_v2 and
 * GC/core/src/gen_cntr_cmd_handler.c gen_cntr_register_events_utils) fills a struct on its stack field by field:
 * event_cfg.data_ptr points at the event configuration (after the APM struct in the client's command, not after
 * this struct) and event_cfg.actual_data_len is its length, but event_cfg.max_data_len is never set; the property's
 * payload.data_ptr is the struct, payload.actual_data_len = sizeof(struct) + the configuration's length, and
 * payload.max_data_len is never set either (both hold stack garbage). Here the garbage is each of 0, 1, actual - 1
 * and 0xFFFFFFFF in turn (below and above actual_data_len), the struct lent alone (reading actual_data_len bytes
 * at it reads past it), with a deregistration between: every call must succeed, and the last leaves the client
 * registered, so the results must arrive. Answers 0 when they all succeeded. */
static int register_as_spf(const capi_vtbl_t *vtbl, capi_t *instance) {
    const uint32_t config_lengths[5] = {0, 4, 0, 4, 0};
    const uint8_t registers[5] = {1, 0, 1, 1, 1};
    for (int attempt = 0; attempt < 5; attempt++) {
        capi_register_event_to_dsp_client_v2_t *registration = lend(sizeof *registration);
        uint32_t config_length = config_lengths[attempt];
        uint32_t actual = (uint32_t)sizeof *registration + config_length;
        const uint32_t garbage[5] = {0, 1, actual - 1, 0xFFFFFFFFu, 0x5A5A5A5Au};
        unsigned char *event_config = lend(config_length + 1);
        memset(event_config, 0, config_length + 1);
        registration->dest_address = CLIENT_ADDRESS;
        registration->token = CLIENT_TOKEN;
        registration->event_id = EVENT_ID_LPAI_DIRECT_RESULT;
        registration->is_register = registers[attempt];
        registration->event_cfg.data_ptr = (int8_t *)event_config;
        registration->event_cfg.actual_data_len = config_length;
        registration->event_cfg.max_data_len = garbage[(attempt + 3) % 5];
        capi_prop_t prop = {REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, {(int8_t *)registration, actual, garbage[attempt]},
                            {0, 0, 0x5A5A5A5Au}};
        capi_proplist_t list = {1, &prop};
        capi_err_t code = vtbl->set_properties(instance, &list);
        check_guards("REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2");
        if (code != 0) {
            fprintf(stderr, "harness [%s]: REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 (is_register %u, actual_data_len %u, "
                            "max_data_len 0x%x, event_cfg %u bytes with max_data_len 0x%x) answered 0x%x\n",
                    case_name, registers[attempt], actual, garbage[attempt], config_length,
                    garbage[(attempt + 3) % 5], code);
            return 1;
        }
    }
    return 0;
}

/* CASE_FORMAT_QUERY. During prepare, CU/cu_cmd_handler.c cu_handle_prepare propagates the media format
 * (GT/core/src/gen_topo.c gen_topo_propagate_media_fmt_from_module): for each output port whose format is still
 * unknown it calls gen_topo_capi_get_out_media_fmt (GT/core/src/gen_topo_capi.c), which asks get_properties on
 * output 0 (port_info valid): OUTPUT_MEDIA_FORMAT_SIZE (max 4, actual 0), then OUTPUT_MEDIA_FORMAT_V2 (max 100, the
 * header, the V2 body and 32 channel slots), then, when V2 failed, OUTPUT_MEDIA_FORMAT (v1, 64 bytes); a failure
 * of both is ignored (the output stays unknown). No input format was set yet. The module may refuse; it must not
 * write past the buffers, nor keep anything that refuses the real input format later (checked by the session
 * going on). Prints what each query answered. */
static void query_output_format(const capi_vtbl_t *vtbl, capi_t *instance) {
    const uint32_t ids[3] = {OUTPUT_MEDIA_FORMAT_SIZE, OUTPUT_MEDIA_FORMAT_V2, OUTPUT_MEDIA_FORMAT};
    const uint32_t sizes[3] = {4, 100, 64};
    for (int i = 0; i < 3; i++) {
        unsigned char *room = lend(sizes[i]);
        capi_prop_t prop = {ids[i], {(int8_t *)room, 0, sizes[i]}, {1, 0, 0}};
        capi_proplist_t list = {1, &prop};
        capi_err_t code = vtbl->get_properties(instance, &list);
        check_guards("an output format query before the input format");
        if (prop.payload.actual_data_len > sizes[i]) {
            fprintf(stderr, "harness [%s]: query 0x%x answered %u bytes into %u\n", case_name, ids[i],
                    prop.payload.actual_data_len, sizes[i]);
            exit(1);
        }
        printf("query 0x%x answered 0x%x with %u bytes\n", ids[i], code, prop.payload.actual_data_len);
        if (i == 1 && code == 0) break;
    }
}

/* CASE_RESULT_BEFORE_INFERENCE. A client's get_param reaches the module through CU/cu_cmd_handler.c
 * cu_set_get_cfg_wrapper, GC/core/src/gen_cntr_cmd_handler.c gen_cntr_set_get_cfg_util and GT/core/src/gen_topo_capi.c
 * gen_topo_capi_get_param, in any state, with actual_data_len = max_data_len = the room the client gave
 * (apm_module_param_data_t.param_size) and port_info invalid; SPF hands back actual_data_len bytes. Right after
 * start, before any inference, the result record must read all zeros. The room here is 64 bytes, filled with 0xA5
 * first so that bytes the module did not write show. Answers 0 when the record read all zeros. */
static int result_before_inference(const capi_vtbl_t *vtbl, capi_t *instance) {
    unsigned char *room = lend(64);
    memset(room, 0xA5, 64);
    capi_port_info_t no_port = {0, 0, 0};
    capi_buf_t buffer = {(int8_t *)room, 64, 64};
    capi_err_t code = vtbl->get_param(instance, PARAM_ID_LPAI_DIRECT_RESULT, &no_port, &buffer);
    check_guards("get_param of the result");
    if (code != 0) return fail("get_param of the result before the first inference", code);
    if (buffer.actual_data_len == 0 || buffer.actual_data_len > 64)
        return fail("get_param of the result before the first inference (its length)", buffer.actual_data_len);
    for (uint32_t at = 0; at < buffer.actual_data_len; at++) {
        if (room[at] != 0) {
            fprintf(stderr, "harness [%s]: the result before the first inference is not zero: byte %u of %u is 0x%02x\n",
                    case_name, at, buffer.actual_data_len, room[at]);
            return 1;
        }
    }
    printf("result before inference %u zero bytes\n", buffer.actual_data_len);
    return 0;
}

/* CASE_CONFIG_AFTER_START. A client's set_param reaches the module in any state, RUN included, between process
 * calls: APM_CMD_SET_CFG is handled alike in every state (apm_gpr_cmd_parser.c), and CU/cu_cmd_handler.c
 * cu_set_get_cfg_wrapper → GC/core/src/gen_cntr_cmd_handler.c gen_cntr_set_get_cfg_util → gen_topo_capi_set_param
 * check no state; port_info invalid, actual_data_len = max_data_len. The module refuses a configuration that needs
 * a new model and takes one that does not (channel, hop), and the results then follow the configuration taken.
 * Answers 0 when it did. */
static int configure_after_start(const capi_vtbl_t *vtbl, capi_t *instance) {
    capi_err_t code = configure(vtbl, instance, later_refused);
    printf("later configuration refused 0x%x\n", code);
    if (code == 0) return fail("a configuration with a model key after start (not refused)", code);
    if ((code = configure(vtbl, instance, later_taken)) != 0) return fail("a channel and hop configuration after start", code);
    return 0;
}

/* CASE_STREAM_FLAGS: the input's flags for process call `call` of `calls`. SPF sets end_of_frame on the input at a
 * discontinuity (and with EOS), and marker_eos at the end of the stream; the stream data version is 1 (V2), the
 * timestamp valid (GT/core/src/gen_topo_data_process_island.c gen_topo_module_process). Here every third frame
 * ends a frame, and the last one ends the stream. */
static uint32_t input_flags(size_t call, size_t calls) {
    uint32_t flags = FLAG_TIMESTAMP_VALID | FLAG_VERSION_2;
    if (kase != CASE_STREAM_FLAGS) return flags;
    if (call % 3 == 2) flags |= FLAG_END_OF_FRAME;
    if (call + 1 == calls) flags |= FLAG_END_OF_FRAME | FLAG_MARKER_EOS;
    return flags;
}

/* The buffers of one process call in the format's layout (the facts: GT/core/src/gen_topo.c
 * gen_topo_get_bufs_num_from_med_fmt gives one buffer unless the format is deinterleaved unpacked, which gets one
 * per channel):
 * - INTERLEAVED: one buffer, the samples interleaved, actual_data_len counting every channel. This is what
 *   GC/ext/wr_sh_mem_ep/src/gen_cntr_wr_sh_mem_ep.c hands the module after a shared-memory write endpoint in its
 *   container (gen_cntr_parse_inp_pcm_media_fmt_from_gpr_client accepts only interleaved client PCM and
 *   gen_cntr_copy_gpr_client_input_to_int_buf copies it as it is);
 * - DEINTERLEAVED_PACKED: one buffer, channel c at c * (actual_data_len / channels), no gap
 *   (GT/core/src/gen_topo_data_process_island.c gen_topo_update_out_buf_len_after_process);
 * - DEINTERLEAVED_UNPACKED: one buffer per channel, each with the same actual and max lengths.
 * `count` samples per channel go from `pcm` (interleaved) into `data`; answers the number of buffers. */
static uint32_t lay_out(capi_buf_t *buffers, unsigned char **data, const unsigned char *from, size_t count, size_t room) {
    size_t per_channel = count * sample;
    if (interleaving == DEINTERLEAVED_UNPACKED) {
        for (uint32_t c = 0; c < channels; c++) {
            for (size_t n = 0; n < count; n++) memcpy(data[c] + n * sample, from + (n * channels + c) * sample, sample);
            buffers[c] = (capi_buf_t){(int8_t *)data[c], (uint32_t)per_channel, (uint32_t)(room * sample)};
        }
        return channels;
    }
    if (interleaving == DEINTERLEAVED_PACKED) {
        for (uint32_t c = 0; c < channels; c++)
            for (size_t n = 0; n < count; n++)
                memcpy(data[0] + c * per_channel + n * sample, from + (n * channels + c) * sample, sample);
    } else {
        memcpy(data[0], from, per_channel * channels);
    }
    buffers[0] = (capi_buf_t){(int8_t *)data[0], (uint32_t)(per_channel * channels), (uint32_t)(room * sample * channels)};
    return 1;
}

/* The audio of output `buffers` (laid out as `lay_out` does) interleaved again into `to`; 0 when every buffer's
 * length is that of its input. */
static int gather(const capi_buf_t *buffers, unsigned char **data, unsigned char *to, size_t count) {
    size_t per_channel = count * sample;
    if (interleaving == DEINTERLEAVED_UNPACKED) {
        for (uint32_t c = 0; c < channels; c++) {
            if (buffers[c].actual_data_len != per_channel) return fail("process (output length)", buffers[c].actual_data_len);
            for (size_t n = 0; n < count; n++) memcpy(to + (n * channels + c) * sample, data[c] + n * sample, sample);
        }
        return 0;
    }
    if (buffers[0].actual_data_len != per_channel * channels) return fail("process (output length)", buffers[0].actual_data_len);
    if (interleaving == DEINTERLEAVED_PACKED) {
        for (uint32_t c = 0; c < channels; c++)
            for (size_t n = 0; n < count; n++)
                memcpy(to + (n * channels + c) * sample, data[0] + c * per_channel + n * sample, sample);
    } else {
        memcpy(to, data[0], per_channel * channels);
    }
    return 0;
}

/* One module's life, as SPF leads it, from the static queries to end; the results and the audio written to the
 * two files. 0 when every check held. */
static int session(FILE *audio_out) {
    results_written = 0;
    process_state = -1;
    format_events = 0;

    /* 1. The static queries, one call each, in SPF's order. */
    uint32_t instance_bytes = static_word(INIT_MEMORY_REQUIREMENT), stack = static_word(STACK_SIZE);
    uint8_t *flags = lend(2);
    capi_prop_t both[2] = {property(IS_INPLACE, flags, 1), property(REQUIRES_DATA_BUFFERING, flags + 1, 1)};
    capi_proplist_t both_list = {2, both};
    capi_err_t code = capi_lpai_direct_get_static_properties(NULL, &both_list);
    if (code != 0 || flags[1] != 0) return fail("IS_INPLACE and REQUIRES_DATA_BUFFERING", code);
    int in_place = flags[0] != 0;
    if (static_word(NUM_NEEDED_FRAMEWORK_EXTENSIONS) != 0) return fail("NUM_NEEDED_FRAMEWORK_EXTENSIONS", 0);
    const uint32_t extensions[10] = {0x0A001012, 0x0A001023, 0x0A00101F, 0x0A00102E, 0x0A001040, 0x0A001048,
                                     0x0A001062, 0x0A001060, 0x0A00FFEE, 0x0A001BAF};
    size_t first = sizeof(void *), descriptor = sizeof(capi_buf_t) + 8;
    unsigned char *asked = lend(first + 10 * descriptor);
    *(uint32_t *)asked = 10;
    for (int i = 0; i < 10; i++) {
        memcpy(asked + first + i * descriptor, &extensions[i], 4);
        asked[first + i * descriptor + 4] = 1;
    }
    capi_prop_t extension_prop = property(INTERFACE_EXTENSIONS, asked, (uint32_t)(first + 10 * descriptor));
    capi_proplist_t extension_list = {1, &extension_prop};
    code = capi_lpai_direct_get_static_properties(NULL, &extension_list);
    for (int i = 0; i < 10; i++) if (asked[first + i * descriptor + 4] != 0) code |= 1;
    if (code != 0) return fail("INTERFACE_EXTENSIONS (none supported)", code);

    /* 2. The instance memory, zeroed and 8-aligned, then init with SPF's init list. */
    capi_t *instance = lend(instance_bytes);
    capi_event_callback_info_t *callback = lend(sizeof *callback);
    callback->event_cb = on_event;
    callback->event_context = &results;
    uint32_t *words = lend(7 * 4);
    words[0] = 1;                   /* heap id */
    words[1] = 1; words[2] = 1;     /* ports */
    words[3] = 0x17001F00; words[4] = 0x6001; /* module and instance id */
    words[5] = 0; words[6] = 0;     /* logging */
    capi_prop_t init[5] = {
        property(EVENT_CALLBACK_INFO, callback, sizeof *callback), property(HEAP_ID, words, 4),
        property(PORT_NUM_INFO, words + 1, 8), property(MODULE_INSTANCE_ID, words + 3, 8),
        property(LOGGING_INFO, words + 5, 8),
    };
    capi_proplist_t init_list = {5, init};
    if ((code = capi_lpai_direct_init(instance, &init_list)) != 0) return fail("init", code);
    const capi_vtbl_t *vtbl = instance->vtbl_ptr;
    if (process_state != 0) return fail("init (PROCESS_STATE off)", (capi_err_t)process_state);

    /* 3. The data thresholds, the configuration and the model. */
    uint32_t *threshold = lend(4);
    *threshold = 1;
    capi_prop_t threshold_prop = property(PORT_DATA_THRESHOLD, threshold, 4);
    capi_proplist_t threshold_list = {1, &threshold_prop};
    if ((code = vtbl->get_properties(instance, &threshold_list)) != 0 || *threshold != 1) return fail("PORT_DATA_THRESHOLD", code);
    char *config = lend(config_bytes + 1);
    memcpy(config, config_text, config_bytes);
    capi_port_info_t no_port = {0, 0, 0};
    capi_buf_t config_buf = {(int8_t *)config, (uint32_t)config_bytes + 1, (uint32_t)config_bytes + 1};
    if ((code = vtbl->set_param(instance, PARAM_ID_LPAI_DIRECT_CONFIG, &no_port, &config_buf)) != 0) return fail("CONFIG", code);
    unsigned char *model = lend(model_bytes);
    memcpy(model, model_file, model_bytes);
    capi_buf_t model_buf = {(int8_t *)model, (uint32_t)model_bytes, (uint32_t)model_bytes};
    if ((code = vtbl->set_param(instance, PARAM_ID_LPAI_DIRECT_MODEL, &no_port, &model_buf)) != 0) return fail("MODEL", code);
    memset(model, 0x5A, model_bytes); /* the payload lived only during the call */
    uint64_t held[3] = {0};
    lpai_direct_capi_host_resources(held, 3);
    if (held[0] == 0 || held[2] == 0) return fail("the model's memory and libraries are not counted", 0);
    if (process_state != 1) return fail("MODEL (PROCESS_STATE on)", (capi_err_t)process_state);

    /* 4. A client registers for the results (graph open, before prepare). */
    if (kase == CASE_REGISTRATION) {
        if (register_as_spf(vtbl, instance) != 0) return 1;
    } else {
        capi_register_event_to_dsp_client_v2_t *registration = lend(sizeof *registration);
        registration->dest_address = CLIENT_ADDRESS;
        registration->token = CLIENT_TOKEN;
        registration->event_id = EVENT_ID_LPAI_DIRECT_RESULT;
        registration->is_register = 1;
        capi_prop_t register_prop = property(REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, registration, sizeof *registration);
        capi_proplist_t register_list = {1, &register_prop};
        if ((code = vtbl->set_properties(instance, &register_list)) != 0) return fail("REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2", code);
    }

    /* 5. Prepare: the output format asked for before any input format. */
    if (kase == CASE_FORMAT_QUERY) query_output_format(vtbl, instance);

    /* 6. The input media format: 100 bytes, channel slots past num_channels left as garbage. */
    uint32_t *format = lend(100);
    memset(format, 0xA5, 100);
    uint32_t fields[9] = {data_format, 0xFFFFFFFF, 0x09001000, channels, bits, q, 48000, 1, interleaving};
    memcpy(format, fields, sizeof fields);
    for (uint32_t c = 0; c < channels; c++) ((uint16_t *)((unsigned char *)format + 36))[c] = (uint16_t)(c + 1);
    capi_prop_t format_prop = property(INPUT_MEDIA_FORMAT_V2, format, 100);
    format_prop.port_info.is_valid = 1;
    format_prop.port_info.is_input_port = 1;
    capi_proplist_t format_list = {1, &format_prop};
    code = vtbl->set_properties(instance, &format_list);
    check_guards("the media format");
    if (code != 0) {
        printf("format refused 0x%x\n", code);
        ending = 1;
        if ((code = vtbl->end(instance)) != 0) return fail("end", code);
        ending = 0;
        check_guards("end");
        give_back();
        return format_events == 0 ? 0 : fail("a refused format raised an output format", 0);
    }
    if (format_events != 1) return fail("the output media format event", (capi_err_t)format_events);
    if (raised_format_bytes != 36 + 2 * channels || memcmp(raised_format, format, raised_format_bytes) != 0)
        return fail("the output media format event (the input's format raised back)", raised_format_bytes);
    uint32_t *size = lend(4);
    capi_prop_t size_prop = property(OUTPUT_MEDIA_FORMAT_SIZE, size, 4);
    size_prop.port_info = (capi_port_info_t){1, 0, 0};
    capi_proplist_t size_list = {1, &size_prop};
    if ((code = vtbl->get_properties(instance, &size_list)) != 0 || *size != 32 + 2 * channels) return fail("OUTPUT_MEDIA_FORMAT_SIZE", code);
    unsigned char *echo = lend(100);
    capi_prop_t echo_prop = {OUTPUT_MEDIA_FORMAT_V2, {(int8_t *)echo, 0, 100}, {1, 0, 0}};
    capi_proplist_t echo_list = {1, &echo_prop};
    if ((code = vtbl->get_properties(instance, &echo_list)) != 0 || echo_prop.payload.actual_data_len != 36 + 2 * channels ||
        memcmp(echo, format, 36 + 2 * channels) != 0)
        return fail("OUTPUT_MEDIA_FORMAT_V2 (the input's format)", code);

    /* 7. Start; a client may ask for the result, or configure the module, before any data. */
    if (kase == CASE_RESULT_BEFORE_INFERENCE && result_before_inference(vtbl, instance) != 0) return 1;
    if (kase == CASE_CONFIG_AFTER_START && configure_after_start(vtbl, instance) != 0) return 1;

    /* 8. Frames, in the format's layout; in place when the module says so (the outputs are the inputs' memory),
     * else into output buffers of their own. */
    size_t samples = pcm_bytes / sample / channels;
    capi_buf_t *inputs = lend(channels * sizeof(capi_buf_t)), *outputs = lend(channels * sizeof(capi_buf_t));
    unsigned char **input_data = malloc(channels * sizeof *input_data), **output_data = malloc(channels * sizeof *output_data);
    for (uint32_t c = 0; c < channels; c++) {
        size_t bytes = interleaving == DEINTERLEAVED_UNPACKED ? largest_frame * sample : (c == 0 ? largest_frame * sample * channels : 0);
        input_data[c] = bytes ? lend(bytes) : NULL;
        output_data[c] = in_place ? input_data[c] : (bytes ? lend(bytes) : NULL);
    }
    capi_stream_data_v2_t *input = lend(sizeof *input), *output = lend(sizeof *output);
    unsigned char *interleaved = malloc(largest_frame * sample * channels);
    size_t calls = 0;
    for (size_t start = 0; start < samples; start += frame_of(calls++)) {}
    size_t call = 0;
    for (size_t start = 0; start < samples; start += frame_of(call++)) {
        size_t frame = frame_of(call);
        size_t count = samples - start < frame ? samples - start : frame;
        uint32_t buffers = lay_out(inputs, input_data, pcm + start * channels * sample, count, frame);
        for (uint32_t b = 0; b < buffers; b++)
            outputs[b] = (capi_buf_t){(int8_t *)output_data[b], 0, inputs[b].max_data_len};
        int64_t timestamp = (int64_t)(start * 1000000 / 48000);
        *input = (capi_stream_data_v2_t){input_flags(call, calls), timestamp, inputs, buffers, NULL};
        /* SPF presets a SISO module's empty output before process: the timestamp (the input's less the
         * algorithmic delay, 0 here), is_timestamp_valid, ts_continue and erasure from the input, the stream data
         * version; then it snapshots the output's flags (GT/core/src/gen_topo_data_process_island.c
         * gen_topo_module_process). After process, for a module without the metadata extension (the framework owns
         * metadata propagation: gen_topo_fwk_owns_md_prop, GT/core/inc/gen_topo.h), a changed end_of_frame or
         * marker_eos, or a metadata list, is "not supposed to propagate metadata" (an error line) and undone. */
        uint32_t preset = (input->flags & (FLAG_TIMESTAMP_VALID | FLAG_TIMESTAMP_CONTINUE | FLAG_ERASURE)) | FLAG_VERSION_2;
        *output = (capi_stream_data_v2_t){preset, timestamp, outputs, buffers, NULL};
        const uint32_t snapshot = output->flags;
        capi_stream_data_v2_t *in_ports[1] = {input}, *out_ports[1] = {output};
        frame_in_process = count;
        code = vtbl->process(instance, in_ports, out_ports);
        frame_in_process = 0;
        if (code != 0) return fail("process", code);
        check_guards("process");
        const uint32_t owned = FLAG_END_OF_FRAME | FLAG_MARKER_EOS;
        if ((output->flags & owned) != (snapshot & owned) || output->metadata_list_ptr != NULL) {
            fprintf(stderr, "harness [%s]: process changed the framework's stream flags: module is not supposed to "
                            "propagate metadata (flags before 0x%x, after 0x%x, input 0x%x, metadata %p)\n",
                    case_name, snapshot, output->flags, input->flags, output->metadata_list_ptr);
            return 1;
        }
        if (gather(outputs, output_data, interleaved, count) != 0) return 1;
        if (output->timestamp != input->timestamp) return fail("process (output timestamp)", 0);
        fwrite(interleaved, 1, count * sample * channels, audio_out);
    }

    /* 9. Stop: ALGORITHMIC_RESET on input 0 and output 0, then end; then the memory goes back. */
    capi_prop_t reset[2] = {property(ALGORITHMIC_RESET, NULL, 0), property(ALGORITHMIC_RESET, NULL, 0)};
    reset[0].port_info = (capi_port_info_t){1, 1, 0};
    reset[1].port_info = (capi_port_info_t){1, 0, 0};
    capi_proplist_t reset_list = {2, reset};
    if ((code = vtbl->set_properties(instance, &reset_list)) != 0) return fail("ALGORITHMIC_RESET", code);
    ending = 1;
    if ((code = vtbl->end(instance)) != 0) return fail("end", code);
    ending = 0;
    check_guards("end");
    give_back();
    free(input_data);
    free(output_data);
    free(interleaved);
    printf("results %d stack %u instance %u\n", results_written, stack, instance_bytes);
    return 0;
}

/* Reads FRAMES ("N" or "N[xK],..."); answers 0 when it is well formed. */
static int parse_frames(const char *text) {
    while (*text && frame_size_count < MAX_FRAME_SIZES) {
        char *end;
        size_t size = strtoul(text, &end, 10), repeat = 1;
        if (end == text || size == 0) return 1;
        if (*end == 'x') {
            text = end + 1;
            repeat = strtoul(text, &end, 10);
            if (end == text || repeat == 0) return 1;
        }
        frame_sizes[frame_size_count] = size;
        frame_repeats[frame_size_count++] = repeat;
        if (size > largest_frame) largest_frame = size;
        if (*end == ',') end++;
        else if (*end) return 1;
        text = end;
    }
    return frame_size_count == 0 || *text;
}

/* The container thread's stack, as SPF sizes it. GC/core/src/gen_cntr_utils.c gen_cntr_get_thread_stack_size takes
 * the largest STACK_SIZE of the container's modules (GT/core/src/gen_topo_capi.c
 * gen_topo_get_aggregated_capi_stack_size, each asked through get_static_properties), at least
 * GEN_CNTR_BASE_STACK_SIZE (1024), and adds GEN_CNTR_PROCESS_STACK_SIZE (1024; 2048 in builds with
 * PROD_SPECIFIC_MAX_CH) for the framework's own frames; the _LPI pair for an island container is the same 1024 and
 * 1024. GC/core/src/gen_cntr_cmd_handler.c gen_cntr_graph_open relaunches the thread with that size before the
 * rest of the open (init, the calibration set_params), so every module call runs on it. The harness uses the
 * smaller figure, and none of what one platform's thread layer adds: SPF's Linux posal
 * (posal_linux_thread.c posal_thread_launch3) adds PTHREAD_STACK_MIN to a stack under it, a QuRT thread gets the
 * size itself. */
enum { GEN_CNTR_BASE_STACK_SIZE = 1024, GEN_CNTR_PROCESS_STACK_SIZE = 1024 };
static size_t spf_thread_stack_bytes(uint32_t module_stack) {
    return (module_stack > GEN_CNTR_BASE_STACK_SIZE ? module_stack : GEN_CNTR_BASE_STACK_SIZE) +
           GEN_CNTR_PROCESS_STACK_SIZE;
}

/* The session runs on a stack of exactly that many bytes with an inaccessible page right below it, so a module that
 * uses more than SPF gives it faults there, named, instead of passing here. glibc refuses a thread stack under
 * PTHREAD_STACK_MIN (16 KiB) and puts its thread control block inside a stack it is given, so the harness moves
 * its own thread onto the stack (makecontext) instead. The stack is painted first: the deepest byte touched is
 * printed as "spf thread N used U". */
#define PAINT 0x5C
static unsigned char *thread_stack;
static size_t thread_stack_bytes, page_bytes;
static ucontext_t harness_context, thread_context;
static FILE *thread_audio_out;
static int thread_failed;

static void thread_entry(void) { thread_failed = session(thread_audio_out); }

static void on_fault(int number, siginfo_t *info, void *context) {
    (void)context;
    unsigned char *at = info->si_addr;
    if (thread_stack && at >= thread_stack - page_bytes && at < thread_stack) {
        static const char message[] = "harness: the module overflowed the stack SPF gives its container thread "
                                      "(the guard page below it was touched)\n";
        ssize_t written = write(2, message, sizeof message - 1);
        (void)written;
        _exit(3);
    }
    signal(number, SIG_DFL);
    raise(number);
}

/* One session on SPF's container stack for a module asking `module_stack` bytes; 0 when every check held. */
static int session_on_spf_stack(FILE *audio_out, uint32_t module_stack) {
    page_bytes = (size_t)sysconf(_SC_PAGESIZE);
    thread_stack_bytes = spf_thread_stack_bytes(module_stack);
    size_t mapped = page_bytes + (thread_stack_bytes + page_bytes - 1) / page_bytes * page_bytes;
    unsigned char *region = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || mprotect(region, page_bytes, PROT_NONE) != 0) {
        fprintf(stderr, "harness: cannot map the container stack\n");
        exit(1);
    }
    thread_stack = region + page_bytes;
    memset(thread_stack, PAINT, thread_stack_bytes);
    /* The fault is handled on a stack of its own: the thread's is exhausted when it comes. */
    static unsigned char fault_stack[64 * 1024];
    stack_t alternate = {.ss_sp = fault_stack, .ss_size = sizeof fault_stack, .ss_flags = 0};
    struct sigaction action = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK};
    sigemptyset(&action.sa_mask);
    if (sigaltstack(&alternate, NULL) != 0 || sigaction(SIGSEGV, &action, NULL) != 0 || getcontext(&thread_context) != 0) {
        fprintf(stderr, "harness: cannot set up the container stack\n");
        exit(1);
    }
    thread_context.uc_stack.ss_sp = thread_stack;
    thread_context.uc_stack.ss_size = thread_stack_bytes;
    thread_context.uc_link = &harness_context;
    makecontext(&thread_context, thread_entry, 0);
    thread_audio_out = audio_out;
    if (swapcontext(&harness_context, &thread_context) != 0) {
        fprintf(stderr, "harness: cannot switch to the container stack\n");
        exit(1);
    }
    size_t untouched = 0;
    while (untouched < thread_stack_bytes && thread_stack[untouched] == PAINT) untouched++;
    printf("spf thread %zu used %zu\n", thread_stack_bytes, thread_stack_bytes - untouched);
    munmap(region, mapped);
    thread_stack = NULL;
    return thread_failed;
}

int main(int argc, char **argv) {
    if (argc != 10 && argc < 12) {
        fprintf(stderr, "usage: capi_harness CONFIG MODEL PCM CHANNELS BITS Q FRAMES RESULTS AUDIO_OUT "
                        "[DATA_FORMAT INTERLEAVING [CASE ARGS..]]\n");
        return 2;
    }
    channels = (uint32_t)atoi(argv[4]);
    bits = (uint32_t)atoi(argv[5]);
    q = (uint32_t)atoi(argv[6]);
    if (parse_frames(argv[7]) != 0) { fprintf(stderr, "harness: FRAMES %s is not N[xK],...\n", argv[7]); return 2; }
    sample = bits / 8;
    data_format = argc >= 12 ? (uint32_t)atoi(argv[10]) : 0;
    interleaving = argc >= 12 ? (uint32_t)atoi(argv[11]) : 2;
    if (argc >= 13) {
        static const char *const names[] = {"plain", "registration", "format-query", "result-before-inference",
                                            "stream-flags", "config-after-start"};
        case_name = NULL;
        for (int i = 0; i < 6; i++) if (strcmp(argv[12], names[i]) == 0) { kase = (enum kase)i; case_name = names[i]; }
        if (!case_name) { fprintf(stderr, "harness: no case %s\n", argv[12]); return 2; }
        if (kase == CASE_CONFIG_AFTER_START) {
            if (argc != 15) { fprintf(stderr, "harness: config-after-start takes REFUSED and TAKEN\n"); return 2; }
            later_refused = argv[13];
            later_taken = argv[14];
        } else if (argc != 13) {
            fprintf(stderr, "harness: %s takes no arguments\n", case_name);
            return 2;
        }
    }
    config_text = read_file(argv[1], &config_bytes);
    model_file = read_file(argv[2], &model_bytes);
    pcm = read_file(argv[3], &pcm_bytes);
    /* SPF sizes the container thread before it creates the module (GC/core/src/gen_cntr_cmd_handler.c). */
    uint32_t module_stack = static_word(STACK_SIZE);
    /* Two lives of the module, each giving back every memory block and library it took. */
    for (int run = 0; run < 2; run++) {
        results = fopen(argv[8], "wb");
        FILE *audio_out = fopen(argv[9], "wb");
        if (!results || !audio_out) { fprintf(stderr, "harness: cannot write the outputs\n"); return 1; }
        int failed = session_on_spf_stack(audio_out, module_stack);
        fclose(results);
        fclose(audio_out);
        if (failed) return failed;
        uint64_t held[4] = {0};
        lpai_direct_capi_host_resources(held, 4);
        printf("load stack used %llu\n", (unsigned long long)held[3]);
        if (held[0] != 0 || held[1] != 0 || held[2] != 0) {
            fprintf(stderr, "harness [%s]: after end the runtime still holds %llu memory blocks (%llu bytes) and %llu libraries\n",
                    case_name, (unsigned long long)held[0], (unsigned long long)held[1], (unsigned long long)held[2]);
            return 1;
        }
    }
    free(config_text);
    free(model_file);
    free(pcm);
    return 0;
}
