/* replay: runs a fuzz target over every file of its corpus, so a gcc build checks the corpus. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
        size_t runs = 0;

        for (int i = 1; i < argc; i++) {
                DIR *d = opendir(argv[i]);
                struct dirent *e;

                if (!d) {
                        fprintf(stderr, "replay: %s: cannot open corpus directory\n", argv[i]);
                        return 1;
                }
                while ((e = readdir(d))) {
                        char path[4096];
                        gc_buf b;

                        if (e->d_name[0] == '.')
                                continue;
                        snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
                        if (gc_read_file(path, 64u << 20, &b) < 0) {
                                fprintf(stderr, "replay: %s: cannot read\n", path);
                                closedir(d);
                                return 1;
                        }
                        LLVMFuzzerTestOneInput((const uint8_t *)b.data, b.len);
                        gc_buf_free(&b);
                        runs++;
                }
                closedir(d);
        }
        if (runs == 0) {
                fprintf(stderr, "replay: empty corpus\n");
                return 1;
        }
        printf("replay: %zu inputs, no crash\n", runs);
        return 0;
}
