/* capi_harness.c: drives liblpai_direct_capi.so as AudioReach's SPF drives a CAPI module, with guard bytes
 * around every buffer it lends the module, checked after every call that may write.
 *
 *   capi_harness CONFIG MODEL PCM CHANNELS BITS Q FRAME RESULTS AUDIO_OUT [DATA_FORMAT INTERLEAVING]
 *
 * The module's own memory and libraries are counted by the host build (lpai_direct_capi_host_resources):
 * all of them must be given back by end, twice over (two lives of the module).
 *
 * CONFIG: the module's key=value configuration (a text file); MODEL: the context binary; PCM: interleaved
 * samples (16-bit or 32-bit, native order), deinterleaved here into one buffer per channel as SPF does; FRAME:
 * samples per process call. Every result record the module raises goes to RESULTS, one after another; the audio
 * that comes out of process, interleaved again, goes to AUDIO_OUT. DATA_FORMAT and INTERLEAVING (default 0 and 2:
 * fixed point, deinterleaved unpacked) set the media format; when the module refuses it, the harness says
 * "format refused 0x..." and ends the module. Exit 0 when every check held, 1 otherwise, with the reason.
 *
 * The CAPI declarations below are written from the facts of the interface (project notes on audioreach-engine's
 * public headers), not copied from any header.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
/* The host build's count of what the module's runtime holds: memory blocks, their bytes, libraries. */
size_t lpai_direct_capi_host_resources(uint64_t *counts, size_t capacity);

enum {
    INIT_MEMORY_REQUIREMENT = 0, STACK_SIZE = 1, IS_INPLACE = 3, REQUIRES_DATA_BUFFERING = 4,
    NUM_NEEDED_FRAMEWORK_EXTENSIONS = 5, INTERFACE_EXTENSIONS = 7, EVENT_CALLBACK_INFO = 0x10001,
    PORT_NUM_INFO = 0x10002, HEAP_ID = 0x10003, INPUT_MEDIA_FORMAT_V2 = 0x10008, MODULE_INSTANCE_ID = 0x10009,
    LOGGING_INFO = 0x1000A, ALGORITHMIC_RESET = 0x20001, REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 = 0x20004,
    PORT_DATA_THRESHOLD = 0x30002, OUTPUT_MEDIA_FORMAT_SIZE = 0x30003,
};
enum { EVENT_PROCESS_STATE = 5, EVENT_OUTPUT_MEDIA_FORMAT_UPDATED_V2 = 13, EVENT_DATA_TO_DSP_CLIENT_V2 = 15 };
#define PARAM_ID_LPAI_DIRECT_MODEL 0x18001F02u
#define PARAM_ID_LPAI_DIRECT_CONFIG 0x18001F03u
#define EVENT_ID_LPAI_DIRECT_RESULT 0x18001F06u
#define CLIENT_ADDRESS 0x1122334455667788ull
#define CLIENT_TOKEN 42u

/* Guarded memory: GUARD bytes of 0xA5 on both sides of what the module is lent. */
#define GUARD 64
#define MAX_GUARDED 64
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
                fprintf(stderr, "harness: a guard byte of buffer %d changed after %s\n", i, after);
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
    fprintf(stderr, "harness: %s answered 0x%x\n", what, code);
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

/* Events: results appended to the results file; the others counted. */
static FILE *results;
static int results_written, process_state = -1, format_events;
/* Set while end() runs: SPF's generic topology destroys the module's bypass before end(), so an event raised there
 * (a PROCESS_STATE "disabled" creates a new bypass that nothing frees) is a leak in a real graph. */
static int ending;

static capi_err_t on_event(void *context, uint32_t id, capi_event_info_t *info) {
    if (context != (void *)&results) { fprintf(stderr, "harness: the event context is not ours\n"); exit(1); }
    if (ending) {
        fprintf(stderr, "harness: event 0x%x raised inside end(), after SPF destroyed the bypass\n", (unsigned)id);
        exit(1);
    }
    if (info->payload.actual_data_len > info->payload.max_data_len) return 2;
    if (id == EVENT_PROCESS_STATE) process_state = info->payload.data_ptr[0];
    if (id == EVENT_OUTPUT_MEDIA_FORMAT_UPDATED_V2) format_events++;
    if (id == EVENT_DATA_TO_DSP_CLIENT_V2) {
        const capi_event_data_to_dsp_client_v2_t *data = (const void *)info->payload.data_ptr;
        if (data->dest_address != CLIENT_ADDRESS || data->token != CLIENT_TOKEN || data->event_id != EVENT_ID_LPAI_DIRECT_RESULT) {
            fprintf(stderr, "harness: a result event for another client\n");
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
static size_t frame, sample, config_bytes, model_bytes, pcm_bytes;
static unsigned char *config_text, *model_file, *pcm;

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
    if (code != 0 || flags[0] != 1 || flags[1] != 0) return fail("IS_INPLACE and REQUIRES_DATA_BUFFERING", code);
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

    /* 4. The input media format: 100 bytes, channel slots past num_channels left as garbage. */
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
    uint32_t *size = lend(4);
    capi_prop_t size_prop = property(OUTPUT_MEDIA_FORMAT_SIZE, size, 4);
    capi_proplist_t size_list = {1, &size_prop};
    if ((code = vtbl->get_properties(instance, &size_list)) != 0 || *size != 32 + 2 * channels) return fail("OUTPUT_MEDIA_FORMAT_SIZE", code);

    /* 5. A client registers for the results. */
    capi_register_event_to_dsp_client_v2_t *registration = lend(sizeof *registration);
    registration->dest_address = CLIENT_ADDRESS;
    registration->token = CLIENT_TOKEN;
    registration->event_id = EVENT_ID_LPAI_DIRECT_RESULT;
    registration->is_register = 1;
    capi_prop_t register_prop = property(REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, registration, sizeof *registration);
    capi_proplist_t register_list = {1, &register_prop};
    if ((code = vtbl->set_properties(instance, &register_list)) != 0) return fail("REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2", code);

    /* 6. Frames: deinterleaved into one lent buffer per channel, in place (the outputs are the inputs' memory). */
    size_t samples = pcm_bytes / sample / channels;
    capi_buf_t *inputs = lend(channels * sizeof(capi_buf_t)), *outputs = lend(channels * sizeof(capi_buf_t));
    unsigned char **channel_data = malloc(channels * sizeof *channel_data);
    for (uint32_t c = 0; c < channels; c++) channel_data[c] = lend(frame * sample);
    capi_stream_data_v2_t *input = lend(sizeof *input), *output = lend(sizeof *output);
    unsigned char *interleaved = malloc(frame * sample * channels);
    for (size_t start = 0; start < samples; start += frame) {
        size_t count = samples - start < frame ? samples - start : frame;
        for (uint32_t c = 0; c < channels; c++) {
            for (size_t n = 0; n < count; n++)
                memcpy(channel_data[c] + n * sample, pcm + ((start + n) * channels + c) * sample, sample);
            inputs[c] = (capi_buf_t){(int8_t *)channel_data[c], (uint32_t)(count * sample), (uint32_t)(frame * sample)};
            outputs[c] = (capi_buf_t){(int8_t *)channel_data[c], 0, (uint32_t)(frame * sample)};
        }
        *input = (capi_stream_data_v2_t){1u | (1u << 7), (int64_t)(start * 1000000 / 48000), inputs, channels, NULL};
        *output = (capi_stream_data_v2_t){0, 0, outputs, channels, NULL};
        capi_stream_data_v2_t *in_ports[1] = {input}, *out_ports[1] = {output};
        if ((code = vtbl->process(instance, in_ports, out_ports)) != 0) return fail("process", code);
        check_guards("process");
        for (uint32_t c = 0; c < channels; c++) {
            if (outputs[c].actual_data_len != count * sample) return fail("process (output length)", outputs[c].actual_data_len);
            for (size_t n = 0; n < count; n++)
                memcpy(interleaved + (n * channels + c) * sample, channel_data[c] + n * sample, sample);
        }
        if (output->timestamp != input->timestamp) return fail("process (output timestamp)", 0);
        fwrite(interleaved, 1, count * sample * channels, audio_out);
    }

    /* 7. Stop: ALGORITHMIC_RESET on input 0 and output 0, then end; then the memory goes back. */
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
    free(channel_data);
    free(interleaved);
    printf("results %d stack %u instance %u\n", results_written, stack, instance_bytes);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 10 && argc != 12) {
        fprintf(stderr, "usage: capi_harness CONFIG MODEL PCM CHANNELS BITS Q FRAME RESULTS AUDIO_OUT [DATA_FORMAT INTERLEAVING]\n");
        return 2;
    }
    channels = (uint32_t)atoi(argv[4]);
    bits = (uint32_t)atoi(argv[5]);
    q = (uint32_t)atoi(argv[6]);
    frame = (size_t)atoi(argv[7]);
    sample = bits / 8;
    data_format = argc == 12 ? (uint32_t)atoi(argv[10]) : 0;
    interleaving = argc == 12 ? (uint32_t)atoi(argv[11]) : 2;
    config_text = read_file(argv[1], &config_bytes);
    model_file = read_file(argv[2], &model_bytes);
    pcm = read_file(argv[3], &pcm_bytes);
    /* Two lives of the module, each giving back every memory block and library it took. */
    for (int run = 0; run < 2; run++) {
        results = fopen(argv[8], "wb");
        FILE *audio_out = fopen(argv[9], "wb");
        if (!results || !audio_out) { fprintf(stderr, "harness: cannot write the outputs\n"); return 1; }
        int failed = session(audio_out);
        fclose(results);
        fclose(audio_out);
        if (failed) return failed;
        uint64_t held[3] = {0};
        lpai_direct_capi_host_resources(held, 3);
        if (held[0] != 0 || held[1] != 0 || held[2] != 0) {
            fprintf(stderr, "harness: after end the runtime still holds %llu memory blocks (%llu bytes) and %llu libraries\n",
                    (unsigned long long)held[0], (unsigned long long)held[1], (unsigned long long)held[2]);
            return 1;
        }
    }
    free(config_text);
    free(model_file);
    free(pcm);
    return 0;
}
