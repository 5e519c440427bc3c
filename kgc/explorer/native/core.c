/* kgc's native search core: the visited set, the frontier, and the recombination of memoised
 * component steps into successor keys, for a product model (a shared component, a budget and
 * one local component per process: see kgc/explorer/components.py, which documents the protocol).
 *
 * Python computes every component step once (the model stays the readable Python spec); this
 * core stores them and does the per-transition work: looking them up, applying budget spends
 * and deliveries, interning the vector of local ids, probing the visited set, and writing each
 * new state's parent to disk. When it meets something it has not been told (a component step, a
 * property verdict), run() returns a request and Python answers it with a set_* call; a state's
 * successors are gathered without side effects, so the expansion restarts cleanly after an
 * answer and every count is exactly the Python engine's.
 *
 * A state key is 64 bits: shared id (26 bits) | budget id (10 bits) << 26 | vector id << 36.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codes.h"

#define G_MASK ((1ULL << G_BITS) - 1)
#define B_MASK ((1ULL << B_BITS) - 1)
#define V_SHIFT (G_BITS + B_BITS)
#define EMPTY UINT64_MAX
#define MAX_PROCS 15
#define MAX_PROCESS_FAULTS 4  /* classes of process fault (ComponentModel.process_faults) */

/* ------------------------------------------------------------------ hashing */
static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}
static inline size_t slot_of(uint64_t h, size_t cap) { return (size_t)(((__uint128_t)h * cap) >> 64); }

/* A set of 64-bit keys (open addressing, linear probing; grows by 1.5x at 3/4 full). With
 * `nums` (set_number), each key also holds its number: the order it was added in (the state
 * graph's numbering, at 4 bytes a slot instead of a separate map). */
typedef struct { uint64_t *keys; uint32_t *nums; size_t cap, count; } Set;

/* The hash tables are mapped on their own, and all but the component-step memos are left out of a
 * fork (MADV_DONTFORK): the model worker (kgc/explorer/worker.py) reads only the memos (to list what is
 * missing), so the search's writes to the others copy no page while a worker runs. */
static void *table_alloc_in(size_t bytes, int forked) {
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (!forked) (void)madvise(p, bytes ? bytes : 1, MADV_DONTFORK);
    return p;
}
static void *table_alloc(size_t bytes) { return table_alloc_in(bytes, 0); }
static void table_free(void *p, size_t bytes) {
    if (p) munmap(p, bytes ? bytes : 1);
}

static int set_init(Set *s, size_t cap) {
    s->keys = table_alloc(cap * sizeof(uint64_t));
    s->nums = NULL;
    if (!s->keys) return -1;
    memset(s->keys, 0xff, cap * sizeof(uint64_t));
    s->cap = cap; s->count = 0;
    return 0;
}
/* Number the keys from now on (an empty set only). */
static int set_number(Set *s) {
    s->nums = table_alloc(s->cap * sizeof(uint32_t));
    return s->nums ? 0 : -1;
}
static int set_grow(Set *s) {
    size_t ncap = s->cap + s->cap / 2;
    uint64_t *nk = table_alloc(ncap * sizeof(uint64_t));
    uint32_t *nn = s->nums ? table_alloc(ncap * sizeof(uint32_t)) : NULL;
    if (!nk || (s->nums && !nn)) { table_free(nk, ncap * sizeof(uint64_t)); table_free(nn, ncap * sizeof(uint32_t)); return -1; }
    memset(nk, 0xff, ncap * sizeof(uint64_t));
    for (size_t i = 0; i < s->cap; i++) {
        uint64_t k = s->keys[i];
        if (k == EMPTY) continue;
        size_t j = slot_of(mix64(k), ncap);
        while (nk[j] != EMPTY) { j++; if (j == ncap) j = 0; }
        nk[j] = k;
        if (nn) nn[j] = s->nums[i];
    }
    table_free(s->keys, s->cap * sizeof(uint64_t)); s->keys = nk;
    if (nn) { table_free(s->nums, s->cap * sizeof(uint32_t)); s->nums = nn; }
    s->cap = ncap;
    return 0;
}
/* 1: inserted, 0: present, -1: out of memory */
static inline int set_add(Set *s, uint64_t k) {
    if ((s->count + 1) * 4 > s->cap * 3 && set_grow(s) < 0) return -1;
    size_t j = slot_of(mix64(k), s->cap);
    for (;;) {
        uint64_t x = s->keys[j];
        if (x == k) return 0;
        if (x == EMPTY) {
            s->keys[j] = k;
            if (s->nums) s->nums[j] = (uint32_t)s->count;
            s->count++;
            return 1;
        }
        j++; if (j == s->cap) j = 0;
    }
}
static inline int set_has(const Set *s, uint64_t k) {
    size_t j = slot_of(mix64(k), s->cap);
    for (;;) {
        uint64_t x = s->keys[j];
        if (x == k) return 1;
        if (x == EMPTY) return 0;
        j++; if (j == s->cap) j = 0;
    }
}
/* The number of a key of a numbered set: 1 found, 0 not. */
static inline int set_num(const Set *s, uint64_t k, int64_t *out) {
    size_t j = slot_of(mix64(k), s->cap);
    for (;;) {
        uint64_t x = s->keys[j];
        if (x == k) { *out = s->nums[j]; return 1; }
        if (x == EMPTY) return 0;
        j++; if (j == s->cap) j = 0;
    }
}

/* A map from 64-bit keys to 64-bit values; forked: kept in a forked worker (map_init_forked). */
typedef struct { uint64_t *keys; int64_t *vals; size_t cap, count; int forked; } Map;

static int map_init(Map *m, size_t cap) {
    m->keys = table_alloc_in(cap * sizeof(uint64_t), m->forked);
    m->vals = table_alloc_in(cap * sizeof(int64_t), m->forked);
    if (!m->keys || !m->vals) return -1;
    memset(m->keys, 0xff, cap * sizeof(uint64_t));
    m->cap = cap; m->count = 0;
    return 0;
}
static int map_init_forked(Map *m, size_t cap) {
    m->forked = 1;
    return map_init(m, cap);
}
static void map_free(Map *m) {
    table_free(m->keys, m->cap * sizeof(uint64_t)); table_free(m->vals, m->cap * sizeof(int64_t));
    m->keys = NULL; m->vals = NULL;
}
static int map_grow(Map *m) {
    size_t ncap = m->cap * 2;
    uint64_t *nk = table_alloc_in(ncap * sizeof(uint64_t), m->forked);
    int64_t *nv = table_alloc_in(ncap * sizeof(int64_t), m->forked);
    if (!nk || !nv) { table_free(nk, ncap * sizeof(uint64_t)); table_free(nv, ncap * sizeof(int64_t)); return -1; }
    memset(nk, 0xff, ncap * sizeof(uint64_t));
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t k = m->keys[i];
        if (k == EMPTY) continue;
        size_t j = slot_of(mix64(k), ncap);
        while (nk[j] != EMPTY) { j++; if (j == ncap) j = 0; }
        nk[j] = k; nv[j] = m->vals[i];
    }
    map_free(m); m->keys = nk; m->vals = nv; m->cap = ncap;
    return 0;
}
static inline int map_get(const Map *m, uint64_t k, int64_t *out) {
    size_t j = slot_of(mix64(k), m->cap);
    for (;;) {
        uint64_t x = m->keys[j];
        if (x == k) { *out = m->vals[j]; return 1; }
        if (x == EMPTY) return 0;
        j++; if (j == m->cap) j = 0;
    }
}
static int map_put(Map *m, uint64_t k, int64_t v) {
    if ((m->count + 1) * 2 > m->cap && map_grow(m) < 0) return -1;
    size_t j = slot_of(mix64(k), m->cap);
    for (;;) {
        uint64_t x = m->keys[j];
        if (x == k) { m->vals[j] = v; return 0; }
        if (x == EMPTY) { m->keys[j] = k; m->vals[j] = v; m->count++; return 0; }
        j++; if (j == m->cap) j = 0;
    }
}

/* Growable arrays. */
#define VEC(T, name) typedef struct { T *v; size_t len, cap; } name;
VEC(int32_t, I32)
VEC(int64_t, I64)
VEC(uint64_t, U64)
VEC(uint32_t, U32)
VEC(uint16_t, U16)
VEC(int8_t, I8)

#define RESERVE(vec, n, fill)                                                                    \
    do {                                                                                         \
        size_t _need = (size_t)(n);                                                              \
        if (_need > (vec).cap) {                                                                 \
            size_t _nc = (vec).cap ? (vec).cap : 64;                                             \
            while (_nc < _need) _nc *= 2;                                                        \
            void *_p = realloc((vec).v, _nc * sizeof(*(vec).v));                                 \
            if (!_p) { PyErr_NoMemory(); return -1; }                                            \
            (vec).v = _p;                                                                        \
            for (size_t _i = (vec).cap; _i < _nc; _i++) (vec).v[_i] = (fill);                    \
            (vec).cap = _nc;                                                                     \
        }                                                                                        \
    } while (0)

/* ------------------------------------------------------------------ requests to Python */
/* The events and questions (EV_*, NEED_*) and the queue's kinds (Q_*) are in codes.h. */

/* A shared component's faults not computed yet (a memo entry not computed yet is absent from its map). */
#define UNKNOWN (-1)
/* No split: every state of the level asks for its missing component steps (split()). */
#define NO_SPLIT SIZE_MAX

typedef struct {
    PyObject_HEAD
    int n, nkinds, dfs, max_depth;
    long long max_states;
    int k_removal;                     /* the budget kind a removal of a still-held identity spends */
    int npf, k_pf[MAX_PROCESS_FAULTS];  /* the process faults' classes: the budget kind each spends */
    int local_spends[3];   /* the budget kinds a process's own move may spend, as bits of avail */
    int n_local_spends;
    /* visited set, parents file, frontier */
    Set visited;
    FILE *parents;
    char *parents_path;
    U64 cur, next;      /* BFS levels */
    size_t cur_idx;
    int level;
    U64 stack; I32 stack_depth;  /* DFS */
    /* vectors of local ids */
    Map vmap; U32 vecs; I64 vmask;
    /* per shared id: outside the boundary (INT32_MIN: not told yet), halted, state-check mask,
     * candidates and faults (pool offsets) */
    I32 gout; I8 gdead; I64 gmask; I64 gcand; I64 gfaults;
    /* per budget id: spend table and total */
    I32 spend; I8 bknown; I32 btotal;
    /* per local id: the member it holds */
    I32 lidx, lser; I8 lknown;
    /* memo tables: key -> pool offset (deliver: -> new local id) */
    Map own, timers, pfault[MAX_PROCESS_FAULTS], deliver;
    I32 pool;
    /* per step id */
    I64 smask; U64 scount;
    int64_t active_step, active_state;
    int queue_new;   /* queue every new state for Python's whole-state checks */
    int want_vmask;
    PyObject *queue;
    /* the state being expanded */
    int have_cur, cur_depth;
    uint64_t cur_key;
    long long since_pause;  /* expansions since run() last paused (requests do not reset it) */
    int released;           /* release() was called: only the graph, vectors and counts remain */
    /* the state graph, for liveness (BFS only): states numbered in discovery order, which BFS
     * also expands in (the visited set numbers them); per state its status and the end of its
     * edges; per edge its target and its fairness class (per step: its class when it keeps the
     * budget | its class when it spends one << 16, told by set_step) */
    int record;
    U64 gend; U32 gtarget, sclass; U16 gclass; I8 gstatus;
    U64 succ_key; I32 succ_step;
    /* statistics */
    unsigned long long transitions, boundary;
    int depth_seen, cut_by_depth;
    int64_t req[5];
    int nreq;
    /* the model worker (kgc/explorer/native.py): announce each new BFS level (EV_LEVEL) before
     * expanding it; fresh: pop() just started one; split_at: the first state of the level whose
     * missing component steps another process computes (split()), NO_SPLIT when none */
    int announce, fresh;
    size_t split_at;
} Core;

/* Whether the state being expanded waits for its missing component steps (NEED_WAIT) instead of
 * asking for them: it lies in the part of its BFS level given to the model worker. */
static inline int waits(const Core *c) { return !c->dfs && c->cur_idx > c->split_at; }

static int need(Core *c, int kind, int64_t a, int64_t b, int64_t d, int64_t e) {
    c->req[0] = a; c->req[1] = b; c->req[2] = d; c->req[3] = e;
    return kind;
}

/* ------------------------------------------------------------------ vectors */
static inline uint64_t vec_hash(const uint32_t *ids, int n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < n; i++) h = mix64(h ^ (ids[i] + 0x632be59bd9b4e019ULL * (uint64_t)(i + 1)));
    return h;
}
/* The id of a vector of local ids (interned here; the map keys are hashes, resolved by a chain
 * in vals of candidates compared exactly). Returns -1 on error. */
static int64_t vec_id(Core *c, const uint32_t *ids) {
    int n = c->n;
    uint64_t h = vec_hash(ids, n);
    if (h == EMPTY) h = 0;
    /* probe the map directly: several vectors may share a hash, so keep probing on mismatch */
    Map *m = &c->vmap;
    size_t j = slot_of(mix64(h), m->cap);
    for (;;) {
        uint64_t x = m->keys[j];
        if (x == EMPTY) break;
        if (x == h) {
            int64_t id = m->vals[j];
            if (memcmp(c->vecs.v + (size_t)id * n, ids, n * sizeof(uint32_t)) == 0) return id;
        }
        j++; if (j == m->cap) j = 0;
    }
    int64_t id = (int64_t)(c->vecs.len / (size_t)n);
    if (id >= (int64_t)(1ULL << V_BITS) - 1) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^28 distinct vectors of local components: the state space is too large");
        return -1;
    }
    RESERVE(c->vecs, c->vecs.len + n, 0);
    memcpy(c->vecs.v + c->vecs.len, ids, n * sizeof(uint32_t));
    c->vecs.len += n;
    RESERVE(c->vmask, id + 1, -1);
    if (c->vmask.len < (size_t)id + 1) c->vmask.len = id + 1;
    /* insert (duplicates of the hash key are allowed: insert at the first empty slot) */
    if ((m->count + 1) * 2 > m->cap) {
        if (map_grow(m) < 0) { PyErr_NoMemory(); return -1; }
    }
    j = slot_of(mix64(h), m->cap);
    while (m->keys[j] != EMPTY) { j++; if (j == m->cap) j = 0; }
    m->keys[j] = h; m->vals[j] = id; m->count++;
    return id;
}

/* ------------------------------------------------------------------ records
 * A move list in the pool: count, then per move:
 *   step, spend_a, spend_b, shared, proc, local, ndeliveries, (proc, response)*, nlive, (proc, serial)*
 * spend_a/spend_b: budget kinds spent (-1: none); proc -1: no process changes its local component.
 * live: identities whose removal is a perturbation (the removal kind) if their process still holds them.
 */

static int pool_put(Core *c, PyObject *flat, int64_t *off) {
    PyObject *seq = PySequence_Fast(flat, "a move list must be a sequence of ints");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    if (c->pool.len + (size_t)n > (size_t)INT64_MAX) { Py_DECREF(seq); return -1; }
    RESERVE(c->pool, c->pool.len + n, 0);
    *off = (int64_t)c->pool.len;
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(items[i]);
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(seq); return -1; }
        c->pool.v[c->pool.len++] = (int32_t)v;
    }
    Py_DECREF(seq);
    return 0;
}

/* ------------------------------------------------------------------ expansion */
#define KEY(g, b, v) ((uint64_t)(g) | ((uint64_t)(b) << G_BITS) | ((uint64_t)(v) << V_SHIFT))

static inline int gknown(Core *c, uint64_t gid) { return gid < c->gout.len && c->gout.v[gid] != INT32_MIN; }

static int push_succ(Core *c, int32_t step, uint64_t key) {
    RESERVE(c->succ_key, c->succ_key.len + 1, 0);
    RESERVE(c->succ_step, c->succ_step.len + 1, 0);
    c->succ_key.v[c->succ_key.len++] = key;
    c->succ_step.v[c->succ_step.len++] = step;
    return 0;
}

/* Apply a move's deliveries to ids (in place). Returns 0, or a request. */
static int deliver(Core *c, const int32_t *d, int nd, uint32_t *ids) {
    for (int k = 0; k < nd; k++) {
        int j = d[2 * k];
        int64_t rid = d[2 * k + 1];
        uint64_t mk = (uint64_t)ids[j] | ((uint64_t)rid << 24);
        int64_t ncid;
        if (!map_get(&c->deliver, mk, &ncid)) return need(c, NEED_DELIVER, ids[j], rid, 0, 0);
        ids[j] = (uint32_t)ncid;
    }
    return 0;
}

static inline int holds(Core *c, const uint32_t *cids, int idx, int ser, int *req) {
    uint32_t lid = cids[idx];
    if (lid >= c->lknown.len || !c->lknown.v[lid]) { *req = need(c, NEED_LOCAL, lid, 0, 0, 0); return -1; }
    return c->lidx.v[lid] == idx && c->lser.v[lid] == ser;
}

/* Walk one move list and push the successors it yields. phase_live: the live list spends the
 * removal kind when a process still holds one of its identities. */
static int walk(Core *c, int64_t off, uint64_t gid, int64_t bid, const uint32_t *cids, int phase_live) {
    const int32_t *p = c->pool.v + off;
    int count = *p++;
    uint32_t ids[MAX_PROCS];
    for (int m = 0; m < count; m++) {
        int32_t step = p[0], sa = p[1], sb = p[2], ngid = p[3], proc = p[4], nlocal = p[5];
        int nd = p[6];
        const int32_t *d = p + 7;
        int nlive = d[2 * nd];
        const int32_t *live = d + 2 * nd + 1;
        p = live + 2 * nlive;
        int64_t nbid = bid;
        if (sa >= 0) { nbid = c->spend.v[nbid * c->nkinds + sa]; if (nbid < 0) continue; }
        if (sb >= 0) {
            if ((size_t)nbid >= c->bknown.len || !c->bknown.v[nbid]) return need(c, NEED_BUDGET, nbid, 0, 0, 0);
            nbid = c->spend.v[nbid * c->nkinds + sb]; if (nbid < 0) continue;
        }
        if (phase_live && nlive) {
            int held = 0, r = 0;
            for (int k = 0; k < nlive && !held; k++) {
                int h = holds(c, cids, live[2 * k], live[2 * k + 1], &r);
                if (h < 0) return r;
                held = h;
            }
            if (held) { nbid = c->spend.v[bid * c->nkinds + c->k_removal]; if (nbid < 0) continue; }
        }
        if ((size_t)nbid >= c->bknown.len || !c->bknown.v[nbid]) return need(c, NEED_BUDGET, nbid, 0, 0, 0);
        memcpy(ids, cids, c->n * sizeof(uint32_t));
        if (proc >= 0) ids[proc] = (uint32_t)nlocal;
        int r = deliver(c, d, nd, ids);
        if (r) return r;
        int64_t vid = vec_id(c, ids);
        if (vid < 0) return -1;
        if ((uint64_t)ngid > G_MASK || (uint64_t)nbid > B_MASK) {
            PyErr_SetString(PyExc_OverflowError, "more than 2^26 shared components or 2^10 budgets: the state space is too large");
            return -1;
        }
        if (push_succ(c, step, KEY(ngid, nbid, vid)) < 0) return -1;
    }
    (void)gid;
    return 0;
}

/* Every successor of key, in the model's order, into succ_*; 0 or a request (or -1 on error). */
static int gather(Core *c, uint64_t key) {
    c->succ_key.len = 0; c->succ_step.len = 0;
    uint64_t gid = key & G_MASK;
    int64_t bid = (int64_t)((key >> G_BITS) & B_MASK);
    uint64_t vid = key >> V_SHIFT;
    if (c->gdead.v[gid]) return 0;
    if ((size_t)bid >= c->bknown.len || !c->bknown.v[bid]) return need(c, NEED_BUDGET, bid, 0, 0, 0);
    uint32_t cids[MAX_PROCS];
    memcpy(cids, c->vecs.v + vid * c->n, c->n * sizeof(uint32_t));
    const int32_t *row = c->spend.v + bid * c->nkinds;
    int avail = 0;
    for (int k = 0; k < c->n_local_spends; k++) if (row[c->local_spends[k]] >= 0) avail |= 1 << k;
    int64_t removal_bid = row[c->k_removal];
    int any_fault = 0;
    for (int f = 0; f < c->npf; f++) any_fault |= row[c->k_pf[f]] >= 0;
    int64_t off;
    int r;
    /* each process's own steps, stored per (shared, process, local, the perturbations the budget
     * still allows): a move the budget can never pay for is not even computed */
    for (int i = 0; i < c->n; i++) {
        uint64_t mk = gid | ((uint64_t)i << 26) | ((uint64_t)avail << 30) | ((uint64_t)cids[i] << 33);
        if (!map_get(&c->own, mk, &off))
            return waits(c) ? need(c, NEED_WAIT, NEED_OWN, (int64_t)gid, 0, 0) : need(c, NEED_OWN, (int64_t)gid, i, cids[i], (int64_t)key);
        if ((r = walk(c, off, gid, bid, cids, 0))) return r;
    }
    /* the shared component's timers: those that remove a live identity spend the removal kind; with
     * none left, the identities a process still holds are protected and those steps not computed */
    uint64_t protected = 0;
    if (removal_bid < 0) {
        if (c->gcand.v[gid] < 0) return need(c, NEED_CANDIDATES, (int64_t)gid, 0, 0, 0);
        const int32_t *cand = c->pool.v + c->gcand.v[gid];
        int nc = cand[0];
        for (int k = 0; k < nc; k++) {
            int h = holds(c, cids, cand[1 + 2 * k], cand[2 + 2 * k], &r);
            if (h < 0) return r;
            if (h) protected |= 1ULL << k;
        }
    }
    uint64_t tk = gid | (protected << 26);
    if (!map_get(&c->timers, tk, &off))
        return waits(c) ? need(c, NEED_WAIT, NEED_TIMERS, (int64_t)gid, 0, 0) : need(c, NEED_TIMERS, (int64_t)gid, (int64_t)protected, (int64_t)key, 0);
    if ((r = walk(c, off, gid, bid, cids, 1))) return r;
    if (!any_fault && c->btotal.v[bid] == 0) return 0;
    /* each class of process fault the budget still allows, for each process in turn (asked for
     * with b = process | class << FAULT_CLASS_SHIFT) */
    for (int f = 0; f < c->npf; f++) {
        if (row[c->k_pf[f]] < 0) continue;
        for (int i = 0; i < c->n; i++) {
            uint64_t mk = gid | ((uint64_t)i << 26) | ((uint64_t)cids[i] << 30);
            if (!map_get(&c->pfault[f], mk, &off))
                return waits(c) ? need(c, NEED_WAIT, NEED_PROCESS_FAULT, (int64_t)gid, 0, 0)
                                : need(c, NEED_PROCESS_FAULT, (int64_t)gid, i | f << FAULT_CLASS_SHIFT, cids[i], (int64_t)key);
            if ((r = walk(c, off, gid, bid, cids, 0))) return r;
        }
    }
    if (c->gfaults.v[gid] == UNKNOWN)
        return waits(c) ? need(c, NEED_WAIT, NEED_FAULTS, (int64_t)gid, 0, 0) : need(c, NEED_FAULTS, (int64_t)gid, (int64_t)key, 0, 0);
    return walk(c, c->gfaults.v[gid], gid, bid, cids, 0);
}

/* What commit() will read must be known: step verdicts, and the targets' shared info and
 * vector verdicts. */
static int ready(Core *c, uint64_t key) {
    for (size_t s = 0; s < c->succ_key.len; s++) {
        uint64_t nxt = c->succ_key.v[s];
        int32_t step = c->succ_step.v[s];
        if (c->active_step && ((size_t)step >= c->smask.len || c->smask.v[step] < 0))
            return need(c, NEED_STEP, step, (int64_t)key, (int64_t)nxt, 0);
        uint64_t g = nxt & G_MASK;
        if (!gknown(c, g)) return need(c, NEED_SHARED, (int64_t)g, (int64_t)nxt, 0, 0);
        uint64_t v = nxt >> V_SHIFT;
        if (c->want_vmask && c->active_state && c->vmask.v[v] < 0)
            return need(c, NEED_VECTOR, (int64_t)v, (int64_t)nxt, 0, 0);
    }
    return 0;
}

static int enqueue(Core *c, PyObject *item) {
    if (!item) return -1;
    int r = PyList_Append(c->queue, item);
    Py_DECREF(item);
    return r;
}

static int discover(Core *c, uint64_t nxt, uint64_t parent, int depth) {
    int added = set_add(&c->visited, nxt);
    if (added < 0) { PyErr_NoMemory(); return -1; }
    if (!added) return 0;
    uint64_t rec[2] = {nxt, parent};
    if (c->parents && fwrite(rec, sizeof(rec), 1, c->parents) != 1) {
        PyErr_SetString(PyExc_OSError, "could not write the parents file");
        return -1;
    }
    if (c->dfs) {
        RESERVE(c->stack, c->stack.len + 1, 0);
        RESERVE(c->stack_depth, c->stack_depth.len + 1, 0);
        c->stack.v[c->stack.len++] = nxt;
        c->stack_depth.v[c->stack_depth.len++] = depth;
    } else {
        RESERVE(c->next, c->next.len + 1, 0);
        c->next.v[c->next.len++] = nxt;
    }
    if (c->active_state) {
        int64_t m = c->gmask.v[nxt & G_MASK];
        if (c->want_vmask) m |= c->vmask.v[nxt >> V_SHIFT];
        m &= c->active_state;
        if (m) {
            c->active_state &= ~m;
            if (enqueue(c, Py_BuildValue("(iLK)", Q_COMPONENT, (long long)m, (unsigned long long)nxt)) < 0) return -1;
        }
    }
    if (c->queue_new && enqueue(c, Py_BuildValue("(iLK)", Q_STATE, 0LL, (unsigned long long)nxt)) < 0) return -1;
    return 0;
}

static int commit(Core *c, uint64_t key, int depth) {
    for (size_t s = 0; s < c->succ_key.len; s++) {
        uint64_t nxt = c->succ_key.v[s];
        int32_t step = c->succ_step.v[s];
        c->transitions++;
        RESERVE(c->scount, (size_t)step + 1, 0);
        if (c->scount.len < (size_t)step + 1) c->scount.len = step + 1;
        c->scount.v[step]++;
        if (c->active_step) {
            int64_t m = c->smask.v[step] & c->active_step;
            if (m) {
                c->active_step &= ~m;
                if (enqueue(c, Py_BuildValue("(iLKiK)", Q_STEP, (long long)m, (unsigned long long)key, step,
                                             (unsigned long long)nxt)) < 0)
                    return -1;
            }
        }
        if (discover(c, nxt, key, depth + 1) < 0) return -1;
        if (c->record) {
            int64_t t = -1;
            if (!set_num(&c->visited, nxt, &t)) { PyErr_SetString(PyExc_RuntimeError, "a visited state without a number"); return -1; }
            if ((size_t)step >= c->sclass.len || c->sclass.v[step] == UINT32_MAX) {
                PyErr_SetString(PyExc_RuntimeError, "a step without a fairness class");
                return -1;
            }
            uint32_t sc = c->sclass.v[step];
            RESERVE(c->gtarget, c->gtarget.len + 1, 0);
            RESERVE(c->gclass, c->gclass.len + 1, 0);
            c->gtarget.v[c->gtarget.len++] = (uint32_t)t;
            c->gclass.v[c->gclass.len++] = (uint16_t)(((nxt ^ key) >> G_BITS & B_MASK) ? sc >> 16 : sc & 0xFFFF);
        }
    }
    return 0;
}

enum { G_NORMAL = 0, G_BOUNDARY = 1, G_DEAD = 2, G_DEADLOCK = 3, G_UNEXPLORED = 4 };

/* The state just popped is done: its status, and where its edges end. */
static int close_state(Core *c, int status) {
    if (!c->record) return 0;
    RESERVE(c->gstatus, c->gstatus.len + 1, 0);
    RESERVE(c->gend, c->gend.len + 1, 0);
    c->gstatus.v[c->gstatus.len++] = (int8_t)status;
    c->gend.v[c->gend.len++] = c->gtarget.len;
    return 0;
}

static int pop(Core *c) {
    if (c->dfs) {
        if (!c->stack.len) return 0;
        c->stack.len--; c->stack_depth.len--;
        c->cur_key = c->stack.v[c->stack.len];
        c->cur_depth = c->stack_depth.v[c->stack_depth.len];
        return 1;
    }
    if (c->cur_idx == c->cur.len) {
        if (!c->next.len) return 0;
        U64 t = c->cur; c->cur = c->next; c->next = t;
        c->next.len = 0; c->cur_idx = 0; c->level++;
        c->fresh = 1; c->split_at = NO_SPLIT;
    }
    c->cur_key = c->cur.v[c->cur_idx++];
    c->cur_depth = c->level;
    return 1;
}

/* run(max_expansions) -> (event, a, b, c, d) */
static PyObject *Core_run(Core *c, PyObject *args) {
    long long budget;
    if (!PyArg_ParseTuple(args, "L", &budget)) return NULL;
    if (c->released) { PyErr_SetString(PyExc_RuntimeError, "the search was released"); return NULL; }
    int ev = EV_DONE;
    for (;;) {
        if (!c->have_cur) {
            if (PyList_GET_SIZE(c->queue)) { ev = EV_QUEUE; break; }
            if (c->max_states >= 0 && (long long)c->visited.count >= c->max_states) { ev = EV_MAX_STATES; break; }
            if (c->since_pause >= budget) { c->since_pause = 0; ev = EV_PAUSE; break; }
            if (!pop(c)) { ev = EV_DONE; break; }
            if (c->fresh) {
                c->fresh = 0;
                /* a new level: announce it before expanding its first state (scan() reads it) */
                if (c->announce) { c->cur_idx--; ev = EV_LEVEL; break; }
            }
            c->have_cur = 1;
            if (c->cur_depth > c->depth_seen) c->depth_seen = c->cur_depth;
        }
        uint64_t key = c->cur_key, gid = key & G_MASK;
        if (!gknown(c, gid)) { ev = need(c, NEED_SHARED, (int64_t)gid, (int64_t)key, 0, 0); break; }
        if (c->gout.v[gid] > 0) {
            c->boundary++; c->have_cur = 0;
            if (close_state(c, G_BOUNDARY) < 0) return NULL;
            continue;
        }
        if (c->max_depth >= 0 && c->cur_depth >= c->max_depth) {
            c->cut_by_depth = 1; c->have_cur = 0;
            if (close_state(c, G_UNEXPLORED) < 0) return NULL;
            continue;
        }
        int r = gather(c, key);
        if (!r) r = ready(c, key);
        if (r < 0) return NULL;
        if (r) { ev = r; break; }
        if (commit(c, key, c->cur_depth) < 0) return NULL;
        if (close_state(c, c->gdead.v[gid] ? G_DEAD : c->succ_key.len ? G_NORMAL : G_DEADLOCK) < 0) return NULL;
        c->have_cur = 0;
        c->since_pause++;
    }
    return Py_BuildValue("(iLLLL)", ev, (long long)c->req[0], (long long)c->req[1], (long long)c->req[2],
                         (long long)c->req[3]);
}

/* ------------------------------------------------------------------ answers from Python */
static int ensure_shared(Core *c, uint64_t gid) {
    size_t n = gid + 1;
    RESERVE(c->gout, n, INT32_MIN);
    RESERVE(c->gdead, n, 0);
    RESERVE(c->gmask, n, 0);
    RESERVE(c->gcand, n, -1);
    RESERVE(c->gfaults, n, -1);
    if (c->gout.len < n) c->gout.len = c->gdead.len = c->gmask.len = c->gcand.len = c->gfaults.len = n;
    return 0;
}

static PyObject *Core_set_shared(Core *c, PyObject *args) {
    long long gid, mask; int outside, dead;
    if (!PyArg_ParseTuple(args, "LppL", &gid, &outside, &dead, &mask)) return NULL;
    if (gid < 0 || (uint64_t)gid > G_MASK) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^26 distinct shared components: the state space is too large");
        return NULL;
    }
    if (ensure_shared(c, (uint64_t)gid) < 0) return NULL;
    c->gout.v[gid] = outside; c->gdead.v[gid] = (int8_t)dead; c->gmask.v[gid] = mask;
    Py_RETURN_NONE;
}

static PyObject *Core_set_vector_mask(Core *c, PyObject *args) {
    long long vid, mask;
    if (!PyArg_ParseTuple(args, "LL", &vid, &mask)) return NULL;
    if (vid < 0 || (size_t)vid >= c->vmask.len) { PyErr_SetString(PyExc_IndexError, "no such vector"); return NULL; }
    c->vmask.v[vid] = mask;
    Py_RETURN_NONE;
}

static int set_budget_row(Core *c, long long bid, PyObject *row, int total) {
    if (bid < 0 || (uint64_t)bid > B_MASK) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^10 distinct budgets: the state space is too large");
        return -1;
    }
    size_t n = (size_t)bid + 1;
    RESERVE(c->bknown, n, 0);
    RESERVE(c->btotal, n, 0);
    RESERVE(c->spend, n * c->nkinds, -1);
    if (c->bknown.len < n) c->bknown.len = c->btotal.len = n;
    PyObject *seq = PySequence_Fast(row, "a spend row must be a sequence");
    if (!seq) return -1;
    if (PySequence_Fast_GET_SIZE(seq) != c->nkinds) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "a spend row needs one entry per budget kind");
        return -1;
    }
    for (int k = 0; k < c->nkinds; k++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, k));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(seq); return -1; }
        if (v > (long)B_MASK) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_OverflowError, "more than 2^10 distinct budgets: the state space is too large");
            return -1;
        }
        c->spend.v[bid * c->nkinds + k] = (int32_t)v;
    }
    Py_DECREF(seq);
    c->bknown.v[bid] = 1; c->btotal.v[bid] = total;
    return 0;
}

static PyObject *Core_set_budget(Core *c, PyObject *args) {
    long long bid; PyObject *row; int total;
    if (!PyArg_ParseTuple(args, "LOi", &bid, &row, &total)) return NULL;
    if (set_budget_row(c, bid, row, total) < 0) return NULL;
    Py_RETURN_NONE;
}

static int reserve_local(Core *c, size_t n) {
    RESERVE(c->lidx, n, -1);
    RESERVE(c->lser, n, -1);
    RESERVE(c->lknown, n, 0);
    if (c->lknown.len < n) c->lidx.len = c->lser.len = c->lknown.len = n;
    return 0;
}

static PyObject *Core_set_local(Core *c, PyObject *args) {
    long long lid; int idx, ser;
    if (!PyArg_ParseTuple(args, "Lii", &lid, &idx, &ser)) return NULL;
    if (lid < 0 || lid >= (1LL << 24)) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^24 distinct local components: the state space is too large");
        return NULL;
    }
    size_t n = (size_t)lid + 1;
    if (reserve_local(c, n) < 0) return NULL;
    c->lidx.v[lid] = idx; c->lser.v[lid] = ser; c->lknown.v[lid] = 1;
    Py_RETURN_NONE;
}

static PyObject *memo_put(Core *c, Map *m, uint64_t key, PyObject *flat) {
    int64_t off;
    if (pool_put(c, flat, &off) < 0) return NULL;
    if (map_put(m, key, off) < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *Core_set_own(Core *c, PyObject *args) {
    long long gid, cid; int i, avail; PyObject *flat;
    if (!PyArg_ParseTuple(args, "LiLiO", &gid, &i, &cid, &avail, &flat)) return NULL;
    return memo_put(c, &c->own, (uint64_t)gid | ((uint64_t)i << 26) | ((uint64_t)avail << 30) | ((uint64_t)cid << 33), flat);
}

static PyObject *Core_set_timers(Core *c, PyObject *args) {
    long long gid; unsigned long long protected; PyObject *flat;
    if (!PyArg_ParseTuple(args, "LKO", &gid, &protected, &flat)) return NULL;
    if (protected >> 37) { PyErr_SetString(PyExc_OverflowError, "more than 37 members to protect"); return NULL; }
    return memo_put(c, &c->timers, (uint64_t)gid | (protected << 26), flat);
}

/* set_process_fault(gid, b, lid, moves): b = process | fault class << FAULT_CLASS_SHIFT, as asked. */
static PyObject *Core_set_process_fault(Core *c, PyObject *args) {
    long long gid, cid; int b; PyObject *flat;
    if (!PyArg_ParseTuple(args, "LiLO", &gid, &b, &cid, &flat)) return NULL;
    int f = b >> FAULT_CLASS_SHIFT, i = b & ((1 << FAULT_CLASS_SHIFT) - 1);
    if (f < 0 || f >= c->npf) { PyErr_SetString(PyExc_ValueError, "no such class of process fault"); return NULL; }
    return memo_put(c, &c->pfault[f], (uint64_t)gid | ((uint64_t)i << 26) | ((uint64_t)cid << 30), flat);
}

static PyObject *Core_set_faults(Core *c, PyObject *args) {
    long long gid; PyObject *flat;
    if (!PyArg_ParseTuple(args, "LO", &gid, &flat)) return NULL;
    if (ensure_shared(c, (uint64_t)gid) < 0) return NULL;
    int64_t off;
    if (pool_put(c, flat, &off) < 0) return NULL;
    c->gfaults.v[gid] = off;
    Py_RETURN_NONE;
}

static PyObject *Core_set_candidates(Core *c, PyObject *args) {
    long long gid; PyObject *flat;
    if (!PyArg_ParseTuple(args, "LO", &gid, &flat)) return NULL;
    if (ensure_shared(c, (uint64_t)gid) < 0) return NULL;
    int64_t off;
    if (pool_put(c, flat, &off) < 0) return NULL;
    c->gcand.v[gid] = off;
    Py_RETURN_NONE;
}

static PyObject *Core_set_deliver(Core *c, PyObject *args) {
    long long cid, rid, ncid;
    if (!PyArg_ParseTuple(args, "LLL", &cid, &rid, &ncid)) return NULL;
    if (map_put(&c->deliver, (uint64_t)cid | ((uint64_t)rid << 24), ncid) < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static int reserve_steps(Core *c, size_t n) {
    RESERVE(c->smask, n, -1);
    if (c->smask.len < n) c->smask.len = n;
    return 0;
}

static int reserve_classes(Core *c, size_t n) {
    RESERVE(c->sclass, n, UINT32_MAX);
    if (c->sclass.len < n) c->sclass.len = n;
    return 0;
}

/* set_step(step, mask[, classes]): a step's verdicts; recording the graph, also its fairness
 * classes (kept | spent << 16). */
static PyObject *Core_set_step(Core *c, PyObject *args) {
    long long step, mask, classes = -1;
    if (!PyArg_ParseTuple(args, "LL|L", &step, &mask, &classes)) return NULL;
    if (step < 0) { PyErr_SetString(PyExc_ValueError, "negative step id"); return NULL; }
    if (reserve_steps(c, (size_t)step + 1) < 0) return NULL;
    c->smask.v[step] = mask;
    if (classes >= 0) {
        if (classes >= (1LL << 32) - 1) { PyErr_SetString(PyExc_ValueError, "classes are two 16-bit ids"); return NULL; }
        if (reserve_classes(c, (size_t)step + 1) < 0) return NULL;
        c->sclass.v[step] = (uint32_t)classes;
    }
    Py_RETURN_NONE;
}

static PyObject *Core_vector(Core *c, PyObject *args) {
    long long vid;
    if (!PyArg_ParseTuple(args, "L", &vid)) return NULL;
    if (vid < 0 || (size_t)(vid + 1) * c->n > c->vecs.len) { PyErr_SetString(PyExc_IndexError, "no such vector"); return NULL; }
    PyObject *t = PyTuple_New(c->n);
    if (!t) return NULL;
    for (int i = 0; i < c->n; i++) PyTuple_SET_ITEM(t, i, PyLong_FromUnsignedLong(c->vecs.v[vid * c->n + i]));
    return t;
}

/* vectors() -> bytes: every vector of local ids (uint32, one per process), by vector id. */
static PyObject *Core_vectors(Core *c, PyObject *Py_UNUSED(ignored)) {
    return PyBytes_FromStringAndSize((const char *)c->vecs.v, (Py_ssize_t)(c->vecs.len * sizeof(uint32_t)));
}

static PyObject *Core_vector_id(Core *c, PyObject *args) {
    PyObject *ids;
    if (!PyArg_ParseTuple(args, "O", &ids)) return NULL;
    PyObject *seq = PySequence_Fast(ids, "a vector must be a sequence");
    if (!seq) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != c->n) { Py_DECREF(seq); PyErr_SetString(PyExc_ValueError, "wrong vector length"); return NULL; }
    uint32_t v[MAX_PROCS];
    for (int i = 0; i < c->n; i++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (x == -1 && PyErr_Occurred()) { Py_DECREF(seq); return NULL; }
        v[i] = (uint32_t)x;
    }
    Py_DECREF(seq);
    int64_t id = vec_id(c, v);
    if (id < 0) return NULL;
    return PyLong_FromLongLong(id);
}

/* add_initial(key): an initial state (its shared info and vector verdict already set). */
static PyObject *Core_add_initial(Core *c, PyObject *args) {
    unsigned long long key;
    if (!PyArg_ParseTuple(args, "K", &key)) return NULL;
    if (discover(c, key, key, 0) < 0) return NULL;
    if (!c->dfs) {
        /* initial states form level 0: discover() put them on the next level */
        if (c->next.len) {
            size_t n = c->cur.len + c->next.len;
            if (n > c->cur.cap) {
                uint64_t *p = realloc(c->cur.v, n * 2 * sizeof(uint64_t));
                if (!p) return PyErr_NoMemory();
                c->cur.v = p; c->cur.cap = n * 2;
            }
            memcpy(c->cur.v + c->cur.len, c->next.v, c->next.len * sizeof(uint64_t));
            c->cur.len = n; c->next.len = 0;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *Core_take_queue(Core *c, PyObject *Py_UNUSED(ignored)) {
    PyObject *q = c->queue;
    c->queue = PyList_New(0);
    if (!c->queue) { c->queue = q; return NULL; }
    return q;
}

static PyObject *Core_set_active(Core *c, PyObject *args) {
    long long step, state; int queue_new;
    if (!PyArg_ParseTuple(args, "LLi", &step, &state, &queue_new)) return NULL;
    c->active_step = step; c->active_state = state; c->queue_new = queue_new;
    Py_RETURN_NONE;
}

static PyObject *Core_flush(Core *c, PyObject *Py_UNUSED(ignored)) {
    if (c->parents && fflush(c->parents) != 0) { PyErr_SetString(PyExc_OSError, "could not flush the parents file"); return NULL; }
    Py_RETURN_NONE;
}

static PyObject *Core_step_counts(Core *c, PyObject *Py_UNUSED(ignored)) {
    return PyBytes_FromStringAndSize((const char *)c->scount.v, (Py_ssize_t)(c->scount.len * sizeof(uint64_t)));
}

static PyObject *Core_stats(Core *c, PyObject *Py_UNUSED(ignored)) {
    size_t memo = c->own.cap * 16 + c->timers.cap * 16 + c->deliver.cap * 16 +
                  c->pool.cap * 4 + c->vmap.cap * 16 + c->vecs.cap * 4 + c->vmask.cap * 8 + c->smask.cap * 8 +
                  c->scount.cap * 8 + c->gout.cap * 29;
    unsigned long long fault_moves = 0;
    for (int f = 0; f < c->npf; f++) { memo += c->pfault[f].cap * 16; fault_moves += c->pfault[f].count; }
    size_t frontier = (c->cur.cap + c->next.cap + c->stack.cap) * 8 + c->stack_depth.cap * 4;
    return Py_BuildValue("{s:K,s:K,s:K,s:i,s:i,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:L,s:L}",
        "distinct_states", (unsigned long long)c->visited.count,
        "transitions", c->transitions,
        "boundary_states", c->boundary,
        "depth", c->depth_seen,
        "cut_by_depth", c->cut_by_depth,
        "visited_bytes", (unsigned long long)(c->visited.cap * 8),
        "frontier_bytes", (unsigned long long)frontier,
        "memo_bytes", (unsigned long long)memo,
        "vectors", (unsigned long long)(c->vecs.len / (size_t)c->n),
        "own_moves", (unsigned long long)c->own.count,
        "timer_moves", (unsigned long long)c->timers.count,
        "process_fault_moves", fault_moves,
        "deliveries", (unsigned long long)c->deliver.count,
        "pool_words", (unsigned long long)c->pool.len,
        "queue", (long long)(c->dfs ? c->stack.len : (c->cur.len - c->cur_idx) + c->next.len),
        "level", (long long)c->level);
}

/* parent(key): the key a visited state was first reached from (itself for an initial state), read
 * back from the parents file; None if the key was never visited. */
static PyObject *Core_parent(Core *c, PyObject *args) {
    unsigned long long key;
    if (!PyArg_ParseTuple(args, "K", &key)) return NULL;
    if (!c->parents_path) { PyErr_SetString(PyExc_ValueError, "no parents file"); return NULL; }
    if (fflush(c->parents) != 0) { PyErr_SetString(PyExc_OSError, "could not flush the parents file"); return NULL; }
    FILE *f = fopen(c->parents_path, "rb");
    if (!f) return PyErr_SetFromErrnoWithFilename(PyExc_OSError, c->parents_path);
    enum { CHUNK = 1 << 16 };
    uint64_t *buf = malloc(CHUNK * 2 * sizeof(uint64_t));
    if (!buf) { fclose(f); return PyErr_NoMemory(); }
    int found = 0;
    size_t got;
    Py_BEGIN_ALLOW_THREADS
    while (!found && (got = fread(buf, 2 * sizeof(uint64_t), CHUNK, f)) > 0) {
        for (size_t i = 0; i < got; i++) {
            if (buf[2 * i] == key) { found = 1; key = buf[2 * i + 1]; break; }
        }
    }
    Py_END_ALLOW_THREADS
    free(buf);
    fclose(f);
    if (!found) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(key);
}

static PyObject *Core_has(Core *c, PyObject *args) {
    unsigned long long key;
    if (!PyArg_ParseTuple(args, "K", &key)) return NULL;
    return PyBool_FromLong(set_has(&c->visited, key));
}


/* release(): free what only the search needs (the visited set, the memoised component steps,
 * the state numbering), keeping the vectors, the counts and the recorded graph: called once the
 * search is over, before the liveness check builds its own structures. */
static PyObject *Core_release(Core *c, PyObject *Py_UNUSED(ignored)) {
    table_free(c->visited.keys, c->visited.cap * sizeof(uint64_t)); c->visited.keys = NULL;
    table_free(c->visited.nums, c->visited.cap * sizeof(uint32_t)); c->visited.nums = NULL;
    c->visited.cap = 0;
    map_free(&c->own); map_free(&c->timers); map_free(&c->deliver);
    c->own.cap = c->timers.cap = c->deliver.cap = 0;
    for (int f = 0; f < c->npf; f++) { map_free(&c->pfault[f]); c->pfault[f].cap = 0; }
    free(c->pool.v); c->pool.v = NULL; c->pool.len = c->pool.cap = 0;
    free(c->sclass.v); c->sclass.v = NULL; c->sclass.len = c->sclass.cap = 0;
    c->released = 1;
    Py_RETURN_NONE;
}

/* graph() -> (status, ends, targets) as bytes: the recorded state graph, handed over once (the
 * core's copies are freed). The edges' classes come from edge_classes(). */
static PyObject *Core_graph(Core *c, PyObject *Py_UNUSED(ignored)) {
    if (!c->record) { PyErr_SetString(PyExc_ValueError, "this search records no graph"); return NULL; }
    if (!c->gend.v && c->gstatus.len) { PyErr_SetString(PyExc_RuntimeError, "the graph was handed over already"); return NULL; }
    PyObject *out = Py_BuildValue("(y#y#y#)",
        (const char *)c->gstatus.v, (Py_ssize_t)c->gstatus.len,
        (const char *)c->gend.v, (Py_ssize_t)(c->gend.len * sizeof(uint64_t)),
        (const char *)c->gtarget.v, (Py_ssize_t)(c->gtarget.len * sizeof(uint32_t)));
    if (out) {
        free(c->gend.v); c->gend.v = NULL;
        free(c->gtarget.v); c->gtarget.v = NULL;
    }
    return out;
}

/* edge_classes() -> bytes of uint16: each recorded edge's fairness class, handed over once. */
static PyObject *Core_edge_classes(Core *c, PyObject *Py_UNUSED(ignored)) {
    if (!c->record) { PyErr_SetString(PyExc_ValueError, "this search records no graph"); return NULL; }
    if (!c->gclass.v && c->gtarget.len) { PyErr_SetString(PyExc_RuntimeError, "the classes were handed over already"); return NULL; }
    PyObject *out = PyBytes_FromStringAndSize((const char *)c->gclass.v, (Py_ssize_t)(c->gclass.len * sizeof(uint16_t)));
    if (out) { free(c->gclass.v); c->gclass.v = NULL; c->gclass.cap = 0; }
    return out;
}

/* ------------------------------------------------------------------ the model worker
 * A BFS level's component steps can be computed by another process (kgc/explorer/native.py): at
 * EV_LEVEL, split() gives the states from some point on to a worker, forked there and then; in
 * the worker, scan() lists the steps those states will ask for and the states before them do not,
 * in the order they will be asked for; the search waits (NEED_WAIT) for a step missing in a state
 * of the worker's part instead of asking; merge() files the worker's answers, whose ids it
 * translates into this process's (the worker was forked at the level's start, so ids below the
 * bases are the same). */

typedef struct { Map m[NEED_WAIT + 1]; I64 out; int listing; } Seen;

/* Add a request to the scan's list, once: kind, a, b, c, d (the event gather() would return) and
 * the budget's avail bits (own steps). */
static int listed(Seen *seen, int kind, uint64_t mk, int64_t a, int64_t b, int64_t d, int64_t e, int avail) {
    int64_t dummy;
    if (map_get(&seen->m[kind], mk, &dummy)) return 0;
    if (map_put(&seen->m[kind], mk, 0) < 0) { PyErr_NoMemory(); return -1; }
    if (!seen->listing) return 0;
    I64 *o = &seen->out;
    RESERVE(*o, o->len + 6, 0);
    int64_t rec[6] = {kind, a, b, d, e, avail};
    memcpy(o->v + o->len, rec, sizeof rec);
    o->len += 6;
    return 0;
}

static inline int missing(const Map *m, uint64_t mk) {
    int64_t off;
    return !map_get(m, mk, &off);
}

/* scan(requests, first=0) -> bytes of int64 records (kind, a, b, c, d, avail), in the order the
 * states left in this level (from the next to expand) will ask for them. requests false: the
 * cheap prerequisites (budgets, candidates, locals) that must be answered before the component
 * steps can all be listed; true: the component steps (own, timers, process faults, faults). first:
 * only those the states from index first of the level on ask for and the states before do not. */
static PyObject *Core_scan(Core *c, PyObject *args) {
    int want;
    Py_ssize_t first = 0;
    if (!PyArg_ParseTuple(args, "p|n", &want, &first)) return NULL;
    if (c->dfs || c->have_cur) { PyErr_SetString(PyExc_RuntimeError, "scan() is for the start of a BFS level"); return NULL; }
    if (first < 0 || (size_t)first > c->cur.len) { PyErr_SetString(PyExc_ValueError, "first must be a state of the level"); return NULL; }
    Seen seen;
    memset(&seen, 0, sizeof seen);
    for (int k = 0; k <= NEED_WAIT; k++) if (map_init(&seen.m[k], 1 << 10) < 0) { for (int j = 0; j < k; j++) map_free(&seen.m[j]); return PyErr_NoMemory(); }
    int err = 0;
    for (size_t at = c->cur_idx; at < c->cur.len && !err; at++) {
        seen.listing = at >= (size_t)first;
        uint64_t key = c->cur.v[at], gid = key & G_MASK;
        if (!gknown(c, gid) || c->gout.v[gid] > 0 || c->gdead.v[gid]) continue;
        if (c->max_depth >= 0 && c->level >= c->max_depth) break;
        int64_t bid = (int64_t)((key >> G_BITS) & B_MASK);
        if ((size_t)bid >= c->bknown.len || !c->bknown.v[bid]) {
            if (!want) err = listed(&seen, NEED_BUDGET, (uint64_t)bid, bid, 0, 0, 0, 0) < 0;
            continue;
        }
        uint32_t cids[MAX_PROCS];
        memcpy(cids, c->vecs.v + (key >> V_SHIFT) * c->n, c->n * sizeof(uint32_t));
        const int32_t *row = c->spend.v + bid * c->nkinds;
        int avail = 0;
        for (int k = 0; k < c->n_local_spends; k++) if (row[c->local_spends[k]] >= 0) avail |= 1 << k;
        uint64_t protected = 0;
        int timers_known = 1;
        if (row[c->k_removal] < 0) {
            if (c->gcand.v[gid] < 0) {
                if (!want) err = listed(&seen, NEED_CANDIDATES, gid, (int64_t)gid, 0, 0, 0, 0) < 0;
                timers_known = 0;
            } else {
                const int32_t *cand = c->pool.v + c->gcand.v[gid];
                for (int k = 0; k < cand[0] && !err; k++) {
                    uint32_t lid = cids[cand[1 + 2 * k]];
                    if (lid >= c->lknown.len || !c->lknown.v[lid]) {
                        if (!want) err = listed(&seen, NEED_LOCAL, lid, lid, 0, 0, 0, 0) < 0;
                        timers_known = 0;
                    } else if (c->lidx.v[lid] == cand[1 + 2 * k] && c->lser.v[lid] == cand[2 + 2 * k]) {
                        protected |= 1ULL << k;
                    }
                }
            }
        }
        if (!want) continue;
        for (int i = 0; i < c->n && !err; i++) {
            uint64_t mk = gid | ((uint64_t)i << 26) | ((uint64_t)avail << 30) | ((uint64_t)cids[i] << 33);
            if (missing(&c->own, mk)) err = listed(&seen, NEED_OWN, mk, (int64_t)gid, i, cids[i], (int64_t)key, avail) < 0;
        }
        uint64_t tk = gid | (protected << 26);
        if (!err && timers_known && missing(&c->timers, tk))
            err = listed(&seen, NEED_TIMERS, tk, (int64_t)gid, (int64_t)protected, (int64_t)key, 0, 0) < 0;
        int any_fault = 0;
        for (int f = 0; f < c->npf; f++) any_fault |= row[c->k_pf[f]] >= 0;
        if (!any_fault && c->btotal.v[bid] == 0) continue;
        /* in the order gather() asks: each process of a class, then the next class (the scan's
         * memo key of a class's step carries the class in its top bits) */
        for (int f = 0; f < c->npf && !err; f++) {
            if (row[c->k_pf[f]] < 0) continue;
            for (int i = 0; i < c->n && !err; i++) {
                uint64_t mk = gid | ((uint64_t)i << 26) | ((uint64_t)cids[i] << 30);
                if (missing(&c->pfault[f], mk))
                    err = listed(&seen, NEED_PROCESS_FAULT, mk | (uint64_t)f << 62, (int64_t)gid,
                                 i | f << FAULT_CLASS_SHIFT, cids[i], (int64_t)key, 0) < 0;
            }
        }
        if (!err && c->gfaults.v[gid] == UNKNOWN)
            err = listed(&seen, NEED_FAULTS, gid, (int64_t)gid, (int64_t)key, 0, 0, 0) < 0;
    }
    for (int k = 0; k <= NEED_WAIT; k++) map_free(&seen.m[k]);
    PyObject *out = err ? NULL : PyBytes_FromStringAndSize((const char *)seen.out.v, (Py_ssize_t)(seen.out.len * sizeof(int64_t)));
    free(seen.out.v);
    return out;
}

static Map *memo_of(Core *c, int kind, long long b) {
    switch (kind) {
    case NEED_OWN: return &c->own;
    case NEED_TIMERS: return &c->timers;
    case NEED_PROCESS_FAULT: {
        long long f = b >> FAULT_CLASS_SHIFT;
        return f >= 0 && f < c->npf ? &c->pfault[f] : NULL;
    }
    default: return NULL;
    }
}

/* The memo key of a request (kind, a, b, c) as gather() forms it; the faults of a shared component have none. */
static uint64_t memo_key(int kind, long long a, long long b, long long cc, long long avail) {
    switch (kind) {
    case NEED_OWN: return (uint64_t)a | ((uint64_t)b << 26) | ((uint64_t)avail << 30) | ((uint64_t)cc << 33);
    case NEED_TIMERS: return (uint64_t)a | ((uint64_t)b << 26);
    default: return (uint64_t)a | ((uint64_t)(b & ((1 << FAULT_CLASS_SHIFT) - 1)) << 26) | ((uint64_t)cc << 30);
    }
}

/* split(keep, least) -> first: the states of the level from index first on (those after the
 * part keep, a fraction, of the states left) wait for their missing component steps, which
 * another process computes (NEED_WAIT); -1 (and no split) when fewer than least states would be
 * given. */
static PyObject *Core_split(Core *c, PyObject *args) {
    double keep;
    Py_ssize_t least;
    if (!PyArg_ParseTuple(args, "dn", &keep, &least)) return NULL;
    if (c->dfs || c->have_cur) { PyErr_SetString(PyExc_RuntimeError, "split() is for the start of a BFS level"); return NULL; }
    if (!(keep >= 0.0 && keep <= 1.0)) { PyErr_SetString(PyExc_ValueError, "keep is a fraction"); return NULL; }
    size_t left = c->cur.len - c->cur_idx, first = c->cur_idx + (size_t)((double)left * keep);
    if (first > c->cur.len) first = c->cur.len;
    if ((Py_ssize_t)(c->cur.len - first) < least || first == c->cur.len) return PyLong_FromLong(-1);
    c->split_at = first;
    return PyLong_FromSize_t(first);
}

/* unsplit(): every state asks for its missing steps again (the worker is done or gone). */
static PyObject *Core_unsplit(Core *c, PyObject *Py_UNUSED(ignored)) {
    c->split_at = NO_SPLIT;
    Py_RETURN_NONE;
}

static int pool_reserve(Core *c, size_t n) {
    RESERVE(c->pool, n, 0);
    return 0;
}

typedef struct { const int64_t *v; Py_ssize_t n; int64_t base; } IdMap;

static inline int translate(const IdMap *m, int64_t *x) {
    if (*x < m->base) return 0;
    if (*x - m->base >= m->n) { PyErr_SetString(PyExc_ValueError, "a worker's id has no translation"); return -1; }
    *x = m->v[*x - m->base];
    return 0;
}

static int idmap(PyObject *buf, long long base, IdMap *m, Py_buffer *view) {
    if (PyObject_GetBuffer(buf, view, PyBUF_SIMPLE) < 0) return -1;
    m->v = (const int64_t *)view->buf; m->n = view->len / (Py_ssize_t)sizeof(int64_t); m->base = base;
    return 0;
}

/* merge(records, shared, s0, locals, l0, answers, a0, step_delta): file a worker's answers.
 * records: int64 words, per answer: kind, a, b, c, avail, n, then a move list of n words in the
 * worker's ids; an id at or above its base (s0, l0, a0) is translated through shared, locals or
 * answers (int64 arrays), and a step id moved by step_delta. */
static PyObject *Core_merge(Core *c, PyObject *args) {
    PyObject *rec, *gb, *lb, *ab;
    long long g0, l0, a0, delta;
    if (!PyArg_ParseTuple(args, "OOLOLOLL", &rec, &gb, &g0, &lb, &l0, &ab, &a0, &delta)) return NULL;
    Py_buffer rv, gv, lv, av;
    IdMap gm, lm, am;
    if (PyObject_GetBuffer(rec, &rv, PyBUF_SIMPLE) < 0) return NULL;
    if (idmap(gb, g0, &gm, &gv) < 0) { PyBuffer_Release(&rv); return NULL; }
    if (idmap(lb, l0, &lm, &lv) < 0) { PyBuffer_Release(&rv); PyBuffer_Release(&gv); return NULL; }
    if (idmap(ab, a0, &am, &av) < 0) { PyBuffer_Release(&rv); PyBuffer_Release(&gv); PyBuffer_Release(&lv); return NULL; }
    const int64_t *w = (const int64_t *)rv.buf;
    Py_ssize_t nw = rv.len / (Py_ssize_t)sizeof(int64_t), p = 0;
    int err = 0;
#define BAD(msg) do { PyErr_SetString(PyExc_ValueError, msg); err = 1; goto done; } while (0)
    while (p < nw) {
        if (p + 6 > nw) BAD("a truncated worker record");
        int kind = (int)w[p];
        long long a = w[p + 1], b = w[p + 2], cc = w[p + 3], avail = w[p + 4];
        Py_ssize_t n = (Py_ssize_t)w[p + 5];
        p += 6;
        if (n < 1 || p + n > nw) BAD("a truncated worker move list");
        if (pool_reserve(c, c->pool.len + (size_t)n) < 0) { err = 1; goto done; }
        int64_t off = (int64_t)c->pool.len;
        int32_t *out = c->pool.v + off;
        const int64_t *q = w + p, *end = w + p + n;
        int64_t count = *q++;
        *out++ = (int32_t)count;
        for (int64_t m = 0; m < count; m++) {
            if (q + 8 > end) BAD("a malformed worker move");
            int64_t step = q[0] + delta, ngid = q[3], proc = q[4], nlocal = q[5], nd = q[6];
            if (translate(&gm, &ngid) < 0 || (proc >= 0 && translate(&lm, &nlocal) < 0)) { err = 1; goto done; }
            out[0] = (int32_t)step; out[1] = (int32_t)q[1]; out[2] = (int32_t)q[2]; out[3] = (int32_t)ngid;
            out[4] = (int32_t)proc; out[5] = (int32_t)nlocal; out[6] = (int32_t)nd;
            q += 7; out += 7;
            if (q + 2 * nd + 1 > end) BAD("a malformed worker move");
            for (int64_t k = 0; k < nd; k++) {
                int64_t rid = q[1];
                if (translate(&am, &rid) < 0) { err = 1; goto done; }
                out[0] = (int32_t)q[0]; out[1] = (int32_t)rid;
                q += 2; out += 2;
            }
            int64_t nlive = *q++;
            *out++ = (int32_t)nlive;
            if (q + 2 * nlive > end) BAD("a malformed worker move");
            for (int64_t k = 0; k < 2 * nlive; k++) *out++ = (int32_t)*q++;
        }
        if (q != end) BAD("a worker move list of the wrong length");
        c->pool.len += (size_t)n;
        if (kind == NEED_FAULTS) {
            if (ensure_shared(c, (uint64_t)a) < 0) { err = 1; goto done; }
            c->gfaults.v[a] = off;
        } else {
            Map *mm = memo_of(c, kind, b);
            if (!mm) BAD("a worker record of an unknown kind");
            if (map_put(mm, memo_key(kind, a, b, cc, avail), off) < 0) { PyErr_NoMemory(); err = 1; goto done; }
        }
        p += n;
    }
done:
#undef BAD
    PyBuffer_Release(&rv); PyBuffer_Release(&gv); PyBuffer_Release(&lv); PyBuffer_Release(&av);
    if (err) return NULL;
    Py_RETURN_NONE;
}

/* set_steps(first, masks, classes, class_map): the verdicts (int64 each) and fairness classes
 * (int64: kept | spent << 16 in the worker's class ids, -1: none) of steps first, first+1, ...;
 * class_map (int64) translates the worker's class ids. */
static PyObject *Core_set_steps(Core *c, PyObject *args) {
    long long first;
    PyObject *mb, *cb, *xb;
    if (!PyArg_ParseTuple(args, "LOOO", &first, &mb, &cb, &xb)) return NULL;
    Py_buffer mv, cv, xv;
    if (PyObject_GetBuffer(mb, &mv, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(cb, &cv, PyBUF_SIMPLE) < 0) { PyBuffer_Release(&mv); return NULL; }
    if (PyObject_GetBuffer(xb, &xv, PyBUF_SIMPLE) < 0) { PyBuffer_Release(&mv); PyBuffer_Release(&cv); return NULL; }
    Py_ssize_t n = mv.len / (Py_ssize_t)sizeof(int64_t), nx = xv.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *masks = mv.buf, *classes = cv.buf, *xmap = xv.buf;
    int err = cv.len != mv.len || first < 0;
    if (err) PyErr_SetString(PyExc_ValueError, "one verdict and one class per step");
    if (!err && reserve_steps(c, (size_t)(first + n)) < 0) err = 1;
    for (Py_ssize_t k = 0; k < n && !err; k++) {
        c->smask.v[first + k] = masks[k];
        int64_t cl = classes[k];
        if (cl < 0) continue;
        int64_t kept = cl & 0xFFFF, spent = cl >> 16;
        if (kept >= nx || spent >= nx) { PyErr_SetString(PyExc_ValueError, "a worker's class has no translation"); err = 1; break; }
        if (reserve_classes(c, (size_t)(first + k + 1)) < 0) { err = 1; break; }
        c->sclass.v[first + k] = (uint32_t)(xmap[kept] | xmap[spent] << 16);
    }
    PyBuffer_Release(&mv); PyBuffer_Release(&cv); PyBuffer_Release(&xv);
    if (err) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Core_announce_levels(Core *c, PyObject *args) {
    int on;
    if (!PyArg_ParseTuple(args, "p", &on)) return NULL;
    if (on && c->dfs) { PyErr_SetString(PyExc_ValueError, "levels are breadth-first"); return NULL; }
    c->announce = on;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ checkpoints
 * dump() -> bytes: what a resumed search needs besides the model's interning tables, taken
 * between two expansions: the visited set, the frontier, the vectors of local ids and the
 * counters. Component steps and verdicts are not kept (they are computed again on demand).
 * load(bytes) restores them into a fresh core. */
#define DUMP_MAGIC 0x6b67636b70743031ULL /* "kgckpt01" */

static int put_u64s(PyObject *out, const uint64_t *v, size_t n) {
    uint64_t len = n;
    PyObject *b = PyBytes_FromStringAndSize((const char *)&len, sizeof len);
    if (!b || PyList_Append(out, b) < 0) { Py_XDECREF(b); return -1; }
    Py_DECREF(b);
    b = PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)(n * sizeof(uint64_t)));
    if (!b || PyList_Append(out, b) < 0) { Py_XDECREF(b); return -1; }
    Py_DECREF(b);
    return 0;
}

static PyObject *Core_dump(Core *c, PyObject *Py_UNUSED(ignored)) {
    if (c->have_cur || PyList_GET_SIZE(c->queue)) {
        PyErr_SetString(PyExc_RuntimeError, "a checkpoint is taken between two expansions");
        return NULL;
    }
    if (c->split_at != NO_SPLIT) {
        PyErr_SetString(PyExc_RuntimeError, "a checkpoint is taken with no level split");
        return NULL;
    }
    if (c->parents && fflush(c->parents) != 0) { PyErr_SetString(PyExc_OSError, "could not flush the parents file"); return NULL; }
    PyObject *parts = PyList_New(0);
    if (!parts) return NULL;
    uint64_t head[10] = {DUMP_MAGIC, (uint64_t)c->n, (uint64_t)c->dfs, (uint64_t)c->level, c->transitions, c->boundary,
                         (uint64_t)c->depth_seen, (uint64_t)c->cut_by_depth, (uint64_t)c->visited.count, 0};
    uint64_t *keys = malloc((c->visited.count + 1) * sizeof(uint64_t));
    uint64_t *vecs = malloc((c->vecs.len + 1) * sizeof(uint64_t));
    uint64_t *depths = malloc((c->stack_depth.len + 1) * sizeof(uint64_t));
    int ok = keys && vecs && depths;
    if (ok) {
        size_t k = 0;
        for (size_t i = 0; i < c->visited.cap; i++) if (c->visited.keys[i] != EMPTY) keys[k++] = c->visited.keys[i];
        for (size_t i = 0; i < c->vecs.len; i++) vecs[i] = c->vecs.v[i];
        for (size_t i = 0; i < c->stack_depth.len; i++) depths[i] = (uint64_t)c->stack_depth.v[i];
        ok = put_u64s(parts, head, 10) == 0 && put_u64s(parts, keys, k) == 0 &&
             put_u64s(parts, c->cur.v + c->cur_idx, c->cur.len - c->cur_idx) == 0 &&
             put_u64s(parts, c->next.v, c->next.len) == 0 && put_u64s(parts, c->stack.v, c->stack.len) == 0 &&
             put_u64s(parts, depths, c->stack_depth.len) == 0 && put_u64s(parts, vecs, c->vecs.len) == 0;
        if (!ok && !PyErr_Occurred()) PyErr_NoMemory();
    } else {
        PyErr_NoMemory();
    }
    free(keys); free(vecs); free(depths);
    if (!ok) { Py_DECREF(parts); return NULL; }
    PyObject *empty = PyBytes_FromStringAndSize("", 0);
    if (!empty) { Py_DECREF(parts); return NULL; }
    PyObject *out = _PyBytes_Join(empty, parts);
    Py_DECREF(empty); Py_DECREF(parts);
    return out;
}

typedef struct { const uint64_t *p; size_t left; } Reader;
static const uint64_t *take(Reader *r, size_t *n) {
    if (r->left < 1) return NULL;
    *n = (size_t)r->p[0];
    if (r->left - 1 < *n) return NULL;
    const uint64_t *v = r->p + 1;
    r->p += 1 + *n; r->left -= 1 + *n;
    return v;
}

static int load_into(Core *c, const uint64_t *words, size_t nwords) {
    Reader r = {words, nwords};
    size_t n;
    const uint64_t *head = take(&r, &n);
    if (!head || n != 10 || head[0] != DUMP_MAGIC || head[1] != (uint64_t)c->n || head[2] != (uint64_t)c->dfs) {
        PyErr_SetString(PyExc_ValueError, "not a checkpoint of this search");
        return -1;
    }
    c->level = (int)head[3]; c->transitions = head[4]; c->boundary = head[5];
    c->depth_seen = (int)head[6]; c->cut_by_depth = (int)head[7];
    const uint64_t *keys = take(&r, &n);
    if (!keys) goto broken;
    for (size_t i = 0; i < n; i++) if (set_add(&c->visited, keys[i]) < 0) { PyErr_NoMemory(); return -1; }
    if (c->visited.count != head[8]) goto broken;
    const uint64_t *cur = take(&r, &n);
    if (!cur) goto broken;
    RESERVE(c->cur, n + 1, 0);
    memcpy(c->cur.v, cur, n * sizeof(uint64_t)); c->cur.len = n; c->cur_idx = 0;
    const uint64_t *next = take(&r, &n);
    if (!next) goto broken;
    RESERVE(c->next, n + 1, 0);
    memcpy(c->next.v, next, n * sizeof(uint64_t)); c->next.len = n;
    const uint64_t *stack = take(&r, &n);
    if (!stack) goto broken;
    RESERVE(c->stack, n + 1, 0);
    memcpy(c->stack.v, stack, n * sizeof(uint64_t)); c->stack.len = n;
    size_t nd;
    const uint64_t *depths = take(&r, &nd);
    if (!depths || nd != n) goto broken;
    RESERVE(c->stack_depth, nd + 1, 0);
    for (size_t i = 0; i < nd; i++) c->stack_depth.v[i] = (int32_t)depths[i];
    c->stack_depth.len = nd;
    const uint64_t *vecs = take(&r, &n);
    if (!vecs || n % (size_t)c->n) goto broken;
    for (size_t v = 0; v < n / (size_t)c->n; v++) {
        uint32_t ids[MAX_PROCS];
        for (int i = 0; i < c->n; i++) ids[i] = (uint32_t)vecs[v * c->n + i];
        if (vec_id(c, ids) != (int64_t)v) goto broken;
    }
    return 0;
broken:
    PyErr_SetString(PyExc_ValueError, "the checkpoint is damaged");
    return -1;
}

static PyObject *Core_load(Core *c, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
    if (c->visited.count || c->vecs.len || buf.len % 8) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "a checkpoint loads into a fresh core");
        return NULL;
    }
    int r = load_into(c, (const uint64_t *)buf.buf, (size_t)buf.len / 8);
    PyBuffer_Release(&buf);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ type */
static int Core_init(Core *c, PyObject *args, PyObject *kw) {
    static char *names[] = {"processes", "budget_kinds", "dfs", "max_depth", "max_states",
                            "process_faults", "removal", "local_spends", "want_vector_masks", "parents_path",
                            "parents_kept", "record_graph", NULL};
    int n, nkinds, dfs, max_depth, ks, want_v;
    long long max_states;
    const char *path;
    PyObject *spends, *faults;
    long long kept = -1;
    int record = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iiiiLOiOiz|Li", names, &n, &nkinds, &dfs, &max_depth,
                                     &max_states, &faults, &ks, &spends, &want_v, &path, &kept, &record))
        return -1;
    PyObject *fseq = PySequence_Fast(faults, "process_faults must be a sequence");
    if (!fseq) return -1;
    c->npf = (int)PySequence_Fast_GET_SIZE(fseq);
    if (c->npf > MAX_PROCESS_FAULTS) {
        Py_DECREF(fseq);
        PyErr_SetString(PyExc_ValueError, "at most 4 classes of process fault");
        return -1;
    }
    for (int f = 0; f < c->npf; f++) c->k_pf[f] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(fseq, f));
    Py_DECREF(fseq);
    if (PyErr_Occurred()) return -1;
    if (record && dfs) { PyErr_SetString(PyExc_ValueError, "the state graph is recorded breadth-first only"); return -1; }
    c->record = record;
    PyObject *seq = PySequence_Fast(spends, "local_spends must be a sequence");
    if (!seq) return -1;
    c->n_local_spends = (int)PySequence_Fast_GET_SIZE(seq);
    if (c->n_local_spends > 3) { Py_DECREF(seq); PyErr_SetString(PyExc_ValueError, "at most 3 local spends"); return -1; }
    for (int k = 0; k < c->n_local_spends; k++) c->local_spends[k] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, k));
    Py_DECREF(seq);
    if (PyErr_Occurred()) return -1;
    if (n < 1 || n > MAX_PROCS) { PyErr_SetString(PyExc_ValueError, "between 1 and 15 processes"); return -1; }
    c->n = n; c->nkinds = nkinds; c->dfs = dfs; c->max_depth = max_depth;
    c->split_at = NO_SPLIT;
    c->max_states = max_states; c->k_removal = ks; c->want_vmask = want_v;
    int failed = 0;
    for (int f = 0; f < c->npf; f++) failed |= map_init_forked(&c->pfault[f], 1 << 10) < 0;
    if (failed || set_init(&c->visited, 1 << 16) < 0 || map_init(&c->vmap, 1 << 12) < 0 || map_init_forked(&c->own, 1 << 12) < 0 ||
        map_init_forked(&c->timers, 1 << 10) < 0 ||
        map_init(&c->deliver, 1 << 10) < 0 || (record && set_number(&c->visited) < 0)) {
        PyErr_NoMemory();
        return -1;
    }
    c->queue = PyList_New(0);
    if (!c->queue) return -1;
    if (path) {
        /* parents_kept >= 0: resume, keeping that many records of an existing file */
        c->parents = fopen(path, kept >= 0 ? "r+b" : "w+b");
        if (!c->parents) { PyErr_SetFromErrnoWithFilename(PyExc_OSError, path); return -1; }
        if (kept >= 0 && (ftruncate(fileno(c->parents), (off_t)kept * 16) != 0 || fseek(c->parents, 0, SEEK_END) != 0)) {
            PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
            return -1;
        }
        c->parents_path = strdup(path);
        if (!c->parents_path) { PyErr_NoMemory(); return -1; }
    }
    return 0;
}

static void Core_dealloc(Core *c) {
    table_free(c->visited.keys, c->visited.cap * sizeof(uint64_t));
    table_free(c->visited.nums, c->visited.cap * sizeof(uint32_t));
    map_free(&c->vmap); map_free(&c->own); map_free(&c->timers);
    for (int f = 0; f < c->npf; f++) map_free(&c->pfault[f]);
    map_free(&c->deliver);
    free(c->gend.v); free(c->gtarget.v); free(c->gclass.v); free(c->sclass.v); free(c->gstatus.v);
    free(c->cur.v); free(c->next.v); free(c->stack.v); free(c->stack_depth.v);
    free(c->vecs.v); free(c->vmask.v); free(c->gout.v); free(c->gdead.v); free(c->gmask.v); free(c->gcand.v);
    free(c->gfaults.v); free(c->spend.v); free(c->bknown.v); free(c->btotal.v); free(c->lidx.v); free(c->lser.v);
    free(c->lknown.v); free(c->pool.v); free(c->smask.v); free(c->scount.v); free(c->succ_key.v); free(c->succ_step.v);
    if (c->parents) fclose(c->parents);
    free(c->parents_path);
    Py_XDECREF(c->queue);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* The Spark executors' batch expansion: expand(), pack(), unpack() (its own file). */
#include "batch.c"

static PyMethodDef Core_methods[] = {
    {"run", (PyCFunction)Core_run, METH_VARARGS, "run(max_expansions) -> (event, a, b, c, d)"},
    {"set_shared", (PyCFunction)Core_set_shared, METH_VARARGS, "set_shared(gid, outside, halted, mask)"},
    {"set_vector_mask", (PyCFunction)Core_set_vector_mask, METH_VARARGS, "set_vector_mask(vid, mask)"},
    {"set_budget", (PyCFunction)Core_set_budget, METH_VARARGS, "set_budget(bid, spend_row, total)"},
    {"set_local", (PyCFunction)Core_set_local, METH_VARARGS, "set_local(lid, member_index, member_serial)"},
    {"set_own", (PyCFunction)Core_set_own, METH_VARARGS, "set_own(gid, i, lid, avail, moves)"},
    {"set_timers", (PyCFunction)Core_set_timers, METH_VARARGS, "set_timers(gid, protected, moves)"},
    {"set_process_fault", (PyCFunction)Core_set_process_fault, METH_VARARGS, "set_process_fault(gid, b, lid, moves)"},
    {"set_faults", (PyCFunction)Core_set_faults, METH_VARARGS, "set_faults(gid, moves)"},
    {"set_candidates", (PyCFunction)Core_set_candidates, METH_VARARGS, "set_candidates(gid, [n, idx, serial, ...])"},
    {"set_deliver", (PyCFunction)Core_set_deliver, METH_VARARGS, "set_deliver(lid, response, new_lid)"},
    {"set_step", (PyCFunction)Core_set_step, METH_VARARGS, "set_step(step, mask[, classes])"},
    {"set_active", (PyCFunction)Core_set_active, METH_VARARGS, "set_active(step_mask, state_mask, queue_new)"},
    {"vector", (PyCFunction)Core_vector, METH_VARARGS, "vector(vid) -> local ids"},
    {"vectors", (PyCFunction)Core_vectors, METH_NOARGS, "vectors() -> every vector's local ids, as uint32 bytes"},
    {"vector_id", (PyCFunction)Core_vector_id, METH_VARARGS, "vector_id(local ids) -> vid"},
    {"add_initial", (PyCFunction)Core_add_initial, METH_VARARGS, "add_initial(key)"},
    {"take_queue", (PyCFunction)Core_take_queue, METH_NOARGS, "the queued events"},
    {"flush", (PyCFunction)Core_flush, METH_NOARGS, "flush the parents file"},
    {"step_counts", (PyCFunction)Core_step_counts, METH_NOARGS, "transitions per step id (uint64 bytes)"},
    {"stats", (PyCFunction)Core_stats, METH_NOARGS, "counters and table sizes"},
    {"parent", (PyCFunction)Core_parent, METH_VARARGS, "parent(key) -> the key it was first reached from"},
    {"release", (PyCFunction)Core_release, METH_NOARGS, "free what only the search needs"},
    {"graph", (PyCFunction)Core_graph, METH_NOARGS, "graph() -> (status, ends, targets)"},
    {"edge_classes", (PyCFunction)Core_edge_classes, METH_NOARGS, "edge_classes() -> uint16 bytes"},
    {"dump", (PyCFunction)Core_dump, METH_NOARGS, "dump() -> bytes: a checkpoint of the search"},
    {"load", (PyCFunction)Core_load, METH_VARARGS, "load(bytes): restore a checkpoint into a fresh core"},
    {"has", (PyCFunction)Core_has, METH_VARARGS, "whether a key was visited"},
    {"scan", (PyCFunction)Core_scan, METH_VARARGS, "scan(requests, first=0) -> int64 records of the rest of the level"},
    {"split", (PyCFunction)Core_split, METH_VARARGS, "split(keep, least) -> the first state given to another process, or -1"},
    {"unsplit", (PyCFunction)Core_unsplit, METH_NOARGS, "every state asks for its missing steps again"},
    {"merge", (PyCFunction)Core_merge, METH_VARARGS, "merge(records, shared, s0, locals, l0, answers, a0, step_delta)"},
    {"set_steps", (PyCFunction)Core_set_steps, METH_VARARGS, "set_steps(first, masks, classes, class_map)"},
    {"announce_levels", (PyCFunction)Core_announce_levels, METH_VARARGS, "announce_levels(on): EV_LEVEL before each level"},
    {"expand", (PyCFunction)Core_expand, METH_VARARGS, "expand(keys, start) -> a batch's successors, or a question (batch.c)"},
    {"pack", (PyCFunction)Core_pack, METH_VARARGS, "pack(ids) -> keys: rows of (shared, budget, local ids) as keys"},
    {"unpack", (PyCFunction)Core_unpack, METH_VARARGS, "unpack(keys) -> ids: each key's shared, budget and local ids"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kgc.explorer._core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The native search core of a product model (see kgc/explorer/components.py).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kgc.explorer._core", "kgc's native search core.", -1, NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void) {
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) { Py_DECREF(&CoreType); Py_DECREF(m); return NULL; }
    PyModule_AddIntConstant(m, "G_BITS", G_BITS);
    PyModule_AddIntConstant(m, "B_BITS", B_BITS);
    PyModule_AddIntConstant(m, "V_BITS", V_BITS);
    return m;
}
