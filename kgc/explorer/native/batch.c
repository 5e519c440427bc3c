/* Batch expansion: the native core as a function of a batch of states, for the Spark engine's
 * executors (kgc/explorer/spark_native.py). Included by core.c (it uses the core's gather() and
 * ready(), and its memoised component steps), and kept in its own file.
 *
 * Spark's tasks keep the visited set themselves (per partition, on disk: spark_visited.py), so a
 * batch neither probes nor fills the core's visited set, frontier or parents file: it only turns
 * states into their successors, in the model's order, with what the property bookkeeping needs
 * of each transition (its step's verdict mask, and its target's component verdict mask). As in
 * run(), a state whose successors need something the core has not been told stops the batch
 * with that question; the caller answers it (the same set_* answers as the search's) and calls
 * again from that state: what the states before it produced is handed back with the question,
 * so nothing is computed twice and the core keeps no state between calls.
 *
 * States and successors are keys in the core's layout (codes.h). pack()/unpack() convert them
 * from and to component ids (the packed model's interning ids: shared, budget, then one local id
 * per process), which is how the executors exchange them.
 */

/* y# gives None for a NULL pointer: an empty output is b"". */
#define OR_EMPTY(p) ((p) ? (const char *)(p) : "")

/* Room for n transitions in a batch's outputs (0, or -1 with MemoryError set). */
static int batch_grow(U32 *src, I32 *step, U64 *succ, I64 *smask, I64 *cmask, size_t n) {
    RESERVE(*src, n, 0);
    RESERVE(*step, n, 0);
    RESERVE(*succ, n, 0);
    RESERVE(*smask, n, 0);
    RESERVE(*cmask, n, 0);
    return 0;
}

/* expand(keys, start) -> (event, a, b, c, d, next, src, step, succ, smask, cmask, status)
 * keys: uint64 bytes; the batch's states from index start are expanded, in order, until one
 * needs an answer (event NEED_*, a..d as run() asks; next: that state, to call again from) or
 * every state is done (EV_DONE, next = the batch's size). For the states start..next-1:
 * status (uint8 per state: 0 expanded, 1 outside the boundary, not expanded), and per
 * transition, in order, src (uint32, the state's index in the batch), step (int32), succ (uint64,
 * the successor's key), smask (int64, the step's verdicts), cmask (int64, the successor's shared
 * and vector verdicts; its shared component's only when the core keeps no vector verdicts). */
static PyObject *Core_expand(Core *c, PyObject *args) {
    Py_buffer kb;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "y*n", &kb, &start)) return NULL;
    if (c->released) { PyBuffer_Release(&kb); PyErr_SetString(PyExc_RuntimeError, "the search was released"); return NULL; }
    const uint64_t *keys = (const uint64_t *)kb.buf;
    Py_ssize_t n = kb.len / (Py_ssize_t)sizeof(uint64_t);
    if (start < 0 || start > n) { PyBuffer_Release(&kb); PyErr_SetString(PyExc_ValueError, "start must be a state of the batch"); return NULL; }
    U32 src = {0}; I32 step = {0}; U64 succ = {0}; I64 smask = {0}, cmask = {0};
    uint8_t *status = malloc((size_t)(n - start) + 1);
    PyObject *out = NULL;
    int ev = EV_DONE, err = 0;
    Py_ssize_t i = start;
    if (!status) { PyBuffer_Release(&kb); return PyErr_NoMemory(); }
    for (; i < n; i++) {
        uint64_t key = keys[i], gid = key & G_MASK;
        if (!gknown(c, gid)) { ev = need(c, NEED_SHARED, (int64_t)gid, (int64_t)key, 0, 0); break; }
        if (c->gout.v[gid] > 0) { status[i - start] = 1; continue; }
        int r = gather(c, key);
        if (!r) r = ready(c, key);
        if (r < 0) { err = 1; goto done; }
        if (r) { ev = r; break; }
        status[i - start] = 0;
        size_t m = c->succ_key.len, at = succ.len;
        if (batch_grow(&src, &step, &succ, &smask, &cmask, at + m) < 0) { err = 1; goto done; }
        for (size_t s = 0; s < m; s++) {
            uint64_t nxt = c->succ_key.v[s];
            int32_t st = c->succ_step.v[s];
            int64_t cm = c->gmask.v[nxt & G_MASK];
            if (c->want_vmask) cm |= c->vmask.v[nxt >> V_SHIFT];
            src.v[at + s] = (uint32_t)i;
            step.v[at + s] = st;
            succ.v[at + s] = nxt;
            smask.v[at + s] = (size_t)st < c->smask.len ? c->smask.v[st] : 0;
            cmask.v[at + s] = cm;
        }
        src.len = step.len = succ.len = smask.len = cmask.len = at + m;
    }
    out = Py_BuildValue("(iLLLLny#y#y#y#y#y#)", ev, (long long)c->req[0], (long long)c->req[1], (long long)c->req[2],
                        (long long)c->req[3], i,
                        OR_EMPTY(src.v), (Py_ssize_t)(src.len * sizeof(uint32_t)),
                        OR_EMPTY(step.v), (Py_ssize_t)(step.len * sizeof(int32_t)),
                        OR_EMPTY(succ.v), (Py_ssize_t)(succ.len * sizeof(uint64_t)),
                        OR_EMPTY(smask.v), (Py_ssize_t)(smask.len * sizeof(int64_t)),
                        OR_EMPTY(cmask.v), (Py_ssize_t)(cmask.len * sizeof(int64_t)),
                        (const char *)status, (Py_ssize_t)(i - start));
done:
    free(src.v); free(step.v); free(succ.v); free(smask.v); free(cmask.v); free(status);
    PyBuffer_Release(&kb);
    if (err && !PyErr_Occurred()) PyErr_NoMemory();
    return err ? NULL : out;
}

/* pack(ids) -> keys: ids are int64 bytes, one row per state of (shared id, budget id, local id
 * per process); the keys (uint64 bytes) intern each row's vector of local ids. */
static PyObject *Core_pack(Core *c, PyObject *args) {
    Py_buffer ib;
    if (!PyArg_ParseTuple(args, "y*", &ib)) return NULL;
    int w = c->n + 2;
    const int64_t *ids = (const int64_t *)ib.buf;
    Py_ssize_t words = ib.len / (Py_ssize_t)sizeof(int64_t);
    if (words % w) { PyBuffer_Release(&ib); PyErr_SetString(PyExc_ValueError, "a row is a shared id, a budget id and one id per process"); return NULL; }
    Py_ssize_t n = words / w;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(uint64_t));
    if (!out) { PyBuffer_Release(&ib); return NULL; }
    uint64_t *keys = (uint64_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t r = 0; r < n; r++) {
        const int64_t *row = ids + r * w;
        uint32_t v[MAX_PROCS];
        if (row[0] < 0 || (uint64_t)row[0] > G_MASK || row[1] < 0 || (uint64_t)row[1] > B_MASK) {
            PyErr_SetString(PyExc_OverflowError, "more than 2^26 shared components or 2^10 budgets: the state space is too large");
            goto fail;
        }
        for (int k = 0; k < c->n; k++) {
            if (row[2 + k] < 0 || row[2 + k] >= (1LL << 24)) {
                PyErr_SetString(PyExc_OverflowError, "more than 2^24 distinct local components: the state space is too large");
                goto fail;
            }
            v[k] = (uint32_t)row[2 + k];
        }
        int64_t vid = vec_id(c, v);
        if (vid < 0) goto fail;
        keys[r] = KEY(row[0], row[1], vid);
    }
    PyBuffer_Release(&ib);
    return out;
fail:
    Py_DECREF(out);
    PyBuffer_Release(&ib);
    return NULL;
}

/* unpack(keys) -> ids: the inverse of pack (int64 bytes, one row of n + 2 ids per key). */
static PyObject *Core_unpack(Core *c, PyObject *args) {
    Py_buffer kb;
    if (!PyArg_ParseTuple(args, "y*", &kb)) return NULL;
    int w = c->n + 2;
    const uint64_t *keys = (const uint64_t *)kb.buf;
    Py_ssize_t n = kb.len / (Py_ssize_t)sizeof(uint64_t);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * w * (Py_ssize_t)sizeof(int64_t));
    if (!out) { PyBuffer_Release(&kb); return NULL; }
    int64_t *ids = (int64_t *)PyBytes_AS_STRING(out);
    size_t nvec = c->vecs.len / (size_t)c->n;
    for (Py_ssize_t r = 0; r < n; r++) {
        uint64_t key = keys[r], vid = key >> V_SHIFT;
        if (vid >= nvec) {
            Py_DECREF(out);
            PyBuffer_Release(&kb);
            PyErr_SetString(PyExc_IndexError, "no such vector");
            return NULL;
        }
        int64_t *row = ids + r * w;
        row[0] = (int64_t)(key & G_MASK);
        row[1] = (int64_t)((key >> G_BITS) & B_MASK);
        for (int k = 0; k < c->n; k++) row[2 + k] = c->vecs.v[vid * c->n + k];
    }
    PyBuffer_Release(&kb);
    return out;
}
