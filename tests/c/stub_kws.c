/* Runs the kws_conv fixture through liblpai_direct_stub.so from C, the way an HLOS application would, and
 * compares the output with ONNX Runtime's reference. The local transport finds the host skel by its default
 * search; SKEL is opened once with lpai_direct_stub_open_local. Usage: stub_kws BACKEND SYSTEM_LIBRARY
 * FIXTURE_DIR SKEL */
#include "lpai_direct_stub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void* read_file(const char* path, size_t* bytes) {
    FILE* file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    void* data = malloc((size_t)size);
    if (data && fread(data, 1, (size_t)size, file) != (size_t)size) { free(data); data = NULL; }
    fclose(file);
    *bytes = (size_t)size;
    return data;
}

#define CHECK(call) do { int status_ = (call); if (status_ != 0) { \
    fprintf(stderr, "%s failed: 0x%08x: %s\n", #call, (unsigned)status_, lpai_direct_stub_last_error(stub)); \
    return 1; } } while (0)

int main(int argc, char** argv) {
    if (argc != 5) { fprintf(stderr, "usage: %s BACKEND SYSTEM_LIBRARY FIXTURE_DIR SKEL\n", argv[0]); return 2; }
    char path[4096];
    lpai_direct_stub* stub = NULL;
    if (lpai_direct_stub_open("nonsense", NULL, &stub) == 0 || stub != NULL) return 3;
    if (strstr(lpai_direct_stub_last_error(NULL), "unknown transport") == NULL) return 4;
    if (lpai_direct_stub_open("local", "moon", &stub) == 0 || stub != NULL) return 11;
    if (strstr(lpai_direct_stub_last_error(NULL), "unknown domain 'moon'") == NULL) return 12;
    if (lpai_direct_stub_open_local("/nonexistent/liblpai_direct_skel.so", &stub) == 0 || stub != NULL) return 13;
    if (strstr(lpai_direct_stub_last_error(NULL), "/nonexistent/liblpai_direct_skel.so") == NULL) return 14;
    CHECK(lpai_direct_stub_open_local(argv[4], &stub));
    lpai_direct_stub_close(stub);
    stub = NULL;
    CHECK(lpai_direct_stub_open("local", "adsp", &stub));
    CHECK(lpai_direct_stub_configure(stub, argv[1], argv[2], 2, 0, 0));

    int32_t context = -1;
    uint32_t graphs = 0;
    const char junk[16] = "not a binary";
    if (lpai_direct_stub_load(stub, junk, sizeof junk, 0, &context, &graphs) == 0) return 5;
    if (strstr(lpai_direct_stub_last_error(stub), "not a usable QNN context binary") == NULL) return 6;

    snprintf(path, sizeof path, "%s/kws_conv_qnn.bin", argv[3]);
    CHECK(lpai_direct_stub_load_file(stub, path, 0, &context, &graphs));
    if (graphs != 1) return 7;
    uint32_t flags = LPAI_DIRECT_FLOAT_INPUTS | LPAI_DIRECT_FLOAT_OUTPUTS;
    size_t input_bytes = 0, output_bytes = 0;
    CHECK(lpai_direct_stub_io_bytes(stub, context, 0, flags, &input_bytes, &output_bytes));

    size_t file_bytes = 0, reference_bytes = 0;
    snprintf(path, sizeof path, "%s/inputs/float/1_0.raw", argv[3]);
    void* input = read_file(path, &file_bytes);
    snprintf(path, sizeof path, "%s/reference/float/Result_1/logits.raw", argv[3]);
    void* reference = read_file(path, &reference_bytes);
    if (!input || !reference || file_bytes != input_bytes || reference_bytes != output_bytes) return 8;

    void* output = calloc(1, output_bytes);
    size_t written = 0;
    uint64_t ticks = 0;
    CHECK(lpai_direct_stub_execute(stub, context, 0, flags, input, input_bytes, output, output_bytes, &written,
                                   &ticks));
    if (written != output_bytes || memcmp(output, reference, output_bytes) != 0) return 9;
    CHECK(lpai_direct_stub_unload(stub, context));
    if (lpai_direct_stub_unload(stub, context) == 0) return 10;
    lpai_direct_stub_close(stub);
    printf("C stub: %zu output bytes identical to ONNX Runtime's, %llu DSP ticks\n", written,
           (unsigned long long)ticks);
    free(input);
    free(reference);
    free(output);
    return 0;
}
