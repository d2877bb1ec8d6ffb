/* A PD library for tests/virtual_adsp_loader.rs: its initializer calls every PD service the shell provides
 * and reports each result as one FARF line, "adsp[high] probe: <what> = <value>". Built at test time with
 * clang-19 and ld.lld-19 and the skel's linker script; loaded with `lpai-pd-shell --check`, which runs it. */
typedef unsigned long size_t;
typedef unsigned long long uint64_t;

extern uint64_t HAP_perf_get_qtimer_count(void);
extern void HAP_debug_v2(int level, const char *file, int line, const char *format, ...);
extern int apps_std_fopen(const char *name, const char *mode, int *file);
extern int apps_std_flen(int file, uint64_t *length);
extern int apps_std_fread(int file, unsigned char *buffer, int length, int *read, int *end);
extern int apps_std_fclose(int file);
extern int apps_std_fwrite(int file, const unsigned char *buffer, int length, int *written, int *end);
extern int apps_std_frename(const char *old_name, const char *new_name);
extern int apps_std_fremove(const char *name);
extern int apps_std_mkdir(const char *name, int mode);
extern int apps_std_fileExists(const char *path, _Bool *exists);
extern void *dlopen(const char *path, int mode);
extern void *dlsym(void *library, const char *name);
extern int dlclose(void *library);
extern void *malloc(size_t bytes);
extern void free(void *memory);
extern void qurt_mutex_lock(void *mutex);
extern void qurt_mutex_unlock(void *mutex);

static unsigned probe_mutex[4] __attribute__((aligned(8))) = {0xFE, 0, 0x1F, 0};

static int length_of(const char *text) {
    int length = 0;
    while (text[length] != 0) {
        length++;
    }
    return length;
}

/* One line: "<what> = <value>" (value in decimal). */
static void report(const char *what, long long value) {
    char line[96];
    char digits[24];
    int length = 0, count = 0, what_length = length_of(what);
    for (int index = 0; index < what_length && length < 64; index++) {
        line[length++] = what[index];
    }
    line[length++] = ' ';
    line[length++] = '=';
    line[length++] = ' ';
    if (value < 0) {
        line[length++] = '-';
        value = -value;
    }
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0) {
        line[length++] = digits[--count];
    }
    line[length] = 0;
    /* The message is the format (no '%' in it), with no variadic arguments: lpai_direct::farf's convention. */
    HAP_debug_v2(2, "probe", __LINE__, line);
}

__attribute__((constructor)) static void probe_services(void) {
    int file = -1, read = 0, end = 0;
    uint64_t length = 0;
    unsigned char buffer[32];
    report("fopen of a missing file", apps_std_fopen("no-such-file.txt", "rb", &file));
    report("fopen of null", apps_std_fopen(0, "rb", &file));
    report("fopen with mode x", apps_std_fopen("probe-input.txt", "x", &file));
    report("fopen", apps_std_fopen("probe-input.txt", "rb", &file));
    report("flen", apps_std_flen(file, &length));
    report("length", (long long)length);
    report("fread", apps_std_fread(file, buffer, 32, &read, &end));
    report("bytes read", read);
    report("ended", end);
    report("first byte", buffer[0]);
    report("fread with null out-pointers", apps_std_fread(file, buffer, 32, 0, 0));
    report("fclose", apps_std_fclose(file));
    report("fclose again", apps_std_fclose(file));
    report("fclose of stdout", apps_std_fclose(1));
    report("fread of stdin", apps_std_fread(0, buffer, 4, &read, &end));
    report("fopen for writing", apps_std_fopen("probe-output.txt", "wb", &file));
    report("fclose of the written file", apps_std_fclose(file));

    /* Whole-or-nothing writing as the skel does it: a directory, a partial file, a rename, then cleaning up. */
    _Bool exists = 0;
    int written = -1;
    report("mkdir", apps_std_mkdir("probe-dir", 0755));
    report("mkdir again", apps_std_mkdir("probe-dir", 0755));
    report("mkdir in a missing directory", apps_std_mkdir("no-such-dir/sub", 0755));
    report("mkdir of null", apps_std_mkdir(0, 0755));
    report("fileExists of the directory", apps_std_fileExists("probe-dir", &exists));
    report("directory exists", exists);
    report("fopen of a partial file", apps_std_fopen("probe-dir/out.raw.partial", "wb", &file));
    report("fwrite", apps_std_fwrite(file, (const unsigned char *)"written by the PD", 17, &written, &end));
    report("bytes written", written);
    report("end after fwrite", end);
    report("fwrite with null out-pointers", apps_std_fwrite(file, buffer, 4, 0, 0));
    report("fwrite of a negative length", apps_std_fwrite(file, buffer, -1, &written, &end));
    report("fclose of the partial file", apps_std_fclose(file));
    report("fwrite to a closed file", apps_std_fwrite(file, buffer, 4, &written, &end));
    report("fwrite to stdout", apps_std_fwrite(1, buffer, 4, &written, &end));
    report("frename", apps_std_frename("probe-dir/out.raw.partial", "probe-dir/out.raw"));
    apps_std_fileExists("probe-dir/out.raw.partial", &exists);
    report("partial name exists", exists);
    report("fileExists of the final name", apps_std_fileExists("probe-dir/out.raw", &exists));
    report("final name exists", exists);
    report("frename of a missing file", apps_std_frename("probe-dir/no-such-file", "probe-dir/other"));
    report("frename of null", apps_std_frename(0, "probe-dir/other"));
    report("fileExists of null", apps_std_fileExists(0, &exists));
    report("fileExists with a null out-pointer", apps_std_fileExists("probe-dir", 0));
    report("fopen of the renamed file", apps_std_fopen("probe-dir/out.raw", "rb", &file));
    report("fread of the renamed file", apps_std_fread(file, buffer, 32, &read, &end));
    report("bytes read back", read);
    report("last byte read back", buffer[16]);
    report("fclose of the renamed file", apps_std_fclose(file));
    report("fremove", apps_std_fremove("probe-dir/out.raw"));
    apps_std_fileExists("probe-dir/out.raw", &exists);
    report("removed file exists", exists);
    report("fremove again", apps_std_fremove("probe-dir/out.raw"));
    report("fremove of the directory", apps_std_fremove("probe-dir"));
    report("fremove of null", apps_std_fremove(0));

    /* Appending as the skel commits each inference: mode "ab" creates the file, then writes at its end. */
    report("fopen for appending", apps_std_fopen("probe-record.bin", "ab", &file));
    report("fwrite appended", apps_std_fwrite(file, (const unsigned char *)"one", 3, &written, &end));
    report("fclose of the appended file", apps_std_fclose(file));
    report("fopen to append again", apps_std_fopen("probe-record.bin", "ab", &file));
    report("fwrite appended again", apps_std_fwrite(file, (const unsigned char *)"two", 3, &written, &end));
    report("fclose after appending again", apps_std_fclose(file));

    uint64_t before = HAP_perf_get_qtimer_count();
    uint64_t after = HAP_perf_get_qtimer_count();
    report("qtimer runs", before > 0 && after >= before);

    char *memory = malloc(100);
    report("malloc is 16-aligned", memory != 0 && ((unsigned long)memory & 15) == 0);
    report("malloc is zeroed", memory[0] == 0 && memory[99] == 0);
    memory[99] = 1;
    free(memory);
    free(0);
    report("malloc of 0 bytes", malloc(0) != 0);

    qurt_mutex_lock(probe_mutex);
    report("mutex word while held", probe_mutex[1]);
    qurt_mutex_unlock(probe_mutex);
    report("mutex word after unlock", probe_mutex[1]);
    qurt_mutex_lock(0);
    qurt_mutex_unlock(0);

    void *skel = dlopen("liblpai_direct_skel.so", 2);
    report("dlopen by name", skel != 0);
    report("dlsym of an entry point", dlsym(skel, "lpai_direct_open") != 0);
    report("dlsym of a missing name", dlsym(skel, "no_such_symbol") != 0);
    report("dlsym of null", dlsym(skel, 0) != 0);
    report("dlopen again gives the same handle", dlopen("liblpai_direct_skel.so", 2) == skel);
    report("dlclose", dlclose(skel));
    report("dlclose of the last reference", dlclose(skel));
    report("dlclose of a closed handle", dlclose(skel));
    report("dlsym on a closed handle", dlsym(skel, "lpai_direct_open") != 0);
    report("dlopen of a missing library", dlopen("libno_such_library.so", 2) != 0);
    report("dlopen of null", dlopen(0, 2) != 0);
    HAP_debug_v2(3, "probe", __LINE__, "a plain format %d");
}

/* What skel.ver exports, so the library has a defined symbol. */
int lpai_direct_probe(void) {
    return 0;
}
