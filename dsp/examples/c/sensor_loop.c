/* A sensor-style loop on the C embedding API (lpai_direct_embed.h): the firmware keeps the model in its own
 * memory, binds the input and output buffers once, then feeds one frame at a time and publishes every ready
 * result.
 *
 *     sensor_loop BACKEND SYSTEM_LIBRARY|record:RECORD BINARY FRAME...
 *
 * The binary's tensor metadata comes from libQnnSystem (SYSTEM_LIBRARY), or, given `record:RECORD`, from the
 * metadata record in the file RECORD (`lpai-net-run inspect BINARY --system_library FILE --emit_metadata RECORD`
 * writes it) with no libQnnSystem at all, as firmware without one links it beside its binary.
 * BINARY is read into a 256-byte-aligned, padded static buffer (as firmware would link it), so the backend uses it
 * in place. Each FRAME file holds one frame of the graph's single input in native (quantized) bytes. Prints the
 * graph and its tensors, one line per frame (`frame <i> <output name> <hex bytes>`, or `frame <i> not ready` when
 * LPAI needs more frames), and `binary in place: yes|no` on stdout; timings and the arena's high-water mark on
 * stderr. Exit status 0 when every call succeeded.
 *
 * The same source builds two ways: a static, freestanding Hexagon program for qemu-hexagon (clang-19
 * --target=hexagon-unknown-linux-musl -DLPAI_DIRECT_EMBED_QEMU, linked with ld.lld-19 against liblpai_embed_qemu.a
 * from tests/embed-qemu: the embedding API's library with the `qemu-example` feature, whose Linux user-mode platform
 * provides `_start`, which calls lpai_program_main, plus the contract model of libQnnLpai, which the program
 * registers as built-in libraries first, as firmware registers a libQnnLpai it links in), and a host program with
 * libc (against the host build of liblpai_direct_embed.a, loading the contract model's shared objects by path).
 * tests/embed_api.rs builds and runs both. */
#include "lpai_direct_embed.h"

#include <stddef.h>
#include <stdint.h>

#ifdef LPAI_DIRECT_EMBED_QEMU
/* tests/embed-qemu (the qemu programs only): registers the contract model of libQnnLpai and its system library as
 * the built-in libraries libQnnLpaiContract.so and libQnnSystemContract.so; 0, or nonzero when refused. */
int lpai_embed_qemu_register_contract_model(void);
#endif

/* ---- the little the program needs from its platform: read a file, write bytes, exit ---- */
#ifdef __hexagon__
static long linux_call(long number, long a0, long a1, long a2, long a3) {
    register long r0 __asm__("r0") = a0;
    register long r1 __asm__("r1") = a1;
    register long r2 __asm__("r2") = a2;
    register long r3 __asm__("r3") = a3;
    register long r6 __asm__("r6") = number;
    __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r6) : "memory");
    return r0;
}
enum { SYS_OPENAT = 56, SYS_CLOSE = 57, SYS_READ = 63, SYS_WRITE = 64, SYS_EXIT_GROUP = 94, AT_FDCWD = -100 };
static long platform_open(const char* path) { return linux_call(SYS_OPENAT, AT_FDCWD, (long)path, 0, 0); }
static long platform_read(long fd, void* buffer, size_t bytes) {
    return linux_call(SYS_READ, fd, (long)buffer, (long)bytes, 0);
}
static void platform_close(long fd) { linux_call(SYS_CLOSE, fd, 0, 0, 0); }
static void platform_write(int fd, const char* text, size_t bytes) {
    while (bytes > 0) {
        long written = linux_call(SYS_WRITE, fd, (long)text, (long)bytes, 0);
        if (written <= 0) return;
        text += written;
        bytes -= (size_t)written;
    }
}
static _Noreturn void platform_exit(int status) {
    for (;;) linux_call(SYS_EXIT_GROUP, status, 0, 0, 0);
}
#else
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
static long platform_open(const char* path) { return open(path, O_RDONLY); }
static long platform_read(long fd, void* buffer, size_t bytes) { return read((int)fd, buffer, bytes); }
static void platform_close(long fd) { close((int)fd); }
static void platform_write(int fd, const char* text, size_t bytes) {
    while (bytes > 0) {
        ssize_t written = write(fd, text, bytes);
        if (written <= 0) return;
        text += written;
        bytes -= (size_t)written;
    }
}
static _Noreturn void platform_exit(int status) { exit(status); }
#endif

/* ---- output without printf ---- */
static size_t text_length(const char* text) {
    size_t length = 0;
    while (text[length] != 0) length++;
    return length;
}
static void put(int fd, const char* text) { platform_write(fd, text, text_length(text)); }
static void put_unsigned(int fd, uint64_t value) {
    char digits[24];
    size_t at = sizeof digits;
    do {
        digits[--at] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0 && at > 0);
    platform_write(fd, digits + at, sizeof digits - at);
}
static void put_signed(int fd, int64_t value) {
    if (value < 0) {
        put(fd, "-");
        put_unsigned(fd, (uint64_t)0 - (uint64_t)value);
    } else {
        put_unsigned(fd, (uint64_t)value);
    }
}
static void put_hex_bytes(int fd, const unsigned char* bytes, size_t count) {
    static const char hex[] = "0123456789abcdef";
    char pair[2];
    for (size_t i = 0; i < count; i++) {
        pair[0] = hex[bytes[i] >> 4];
        pair[1] = hex[bytes[i] & 15];
        platform_write(fd, pair, 2);
    }
}
static void put_hex32(int fd, uint32_t value) {
    unsigned char bytes[4] = {(unsigned char)(value >> 24), (unsigned char)(value >> 16), (unsigned char)(value >> 8),
                              (unsigned char)value};
    put(fd, "0x");
    put_hex_bytes(fd, bytes, 4);
}

static _Noreturn void fail(const char* what, int code, const lpai_direct_embed* embed) {
    put(2, "sensor_loop: ");
    put(2, what);
    put(2, " failed: ");
    put_signed(2, code);
    put(2, ": ");
    put(2, lpai_direct_embed_last_error(embed));
    put(2, "\n");
    platform_exit(1);
}

/* Runs one API call on `embed`; on failure prints the call, its answer and the embedding's message, and exits. */
#define CHECK(call)                                                     \
    do {                                                                \
        int answer_ = (call);                                           \
        if (answer_ != LPAI_DIRECT_EMBED_OK) fail(#call, answer_, embed); \
    } while (0)

/* Reads a whole file into `buffer`; returns its size, or -1 when it does not exist, cannot be read or does not fit. */
static long read_file(const char* path, unsigned char* buffer, size_t capacity) {
    long fd = platform_open(path);
    if (fd < 0) return -1;
    size_t filled = 0;
    for (;;) {
        if (filled == capacity) {
            unsigned char extra;
            long more = platform_read(fd, &extra, 1);
            platform_close(fd);
            return more == 0 ? (long)filled : -1;
        }
        long read = platform_read(fd, buffer + filled, capacity - filled);
        if (read < 0) {
            platform_close(fd);
            return -1;
        }
        if (read == 0) break;
        filled += (size_t)read;
    }
    platform_close(fd);
    return (long)filled;
}

/* The firmware's memory: the model where its loader would put it, and the embedding's arena. */
static unsigned char model[64 * 1024] __attribute__((aligned(256)));
static unsigned char arena[256 * 1024] __attribute__((aligned(128)));
static unsigned char frame[64 * 1024];
/* The metadata record, when one is given: read only while loading. */
static unsigned char record[64 * 1024];

static void describe(lpai_direct_embed* embed, int direction, size_t index) {
    lpai_direct_embed_tensor tensor;
    CHECK(lpai_direct_embed_tensor_info(embed, direction, index, &tensor));
    put(1, direction == LPAI_DIRECT_EMBED_INPUT ? "input " : "output ");
    put_unsigned(1, index);
    put(1, " ");
    put(1, tensor.name);
    put(1, " id ");
    put_unsigned(1, tensor.id);
    put(1, " type ");
    put_hex32(1, tensor.data_type);
    put(1, " shape ");
    for (uint32_t i = 0; i < tensor.rank; i++) {
        if (i > 0) put(1, "x");
        put_unsigned(1, tensor.dimensions[i]);
    }
    put(1, " bytes ");
    put_unsigned(1, tensor.bytes);
    if (tensor.quantized) {
        union {
            float value;
            uint32_t bits;
        } scale = {tensor.scale};
        put(1, " scale ");
        put_hex32(1, scale.bits);
        put(1, " offset ");
        put_signed(1, tensor.offset);
    }
    put(1, "\n");
}

/* The API refuses what it must: each call below is wrong in one way and must say so. */
static void check_refusals(lpai_direct_embed* embed) {
    void* data;
    size_t bytes;
    int ready;
    lpai_direct_embed* none;
    int wrong = 0;
    wrong |= lpai_direct_embed_create(arena, sizeof arena, "x", "y", NULL) != LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT;
    wrong |= lpai_direct_embed_create(NULL, 16, "x", "y", &none) != LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT;
    wrong |= lpai_direct_embed_create(frame, 8, "x", "y", &none) != LPAI_DIRECT_EMBED_ERROR_ARENA_FULL;
    wrong |= lpai_direct_embed_input(embed, 99, &data, &bytes) != LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT;
    wrong |= lpai_direct_embed_last_error(embed)[0] == 0;
    wrong |= lpai_direct_embed_execute_frame(embed, NULL) != LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT;
    wrong |= lpai_direct_embed_execute_frame(NULL, &ready) != LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT;
    wrong |= lpai_direct_embed_load(embed, model, 16) != LPAI_DIRECT_EMBED_ERROR_STATE;
    wrong |= lpai_direct_embed_tensor_info(embed, 7, 0, NULL) != LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT;
    if (wrong) {
        put(2, "sensor_loop: a wrong call was not refused as it should be\n");
        platform_exit(1);
    }
    put(1, "refusals: ok\n");
}

static int sensor_loop(int argc, char** argv) {
    /* Failures in words: this example links the library's message table (a firmware that leaves it out gets each
     * message as an `lpai:` log line, which `lpai-net-run render-log` puts in words on a host). */
    lpai_direct_embed_use_messages(lpai_direct_messages_render);
    if (argc < 5) {
        put(2, "usage: sensor_loop BACKEND SYSTEM_LIBRARY|record:RECORD BINARY FRAME...\n");
        return 2;
    }
    long model_bytes = read_file(argv[3], model, sizeof model);
    if (model_bytes <= 0) {
        put(2, "sensor_loop: cannot read the context binary ");
        put(2, argv[3]);
        put(2, "\n");
        return 1;
    }

    /* `record:RECORD`: the path after the prefix; NULL for a system library's name. */
    static const char prefix[] = "record:";
    const char* record_path = argv[2];
    for (size_t i = 0; i + 1 < sizeof prefix; i++) {
        if (argv[2][i] != prefix[i]) {
            record_path = NULL;
            break;
        }
    }
    if (record_path != NULL) record_path += sizeof prefix - 1;
    long record_bytes = 0;
    if (record_path != NULL) {
        record_bytes = read_file(record_path, record, sizeof record);
        if (record_bytes <= 0) {
            put(2, "sensor_loop: cannot read the metadata record ");
            put(2, record_path);
            put(2, "\n");
            return 1;
        }
    }

    lpai_direct_embed* embed = NULL;
#ifdef LPAI_DIRECT_EMBED_QEMU
    /* The qemu program's libQnnLpai: the contract model linked in, registered under its library names. */
    if (lpai_embed_qemu_register_contract_model() != 0) {
        put(2, "sensor_loop: the contract model cannot be registered as built-in libraries\n");
        return 1;
    }
#endif
    /* With a record: no system library (NULL), and the record passed with the binary. */
    CHECK(lpai_direct_embed_create(arena, sizeof arena, argv[1], record_path != NULL ? NULL : argv[2], &embed));
    /* The model stays in `model` until destroy; the static buffer's zeroed tail is the size padding. */
    if (record_path != NULL) {
        CHECK(lpai_direct_embed_load_padded_with_metadata(embed, model, (size_t)model_bytes, sizeof model, record,
                                                          (size_t)record_bytes));
    } else {
        CHECK(lpai_direct_embed_load_padded(embed, model, (size_t)model_bytes, sizeof model));
    }

    size_t graphs = 0, inputs = 0, outputs = 0, graph = 0;
    CHECK(lpai_direct_embed_graph_count(embed, &graphs));
    CHECK(lpai_direct_embed_tensor_count(embed, LPAI_DIRECT_EMBED_INPUT, &inputs));
    CHECK(lpai_direct_embed_tensor_count(embed, LPAI_DIRECT_EMBED_OUTPUT, &outputs));
    const char* name;
    CHECK(lpai_direct_embed_graph_name(embed, &name));
    CHECK(lpai_direct_embed_find_graph(embed, name, &graph));
    CHECK(lpai_direct_embed_select_graph(embed, graph));
    put(1, "graphs ");
    put_unsigned(1, graphs);
    put(1, ", graph ");
    put_unsigned(1, graph);
    put(1, " ");
    put(1, name);
    put(1, ", inputs ");
    put_unsigned(1, inputs);
    put(1, ", outputs ");
    put_unsigned(1, outputs);
    put(1, "\n");
    for (size_t i = 0; i < inputs; i++) describe(embed, LPAI_DIRECT_EMBED_INPUT, i);
    for (size_t i = 0; i < outputs; i++) describe(embed, LPAI_DIRECT_EMBED_OUTPUT, i);
    int missing = lpai_direct_embed_find_graph(embed, "no such graph", &graph);
    if (missing != LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT) fail("find_graph of a missing name", missing, embed);
    if (inputs != 1 || outputs < 1 || outputs > 8) {
        put(2, "sensor_loop: this example feeds graphs with one input and 1 to 8 outputs\n");
        return 1;
    }

    /* Bind once: the same buffers for every frame. */
    void* input;
    size_t input_bytes;
    const void* output[8];
    size_t output_bytes[8];
    lpai_direct_embed_tensor output_tensor[8];
    CHECK(lpai_direct_embed_input(embed, 0, &input, &input_bytes));
    for (size_t i = 0; i < outputs; i++) {
        CHECK(lpai_direct_embed_output(embed, i, &output[i], &output_bytes[i]));
        CHECK(lpai_direct_embed_tensor_info(embed, LPAI_DIRECT_EMBED_OUTPUT, i, &output_tensor[i]));
    }

    for (int i = 4; i < argc; i++) {
        long got = read_file(argv[i], frame, sizeof frame);
        if (got != (long)input_bytes) {
            put(2, "sensor_loop: frame file ");
            put(2, argv[i]);
            put(2, " does not hold one frame of the input\n");
            return 1;
        }
        unsigned char* target = input;
        for (size_t b = 0; b < input_bytes; b++) target[b] = frame[b];
        int ready;
        CHECK(lpai_direct_embed_execute_frame(embed, &ready));
        if (!ready) {
            put(1, "frame ");
            put_unsigned(1, (uint64_t)(i - 4));
            put(1, " not ready\n");
            continue;
        }
        for (size_t o = 0; o < outputs; o++) {
            put(1, "frame ");
            put_unsigned(1, (uint64_t)(i - 4));
            put(1, " ");
            put(1, output_tensor[o].name);
            put(1, " ");
            put_hex_bytes(1, output[o], output_bytes[o]);
            put(1, "\n");
        }
        uint64_t micros;
        CHECK(lpai_direct_embed_last_execute_us(embed, &micros));
        put(2, "sensor_loop: frame ");
        put_unsigned(2, (uint64_t)(i - 4));
        put(2, " executed in ");
        put_unsigned(2, micros);
        put(2, " us\n");
    }

    int in_place;
    CHECK(lpai_direct_embed_binary_in_place(embed, &in_place));
    put(1, in_place ? "binary in place: yes\n" : "binary in place: no\n");
    size_t used, capacity;
    CHECK(lpai_direct_embed_arena_used(embed, &used, &capacity));
    put(2, "sensor_loop: arena high-water mark ");
    put_unsigned(2, used);
    put(2, " of ");
    put_unsigned(2, capacity);
    put(2, " bytes\n");
    check_refusals(embed);
    CHECK(lpai_direct_embed_destroy(embed));
    if (lpai_direct_embed_destroy(embed) != LPAI_DIRECT_EMBED_ERROR_INVALID_ARGUMENT) {
        put(2, "sensor_loop: a destroyed handle was accepted\n");
        return 1;
    }
    return 0;
}

#ifdef __hexagon__
/* Called by `_start` (the Linux user-mode platform of liblpai_direct_embed.a) with the initial stack: argc, then
 * the argv pointers. */
void lpai_program_main(const uint32_t* initial_stack) {
    int argc = (int)initial_stack[0];
    char** argv = (char**)(initial_stack + 1);
    platform_exit(sensor_loop(argc, argv));
}
#else
int main(int argc, char** argv) { return sensor_loop(argc, argv); }
#endif
