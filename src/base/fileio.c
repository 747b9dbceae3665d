// SPDX-License-Identifier: MIT
/* Files in and out: outputs replace their destination whole (temporary file, fsync, rename) or
 * not at all, streams are checked for failed writes, and inputs are read only when they are
 * regular files of bounded size. Every writer of results (--output, --timeline, calibrate -o,
 * the trace writer) goes through cs_file_replace_contents(). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"

#include "base/parallel.h"

static gboolean
fail_errno(GError **error, int err)
{
    g_set_error_literal(error, G_FILE_ERROR, g_file_error_from_errno(err), g_strerror(err));
    return FALSE;
}

/* write(2) until all of @data is out; EINTR and short writes are retried. */
static gboolean
write_all(int fd, const char *data, gsize len, int *err)
{
    while (len > 0) {
        ssize_t n = write(fd, data, MIN(len, (gsize)1 << 30));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *err = n < 0 ? errno : EIO;
            return FALSE;
        }
        data += n;
        len -= (gsize)n;
    }
    return TRUE;
}

/* A device or FIFO the user named: it cannot be renamed over, so it is written in place. */
static gboolean
write_in_place(const char *path, const char *data, gsize len, GError **error)
{
    int fd = g_open(path, O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return fail_errno(error, errno);
    int err = 0;
    gboolean ok = write_all(fd, data, len, &err);
    if (close(fd) != 0 && ok) {
        ok = FALSE;
        err = errno;
    }
    return ok ? TRUE : fail_errno(error, err);
}

gboolean
cs_file_replace_contents(const char *path, const char *data, gsize len, GError **error)
{
    g_return_val_if_fail(path != NULL && (data != NULL || len == 0), FALSE);
    /* Under mpirun, rank 0 alone writes files: every rank of a study holds the same results
     * (base/parallel.h), and one writer leaves no two renames racing for @path. */
    if (cs_parallel_rank() > 0)
        return TRUE;

    /* Through a symbolic link to the file it names, so the link survives. */
    g_autofree char *target = realpath(path, NULL);
    if (target == NULL)
        target = g_strdup(path);
    GStatBuf st;
    gboolean exists = g_stat(target, &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return write_in_place(target, data, len, error);

    g_autofree char *dir = g_path_get_dirname(target);
    g_autofree char *base = g_path_get_basename(target);
    g_autofree char *tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
    int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0)
        return fail_errno(error, errno);
    int err = 0;
    gboolean ok = TRUE;
    if (exists && fchmod(fd, st.st_mode & 07777) != 0) {
        ok = FALSE;
        err = errno;
    }
    if (ok)
        ok = write_all(fd, data, len, &err);
    if (ok && fsync(fd) != 0) {
        ok = FALSE;
        err = errno;
    }
    if (close(fd) != 0 && ok) {
        ok = FALSE;
        err = errno;
    }
    if (ok && g_rename(tmp, target) != 0) {
        ok = FALSE;
        err = errno;
    }
    if (!ok) {
        g_unlink(tmp);
        return fail_errno(error, err);
    }
    /* The rename itself reaches the disk with the folder; best effort, the file is whole. */
    int dfd = g_open(dir, O_RDONLY | O_CLOEXEC, 0);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return TRUE;
}

gboolean
cs_file_flush_stream(FILE *stream, GError **error)
{
    g_return_val_if_fail(stream != NULL, FALSE);
    errno = 0;
    if (fflush(stream) != 0)
        return fail_errno(error, errno != 0 ? errno : EIO);
    if (ferror(stream)) {
        /* An earlier write failed and its errno is gone; stdio only kept the flag. */
        g_set_error_literal(error, G_FILE_ERROR, G_FILE_ERROR_IO, "write error");
        return FALSE;
    }
    return TRUE;
}

/* Reads @fd to its end or to @max_bytes + 1 bytes (the extra byte detects "too large"). */
static gboolean
read_capped(int fd, gsize max_bytes, char **contents, gsize *length, GError **error)
{
    g_autoptr(GByteArray) buf = g_byte_array_new();
    guint8 chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail_errno(error, errno);
        if (n == 0)
            break;
        g_byte_array_append(buf, chunk, (guint)n);
        if (buf->len > max_bytes) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                        "larger than the %" G_GSIZE_FORMAT " bytes allowed", max_bytes);
            return FALSE;
        }
    }
    *length = buf->len;
    g_byte_array_append(buf, (const guint8 *)"", 1);
    *contents = (char *)g_byte_array_free(g_steal_pointer(&buf), FALSE);
    return TRUE;
}

gboolean
cs_file_read_bounded(const char *path, gsize max_bytes, char **contents, gsize *length,
                     GError **error)
{
    g_return_val_if_fail(path != NULL && contents != NULL && length != NULL, FALSE);
    if (strcmp(path, "-") == 0)
        return read_capped(STDIN_FILENO, max_bytes, contents, length, error);

    /* O_NONBLOCK: a FIFO with no writer must not block the open; it is refused below. */
    int fd = g_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
    if (fd < 0)
        return fail_errno(error, errno);
    GStatBuf st;
    gboolean ok = FALSE;
    if (fstat(fd, &st) != 0)
        fail_errno(error, errno);
    else if (S_ISDIR(st.st_mode))
        g_set_error_literal(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "is a directory");
    else if (!S_ISREG(st.st_mode))
        g_set_error_literal(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                            "not a regular file (a device, FIFO or socket)");
    else if ((guint64)st.st_size > max_bytes)
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                    "%" G_GUINT64_FORMAT " bytes, larger than the %" G_GSIZE_FORMAT
                    " bytes allowed",
                    (guint64)st.st_size, max_bytes);
    else if (fcntl(fd, F_SETFL, 0) != 0)
        fail_errno(error, errno);
    else
        /* Capped again while reading: the file may grow after the fstat. */
        ok = read_capped(fd, max_bytes, contents, length, error);
    close(fd);
    return ok;
}

void
cs_csv_append_field(GString *out, const char *field)
{
    if (strpbrk(field, ",\"\r\n") == NULL) {
        g_string_append(out, field);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *c = field; *c != '\0'; c++) {
        if (*c == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *c);
    }
    g_string_append_c(out, '"');
}
