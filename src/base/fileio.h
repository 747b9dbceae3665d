// SPDX-License-Identifier: MIT
/* Writing results: the one helper every output file goes through (replaced whole or not at
 * all), the check of a stream's writes (stdout), and bounded reading of input files. */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* Appends @field to @out as one CSV field (RFC 4180): as it is, or, when it holds a comma, a
 * quote or a line break, in quotes with its quotes doubled. */
void cs_csv_append_field(GString *out, const char *field);

/**
 * cs_file_replace_contents:
 * Makes @path hold exactly @len bytes of @data: writes a temporary file in @path's folder,
 * fsyncs it and renames it over @path, so a reader (or a crash, or a full disk) sees the old
 * file or the new one, never part of one. A symbolic link is followed (the file it names is
 * replaced); an existing file keeps its permission bits. A @path that exists and is not a
 * regular file (/dev/null, a FIFO, /dev/stdout) is written in place, every write checked.
 * Errors are G_FILE_ERROR whose message is only the reason ("No space left on device"): the
 * caller names @path; no temporary file is left behind.
 */
gboolean cs_file_replace_contents(const char *path, const char *data, gsize len, GError **error);

/**
 * cs_file_flush_stream:
 * Flushes @stream and fails if it or any earlier write on it failed (stdio keeps the error
 * flag). Errors are G_FILE_ERROR whose message is only the reason.
 */
gboolean cs_file_flush_stream(FILE *stream, GError **error);

/**
 * cs_file_read_bounded:
 * Reads @path into @contents (transfer full, NUL-terminated, @length without the NUL) only if
 * it is a regular file of at most @max_bytes, or "-" for stdin, read up to @max_bytes. A
 * device, FIFO, directory or a larger file fails with G_FILE_ERROR and a message saying so
 * (without @path: the caller names it), before any large allocation; a FIFO is never opened.
 */
gboolean cs_file_read_bounded(const char *path, gsize max_bytes, char **contents, gsize *length,
                              GError **error);

G_END_DECLS
