/* The codes the native core (core.c) and its Python driver (kgc/explorer/native_codes.py) share:
 * the key layout, what run() answers, the questions it asks, what it queues. Named on both sides;
 * tests/explorer/test_native_codes.py reads this file and checks every name and value against the
 * Python enums, so a code changed on one side only fails there. */
#ifndef KGC_NATIVE_CODES_H
#define KGC_NATIVE_CODES_H

/* A key: shared id | budget id << G_BITS | vector id << V_SHIFT. */
#define G_BITS 26
#define B_BITS 10
#define V_BITS 28

/* What run() answers: an event (below 10) or a question the driver must answer (NEED_*). */
enum {
    EV_DONE = 0, EV_PAUSE = 1, EV_QUEUE = 2, EV_MAX_STATES = 3, EV_LEVEL = 4,
    NEED_SHARED = 10, NEED_VECTOR = 11, NEED_BUDGET = 12, NEED_LOCAL = 13, NEED_OWN = 14,
    NEED_TIMERS = 15, NEED_CANDIDATES = 16, NEED_PROCESS_FAULT = 17, NEED_FAULTS = 18,
    NEED_DELIVER = 19, NEED_STEP = 20, NEED_WAIT = 21,
};

/* NEED_PROCESS_FAULT asks for one class of process fault (the model's process_faults, in order)
 * of one process: its b is the process index | the class << FAULT_CLASS_SHIFT. */
#define FAULT_CLASS_SHIFT 4

/* What take_queue() hands back, by its first field. */
enum { Q_COMPONENT = 0, Q_STEP = 1, Q_STATE = 2 };

#endif
