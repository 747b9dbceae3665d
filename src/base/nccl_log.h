// SPDX-License-Identifier: MIT
/* NCCL's own log of the collectives it was asked to run (NCCL_DEBUG=INFO
 * NCCL_DEBUG_SUBSYS=COLL): the reader of its one-line-per-call INFO lines, and their sum per
 * rank, communicator and identical call, from which `collsim workload import` writes a
 * workload (docs/workloads.md). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CS_NCCL_LOG_ERROR (cs_nccl_log_error_quark())
GQuark cs_nccl_log_error_quark(void);

typedef enum {
    CS_NCCL_LOG_ERROR_IO,        /* the file cannot be read */
    CS_NCCL_LOG_ERROR_MALFORMED, /* a collective line that cannot be read: file:line says where */
    CS_NCCL_LOG_ERROR_LIMIT,     /* more distinct calls than a step's log holds */
} CsNcclLogError;

/* Distinct (rank, communicator, call) entries kept; a log past this is not one job's steps. */
#define CS_NCCL_LOG_MAX_ENTRIES 100000
/* Bytes of one collective: 1 PiB, as a workload takes. */
#define CS_NCCL_LOG_MAX_BYTES ((gint64)1 << 50)

/**
 * CsNcclLogLine:
 * One INFO line of a collective, as NCCL 2.3 to 2.30 print it (src/enqueue.cc,
 * ncclEnqueueCheck; src/collectives/<op>.cu before 2.4):
 * `HOST:PID:TID [DEV] NCCL INFO AllReduce: opCount 1f sendbuff 0x.. recvbuff 0x.. count N
 * datatype 7 op 0 root 0 comm 0x.. [nranks=8] stream 0x..`.
 */
typedef struct {
    char name[32];    /* NCCL's spelling of the call: "AllReduce", "Send" */
    char rank[160];   /* "HOST:PID:DEV" from the line's prefix, "-" when it has none */
    guint64 op_count; /* the communicator's operation counter (printed in hex) */
    guint64 count;    /* elements, as passed to NCCL (per rank for AllGather, ReduceScatter,
                       * per peer for AlltoAll) */
    int datatype;     /* ncclDataType_t: 0 int8 ... 7 float32, 9 bfloat16, 11 fp8e5m2 */
    int redop;        /* ncclRedOp_t */
    int root;         /* root rank, or the peer of Send/Recv */
    guint64 comm;     /* the communicator's address in its process */
    int nranks;       /* ranks in the communicator */
} CsNcclLogLine;

/* What cs_nccl_log_parse_line() found. */
typedef enum {
    CS_NCCL_LOG_LINE_OTHER,      /* not a collective's INFO line */
    CS_NCCL_LOG_LINE_COLLECTIVE, /* one, read into the CsNcclLogLine */
    CS_NCCL_LOG_LINE_MALFORMED,  /* one that cannot be read; the error says why */
} CsNcclLogLineKind;

/**
 * cs_nccl_log_parse_line:
 * Reads @line (without its newline). A collective's line is recognised by "NAME: opCount "
 * (NAME letters); whatever comes before NAME is the prefix, whose last "HOST:PID:TID [DEV]
 * NCCL INFO" names the rank (a timestamp, a launcher's "(Worker pid=..)" or another
 * process's text interleaved before it are allowed). Every field through "stream" must be
 * there and well formed, so that a line cut short (a count cut to fewer digits) is never
 * read as a smaller call. On CS_NCCL_LOG_LINE_MALFORMED, @error holds the reason (without
 * the file and line, which the caller adds).
 */
CsNcclLogLineKind cs_nccl_log_parse_line(const char *line, CsNcclLogLine *out, GError **error);

/* Bytes of one element of NCCL's datatype @datatype (ncclDataType_t, NCCL 2.30 nccl.h.in), or
 * 0 for a number that is no datatype. */
int cs_nccl_log_datatype_size(int datatype);
/* NCCL's name of @datatype ("ncclFloat32"), or NULL. */
const char *cs_nccl_log_datatype_name(int datatype);

/**
 * CsNcclLogCall:
 * Identical calls of one communicator: same collective, count and datatype.
 */
typedef struct {
    char *name;       /* NCCL's spelling: "AllReduce" */
    guint64 count;    /* elements, as passed to NCCL */
    int datatype;     /* ncclDataType_t */
    gint64 calls;     /* lines */
    guint64 first_op; /* smallest opCount seen */
    guint64 last_op;  /* largest opCount seen */
} CsNcclLogCall;

/**
 * CsNcclLogComm:
 * One communicator as one rank saw it.
 */
typedef struct {
    guint64 comm;      /* its address in the rank's process */
    int nranks;        /* ranks in it */
    gint64 calls;      /* lines */
    guint64 first_op;  /* smallest opCount */
    guint64 last_op;   /* largest opCount */
    GArray *call_list; /* CsNcclLogCall, in order of first appearance */
    char *name;        /* a profiler trace's process group name, NULL for a log's */
    char *ranks;       /* that group's global ranks as the trace prints them, or NULL */
} CsNcclLogComm;

/**
 * CsNcclLogRank:
 * The lines of one rank (host, process, device).
 */
typedef struct {
    char *label;      /* "HOST:PID:DEV", or "-" for lines without a prefix */
    gint64 calls;     /* collective lines */
    GPtrArray *comms; /* CsNcclLogComm, in order of first appearance */
} CsNcclLogRank;

/* The collective lines of one or more log files, summed. */
typedef struct _CsNcclLog CsNcclLog;

CsNcclLog *cs_nccl_log_new(void);
void cs_nccl_log_free(CsNcclLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsNcclLog, cs_nccl_log_free)

/**
 * cs_nccl_log_add_file:
 * Reads the log at @path ("-" for stdin) line by line in bounded memory (a line past 64 KiB
 * is no NCCL line and counts as another line) and adds its collective lines. Errors are
 * CS_NCCL_LOG_ERROR: IO ("PATH: cannot read: why"), MALFORMED ("PATH:LINE: what is wrong"),
 * LIMIT.
 */
gboolean cs_nccl_log_add_file(CsNcclLog *log, const char *path, GError **error);

/**
 * cs_nccl_log_add_line:
 * Adds one line; @origin and @lineno name it in errors ("ORIGIN:LINENO: ...").
 */
gboolean cs_nccl_log_add_line(CsNcclLog *log, const char *line, const char *origin, gint64 lineno,
                              GError **error);

/**
 * cs_nccl_log_add_call:
 * Adds one collective read from another record of the run than a log (a PyTorch profiler
 * trace, kineto.c): @l as a log line would give it, where @l->comm identifies the
 * communicator within @l->rank. @comm_name (nullable) is its name in that record (a process
 * group's), @comm_ranks (nullable) its ranks; both are kept from the first call of the
 * communicator. @where names the call in errors ("trace.json:12:3: traceEvents[40]"). Errors
 * are CS_NCCL_LOG_ERROR: MALFORMED (the communicator's size changed), LIMIT.
 */
gboolean cs_nccl_log_add_call(CsNcclLog *log, const CsNcclLogLine *l, const char *comm_name,
                              const char *comm_ranks, const char *where, GError **error);

/* The ranks seen, in order of first appearance. (transfer none) */
const GPtrArray *cs_nccl_log_ranks(const CsNcclLog *log);
/* The rank labelled @label, or NULL. (transfer none) */
const CsNcclLogRank *cs_nccl_log_find_rank(const CsNcclLog *log, const char *label);
/* Collective lines read, and other lines skipped. */
gint64 cs_nccl_log_n_collective_lines(const CsNcclLog *log);
gint64 cs_nccl_log_n_other_lines(const CsNcclLog *log);

G_END_DECLS
