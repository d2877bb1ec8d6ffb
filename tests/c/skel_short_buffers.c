/* The skel's rout sequences as a qaic-generated C stub sees them: last_error (and describe, profile, which follow
 * the same rule) answers success with a short or a null output buffer and reports, in its *_bytes out-scalar, the
 * size it needed; the caller must compare. Calls the host skel's FastRPC entry points (argv[1]) directly, with
 * remote_arg buffers laid out as in the IDL table of docs/src/reference/interface.md. Prints one line per check; exits nonzero on the first
 * failure. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef union { struct { void *pv; size_t nLen; } buf; uint64_t handle; } remote_arg;
typedef int (*open_fn)(const char *, uint64_t *);
typedef int (*invoke_fn)(uint64_t, uint32_t, remote_arg *);
typedef int (*close_fn)(uint64_t);

#define SC_UNLOAD 0x0A010000u     /* unload(in long context_id) */
#define SC_LAST_ERROR 0x0B010200u /* last_error(rout sequence<octet> message, rout unsigned long message_bytes) */

static invoke_fn invoke;

/* last_error with a message buffer of `capacity` bytes at `message` (NULL allowed when 0); answers the status. */
static int last_error(uint64_t handle, char *message, uint32_t capacity, uint32_t *needed) {
    remote_arg args[3];
    args[0].buf.pv = &capacity;
    args[0].buf.nLen = sizeof capacity;
    args[1].buf.pv = needed;
    args[1].buf.nLen = sizeof *needed;
    args[2].buf.pv = message;
    args[2].buf.nLen = capacity;
    return invoke(handle, SC_LAST_ERROR, args);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: skel_short_buffers SKEL.so\n"); return 2; }
    void *skel = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (skel == NULL) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
    open_fn open_skel = (open_fn)dlsym(skel, "lpai_direct_open");
    invoke = (invoke_fn)dlsym(skel, "lpai_direct_skel_handle_invoke");
    close_fn close_skel = (close_fn)dlsym(skel, "lpai_direct_close");
    if (open_skel == NULL || invoke == NULL || close_skel == NULL) { fprintf(stderr, "missing entry points\n"); return 2; }
    uint64_t handle = 0;
    if (open_skel("file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=adsp", &handle) != 0)
        return 3;

    /* A call that fails, so there is a message: unload of a context that was never loaded. */
    int32_t context = 7;
    remote_arg unload_args[1];
    unload_args[0].buf.pv = &context;
    unload_args[0].buf.nLen = sizeof context;
    if (invoke(handle, SC_UNLOAD, unload_args) == 0) { fprintf(stderr, "unload of context 7 succeeded\n"); return 4; }

    char whole[256];
    uint32_t needed = 0;
    memset(whole, 0, sizeof whole);
    if (last_error(handle, whole, sizeof whole, &needed) != 0 || needed == 0 || needed >= sizeof whole) return 5;
    printf("whole: %u bytes:", (unsigned)needed);
    for (uint32_t at = 0; at < needed; at++) printf(" %02x", (unsigned)(unsigned char)whole[at]);
    printf("\n");

    /* A short buffer: success, the needed size reported, only the first bytes written. */
    char short_buffer[8] = {0};
    uint32_t short_needed = 0;
    int status = last_error(handle, short_buffer, 4, &short_needed);
    if (status != 0 || short_needed != needed) { fprintf(stderr, "short: status %d, %u\n", status, short_needed); return 6; }
    if (memcmp(short_buffer, whole, 4) != 0 || short_buffer[4] != 0) { fprintf(stderr, "short: wrong bytes\n"); return 7; }
    printf("short: status 0, needed %u > 4: the caller must compare\n", (unsigned)short_needed);

    /* A null buffer of length 0: success, the needed size reported. */
    uint32_t null_needed = 0;
    status = last_error(handle, NULL, 0, &null_needed);
    if (status != 0 || null_needed != needed) { fprintf(stderr, "null: status %d, %u\n", status, null_needed); return 8; }
    printf("null: status 0, needed %u\n", (unsigned)null_needed);

    close_skel(handle);
    return 0;
}
