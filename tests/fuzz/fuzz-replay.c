// SPDX-License-Identifier: MIT
/* Replays saved fuzzer inputs through a fuzz target's LLVMFuzzerTestOneInput, without
 * libFuzzer, in every build: each file of each folder given (names starting with '.' aside)
 * is one TAP case. A crash, sanitizer report or failed assertion fails the test. */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gint
compare_names(gconstpointer a, gconstpointer b)
{
    return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

int
main(int argc, char **argv)
{
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);

    for (int i = 1; i < argc; i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GDir) dir = g_dir_open(argv[i], 0, &error);
        const char *name;

        if (dir == NULL) {
            /* A target without a reproducer yet has no folder. */
            if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
                continue;
            fprintf(stderr, "%s: %s\n", argv[i], error->message);
            return 1;
        }
        while ((name = g_dir_read_name(dir)) != NULL) {
            if (name[0] != '.')
                g_ptr_array_add(paths, g_build_filename(argv[i], name, NULL));
        }
    }
    g_ptr_array_sort(paths, compare_names);

    if (paths->len == 0) {
        printf("1..0 # SKIP no saved fuzzer input\n");
        return 0;
    }
    printf("1..%u\n", paths->len);
    for (guint i = 0; i < paths->len; i++) {
        const char *path = g_ptr_array_index(paths, i);
        g_autoptr(GError) error = NULL;
        g_autofree char *data = NULL;
        gsize size = 0;

        fflush(stdout);
        if (!g_file_get_contents(path, &data, &size, &error)) {
            printf("not ok %u %s: %s\n", i + 1, path, error->message);
            continue;
        }
        LLVMFuzzerTestOneInput((const uint8_t *)data, size);
        printf("ok %u %s\n", i + 1, path);
    }
    return 0;
}
