/* checkpoint: a ledger as chunks of JSON small enough for ConfigMaps, and back
 * (docs/checkpoint.md). */
#ifndef GC_CHECKPOINT_H
#define GC_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "../ledger/ledger.h"
#include "../util/util.h"

/*
 * A checkpoint is one write of the whole ledger (every pod interval, capacity interval, rollup
 * row, capacity rollup row and the fold horizon) split into n chunks. Every chunk is a JSON
 * object that carries the header {"version":1,"write":"<id>","chunk":i,"of":n,"written_at":...,
 * "controller":...,"horizon":...,"counts":{...}} and its own string table, so each chunk is read
 * on its own; a restore needs all n chunks of the same write or restores nothing.
 */

/*
 * Versions 5 and 6 (a full write, an incremental manifest) carry period history with its node
 * rows (the held GPU-seconds of coarsened buckets) and the header member "coarse_to"; 3 and 4
 * (period history, no coarsened buckets) and 1 and 2 (no period history, periods start at their
 * horizon; no workloads), written by earlier builds, are still read (docs/checkpoint.md,
 * "Versioning").
 */
#define GC_CHECKPOINT_VERSION 5
/*
 * Versions 7 and 8 are 5 and 6 of a ledger keeping label dimensions (label:<key>): every body
 * names the keys ("label_keys") and its usage, rollup and period records carry one value per key
 * after their dimensions. A ledger keeping none still writes 5 and 6, byte for byte as before.
 */
#define GC_CHECKPOINT_VERSION_LABELS      7
#define GC_CHECKPOINT_VERSION_INCR_LABELS 8
#define GC_CHECKPOINT_VERSION_V1          1
#define GC_CHECKPOINT_VERSION_V3          3
#define GC_CHECKPOINT_CHUNK_BYTES         (900u * 1024u) /* a ConfigMap value, with room for the rest */
#define GC_CHECKPOINT_MIN_CHUNK           (16u * 1024u) /* smallest chunk_bytes accepted (tests) */
#define GC_CHECKPOINT_MAX_CHUNK           (1u << 20)    /* a chunk larger than this is refused */
#define GC_CHECKPOINT_MAX_CHUNKS          128           /* chunks of one write */
#define GC_CHECKPOINT_MAX_STRING          1024          /* bytes of one string (uid, label, name) */
#define GC_CHECKPOINT_MAX_ID              253           /* bytes of the controller's identity */
#define GC_CHECKPOINT_WRITE_LEN           17            /* write id: 16 hex digits and the NUL */

#define GC_CHECKPOINT_NAME     "gpu-cost-checkpoint" /* chunk 0's ConfigMap; chunk i adds -i */
#define GC_CHECKPOINT_KEY      "checkpoint.json"     /* the ConfigMap data key */
#define GC_CHECKPOINT_NAME_MAX 64

/* The ConfigMap that holds chunk i: "gpu-cost-checkpoint", "gpu-cost-checkpoint-1", ... */
void gc_checkpoint_name(size_t chunk, char out[GC_CHECKPOINT_NAME_MAX]);

/*
 * Writes the ledger as chunks of at most chunk_bytes each (0 = GC_CHECKPOINT_CHUNK_BYTES; at
 * least GC_CHECKPOINT_MIN_CHUNK). *ret_chunks is an array of *ret_n buffers the caller frees
 * with gc_checkpoint_chunks_free. controller is the writer's identity (printable ASCII without
 * quotes or backslashes, at most GC_CHECKPOINT_MAX_ID bytes). The write id is a hash of the
 * whole content and written_at, so chunks of different writes do not mix. -E2BIG when a string
 * is longer than GC_CHECKPOINT_MAX_STRING or more than GC_CHECKPOINT_MAX_CHUNKS chunks would
 * be needed; err says which.
 * Write chunk 0 last: it is the one a restore reads first, so a write that stopped half-way
 * leaves chunks that a restore refuses instead of a mix that looks complete.
 */
int gc_checkpoint_encode(const gc_ledger *l, int64_t written_at, const char *controller,
                         size_t chunk_bytes, gc_buf **ret_chunks, size_t *ret_n, char *err,
                         size_t errlen);
void gc_checkpoint_chunks_free(gc_buf *chunks, size_t n); /* accepts NULL */

#define GC_CHECKPOINT_MAX_RVS      4  /* watched resources whose resourceVersion a write keeps */
#define GC_CHECKPOINT_RV_MAX       65 /* a resourceVersion: 1-64 printable ASCII bytes, NUL */
#define GC_CHECKPOINT_RESOURCE_MAX 32 /* a resource's name: 1-31 of [a-z0-9.-], NUL */

/*
 * The resourceVersion a watch of `resource` had reached when the ledger was encoded: the last one
 * whose effects are in the ledger (not merely seen), so a restart that resumes the watch from it
 * replays exactly what the ledger lacks. Opaque: compared only for equality.
 */
typedef struct gc_checkpoint_rv {
        char resource[GC_CHECKPOINT_RESOURCE_MAX]; /* "pods", "nodes", "namespaces" */
        char rv[GC_CHECKPOINT_RV_MAX];
} gc_checkpoint_rv;

#define GC_CHECKPOINT_GENERATIONS 2 /* complete writes kept: a write never touches the other */
#define GC_CHECKPOINT_MAX_GEN     ((uint64_t)1 << 53)

/* What a write says besides the ledger (every member optional). */
typedef struct gc_checkpoint_meta {
        const gc_checkpoint_rv *rvs; /* the watches' resume points */
        size_t n_rvs;
        uint64_t generation; /* 1, 2, ...: which of two complete writes is newer; 0 = none */
} gc_checkpoint_meta;

/*
 * gc_checkpoint_encode with meta written into every chunk's header (part of the write id):
 * "resource_versions":{"pods":"123",...} and "generation":N. Encode under the same lock that
 * the watches apply events under, so the ledger and the resourceVersions are of one moment.
 * -EINVAL for more than GC_CHECKPOINT_MAX_RVS, a resource given twice, a name or
 * resourceVersion out of its alphabet or length, or a generation at or past GC_CHECKPOINT_MAX_GEN.
 */
int gc_checkpoint_encode_meta(const gc_ledger *l, int64_t written_at, const char *controller,
                              const gc_checkpoint_meta *meta, size_t chunk_bytes,
                              gc_buf **ret_chunks, size_t *ret_n, char *err, size_t errlen);

/*
 * Generations: writes alternate between GC_CHECKPOINT_GENERATIONS sets of ConfigMaps (slots),
 * so a write that dies at any point leaves the other slot's complete write untouched. Slot 0
 * is "gpu-cost-checkpoint", "gpu-cost-checkpoint-1", ... (the names of version 1 writes); slot
 * s > 0 is "gpu-cost-checkpoint-g<s>", "gpu-cost-checkpoint-g<s>-1", ...
 */
void gc_checkpoint_slot_name(size_t slot, size_t chunk, char out[GC_CHECKPOINT_NAME_MAX]);
/* The slot and chunk a ConfigMap name stands for; -EINVAL when it is no checkpoint name. */
int gc_checkpoint_parse_name(const char *name, size_t *ret_slot, size_t *ret_chunk);

/*
 * Incremental writes (version 2). The ledger is cut into parts whose content does not move when
 * unrelated state changes: pod intervals into GC_CHECKPOINT_USAGE_BUCKETS buckets by a hash of
 * their uid, node capacity into one, and rollup and capacity rollup rows by the UTC day of their
 * hour (a closed day never changes again). Each part is a ConfigMap named after a 128-bit hash of
 * its content ("gpu-cost-checkpoint-c-<32 hex>"): a part whose name already exists holds that
 * content and is not written again. A small manifest in the slot's chunk 0 ConfigMap carries the
 * header of version 1 and "parts":[["<32 hex>",bytes],...]; a restore fetches the parts it names
 * and refuses any whose content does not hash to its name. Write the parts first, the manifest
 * last; delete a part only when no slot's manifest names it.
 */
#define GC_CHECKPOINT_VERSION_INCR  6
#define GC_CHECKPOINT_VERSION_V2    2
#define GC_CHECKPOINT_VERSION_V4    4
#define GC_CHECKPOINT_MAX_PARTS     1000 /* parts of one incremental write */
#define GC_CHECKPOINT_USAGE_BUCKETS 64
#define GC_CHECKPOINT_PART_PREFIX   "gpu-cost-checkpoint-c-"
#define GC_CHECKPOINT_PART_HASH     33 /* 32 hex digits and the NUL */

typedef struct gc_checkpoint_part {
        char name[GC_CHECKPOINT_NAME_MAX]; /* GC_CHECKPOINT_PART_PREFIX + hash of data */
        gc_buf data;                       /* the ConfigMap's GC_CHECKPOINT_KEY value */
} gc_checkpoint_part;

typedef struct gc_checkpoint_write {
        gc_buf manifest; /* the slot's chunk 0 */
        gc_checkpoint_part *parts;
        size_t n_parts;
} gc_checkpoint_write;

/*
 * Encodes the ledger as an incremental write (arguments and errors as gc_checkpoint_encode_meta;
 * chunk_bytes bounds each part). On success *ret holds the manifest and every part (release with
 * gc_checkpoint_write_release): the caller puts only the parts whose names do not exist yet.
 */
int gc_checkpoint_encode_incr(const gc_ledger *l, int64_t written_at, const char *controller,
                              const gc_checkpoint_meta *meta, size_t chunk_bytes,
                              gc_checkpoint_write *ret, char *err, size_t errlen);
void gc_checkpoint_write_release(gc_checkpoint_write *w); /* accepts a zeroed struct */

/*
 * Which parts of w a write puts: those no existing ConfigMap is named after (a part's name is
 * its content's hash, so one of that name holds that content already). Returns a flag per part
 * (malloc'd; the caller frees it) and in *ret_n how many are set; NULL when out of memory.
 */
unsigned char *gc_checkpoint_parts_to_put(const gc_checkpoint_write *w, const char *const *existing,
                                          size_t n_existing, size_t *ret_n);

/* Whether name is a part's ConfigMap name (prefix and 32 lower-case hex digits). */
int gc_checkpoint_is_part_name(const char *name);

/*
 * Whether the checkpoint ConfigMap `name` may be deleted once a write into `slot` is complete:
 * a version 1 chunk 1.. of that slot (its manifest replaced them), or a part that none of the
 * n_keep names (the parts the manifests of every slot list) holds. Anything else is kept: the
 * other slot's chunks, every chunk 0, names that are not the checkpoint's.
 */
int gc_checkpoint_is_garbage(const char *name, size_t slot, char (*keep)[GC_CHECKPOINT_NAME_MAX],
                             size_t n_keep);

/*
 * The ConfigMap names of the parts a manifest lists, in order, into ret_names (room for max);
 * 0 parts for a version 1 chunk. -EINVAL when data is no valid chunk 0 or manifest, -E2BIG
 * when it lists more than max.
 */
int gc_checkpoint_manifest_parts(const char *data, size_t len,
                                 char (*ret_names)[GC_CHECKPOINT_NAME_MAX], size_t max,
                                 size_t *ret_n);

/* What one chunk says about its write, read without restoring anything. */
typedef struct gc_checkpoint_header {
        int version;         /* as this build reads it: 1, 3 and 7 read as 5; 2, 4 and 8 as 6 */
        int written_version; /* as written */
        char write_id[GC_CHECKPOINT_WRITE_LEN];
        size_t chunk; /* this chunk's index */
        size_t of;    /* chunks in the write */
        int64_t written_at;
        char controller[GC_CHECKPOINT_MAX_ID + 1];
        int64_t horizon; /* INT64_MIN when the ledger had never folded */
        size_t usage, capacity, rollups, capacity_rollups; /* records in the whole write */
        size_t periods;       /* rows of period history (0 in a write of an earlier build) */
        int64_t period_since; /* periods before it are not in period history; INT64_MIN: all */
        int64_t coarse_to;    /* buckets before it kept only in periods; INT64_MIN: none */
        int64_t bucket_s;     /* step of a run of rollup rows: the ledger's bucket (3600 before) */
        gc_checkpoint_rv rvs[GC_CHECKPOINT_MAX_RVS]; /* zeroed past n_rvs */
        size_t n_rvs;                                /* 0 for a write by a build that kept none */
        uint64_t generation;                         /* 0 for a write by a build that kept none */
} gc_checkpoint_header;

/* The resourceVersion h keeps for resource, or NULL. */
const char *gc_checkpoint_rv_of(const gc_checkpoint_header *h, const char *resource);

/* Reads a chunk's header (e.g. chunk 0, to learn how many ConfigMaps to fetch). */
int gc_checkpoint_peek(const char *data, size_t len, gc_checkpoint_header *ret, char *err,
                       size_t errlen);

/* A pod interval that was open (still holding its GPUs) when the checkpoint was written. */
typedef struct gc_checkpoint_open {
        const char *pod_uid;            /* the ledger's interned strings */
        const char *dims[GC_DIM_COUNT]; /* namespace, team, ..., pod */
        double geq;
        int64_t start;
} gc_checkpoint_open;

typedef struct gc_checkpoint_info {
        gc_checkpoint_header header; /* of the write restored (chunk index 0) */
        size_t ignored;              /* chunks given that belong to another write, past `of` */
        gc_checkpoint_open *open;    /* open intervals restored */
        size_t n_open;
} gc_checkpoint_info;

/*
 * Restores a checkpoint into l, which must be empty (nothing put, never folded). chunks[i] of
 * lens[i] bytes may come in any order, and an entry may be NULL (a ConfigMap that was not
 * there). Chunk 0 names the write; every chunk 1..of-1 must be present and of that write, else
 * -EINVAL with err naming what is missing or mixed, before anything is put into l. Chunks of
 * another write with an index past `of` (left over from a longer earlier write) are ignored and
 * counted. Chunks over GC_CHECKPOINT_MAX_CHUNK bytes, an unknown version, and counts above
 * max_intervals or max_rollup_rows (0 = GC_LEDGER_DEFAULT_LIMIT; pass the ledger's own) are
 * refused. Strings are interned into the ledger's pool; doubles come back bit for bit.
 * On success *ret lists the open intervals restored (release with gc_checkpoint_info_release).
 * On a failure after validation (out of memory, the ledger's own limits) l holds part of the
 * checkpoint and must be discarded.
 */
int gc_checkpoint_decode(gc_ledger *l, const char *const *chunks, const size_t *lens, size_t n,
                         size_t max_intervals, size_t max_rollup_rows, gc_checkpoint_info *ret,
                         char *err, size_t errlen);
void gc_checkpoint_info_release(gc_checkpoint_info *info); /* accepts a zeroed struct */

/* The chunks read from one slot (as gc_checkpoint_decode takes them; n = 0 for an empty slot). */
typedef struct gc_checkpoint_slot {
        const char *const *chunks;
        const size_t *lens;
        size_t n;
} gc_checkpoint_slot;

/*
 * Restores the newest complete generation among the slots: ordered by chunk 0's generation,
 * then written_at (a slot without a readable chunk 0 comes last), each is decoded in turn
 * until one is accepted; a refused one (-EINVAL: refused before anything is put) leaves l
 * empty for the next. On success *ret_slot is the slot restored and *ret_refused how many
 * newer slots were refused (err then says why, so the caller can say it loudly). -ENOENT when
 * no slot holds any chunk; -EINVAL when chunks exist but no generation is complete (err names
 * each slot's reason). With more than one slot, each but the last candidate is tried on a
 * scratch copy of l first, so a write refused after part of it was put never dirties l. On any
 * failure l must be discarded (as after gc_checkpoint_decode).
 */
int gc_checkpoint_decode_newest(gc_ledger *l, const gc_checkpoint_slot *slots, size_t n_slots,
                                size_t max_intervals, size_t max_rollup_rows,
                                gc_checkpoint_info *ret, size_t *ret_slot, size_t *ret_refused,
                                char *err, size_t errlen);

/*
 * After a restore and the first full LIST of pods: ends at end_time (normally the checkpoint's
 * written_at, the last moment those pods were known to exist; never before an interval's start)
 * every open interval whose pod `seen` says is gone, and flags it GC_USAGE_F_ESTIMATE. Returns
 * in *ret_count how many were ended and in *ret_gpu_seconds the GPU-seconds they hold in all
 * (what rests on the estimate). seen(ud, uid) returns non-zero for a pod the API still shows.
 */
int gc_checkpoint_close_missing(gc_ledger *l, int (*seen)(void *ud, const char *pod_uid), void *ud,
                                int64_t end_time, size_t *ret_count, double *ret_gpu_seconds);

/*
 * The same for nodes: ends at end_time (never before its start) every open capacity interval
 * whose node `seen` says is gone (absent from the first LIST of nodes), so its capacity counts
 * up to the checkpoint and no further. *ret_count: how many.
 */
int gc_checkpoint_close_missing_nodes(gc_ledger *l, int (*seen)(void *ud, const char *node),
                                      void *ud, int64_t end_time, size_t *ret_count);

/*
 * The report note for pods ended by gc_checkpoint_close_missing: how many, their GPU-hours,
 * and how they were estimated. Appends one sentence (Markdown) to out.
 */
int gc_checkpoint_estimate_note(size_t count, double gpu_seconds, int64_t end_time, gc_buf *out);

#endif
