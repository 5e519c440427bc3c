/* kgc's liveness kernel (explorer._liveness): the per-state passes of kgc/explorer/liveness.py over
 * the CSR state graph, in C, with no Python object per state or edge.
 *
 * The graph is what explorer.liveness.StateGraph holds: offsets (int64, n + 1), targets (int32,
 * one per edge), classes (uint16, one per edge: the edge's fairness class, 0 for none). Every
 * function takes them as buffers and returns bytes (int32 or uint64 arrays), so the caller keeps
 * one flat array per state, never a list.
 *
 *   components(offsets, targets) -> (comp, big, loops, largest)
 *       Tarjan over the whole graph (iterative): comp[v] is the id of v's strongly connected
 *       component when it is non-trivial (several states, or one with a self-loop), else -1.
 *   whole_fair(offsets, targets, classes, nclasses, comp, ncomps, level) -> bytes
 *       Per component of comp (ids 0 .. ncomps-1), 1 when the whole component is fair at level
 *       0 (none) or 1 (weak), as fair_parts judges a part; computed once per graph.
 *   fair_parts(offsets, targets, classes, nclasses, bad, level, comp=None, whole=None)
 *           -> (part, count)
 *       The fair strongly connected parts of the sub-graph induced by the states with bad[v]
 *       set (level 0: every non-trivial component; 1, weak: every class enabled in all of its
 *       states is taken on an edge inside it; 2, strong: Emerson-Lei/Streett refinement, the
 *       states enabling a class never taken inside are dropped and the rest split again).
 *       part[v] is v's part, or -1. With comp and whole (levels 0 and 1): a component whose
 *       every state is bad is itself the one strongly connected part of the sub-graph inside
 *       it, judged by whole[] without a search; a state in no component is in no part; only
 *       the states of components partly bad are searched.
 *   project(keys, mode, vecs, processes, i, comp, status) -> (idx, uniq)
 *       What a liveness predicate reads of each state of the native engine's graph (its keys:
 *       shared id | budget id << 26 | vector id << 36), as one uint64 per state: mode 0 the shared
 *       id, 1 the shared id | process i's local id << 32 (vecs: the core's vectors of local ids),
 *       2 the shared id | vector id << 32, 3 the key itself. uniq: the distinct values in order of
 *       first occurrence; idx[v]: v's value's index in uniq (-1 for a state not selected: with
 *       comp, only states with comp[v] >= 0; with status, only states whose status is not
 *       UNEXPLORED (4)).
 *   bad_states(comp, idx, goal) -> bytes
 *       bad[v] = 1 when comp[v] >= 0 and goal[idx[v]] == 0.
 *
 * The pure-Python versions of the same passes are kgc/explorer/liveness.py's fallback; the tests
 * check both give the same components, parts, verdicts and lassos.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Py_ssize_t n, m;
    const int64_t *off;
    const int32_t *tgt;
    const uint16_t *cls;
} Graph;

static int get_buf(PyObject *obj, Py_buffer *b, Py_ssize_t itemsize, const char *what) {
    if (PyObject_GetBuffer(obj, b, PyBUF_SIMPLE) < 0) return -1;
    if (b->len % itemsize) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_ValueError, "%s: a buffer of %zd-byte items expected", what, itemsize);
        return -1;
    }
    return 0;
}

/* Checks the CSR arrays: offsets non-decreasing from 0 to m, targets in range. */
static int check_graph(Graph *g) {
    if (g->n < 0 || g->off[0] != 0 || g->off[g->n] != g->m) {
        PyErr_SetString(PyExc_ValueError, "offsets must start at 0 and end at the number of edges");
        return -1;
    }
    for (Py_ssize_t v = 0; v < g->n; v++)
        if (g->off[v] > g->off[v + 1]) { PyErr_SetString(PyExc_ValueError, "offsets must not decrease"); return -1; }
    for (Py_ssize_t e = 0; e < g->m; e++)
        if (g->tgt[e] < 0 || g->tgt[e] >= g->n) { PyErr_SetString(PyExc_ValueError, "an edge's target is not a state"); return -1; }
    return 0;
}

/* ------------------------------------------------------------------ Tarjan
 * Iterative Tarjan over the states v with mark[v] == token (mark NULL: every state), from the
 * roots given (roots NULL: 0 .. n-1). For each component found, scc(ctx, states, k, root index)
 * is called with its states; the membership of w in it, while the callback runs, is
 * in_scc(t, w, root_index). */
typedef struct {
    Graph *g;
    int32_t *index, *low, *stack, *wv;
    int64_t *wp;
    uint8_t *onstack;
    const int32_t *mark;
    int32_t token;
    int32_t counter;
    Py_ssize_t sp;
} Tarjan;

static inline int member(const Tarjan *t, int32_t w) { return !t->mark || t->mark[w] == t->token; }
static inline int in_scc(const Tarjan *t, int32_t w, int32_t root_index) {
    return member(t, w) && t->onstack[w] && t->index[w] >= root_index;
}

typedef int (*SccFn)(void *ctx, Tarjan *t, const int32_t *states, Py_ssize_t k, int32_t root_index);

static int tarjan_alloc(Tarjan *t, Graph *g) {
    size_t n = (size_t)g->n + 1;
    memset(t, 0, sizeof *t);
    t->g = g;
    t->index = malloc(n * sizeof(int32_t));
    t->low = malloc(n * sizeof(int32_t));
    t->stack = malloc(n * sizeof(int32_t));
    t->wv = malloc(n * sizeof(int32_t));
    t->wp = malloc(n * sizeof(int64_t));
    t->onstack = calloc(n, 1);
    if (!t->index || !t->low || !t->stack || !t->wv || !t->wp || !t->onstack) return -1;
    memset(t->index, 0xff, n * sizeof(int32_t));
    return 0;
}

static void tarjan_free(Tarjan *t) {
    free(t->index); free(t->low); free(t->stack); free(t->wv); free(t->wp); free(t->onstack);
}

static int tarjan_run(Tarjan *t, const int32_t *roots, Py_ssize_t nroots, SccFn fn, void *ctx) {
    Graph *g = t->g;
    Py_ssize_t total = roots ? nroots : g->n;
    for (Py_ssize_t r = 0; r < total; r++) {
        int32_t root = roots ? roots[r] : (int32_t)r;
        if (!member(t, root) || t->index[root] >= 0) continue;
        Py_ssize_t wsp = 0;
        t->wv[wsp] = root; t->wp[wsp] = g->off[root]; wsp++;
        t->index[root] = t->low[root] = t->counter++;
        t->stack[t->sp++] = root; t->onstack[root] = 1;
        while (wsp) {
            int32_t v = t->wv[wsp - 1];
            int64_t pos = t->wp[wsp - 1], end = g->off[v + 1];
            int32_t lv = t->low[v];
            int descended = 0;
            while (pos < end) {
                int32_t w = g->tgt[pos++];
                if (!member(t, w)) continue;
                int32_t iw = t->index[w];
                if (iw < 0) {
                    t->wp[wsp - 1] = pos;
                    t->low[v] = lv;
                    t->index[w] = t->low[w] = t->counter++;
                    t->stack[t->sp++] = w; t->onstack[w] = 1;
                    t->wv[wsp] = w; t->wp[wsp] = g->off[w]; wsp++;
                    descended = 1;
                    break;
                }
                if (t->onstack[w] && iw < lv) lv = iw;
            }
            if (descended) continue;
            t->low[v] = lv;
            wsp--;
            if (wsp) {
                int32_t u = t->wv[wsp - 1];
                if (lv < t->low[u]) t->low[u] = lv;
            }
            if (lv == t->index[v]) {
                Py_ssize_t start = t->sp;
                do { start--; } while (t->stack[start] != v);
                if (fn(ctx, t, t->stack + start, t->sp - start, t->index[v]) < 0) return -1;
                for (Py_ssize_t s = start; s < t->sp; s++) t->onstack[t->stack[s]] = 0;
                t->sp = start;
            }
        }
    }
    return 0;
}

static int self_loop(const Graph *g, int32_t v) {
    for (int64_t e = g->off[v]; e < g->off[v + 1]; e++)
        if (g->tgt[e] == v) return 1;
    return 0;
}

/* ------------------------------------------------------------------ components */
typedef struct { int32_t *comp; Py_ssize_t big, loops, largest; int32_t next; } CompCtx;

static int comp_found(void *vctx, Tarjan *t, const int32_t *states, Py_ssize_t k, int32_t root_index) {
    (void)root_index;
    CompCtx *c = vctx;
    if (k == 1 && !self_loop(t->g, states[0])) return 0;
    if (k == 1) c->loops++; else c->big++;
    if (k > c->largest) c->largest = k;
    int32_t id = c->next++;
    for (Py_ssize_t i = 0; i < k; i++) c->comp[states[i]] = id;
    return 0;
}

static int load_graph(Graph *g, Py_buffer *ob, Py_buffer *tb, PyObject *off, PyObject *tgt) {
    if (get_buf(off, ob, 8, "offsets") < 0) return -1;
    if (get_buf(tgt, tb, 4, "targets") < 0) { PyBuffer_Release(ob); return -1; }
    g->n = ob->len / 8 - 1;
    g->m = tb->len / 4;
    g->off = ob->buf; g->tgt = tb->buf; g->cls = NULL;
    if (g->n < 0) { PyErr_SetString(PyExc_ValueError, "offsets must hold n + 1 entries"); goto fail; }
    if (check_graph(g) < 0) goto fail;
    return 0;
fail:
    PyBuffer_Release(ob); PyBuffer_Release(tb);
    return -1;
}

static PyObject *components(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *off, *tgt;
    if (!PyArg_ParseTuple(args, "OO", &off, &tgt)) return NULL;
    Py_buffer ob, tb;
    Graph g;
    if (load_graph(&g, &ob, &tb, off, tgt) < 0) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(g.n * 4));
    Tarjan t;
    memset(&t, 0, sizeof t);
    CompCtx ctx = {0};
    int ok = out != NULL;
    if (ok) {
        ctx.comp = (int32_t *)PyBytes_AS_STRING(out);
        memset(ctx.comp, 0xff, (size_t)g.n * 4);
        if (tarjan_alloc(&t, &g) < 0) { PyErr_NoMemory(); ok = 0; }
        else {
            Py_BEGIN_ALLOW_THREADS
            tarjan_run(&t, NULL, 0, comp_found, &ctx);
            Py_END_ALLOW_THREADS
        }
        tarjan_free(&t);
    }
    PyBuffer_Release(&ob); PyBuffer_Release(&tb);
    if (!ok) { Py_XDECREF(out); return NULL; }
    return Py_BuildValue("(Nnnn)", out, ctx.big, ctx.loops, ctx.largest);
}

/* ------------------------------------------------------------------ fair parts */
typedef struct {
    int32_t *part, *mark;
    int32_t nparts, tokens;
    int level;
    Py_ssize_t words;
    uint64_t *en, *always, *taken;
    /* work list of states to split again (strong fairness): segments of `work` */
    int32_t *work; Py_ssize_t work_len, work_cap;
    int64_t *seg; Py_ssize_t seg_len, seg_cap; /* (start, length, token) triples */
} FairCtx;

static void enabled_of(const Graph *g, int32_t v, uint64_t *en, Py_ssize_t words) {
    memset(en, 0, (size_t)words * 8);
    for (int64_t e = g->off[v]; e < g->off[v + 1]; e++) {
        uint16_t c = g->cls[e];
        if (c) en[c >> 6] |= 1ULL << (c & 63);
    }
}

/* Room for k more states in the work list, and for one more segment. */
static int ensure_work(FairCtx *f, Py_ssize_t k) {
    if (f->work_len + k > f->work_cap) {
        Py_ssize_t cap = f->work_cap * 2 + k + 64;
        int32_t *nw = realloc(f->work, (size_t)cap * 4);
        if (!nw) return -1;
        f->work = nw; f->work_cap = cap;
    }
    if (f->seg_len + 3 > f->seg_cap) {
        Py_ssize_t cap = f->seg_cap * 2 + 48;
        int64_t *ns = realloc(f->seg, (size_t)cap * 8);
        if (!ns) return -1;
        f->seg = ns; f->seg_cap = cap;
    }
    return 0;
}

static int fair_found(void *vctx, Tarjan *t, const int32_t *states, Py_ssize_t k, int32_t root_index) {
    FairCtx *f = vctx;
    const Graph *g = t->g;
    if (k == 1 && !self_loop(g, states[0])) return 0;
    int fair = 1;
    Py_ssize_t W = f->words;
    if (f->level > 0) {
        memset(f->taken, 0, (size_t)W * 8);
        if (f->level == 1) memset(f->always, 0xff, (size_t)W * 8);
        else memset(f->always, 0, (size_t)W * 8); /* strong: "anywhere" */
        for (Py_ssize_t i = 0; i < k; i++) {
            int32_t v = states[i];
            enabled_of(g, v, f->en, W);
            for (Py_ssize_t w = 0; w < W; w++) {
                if (f->level == 1) f->always[w] &= f->en[w];
                else f->always[w] |= f->en[w];
            }
            for (int64_t e = g->off[v]; e < g->off[v + 1]; e++) {
                uint16_t c = g->cls[e];
                if (c && in_scc(t, g->tgt[e], root_index)) f->taken[c >> 6] |= 1ULL << (c & 63);
            }
        }
        for (Py_ssize_t w = 0; w < W; w++) {
            f->always[w] &= ~f->taken[w]; /* the classes owed and never taken */
            if (f->always[w]) fair = 0;
        }
        if (!fair && f->level == 2) {
            /* keep the states enabling none of the owed classes; split them again later */
            if (ensure_work(f, k) < 0) return -1;
            Py_ssize_t start = f->work_len, kept = 0;
            for (Py_ssize_t i = 0; i < k; i++) {
                int32_t v = states[i];
                enabled_of(g, v, f->en, W);
                int hit = 0;
                for (Py_ssize_t w = 0; w < W; w++) if (f->en[w] & f->always[w]) { hit = 1; break; }
                if (!hit) f->work[start + kept++] = v;
            }
            if (kept) {
                f->work_len = start + kept;
                f->seg[f->seg_len++] = start;
                f->seg[f->seg_len++] = kept;
                f->seg[f->seg_len++] = ++f->tokens;
            }
        }
    }
    if (fair) {
        int32_t id = f->nparts++;
        for (Py_ssize_t i = 0; i < k; i++) f->part[states[i]] = id;
    }
    return 0;
}

/* Checks the edges' classes: one per edge, each below nclasses. */
static int check_classes(const Graph *g, const Py_buffer *cb, Py_ssize_t nclasses) {
    if (cb->len / 2 != g->m) {
        PyErr_SetString(PyExc_ValueError, "classes must hold one entry per edge");
        return -1;
    }
    const uint16_t *cls = cb->buf;
    for (Py_ssize_t e = 0; e < g->m; e++)
        if (cls[e] >= nclasses) { PyErr_SetString(PyExc_ValueError, "an edge's class is not below nclasses"); return -1; }
    return 0;
}

/* Checks a component array: one int32 per state, each -1 or below ncomps. */
static int check_comp(const Graph *g, const Py_buffer *pb, Py_ssize_t ncomps) {
    if (pb->len != g->n * 4) { PyErr_SetString(PyExc_ValueError, "comp must hold one entry per state"); return -1; }
    const int32_t *comp = pb->buf;
    for (Py_ssize_t v = 0; v < g->n; v++)
        if (comp[v] < -1 || comp[v] >= ncomps) { PyErr_SetString(PyExc_ValueError, "a state's component is out of range"); return -1; }
    return 0;
}

static PyObject *whole_fair(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *off, *tgt, *cls, *cmp;
    Py_ssize_t nclasses, ncomps;
    int level;
    if (!PyArg_ParseTuple(args, "OOOnOni", &off, &tgt, &cls, &nclasses, &cmp, &ncomps, &level)) return NULL;
    if (level < 0 || level > 1) { PyErr_SetString(PyExc_ValueError, "level is 0 (none) or 1 (weak)"); return NULL; }
    if (nclasses < 1 || nclasses > 65536) { PyErr_SetString(PyExc_ValueError, "nclasses must be in 1..65536"); return NULL; }
    if (ncomps < 0) { PyErr_SetString(PyExc_ValueError, "ncomps must not be negative"); return NULL; }
    Py_buffer ob, tb, cb, pb;
    Graph g;
    if (load_graph(&g, &ob, &tb, off, tgt) < 0) return NULL;
    if (get_buf(cls, &cb, 2, "classes") < 0) { PyBuffer_Release(&ob); PyBuffer_Release(&tb); return NULL; }
    if (get_buf(cmp, &pb, 4, "comp") < 0) { PyBuffer_Release(&ob); PyBuffer_Release(&tb); PyBuffer_Release(&cb); return NULL; }
    PyObject *out = NULL;
    uint64_t *always = NULL, *taken = NULL, *en = NULL;
    Py_ssize_t W = (nclasses + 63) / 64;
    if (check_classes(&g, &cb, nclasses) == 0 && check_comp(&g, &pb, ncomps) == 0) {
        out = PyBytes_FromStringAndSize(NULL, ncomps);
        always = malloc(((size_t)ncomps + 1) * (size_t)W * 8);
        taken = calloc(((size_t)ncomps + 1) * (size_t)W, 8);
        en = malloc((size_t)W * 8);
        if (!out || !always || !taken || !en) {
            if (out) PyErr_NoMemory();
            Py_CLEAR(out);
        }
    }
    if (out) {
        g.cls = cb.buf;
        const int32_t *comp = pb.buf;
        uint8_t *fair = (uint8_t *)PyBytes_AS_STRING(out);
        memset(always, 0xff, (size_t)ncomps * (size_t)W * 8);
        for (Py_ssize_t v = 0; v < g.n; v++) {
            int32_t c = comp[v];
            if (c < 0) continue;
            enabled_of(&g, (int32_t)v, en, W);
            uint64_t *al = always + (size_t)c * (size_t)W, *tk = taken + (size_t)c * (size_t)W;
            for (Py_ssize_t w = 0; w < W; w++) al[w] &= en[w];
            for (int64_t e = g.off[v]; e < g.off[v + 1]; e++) {
                uint16_t k = g.cls[e];
                if (k && comp[g.tgt[e]] == c) tk[k >> 6] |= 1ULL << (k & 63);
            }
        }
        for (Py_ssize_t c = 0; c < ncomps; c++) {
            int ok = 1;
            if (level == 1)
                for (Py_ssize_t w = 0; w < W; w++) if (always[c * W + w] & ~taken[c * W + w]) { ok = 0; break; }
            fair[c] = (uint8_t)ok;
        }
    }
    free(always); free(taken); free(en);
    PyBuffer_Release(&ob); PyBuffer_Release(&tb); PyBuffer_Release(&cb); PyBuffer_Release(&pb);
    return out;
}

static PyObject *fair_parts(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *off, *tgt, *cls, *bad, *cmp = Py_None, *whole = Py_None;
    Py_ssize_t nclasses;
    int level;
    if (!PyArg_ParseTuple(args, "OOOnOi|OO", &off, &tgt, &cls, &nclasses, &bad, &level, &cmp, &whole)) return NULL;
    if ((cmp == Py_None) != (whole == Py_None)) { PyErr_SetString(PyExc_ValueError, "comp and whole go together"); return NULL; }
    if (cmp != Py_None && level > 1) { PyErr_SetString(PyExc_ValueError, "whole components are judged at levels 0 and 1"); return NULL; }
    if (level < 0 || level > 2) { PyErr_SetString(PyExc_ValueError, "level is 0 (none), 1 (weak) or 2 (strong)"); return NULL; }
    if (nclasses < 1 || nclasses > 65536) { PyErr_SetString(PyExc_ValueError, "nclasses must be in 1..65536"); return NULL; }
    Py_buffer ob, tb, cb, bb, pb = {0}, wb = {0};
    Graph g;
    if (load_graph(&g, &ob, &tb, off, tgt) < 0) return NULL;
    if (get_buf(cls, &cb, 2, "classes") < 0) { PyBuffer_Release(&ob); PyBuffer_Release(&tb); return NULL; }
    if (get_buf(bad, &bb, 1, "bad") < 0) { PyBuffer_Release(&ob); PyBuffer_Release(&tb); PyBuffer_Release(&cb); return NULL; }
    int have_comp = cmp != Py_None;
    if (have_comp && get_buf(cmp, &pb, 4, "comp") < 0) {
        PyBuffer_Release(&ob); PyBuffer_Release(&tb); PyBuffer_Release(&cb); PyBuffer_Release(&bb);
        return NULL;
    }
    if (have_comp && get_buf(whole, &wb, 1, "whole") < 0) {
        PyBuffer_Release(&ob); PyBuffer_Release(&tb); PyBuffer_Release(&cb); PyBuffer_Release(&bb); PyBuffer_Release(&pb);
        return NULL;
    }
    PyObject *out = NULL;
    FairCtx f;
    memset(&f, 0, sizeof f);
    Tarjan t;
    memset(&t, 0, sizeof t);
    int32_t *nbad = NULL, *size = NULL, *whole_part = NULL;
    int ok = 1;
    if (bb.len != g.n) {
        PyErr_SetString(PyExc_ValueError, "bad must hold one entry per state");
        ok = 0;
    }
    g.cls = cb.buf;
    if (ok && check_classes(&g, &cb, nclasses) < 0) ok = 0;
    if (ok && have_comp && check_comp(&g, &pb, wb.len) < 0) ok = 0;
    if (ok) {
        out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(g.n * 4));
        f.words = (nclasses + 63) / 64;
        f.level = level;
        f.mark = malloc(((size_t)g.n + 1) * 4);
        f.en = malloc((size_t)f.words * 8);
        f.always = malloc((size_t)f.words * 8);
        f.taken = malloc((size_t)f.words * 8);
        if (!out || !f.mark || !f.en || !f.always || !f.taken || tarjan_alloc(&t, &g) < 0) { if (out) PyErr_NoMemory(); ok = 0; }
    }
    if (ok) {
        f.part = (int32_t *)PyBytes_AS_STRING(out);
        memset(f.part, 0xff, (size_t)g.n * 4);
        const uint8_t *b = bb.buf;
        f.tokens = 1;
        for (Py_ssize_t v = 0; v < g.n; v++) f.mark[v] = b[v] ? 1 : 0;
        if (have_comp) {
            /* components wholly bad: decided by whole[]; the rest of the bad states are searched */
            const int32_t *comp = pb.buf;
            const uint8_t *wf = wb.buf;
            Py_ssize_t nc = wb.len;
            nbad = calloc((size_t)nc + 1, 4);
            size = calloc((size_t)nc + 1, 4);
            whole_part = malloc(((size_t)nc + 1) * 4);
            if (!nbad || !size || !whole_part) { PyErr_NoMemory(); ok = 0; }
            else {
                memset(whole_part, 0xff, (size_t)nc * 4);
                for (Py_ssize_t v = 0; v < g.n; v++) {
                    int32_t c = comp[v];
                    if (c < 0) { f.mark[v] = 0; continue; }
                    size[c]++;
                    if (b[v]) nbad[c]++;
                }
                for (Py_ssize_t v = 0; v < g.n; v++) {
                    int32_t c = comp[v];
                    if (c < 0 || !b[v] || nbad[c] != size[c]) continue;
                    f.mark[v] = 0;
                    if (!wf[c]) continue;
                    if (whole_part[c] < 0) whole_part[c] = f.nparts++;
                    f.part[v] = whole_part[c];
                }
            }
        }
        t.mark = f.mark; t.token = 1;
        int rc = ok ? 0 : -3;
        Py_BEGIN_ALLOW_THREADS
        if (rc == 0) rc = tarjan_run(&t, NULL, 0, fair_found, &f);
        while (rc == 0 && f.seg_len) {
            /* split a kept set again: its states get the set's token, the rest of its component
             * (already unmarked by a newer token) stays out */
            f.seg_len -= 3;
            Py_ssize_t start = (Py_ssize_t)f.seg[f.seg_len], k = (Py_ssize_t)f.seg[f.seg_len + 1];
            int32_t token = (int32_t)f.seg[f.seg_len + 2];
            int32_t *states = malloc((size_t)k * 4);
            if (!states) { rc = -2; break; }
            memcpy(states, f.work + start, (size_t)k * 4);
            f.work_len = start;
            for (Py_ssize_t i = 0; i < k; i++) { f.mark[states[i]] = token; t.index[states[i]] = -1; }
            t.token = token;
            rc = tarjan_run(&t, states, k, fair_found, &f);
            free(states);
        }
        Py_END_ALLOW_THREADS
        if (rc < 0 && rc != -3) { PyErr_NoMemory(); ok = 0; }
    }
    tarjan_free(&t);
    free(f.mark); free(f.en); free(f.always); free(f.taken); free(f.work); free(f.seg);
    free(nbad); free(size); free(whole_part);
    if (have_comp) { PyBuffer_Release(&pb); PyBuffer_Release(&wb); }
    PyBuffer_Release(&ob); PyBuffer_Release(&tb); PyBuffer_Release(&cb); PyBuffer_Release(&bb);
    if (!ok) { Py_XDECREF(out); return NULL; }
    return Py_BuildValue("(Ni)", out, f.nparts);
}

/* ------------------------------------------------------------------ projections */
#define EMPTY64 UINT64_MAX
static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

typedef struct { uint64_t *keys; int32_t *vals; size_t cap, count; } Table;

static int table_init(Table *h, size_t cap) {
    h->keys = malloc(cap * 8); h->vals = malloc(cap * 4);
    if (!h->keys || !h->vals) return -1;
    memset(h->keys, 0xff, cap * 8);
    h->cap = cap; h->count = 0;
    return 0;
}

static int table_grow(Table *h) {
    Table nh;
    if (table_init(&nh, h->cap * 2) < 0) { free(nh.keys); free(nh.vals); return -1; }
    for (size_t i = 0; i < h->cap; i++) {
        if (h->keys[i] == EMPTY64) continue;
        size_t j = mix64(h->keys[i]) & (nh.cap - 1);
        while (nh.keys[j] != EMPTY64) j = (j + 1) & (nh.cap - 1);
        nh.keys[j] = h->keys[i]; nh.vals[j] = h->vals[i];
    }
    nh.count = h->count;
    free(h->keys); free(h->vals);
    *h = nh;
    return 0;
}

static PyObject *project(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *keys, *vecs, *comp, *status;
    int mode, processes, i;
    if (!PyArg_ParseTuple(args, "OiOiiOO", &keys, &mode, &vecs, &processes, &i, &comp, &status)) return NULL;
    if (mode < 0 || mode > 3) { PyErr_SetString(PyExc_ValueError, "mode is 0 (shared), 1 (process), 2 (shared and vector) or 3 (key)"); return NULL; }
    if (mode == 1 && (vecs == Py_None || i < 0 || i >= processes)) {
        PyErr_SetString(PyExc_ValueError, "mode 1 needs the vectors and a process index");
        return NULL;
    }
    Py_buffer kb, vb = {0}, cb = {0}, sb = {0};
    if (get_buf(keys, &kb, 8, "keys") < 0) return NULL;
    Py_ssize_t n = kb.len / 8;
    int have_v = 0, have_c = 0, have_s = 0, ok = 1;
    if (mode == 1) { if (get_buf(vecs, &vb, 4, "vecs") < 0) ok = 0; else have_v = 1; }
    if (ok && comp != Py_None) { if (get_buf(comp, &cb, 4, "comp") < 0) ok = 0; else have_c = 1; }
    if (ok && status != Py_None) { if (get_buf(status, &sb, 1, "status") < 0) ok = 0; else have_s = 1; }
    if (ok && ((have_c && cb.len / 4 < n) || (have_s && sb.len < n))) {
        PyErr_SetString(PyExc_ValueError, "comp and status must hold one entry per state");
        ok = 0;
    }
    PyObject *idx_out = NULL, *uniq_out = NULL;
    uint64_t *uniq = NULL;
    Table h = {0};
    Py_ssize_t nvec = have_v ? vb.len / 4 / (processes > 0 ? processes : 1) : 0;
    if (ok) {
        idx_out = PyBytes_FromStringAndSize(NULL, n * 4);
        if (!idx_out || table_init(&h, 1 << 12) < 0) { if (idx_out) PyErr_NoMemory(); ok = 0; }
    }
    size_t ucap = 1 << 12;
    if (ok) { uniq = malloc(ucap * 8); if (!uniq) { PyErr_NoMemory(); ok = 0; } }
    if (ok) {
        const uint64_t *k = kb.buf;
        const uint32_t *vv = have_v ? vb.buf : NULL;
        const int32_t *cc = have_c ? cb.buf : NULL;
        const uint8_t *ss = have_s ? sb.buf : NULL;
        int32_t *idx = (int32_t *)PyBytes_AS_STRING(idx_out);
        for (Py_ssize_t v = 0; v < n; v++) {
            if ((cc && cc[v] < 0) || (ss && ss[v] == 4)) { idx[v] = -1; continue; }
            uint64_t key = k[v], val;
            uint64_t gid = key & ((1ULL << 26) - 1), vid = key >> 36;
            if (mode == 0) val = gid;
            else if (mode == 1) {
                if ((Py_ssize_t)vid >= nvec) { PyErr_SetString(PyExc_IndexError, "a key's vector is unknown"); ok = 0; break; }
                val = gid | (uint64_t)vv[vid * (uint64_t)processes + (uint64_t)i] << 32;
            } else if (mode == 2) val = gid | vid << 32;
            else val = key;
            size_t j = mix64(val) & (h.cap - 1);
            while (h.keys[j] != EMPTY64 && h.keys[j] != val) j = (j + 1) & (h.cap - 1);
            if (h.keys[j] == val) { idx[v] = h.vals[j]; continue; }
            if (h.count >= ucap) {
                uint64_t *nu = realloc(uniq, ucap * 2 * 8);
                if (!nu) { PyErr_NoMemory(); ok = 0; break; }
                uniq = nu; ucap *= 2;
            }
            int32_t id = (int32_t)h.count;
            uniq[h.count] = val;
            h.keys[j] = val; h.vals[j] = id; h.count++;
            idx[v] = id;
            if (h.count * 2 > h.cap && table_grow(&h) < 0) { PyErr_NoMemory(); ok = 0; break; }
        }
    }
    if (ok) {
        uniq_out = PyBytes_FromStringAndSize((const char *)uniq, (Py_ssize_t)(h.count * 8));
        if (!uniq_out) ok = 0;
    }
    free(uniq); free(h.keys); free(h.vals);
    PyBuffer_Release(&kb);
    if (have_v) PyBuffer_Release(&vb);
    if (have_c) PyBuffer_Release(&cb);
    if (have_s) PyBuffer_Release(&sb);
    if (!ok) { Py_XDECREF(idx_out); Py_XDECREF(uniq_out); return NULL; }
    return Py_BuildValue("(NN)", idx_out, uniq_out);
}

static PyObject *bad_states(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *comp, *idx, *goal;
    if (!PyArg_ParseTuple(args, "OOO", &comp, &idx, &goal)) return NULL;
    Py_buffer cb, ib, gb;
    if (get_buf(comp, &cb, 4, "comp") < 0) return NULL;
    if (get_buf(idx, &ib, 4, "idx") < 0) { PyBuffer_Release(&cb); return NULL; }
    if (get_buf(goal, &gb, 1, "goal") < 0) { PyBuffer_Release(&cb); PyBuffer_Release(&ib); return NULL; }
    Py_ssize_t n = cb.len / 4;
    PyObject *out = NULL;
    if (ib.len / 4 != n) PyErr_SetString(PyExc_ValueError, "comp and idx must have one entry per state");
    else out = PyBytes_FromStringAndSize(NULL, n);
    if (out) {
        const int32_t *c = cb.buf, *x = ib.buf;
        const uint8_t *gl = gb.buf;
        uint8_t *b = (uint8_t *)PyBytes_AS_STRING(out);
        for (Py_ssize_t v = 0; v < n; v++) {
            if (c[v] < 0) { b[v] = 0; continue; }
            if (x[v] < 0 || x[v] >= gb.len) {
                Py_DECREF(out); out = NULL;
                PyErr_SetString(PyExc_IndexError, "a state of a component has no label");
                break;
            }
            b[v] = gl[x[v]] ? 0 : 1;
        }
    }
    PyBuffer_Release(&cb); PyBuffer_Release(&ib); PyBuffer_Release(&gb);
    return out;
}

static PyMethodDef methods[] = {
    {"components", components, METH_VARARGS, "components(offsets, targets) -> (comp, big, loops, largest)"},
    {"whole_fair", whole_fair, METH_VARARGS, "whole_fair(offsets, targets, classes, nclasses, comp, ncomps, level) -> bytes"},
    {"fair_parts", fair_parts, METH_VARARGS,
     "fair_parts(offsets, targets, classes, nclasses, bad, level, comp=None, whole=None) -> (part, count)"},
    {"project", project, METH_VARARGS, "project(keys, mode, vecs, processes, i, comp, status) -> (idx, uniq)"},
    {"bad_states", bad_states, METH_VARARGS, "bad_states(comp, idx, goal) -> bytes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_liveness", "kgc's liveness kernel", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__liveness(void) { return PyModule_Create(&module); }
