/* Runs a fuzz harness over input files, and over every file in the
 * directories named, without libFuzzer: to replay a corpus under valgrind or
 * to reproduce a finding.  Exits non-zero if an input cannot be read. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long runs;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
            }
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    /* a copy of exactly n bytes, so that reads past the input are caught */
    uint8_t *in = malloc(n ? n : 1);
    if (!in) {
        free(buf);
        return -1;
    }
    memcpy(in, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(in, n);
    free(in);
    runs++;
    return 0;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = -1;
            break;
        }
        snprintf(p, len, "%s/%s", path, e->d_name);
        if (run_path(p) != 0)
            rc = -1;
        free(p);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i]) != 0) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            rc = 1;
        }
    printf("%ld inputs\n", runs);
    return rc;
}
