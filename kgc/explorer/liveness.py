"""Liveness checking: fair accepting cycles in the explored state graph, reported as lassos.

The module stands apart from the safety engine (``kgc.explorer.search``): it explores the model through
its key API (``init_keys``, ``successor_keys``, ``key_within_boundary``, ``decode``, ``steps``)
and stores the state graph compactly — CSR arrays of ints (``offsets``, ``targets``) and one small
int per edge for the edge's *fairness class* — never a Python object per edge. ``check_graph``
takes those arrays, so any engine that can hand over CSR edges (a native one) can feed it.

Semantics. A behaviour is an infinite path of the graph. Finite maximal paths are not behaviours:
a state at the generation bound (TLC's state constraint: not expanded) or cut by ``--max-states``
says nothing about what follows, and a Dead group has left this coordinator (the model stops
following it); neither is ever part of a lasso. A state that *is* expanded and has no enabled step
(a deadlock) stutters forever, as in TLA+: an infinite behaviour that takes no fair step.

Fairness (``Fairness``): every step belongs to a *class* — a consumer's poll (its next JoinGroup,
Heartbeat, OffsetCommit, OffsetFetch), the delivery of an answer to a consumer, the handling of a
consumer's request (``atomic_requests = false``), and each coordinator timer (a member's session
timer, a pending id's timer, the join timer's completion, DelayedSync, the storeGroup callback) —
or to no class: faults, LeaveGroup and metadata changes, and every step that spends a perturbation
budget (a timer removing a live member included). ``weak`` fairness: a class continuously enabled
along a behaviour is taken infinitely often; ``strong``: a class enabled infinitely often is taken
infinitely often; ``none``: every cycle counts. Steps of no class are never forced, which is what
bounded perturbations mean: fairness holds from the last perturbation on. No cycle can even
contain a perturbation: the budget is part of the state and only decreases.

Algorithm. One iterative Tarjan pass (no recursion) splits the whole graph into strongly connected
components; only non-trivial ones (several states, or one with a self-loop) can hold a cycle. For
each property instance ``P ~> Q`` the states of those components where ``Q`` fails are split again
(Tarjan on the sub-graph they induce) and each sub-component is tested for fairness — weak: every
class enabled in all of its states is taken inside it; strong: Emerson–Lei/Streett refinement (drop
the states where an enabled-but-never-taken class is enabled, split again). A fair component
reachable from a ``P and not Q`` state through ``not Q`` states is a violation; a breadth-first
search over (state, obligation-open) pairs from the initial states gives the shortest such prefix,
and the shortest cycle from the prefix's last state back to it inside the component that meets
every fairness obligation closes the lasso (a breadth-first search over (state, obligations met)
pairs; beyond ``EXACT_CYCLE_LIMIT`` of them, a fair cycle built greedily from shortest paths).

Cost. The per-state passes — both Tarjan passes, the fairness tests, and reading each state's
component for the predicates (``Projector``) — run in C (``kgc.explorer._liveness``, built from
``kgc/explorer/native/scc.c``) over the CSR arrays, with one flat array per state and no Python object
per state or edge; each predicate is evaluated once per distinct component (group, group and
consumer, ...), not per state. The pure-Python passes remain (``kernel=False``, or when the kernel
is not built) and give the same components, parts, verdicts and lassos
(``tests/explorer/test_liveness_kernel.py``).

Feeding another engine's graph. ``check_graph(model, StateGraph(...))`` needs, per state, the
model's key (``keys``, numbered from 0, ``init`` the initial states' numbers) and a ``status``
byte (``NORMAL``, ``BOUNDARY``, ``DEAD``, ``DEADLOCK``, ``UNEXPLORED``), and per edge, in CSR
order, its target's number and its fairness class: ``edge_class_id(model, table, step, key,
next_key)`` with one ``ClassTable`` for the whole graph (``class_names`` is the table's
``names``). An engine that enumerates successor keys with step ids (the native core does) can
record exactly that while it searches; lassos are rebuilt by replaying ``successor_keys``.
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress, groupby
from types import ModuleType
from typing import Any, cast

from kgc.explorer import basis, labels, memory
from kgc.explorer.components import _C_BITS, _C_MASK, _C_SHIFT, _G_MASK, PackedModel
from kgc.explorer.trace import trace_json
from kgc.explorer.worker import Forked
from kgc.model.protocol import trace_vocabulary
from kgc.model.temporal import (
    CONSUMER,
    CONSUMERS,
    EVENTUALLY_ALWAYS,
    GROUP,
    WHOLE,
    FairnessClasses,
    StallClass,
    Temporal,
    fairness_of,
    step_of,
)

_kernel: ModuleType | None
try:
    from kgc.explorer import _liveness as _kernel
except ImportError:  # pragma: no cover - the build is part of setup; the pure-Python passes remain
    _kernel = None

KERNEL = _kernel is not None
"""The C liveness kernel (kgc/explorer/native/scc.c) is built: the per-state passes run in C."""

FAIRNESS_LEVELS = ("none", "weak", "strong")


@dataclass(frozen=True)
class Fairness:
    """Which behaviours count: ``none``, ``weak`` or ``strong`` fairness on every class, and
    (``stalled_removal``, under weak and strong fairness) the stalled-removal class: a behaviour
    that takes a step needing client c stalled infinitely often also removes c's member by its
    timer infinitely often (``STALLED_REMOVAL_DOC``; ``stall_edges``)."""

    level: str = "weak"
    stalled_removal: bool = True

    def __post_init__(self) -> None:
        if self.level not in FAIRNESS_LEVELS:
            raise ValueError(f"fairness must be one of {', '.join(FAIRNESS_LEVELS)}, got {self.level!r}")

    def describe(self, classes: FairnessClasses) -> list[str]:
        """One line per assumption on a model's ``classes``, as printed with every liveness verdict."""
        if self.level == "none":
            return ["no fairness: every cycle of the state graph is a behaviour"]
        tag = "WF" if self.level == "weak" else "SF"
        lines = [f"{tag}({name}): {doc}" for name, doc in classes.classes.items()]
        if self.stalls_removed and classes.stall is not None:
            lines.append(f"{classes.stall.name}(c): {classes.stall.doc}")
        lines.append(classes.unfair)
        return lines

    @property
    def stalls_removed(self) -> bool:
        """The stalled-removal class is assumed (not under ``none`` fairness: every cycle counts)."""
        return self.stalled_removal and self.level != "none"

    def stalls_in(self, classes: FairnessClasses) -> bool:
        """The model has a stall class and it is assumed."""
        return self.stalls_removed and classes.stall is not None

    def basis(self, classes: FairnessClasses) -> list[str]:
        """The phrases a liveness verdict under this fairness, on a model's ``classes``, rests on."""
        out = [f"under {self.level} fairness"]
        if self.stalls_in(classes) and classes.stall is not None:
            out.append(classes.stall.basis)
        return out

    def describe_for(self, config: Any) -> list[str]:
        """:meth:`describe` on the fairness classes ``config`` (a recipe) hands over, less the classes
        whose steps it never takes (its classes' ``absent``): the assumptions that apply."""
        classes = fairness_of(config)
        lines = self.describe(classes)
        if self.level == "none":
            return lines
        absent = classes.absent(config)
        tags = tuple(f"{tag}({name}):" for tag in ("WF", "SF") for name in absent)
        return [line for line in lines if not line.startswith(tags)]

    def summary(self, classes: FairnessClasses) -> str:
        if self.level == "none":
            return "none"
        stalled = f"; {classes.stall.name}" if self.stalls_in(classes) and classes.stall is not None else ""
        return (
            f"{self.level} ({'WF' if self.level == 'weak' else 'SF'} on {', '.join(classes.classes)}{stalled}; "
            "perturbations unfair)"
        )


step_class = step_of
"""A step's fairness class by its action's type (``kgc.model.temporal.step_of``): for an engine that
classes steps without the model at hand (the native engine's driver)."""


# ------------------------------------------------------------------------------------ the graph
NORMAL, BOUNDARY, DEAD, DEADLOCK, UNEXPLORED = 0, 1, 2, 3, 4


@dataclass
class StateGraph:
    """The explored state graph in CSR form. State ``v``'s edges are ``targets[offsets[v]:offsets[v+1]]``
    with fairness classes ``classes[...]`` (0: no class; ``class_names[k]`` names class ``k``)."""

    keys: Sequence[int]
    """Per state, the model's key (a list, or a sequence that makes each key when asked)."""
    offsets: Sequence[int]
    targets: Sequence[int]
    classes: Sequence[int]
    class_names: list[str]
    init: list[int]
    status: bytearray
    """Per state: NORMAL, BOUNDARY (beyond the generation bound), DEAD, DEADLOCK (expanded, no step)
    or UNEXPLORED (cut by a search bound)."""
    seconds: float = 0.0
    complete: bool = True
    stopped_by: str = ""
    projector: Projector | None = None
    """How the predicates' components are read of each state (None: from the model's keys)."""

    @property
    def states(self) -> int:
        return len(self.keys)

    @property
    def edges(self) -> int:
        return len(self.targets)

    def nbytes(self) -> int:
        """Bytes held by the edge and state arrays (not the keys)."""
        return _nbytes(self.offsets) + _nbytes(self.targets) + _nbytes(self.classes) + len(self.status)


def _nbytes(seq: Sequence[int]) -> int:
    try:
        return memoryview(seq).nbytes  # type: ignore[arg-type]
    except TypeError:
        return 8 * len(seq)


def _buffer(seq: Sequence[int], code: str) -> Sequence[int]:
    """``seq`` itself when it is a flat array of ``code`` items (what the kernel reads), else a copy."""
    if isinstance(seq, array) and seq.typecode == code:
        return seq
    if code == "B" and isinstance(seq, bytes | bytearray):
        return seq
    if isinstance(seq, memoryview) and seq.format == code:
        return seq
    return array(code, seq)


PARALLEL_STATES = 200_000
"""With two workers, a graph of at least this many states is checked in two processes."""

Found = tuple[str, bool, "tuple[list[tuple[int, int]], int, list[tuple[Any, Any]]] | None"]
"""A verdict as a forked check hands it back: holds or violated, witnessed, the lasso's keys,
loop start and path (without the property, which stays in this process)."""
Job = tuple[int, Temporal, int, str]
"""A property instance to check: the property's index, the property, its consumer, its name."""
Group = tuple[tuple[str, int], list[Job]]
"""Property instances that read one component (scope, consumer), checked together."""


class Projector:
    """What a liveness predicate reads of a state, as one int per state (its *component*): the
    group id (``GROUP``), the group id | consumer ``i``'s id << 32 (``CONSUMER``), the group id |
    the consumers' part << 32 (``CONSUMERS``), or the state's key (``WHOLE``). Predicates are
    evaluated once per distinct component (``args`` makes their arguments of one), never once per
    state. This class reads the packed model's keys (``kgc.explorer.components``' layout); the native
    engine's graph has its own (``kgc.explorer.native``), with the projection in C."""

    def __init__(self, model: PackedModel, keys: Sequence[int]) -> None:
        self.model = model
        self.keys = keys
        self._reader: labels.Reader | None = None

    def value(self, scope: str, i: int, v: int) -> int:
        """State ``v``'s component."""
        key = self.keys[v]
        if scope == GROUP:
            return key & _G_MASK
        if scope == CONSUMER:
            return (key & _G_MASK) | ((key >> (_C_SHIFT + _C_BITS * i)) & _C_MASK) << 32
        if scope == CONSUMERS:
            return (key & _G_MASK) | (key >> _C_SHIFT) << 32
        return key

    def consumers(self, value: int) -> tuple[Any, ...]:
        """The consumers of a ``CONSUMERS`` component."""
        rest, values = value >> 32, self.model.local_parts.values
        return tuple(values[(rest >> (_C_BITS * j)) & _C_MASK] for j in range(self.model.spec.processes))

    def state(self, value: int) -> Any:
        """The state of a ``WHOLE`` component (its key)."""
        return self.model.decode(value)

    def args(self, scope: str, i: int, value: int) -> tuple[object, ...]:
        """The predicate's arguments for a component."""
        return self.reader().args(scope, i, value)

    def reader(self) -> labels.Reader:
        """What makes a predicate's arguments of a component (``kgc.explorer.labels``): a
        ``CONSUMERS`` predicate gets a ``State`` whose budget is the initial one, which it must
        not read (``kgc.properties.temporal.CONSUMERS``); a ``WHOLE`` one the decoded state."""
        if self._reader is None:
            m, whole = self.model, self.state
            self._reader = labels.Reader(
                m.shared_parts.values,
                m.local_parts.values,
                self.consumers,
                m.budgets.values[0],
                lambda _s, _i, v: (whole(v),),
                _tuple_state_type(m.spec),
                m.spec.compose,
            )
        return self._reader

    def project(
        self, scope: str, i: int, comp: Sequence[int] | None, status: bytearray | None
    ) -> tuple[Sequence[int], Sequence[int]]:
        """(idx, uniq): the distinct components in order of first occurrence, and each state's
        index in ``uniq`` (-1 when not selected: with ``comp``, only the states of a cyclic
        component; with ``status``, only the states not UNEXPLORED)."""
        idx = array("i", [-1]) * len(self.keys)
        seen: dict[int, int] = {}
        value = self.value
        for v in range(len(self.keys)):
            if (comp is not None and comp[v] < 0) or (status is not None and status[v] == UNEXPLORED):
                continue
            x = value(scope, i, v)
            found = seen.get(x)
            if found is None:
                found = seen[x] = len(seen)
            idx[v] = found
        return idx, list(seen)


def _tuple_state_type(spec: Any) -> type | None:
    """The model's state class when a state is a tuple ``(shared, locals, budget)`` (a named tuple,
    as Kafka's ``State`` and the lease lock's ``Lease`` are): ``kgc.explorer.labels`` builds such
    states directly; None: it asks the model's ``compose``."""
    init = spec.init_states()
    if not init:
        return None
    cls = type(init[0])
    if not issubclass(cls, tuple) or len(init[0]) != 3:
        return None
    shared, local, budget = init[0]
    return cls if spec.compose(shared, local, budget) == init[0] else None


class ClassTable:
    """Interns class names to small ints (0 is "no class")."""

    def __init__(self) -> None:
        self.names: list[str] = [""]
        self.ids: dict[str, int] = {"": 0}

    def id(self, name: str) -> int:
        found = self.ids.get(name)
        if found is None:
            found = self.ids[name] = len(self.names)
            self.names.append(name)
        return found


_BUDGET_SHIFT, _BUDGET_MASK = 32, (1 << 16) - 1


def edge_class_id(model: PackedModel, table: ClassTable, step: int, key: int, nxt: int) -> int:
    spends = ((key >> _BUDGET_SHIFT) & _BUDGET_MASK) != ((nxt >> _BUDGET_SHIFT) & _BUDGET_MASK)
    return table.id(fairness_of(model.config).step_class(model.steps[step], spends))


def build_graph(
    model: PackedModel,
    max_states: int | None = None,
    time_limit: float | None = None,
    max_depth: int | None = None,
    step_memory: int = 1_000_000,
    max_memory: int | None = None,
) -> StateGraph:
    """Breadth-first exploration recording every edge. States are numbered in discovery order,
    which is also expansion order, so edges are appended source by source (CSR directly). Past
    ``step_memory`` memoised steps the model forgets them (``PackedModel.forget_steps``)."""
    start = time.monotonic()
    index: dict[int, int] = {}
    keys: list[int] = []
    depth = array("i")
    init: list[int] = []
    for key in model.init_keys():
        if key not in index:
            index[key] = len(keys)
            keys.append(key)
            depth.append(0)
            init.append(index[key])
    offsets = array("q", [0])
    targets = array("i")
    classes = array("H")
    status = bytearray()
    table = ClassTable()
    step_class = fairness_of(model.config).step_class  # the model's classes
    base = model.step_base
    kept = array("h")  # by step id - base: the class of the step when it keeps the budget (-1: not yet known)
    spent = array("h")  # ... and when it spends one (no class)
    within = model.key_within_boundary
    shared_of = model.shared_of
    halted = model.spec.halted  # a Dead group no request reaches any more (not one still cached)
    successor_keys = model.successor_keys
    add_class, add_target, add_key, add_depth = classes.append, targets.append, keys.append, depth.append
    complete, stopped_by = True, ""
    v = 0
    while v < len(keys):
        key = keys[v]
        if not within(key):
            status.append(BOUNDARY)
        elif halted(shared_of(key)):
            status.append(DEAD)
        elif not complete or (max_depth is not None and depth[v] >= max_depth):
            status.append(UNEXPLORED)
            if complete:
                complete, stopped_by = False, "max-depth"
        else:
            successors = successor_keys(key)
            status.append(DEADLOCK if not successors else NORMAL)
            budget = key >> _BUDGET_SHIFT & _BUDGET_MASK
            d = depth[v] + 1
            if len(kept) < model.next_step - base:
                grow = model.next_step - base - len(kept)
                kept.extend(array("h", [-1]) * grow)
                spent.extend(array("h", [-1]) * grow)
            for step, nxt in successors:
                o = step - base
                c = kept[o]
                if c < 0:
                    action = model.steps[step]
                    c = kept[o] = table.id(step_class(action, False))
                    spent[o] = table.id(step_class(action, True))
                add_class(c if nxt >> _BUDGET_SHIFT & _BUDGET_MASK == budget else spent[o])
                t = index.get(nxt)
                if t is None:
                    t = index[nxt] = len(keys)
                    add_key(nxt)
                    add_depth(d)
                add_target(t)
            if (v & 0x3FF) == 0:
                if len(model.steps) > step_memory:
                    # The classes of the steps seen so far are on the edges already: let the model
                    # drop its memoised steps (their ids are never reused), as the safety engine does.
                    model.forget_steps()
                    base, kept, spent = model.step_base, array("h"), array("h")
                if max_states is not None and len(keys) >= max_states:
                    complete, stopped_by = False, "max-states"
                elif time_limit is not None and time.monotonic() - start >= time_limit:
                    complete, stopped_by = False, "time-limit"
                elif memory.over(max_memory):
                    complete, stopped_by = False, "memory"
        offsets.append(len(targets))
        v += 1
    del index
    return StateGraph(
        keys, offsets, targets, classes, table.names, init, status, time.monotonic() - start, complete, stopped_by
    )


# ---------------------------------------------------------------------------------- components
def tarjan(
    offsets: Sequence[int],
    targets: Sequence[int],
    nodes: Iterable[int],
    member: Callable[[int], bool] | None = None,
) -> list[list[int]]:
    """The non-trivial strongly connected components (several states, or one state with a
    self-loop) of the sub-graph induced by ``nodes`` (edges to states outside it, as ``member``
    tells, are ignored). Iterative Tarjan: no recursion, whatever the depth."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, offsets[root])]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, pos = work[-1]
            end = offsets[v + 1]
            descended = False
            while pos < end:
                w = targets[pos]
                pos += 1
                if member is not None and not member(w):
                    continue
                if w not in index:
                    work[-1] = (v, pos)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, offsets[w]))
                    descended = True
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or _self_loop(offsets, targets, v):
                    out.append(comp)
    return out


def _self_loop(offsets: Sequence[int], targets: Sequence[int], v: int) -> bool:
    return any(targets[pos] == v for pos in range(offsets[v], offsets[v + 1]))


def global_components(graph: StateGraph) -> tuple[list[list[int]], array[int]]:
    """Tarjan over the whole graph with flat arrays (one pass over every edge): the non-trivial
    components of more than one state, and the states that form one alone with a self-loop."""
    n = graph.states
    offsets, targets = graph.offsets, graph.targets
    index = array("i", [-1]) * n
    low = array("i", [0]) * n
    on_stack = bytearray(n)
    stack = array("i")
    big: list[list[int]] = []
    loops = array("i")
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work_v = array("i", [root])
        work_p = array("q", [offsets[root]])
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        while work_v:
            v = work_v[-1]
            pos = work_p[-1]
            end = offsets[v + 1]
            lv = low[v]
            descended = False
            while pos < end:
                w = targets[pos]
                pos += 1
                iw = index[w]
                if iw < 0:
                    work_p[-1] = pos
                    low[v] = lv
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = 1
                    work_v.append(w)
                    work_p.append(offsets[w])
                    descended = True
                    break
                if on_stack[w] and iw < lv:
                    lv = iw
            if descended:
                continue
            low[v] = lv
            work_v.pop()
            work_p.pop()
            if work_v:
                u = work_v[-1]
                if lv < low[u]:
                    low[u] = lv
            if lv == index[v]:
                w = stack.pop()
                on_stack[w] = 0
                if w == v:
                    if _self_loop(offsets, targets, v):
                        loops.append(v)
                    continue
                comp = [w]
                while w != v:
                    w = stack.pop()
                    on_stack[w] = 0
                    comp.append(w)
                big.append(comp)
    return big, loops


# ------------------------------------------------------------------------------------ fairness
def enabled_mask(graph: StateGraph, v: int) -> int:
    """The fair classes enabled in state ``v`` (a bit per class id)."""
    mask = 0
    classes = graph.classes
    for pos in range(graph.offsets[v], graph.offsets[v + 1]):
        c = classes[pos]
        if c:
            mask |= 1 << c
    return mask


def taken_mask(graph: StateGraph, nodes: set[int] | frozenset[int]) -> int:
    """The fair classes of the edges inside ``nodes``."""
    mask = 0
    offsets, targets, classes = graph.offsets, graph.targets, graph.classes
    for v in nodes:
        for pos in range(offsets[v], offsets[v + 1]):
            if targets[pos] in nodes and classes[pos]:
                mask |= 1 << classes[pos]
    return mask


def fair_parts(
    graph: StateGraph,
    nodes: list[int],
    fairness: Fairness,
    enabled: dict[int, int],
    strongly_connected: bool = False,
) -> list[frozenset[int]]:
    """The fair strongly connected sub-graphs of ``nodes`` (one per fair component found): sets of
    states inside which a fair cycle exists. ``strongly_connected``: ``nodes`` is already one
    non-trivial component (no need to split it first)."""
    offsets, targets = graph.offsets, graph.targets
    out: list[frozenset[int]] = []
    work = [nodes]
    first = strongly_connected
    while work:
        part = work.pop()
        if first:
            comps, first = [part], False
        else:
            allowed = set(part)
            comps = tarjan(offsets, targets, part, allowed.__contains__)
        for comp in comps:
            cs = frozenset(comp)
            if fairness.level == "none":
                out.append(cs)
                continue
            taken = taken_mask(graph, cs)
            if fairness.level == "weak":
                always = -1
                for v in cs:
                    always &= enabled[v]
                if always & ~taken == 0:
                    out.append(cs)
                continue
            anywhere = 0
            for v in cs:
                anywhere |= enabled[v]
            bad = anywhere & ~taken
            if bad == 0:
                out.append(cs)
                continue
            keep = [v for v in comp if enabled[v] & bad == 0]
            if keep:
                work.append(keep)
    return out


# ------------------------------------------------------------------------------------ results
@dataclass
class Lasso:
    """A violation: ``prefix`` reaches the cycle's first state; ``cycle`` returns to it (empty:
    the last state stutters forever, a deadlock). Each element is (step id or -1, state key)."""

    prop: Temporal
    instance: str
    keys: list[tuple[int, int]]
    loop_start: int
    """Index in ``keys`` of the state the cycle starts and ends at."""
    path: list[tuple[Any, Any]] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    """What the cycle needs of the clients' timing (``stalls``): e.g. "c1 stalled: …". Empty when
    every step of the cycle is one a timely client allows."""
    timing: Any = None
    """Whether the cycle can happen under Kafka's timeouts (``kgc.timing.lassos.Timing``), when
    ``kgc check --timing`` asked."""

    @property
    def prefix_length(self) -> int:
        return self.loop_start

    @property
    def cycle_length(self) -> int:
        return len(self.keys) - 1 - self.loop_start

    @property
    def length(self) -> int:
        return len(self.keys) - 1


@dataclass
class Verdict:
    prop: Temporal
    instance: str
    verdict: str
    """``holds`` or ``violated``."""
    witnessed: bool
    lasso: Lasso | None = None


@dataclass
class LivenessResult:
    config: Any
    """The model's recipe (``kgc.model.protocol.ModelRecipe``): Kafka's ``Config``, or another model's."""
    fairness: Fairness
    verdicts: list[Verdict]
    states: int
    edges: int
    components: int
    """Non-trivial strongly connected components (a self-loop state counts as one)."""
    largest_component: int
    deadlocks: int
    explore_seconds: float
    check_seconds: float
    complete: bool = True
    stopped_by: str = ""
    graph_bytes: int = 0
    boundary: int = 0
    """States of the graph beyond the generation bound (not expanded: every behaviour through one
    is cut there)."""
    max_depth: int | None = None
    """The explicit depth bound the graph was explored to, if any (``--max-depth``)."""
    stall_steps: dict[str, int] = field(default_factory=dict)
    """Per client (``c1`` …), the steps of the graph's cycles that need it stalled (``stall_edges``):
    the stalled-removal class keeps them off every fair cycle."""

    @property
    def ok(self) -> bool:
        return all(v.verdict == "holds" for v in self.verdicts)

    @property
    def decided(self) -> bool:
        """The graph covers the bounded model (``kgc.explorer.basis.decided``)."""
        return basis.decided(self.complete, self.stopped_by)

    @property
    def depth_cut(self) -> int | None:
        return self.max_depth if self.stopped_by == "max-depth" else None

    def basis(self) -> list[str]:
        """What a liveness "holds" rests on: the bounds that cut the graph, the perturbation budget
        and the fairness assumption (``kgc.explorer.basis``)."""
        return [*basis.basis(self.config, self.boundary, self.depth_cut), *self.fairness.basis(self.classes)]

    @property
    def classes(self) -> FairnessClasses:
        """The model's fairness classes (its recipe's ``fairness``)."""
        return fairness_of(self.config)

    def word(self) -> str:
        """The liveness verdict: ``violation`` (a lasso is real even in an incomplete graph),
        ``ok``, or ``incomplete`` (no lasso found in a graph that does not cover the model)."""
        if not self.ok:
            return "violation"
        return "ok" if self.decided else "incomplete"

    def verdict_text(self, v: Verdict) -> str:
        """An instance's verdict with what it rests on: ``violated``, ``holds for generations ≤ 3
        with ≤ 1 perturbation under weak fairness``, or ``undecided`` (incomplete graph)."""
        if v.verdict != "holds":
            return v.verdict
        return basis.qualify("holds", self.basis()) if self.decided else basis.UNDECIDED

    def plain_verdict(self, v: Verdict) -> str:
        """``violated``, ``holds`` or ``undecided`` (without its basis)."""
        return v.verdict if v.verdict != "holds" or self.decided else basis.UNDECIDED

    @property
    def lassos(self) -> list[Lasso]:
        return [v.lasso for v in self.verdicts if v.lasso is not None]

    def verdict_of(self, prop: Temporal) -> str:
        vs = [v for v in self.verdicts if v.prop.name == prop.name]
        return "violated" if any(v.verdict == "violated" for v in vs) else "holds"

    def witnessed(self, prop: Temporal) -> bool:
        return any(v.witnessed for v in self.verdicts if v.prop.name == prop.name)


# ------------------------------------------------------------------------------------ labelling
class Labeler:
    """Evaluates a property instance's predicates, memoised per component (``Projector``)."""

    def __init__(self, projector: Projector, prop: Temporal, consumer: int) -> None:
        self.projector = projector
        self.prop = prop
        self.i = consumer
        self.memo: dict[int, tuple[bool, bool]] = {}
        self.trigger = prop.trigger
        self.goal_of = prop.goal
        self.keep = prop.scope != WHOLE  # one per state: not worth keeping

    def evaluate(self, value: int) -> tuple[bool, bool]:
        """(trigger, goal) of a component, computed (the passes over distinct components)."""
        args = self.projector.args(self.prop.scope, self.i, value)
        return (self.trigger(*args) if self.trigger is not None else True), bool(self.goal_of(*args))

    def of(self, value: int) -> tuple[bool, bool]:
        """(trigger, goal) of a component, memoised (state by state: deadlocks, lassos)."""
        found = self.memo.get(value)
        if found is None:
            found = self.evaluate(value)
            if self.keep:
                self.memo[value] = found
        return found

    def labels(self, v: int) -> tuple[bool, bool]:
        """(trigger, goal) in state ``v``."""
        return self.of(self.projector.value(self.prop.scope, self.i, v))

    def goal(self, v: int) -> bool:
        return self.labels(v)[1]

    def open(self, v: int) -> bool:
        """The obligation arises here: trigger true, goal false."""
        p, q = self.labels(v)
        return p and not q


# ------------------------------------------------------------------------------ a stall class
def stall_edges(
    model: PackedModel, graph: StateGraph, comp: Sequence[int], stall: StallClass
) -> tuple[list[int], dict[str, int]]:
    """The edges out of the states of the graph's cyclic components that need a stalled client
    (``stall.needs``; Kafka's stalled-removal class, ``kgc.model.fairness``): the steps of the
    stall class's timer classes that change the state, each checked on its decoded source and
    target. Returns their positions and, per client, how many need it.

    Such a step belongs to no fairness class (a timely client keeps the timer from firing, so it
    is never forced: it is not enabled for a timely client) and lies on no fair cycle (the
    stall class): the cycle search drops these edges (``without_edges``), which does both. Edges
    out of states on no cycle do not matter to either."""
    timer_ids = {k for k, name in enumerate(graph.class_names) if name.startswith(stall.timer_classes)}
    out: list[int] = []
    counts: dict[str, int] = {}
    if not timer_ids:
        return out, counts
    may_stall, stalled_clients = stall.may, stall.needs
    offsets, targets, classes, keys = graph.offsets, graph.targets, graph.classes, graph.keys
    spec = model.spec

    def group(v: int) -> Any:
        return model.decode(keys[v])[0] if not isinstance(model, PackedModel) else model.shared_of(keys[v])

    maybe: dict[int, bool] = {}  # by group id (the packed model's keys), whether ``stall.may``
    for v in range(graph.states):
        if comp[v] < 0:
            continue
        source: Any = None
        for pos in range(offsets[v], offsets[v + 1]):
            w = targets[pos]
            if w == v or classes[pos] not in timer_ids:
                continue
            if source is None:
                gid = keys[v] & _G_MASK if isinstance(model, PackedModel) else -1
                ok = maybe.get(gid) if gid >= 0 else None
                if ok is None:
                    ok = may_stall(group(v))
                    if gid >= 0:
                        maybe[gid] = ok
                if not ok:
                    break
                source = model.decode(keys[v])
            who = stalled_clients(spec, source, group(w))
            if who:
                out.append(pos)
                for i in who:
                    counts[f"c{i + 1}"] = counts.get(f"c{i + 1}", 0) + 1
    return out, counts


def without_edges(graph: StateGraph, drop: Sequence[int]) -> StateGraph:
    """``graph`` less the edges at positions ``drop`` (the same states, keys and status)."""
    keep = bytearray(b"\x01") * graph.edges
    for pos in drop:
        keep[pos] = 0
    old_t, old_c, old_o = graph.targets, graph.classes, graph.offsets
    targets = array("i", compress(old_t, keep))
    classes = array("H", compress(old_c, keep))
    # each state's edges lose the dropped ones before them: offsets less the dropped count so far
    dropped = sorted(drop)
    offsets = array("q", [0]) * (graph.states + 1)
    k = 0
    for v in range(graph.states + 1):
        end = old_o[v]
        while k < len(dropped) and dropped[k] < end:
            k += 1
        offsets[v] = end - k
    return StateGraph(
        graph.keys,
        offsets,
        targets,
        classes,
        graph.class_names,
        graph.init,
        graph.status,
        graph.seconds,
        graph.complete,
        graph.stopped_by,
        graph.projector,
    )


# ------------------------------------------------------------------------------------ the check
def components(graph: StateGraph, kernel: bool = True) -> tuple[Sequence[int], int, int, int]:
    """(comp, big, loops, largest): per state the id of its non-trivial strongly connected
    component (-1: none), the number of those of several states, of single states with a
    self-loop, and the largest's size. In C when the kernel is built (``kernel``), else
    ``global_components``."""
    if kernel and _kernel is not None:
        raw, big, loops, largest = _kernel.components(_buffer(graph.offsets, "q"), _buffer(graph.targets, "i"))
        return memoryview(raw).cast("i"), big, loops, largest
    comps, singles = global_components(graph)
    comp = array("i", [-1]) * graph.states
    for k, members in enumerate(comps):
        for v in members:
            comp[v] = k
    for k, v in enumerate(singles, len(comps)):
        comp[v] = k
    largest = max([len(c) for c in comps] + [1 if len(singles) else 0])
    return comp, len(comps), len(singles), largest


def _edges(graph: StateGraph) -> tuple[Sequence[int], Sequence[int], Sequence[int], int]:
    """The graph's edges as the kernel reads them: offsets, targets, classes, number of classes."""
    return _buffer(graph.offsets, "q"), _buffer(graph.targets, "i"), _buffer(graph.classes, "H"), len(graph.class_names)


def whole_fair(graph: StateGraph, comp: Sequence[int], ncomps: int, fairness: Fairness) -> bytes | None:
    """Per component of ``comp`` (``components``), whether the whole component is fair, as
    ``fair_parts`` would judge it (in C; None when the kernel is not built, or under strong
    fairness, whose refinement is not a yes or no per component)."""
    level = FAIRNESS_LEVELS.index(fairness.level)
    if _kernel is None or level > 1:
        return None
    return cast(bytes, _kernel.whole_fair(*_edges(graph), _buffer(comp, "i"), ncomps, level))


def fair_part_ids(
    graph: StateGraph,
    bad: Sequence[int],
    fairness: Fairness,
    kernel: bool = True,
    whole: tuple[Sequence[int], bytes] | None = None,
) -> tuple[Sequence[int], int]:
    """(part, count): the fair strongly connected parts of the sub-graph the ``bad`` states
    induce (``fair_parts``), as each state's part id (-1: in none). ``whole``: the graph's
    components and ``whole_fair`` of them, which decide a component whose every state is bad
    without a search (the same parts; the C kernel only)."""
    level = FAIRNESS_LEVELS.index(fairness.level)
    if kernel and _kernel is not None:
        extra = (_buffer(whole[0], "i"), whole[1]) if whole is not None else ()
        raw, count = _kernel.fair_parts(*_edges(graph), _buffer(bad, "B"), level, *extra)
        return memoryview(raw).cast("i"), count
    nodes = [v for v in range(graph.states) if bad[v]]
    enabled = {v: enabled_mask(graph, v) for v in nodes}
    part = array("i", [-1]) * graph.states
    parts = fair_parts(graph, nodes, fairness, enabled)
    for k, members in enumerate(parts):
        for v in members:
            part[v] = k
    return part, len(parts)


def _bad_states(comp: Sequence[int], idx: Sequence[int], goal: bytearray, kernel: bool) -> Sequence[int]:
    if kernel and _kernel is not None:
        return cast(bytes, _kernel.bad_states(_buffer(comp, "i"), _buffer(idx, "i"), goal))
    return bytearray(1 if c >= 0 and not goal[x] else 0 for c, x in zip(comp, idx, strict=True))


def _goals(projector: Projector, scope: str, i: int, uniq: Sequence[int], labs: list[Labeler]) -> list[bytearray]:
    """Each instance's goal in each component of ``uniq`` (instances of one scope and consumer:
    the arguments are made once per component; ``kgc.explorer.labels``, compiled)."""
    return labels.goals(scope, i, uniq, projector.reader(), [lab.goal_of for lab in labs])


def _witnessed(projector: Projector, scope: str, i: int, reps: Sequence[int], labs: list[Labeler]) -> set[int]:
    """The ids of the instances whose obligation opens in some component of ``reps`` (trigger true,
    goal false; the goal only where the trigger holds), in one pass that stops once all have
    (``kgc.explorer.labels``, compiled)."""
    instances = [(id(lab), lab.trigger, lab.goal_of) for lab in labs]
    return labels.witnessed(scope, i, reps, projector.reader(), instances)


def check_graph(
    model: PackedModel,
    graph: StateGraph,
    properties: Sequence[Temporal] | None = None,
    fairness: Fairness | None = None,
    kernel: bool = True,
    workers: int = 1,
) -> LivenessResult:
    """Check every instance of ``properties`` on an explored graph (``graph`` may come from any
    engine: it only has to hold the model's keys and CSR edges with fairness classes). The
    per-state passes run in C when the kernel is built; ``kernel=False`` runs them in Python
    (the same components, parts, verdicts and lassos). With ``workers`` 2, a forked copy of this
    process checks half of the instances (grouped by the component they read) on the same graph:
    the same verdicts and lassos, in about half the time on a large graph. The fairness classes and,
    when ``properties`` is None, the temporal properties are the model's (its recipe's ``fairness``,
    ``kgc.model.temporal``)."""
    fairness = fairness or Fairness()
    classes = fairness_of(model.config)
    if properties is None:
        properties = classes.properties()
    start = time.monotonic()
    comp, big, loops, largest = components(graph, kernel)
    full, cyclic = graph, (big + loops, largest)  # the graph's cyclic components, as reported
    stall_counts: dict[str, int] = {}
    if fairness.stalls_in(classes) and classes.stall is not None:
        # The stall class (Kafka's stalled-removal class: no fair cycle takes a step that needs a stalled client (its
        # removal would spend a perturbation). Cycles are searched in the graph without them; the
        # prefix of a lasso may still take one (finitely many stalls, like perturbations).
        drop, stall_counts = stall_edges(model, graph, comp, classes.stall)
        if drop:
            graph = without_edges(graph, drop)
            comp, big, loops, largest = components(graph, kernel)
    fair_of = whole_fair(graph, comp, big + loops, fairness) if kernel else None
    whole = (comp, fair_of) if fair_of is not None else None
    deadlocks = [v for v in range(graph.states) if graph.status[v] == DEADLOCK] if DEADLOCK in graph.status else []
    projector = graph.projector or Projector(model, graph.keys)
    n = model.spec.processes
    jobs = [(k, prop, i, name) for k, prop in enumerate(properties) for i, name in enumerate(prop.instances(n))]

    def scope_of(job: tuple[int, Temporal, int, str]) -> tuple[str, int]:
        return job[1].scope, job[2] if job[1].scope == CONSUMER else 0

    fair_cycles: list[tuple[Sequence[int], int]] = []

    def persistent() -> tuple[Sequence[int], int]:
        """The fair parts of the whole cyclic graph (each state's part id, -1 for none), computed
        once for every ``<>[]`` instance."""
        if not fair_cycles:
            every = bytearray(1 if c >= 0 else 0 for c in comp)
            fair_cycles.append(fair_part_ids(graph, every, fairness, kernel, whole))
        return fair_cycles[0]

    def check_group(scope: str, i: int, group: list[Job]) -> dict[tuple[int, int], Found]:
        """The instances reading one component: they share its projection, and each component's
        predicate arguments are made once for all of them (``_goals``, ``_witnessed``). An
        instance whose obligation never opens (no explored state has its trigger and not its
        goal) holds without a look at cycles: every lasso starts by opening it."""
        out: dict[tuple[int, int], Found] = {}
        labs = [Labeler(projector, prop, inst_i) for _, prop, inst_i, _ in group]
        seen = _witnessed(projector, scope, i, projector.project(scope, i, None, graph.status)[1], labs)
        opened = [(job, lab) for job, lab in zip(group, labs, strict=True) if id(lab) in seen]
        lassos: dict[int, Lasso] = {}
        if opened:
            idx, uniq = projector.project(scope, i, comp, None)
            goals = _goals(projector, scope, i, uniq, [lab for _, lab in opened])
            for ((_, _, _, instance), lab), goal in zip(opened, goals, strict=True):
                stuck = [v for v in deadlocks if not lab.goal(v)]
                if lab.prop.form == EVENTUALLY_ALWAYS:
                    # <>[]Q: a fair cycle through a state where Q fails (every fair cycle lies in a
                    # fair part of the whole cyclic graph, and each part is fair as a whole).
                    part, count = persistent()
                    entries = [v for v in range(graph.states) if part[v] >= 0 and not goal[idx[v]]]
                    lasso = (
                        _find_persistence_lasso(model, full, lab, part, entries, stuck, fairness, instance, graph)
                        if entries or stuck
                        else None
                    )
                else:
                    part, count = fair_part_ids(graph, _bad_states(comp, idx, goal, kernel), fairness, kernel, whole)
                    lasso = (
                        _find_lasso(model, full, lab, part, stuck, fairness, instance, graph)
                        if count or stuck
                        else None
                    )
                if lasso is not None:
                    lassos[id(lab)] = lasso
                del part
            del goals, idx, uniq
        for (k, _, inst_i, _), lab in zip(group, labs, strict=True):
            found = lassos.get(id(lab))
            shape = None if found is None else (found.keys, found.loop_start, found.path)
            out[(k, inst_i)] = ("violated" if found else "holds", id(lab) in seen, shape)
        return out

    def check_groups(
        groups: list[Group],
    ) -> dict[tuple[int, int], Found]:
        out: dict[tuple[int, int], Found] = {}
        for (scope, i), group in groups:  # one projection at a time is held
            out.update(check_group(scope, i, group))
        return out

    groups = [(key, list(group)) for key, group in groupby(sorted(jobs, key=scope_of), key=scope_of)]
    found: dict[tuple[int, int], Found] = {}
    if workers > 1 and len(groups) > 1 and graph.states >= PARALLEL_STATES:
        # The groups are independent: a forked copy checks about half of them (by cost).
        ours, theirs = _halves(groups, n)
        child = Forked(lambda: check_groups(theirs))
        try:
            found = check_groups(ours)
        except BaseException:
            child.stop()
            raise
        got = child.result()
        found.update(got if got is not None else check_groups(theirs))
    else:
        found = check_groups(groups)
    by_key = {(k, inst_i): (prop, instance) for k, prop, inst_i, instance in jobs}
    verdict_of: dict[tuple[int, int], Verdict] = {}
    for job, (verdict, witnessed, shape) in found.items():
        prop, instance = by_key[job]
        lasso = None if shape is None else Lasso(prop, instance, shape[0], shape[1], shape[2])
        if lasso is not None and classes.stall is not None:
            lasso.needs = classes.stall.notes(model.spec, lasso.path, lasso.loop_start)
        verdict_of[job] = Verdict(prop, instance, verdict, witnessed, lasso)
    found_verdicts = verdict_of
    verdicts = [found_verdicts[(k, inst_i)] for k, _, inst_i, _ in jobs]
    return LivenessResult(
        model.config,
        fairness,
        verdicts,
        full.states,
        full.edges,
        *cyclic,
        len(deadlocks),
        graph.seconds,
        time.monotonic() - start,
        graph.complete,
        graph.stopped_by,
        full.nbytes(),
        graph.status.count(BOUNDARY),
        stall_steps=stall_counts,
    )


def _halves(groups: list[Group], consumers: int) -> tuple[list[Group], list[Group]]:
    """The groups split in two of about the same cost (longest first, each to the lighter half;
    both halves non-empty when there are two groups or more). A group's cost is estimated as its
    instances times the consumers each of its components holds: a ``CONSUMERS`` or ``WHOLE``
    component makes its predicates' arguments of every consumer, and has about as many distinct
    components as the states in cycles. On the default graph: each consumer's group of four
    instances about 2 s, ``partitions_reowned`` (``CONSUMERS``) 2.8 s, the group's 0.4 s."""

    def cost(group: Group) -> int:
        (scope, _), jobs = group
        return len(jobs) * (1 if scope in (GROUP, CONSUMER) else consumers + 1)

    halves: tuple[list[Group], list[Group]] = ([], [])
    load = [0, 0]
    for group in sorted(groups, key=lambda g: -cost(g)):
        side = 0 if load[0] <= load[1] else 1
        halves[side].append(group)
        load[side] += cost(group)
    return halves


def _find_lasso(
    model: PackedModel,
    graph: StateGraph,
    lab: Labeler,
    part: Sequence[int],
    stuck: list[int],
    fairness: Fairness,
    instance: str,
    cycles: StateGraph | None = None,
) -> Lasso | None:
    """Breadth-first over (state, phase): phase 0 before the tracked obligation opens, phase 1
    from a ``trigger and not goal`` state on (any such state may be the one tracked), moving only
    through ``not goal`` states. The first phase-1 state of a fair part (``part``: each state's
    fair part, -1 for none; ``stuck``: deadlocks where the goal fails, each a part of its own)
    ends the shortest prefix; a fair cycle through the part closes the lasso."""
    stuck_set = set(stuck)
    offsets, targets = graph.offsets, graph.targets
    parent: dict[tuple[int, int], tuple[int, int, int]] = {}
    queue: deque[tuple[int, int]] = deque()
    for v in graph.init:
        for node in ((v, 1), (v, 0)) if lab.open(v) else ((v, 0),):
            if node not in parent:
                parent[node] = (-1, -1, -1)
                queue.append(node)
    found: tuple[int, int] | None = None
    while queue:
        v, phase = queue.popleft()
        if phase == 1 and (part[v] >= 0 or v in stuck_set):
            found = (v, phase)
            break
        for pos in range(offsets[v], offsets[v + 1]):
            w = targets[pos]
            if phase == 1:
                if lab.goal(w):
                    continue
                nexts: tuple[tuple[int, int], ...] = ((w, 1),)
            else:
                # The obligation may be tracked from any state that opens it, or from a later one.
                nexts = ((w, 1), (w, 0)) if lab.open(w) else ((w, 0),)
            for nxt in nexts:
                if nxt not in parent:
                    parent[nxt] = (v, phase, pos)
                    queue.append(nxt)
    if found is None:
        return None
    entry = found[0]
    edge_path: list[int] = []  # edge positions, prefix
    node = found
    while parent[node][0] >= 0:
        pv, pp, pos = parent[node]
        edge_path.append(pos)
        node = (pv, pp)
    edge_path.reverse()
    start_state = node[0]
    cyc = cycles if cycles is not None else graph  # the graph fair cycles are searched in
    members = _part_members(cyc, part, entry)
    cycle = _fair_cycle(cyc, members, entry, fairness, {})
    return _lasso(model, graph, cyc, start_state, edge_path, cycle, lab.prop, instance)


def _lasso(
    model: PackedModel,
    graph: StateGraph,
    cycles: StateGraph,
    start: int,
    edge_path: list[int],
    cycle: list[int],
    prop: Temporal,
    instance: str,
) -> Lasso:
    """The lasso of a prefix (``edge_path``, edge positions in ``graph`` from the initial state
    ``start``) and a cycle (edge positions in ``cycles`` from the prefix's last state back to it),
    its states replayed through ``model``."""
    states = [start]
    for pos in edge_path:
        states.append(graph.targets[pos])
    loop_start = len(states) - 1
    for pos in cycle:
        states.append(cycles.targets[pos])
    keys = _replay(model, graph, states[: loop_start + 1], edge_path)
    keys += _replay(model, cycles, states[loop_start:], cycle)[1:]
    lasso = Lasso(prop, instance, keys, loop_start)
    lasso.path = [(model.steps[s] if s >= 0 else None, model.decode(k)) for s, k in keys]
    return lasso


def _find_persistence_lasso(
    model: PackedModel,
    graph: StateGraph,
    lab: Labeler,
    part: Sequence[int],
    entries: list[int],
    stuck: list[int],
    fairness: Fairness,
    instance: str,
    cycles: StateGraph,
) -> Lasso | None:
    """A lasso breaking ``<>[]Q``: the shortest path (in ``graph``) from an initial state to a state
    where Q fails that lies in a fair part of ``cycles`` (``entries``) or is a deadlock where Q
    fails (``stuck``: it stutters there), then a fair cycle from it back to it inside its part —
    a fair behaviour that passes through a ``not Q`` state infinitely often."""
    targets_of = set(entries) | set(stuck)
    offsets, targets = graph.offsets, graph.targets
    parent: dict[int, tuple[int, int]] = {}
    queue: deque[int] = deque()
    for v in graph.init:
        if v not in parent:
            parent[v] = (-1, -1)
            queue.append(v)
    found = -1
    while queue:
        v = queue.popleft()
        if v in targets_of:
            found = v
            break
        for pos in range(offsets[v], offsets[v + 1]):
            w = targets[pos]
            if w not in parent:
                parent[w] = (v, pos)
                queue.append(w)
    if found < 0:
        return None
    edge_path: list[int] = []
    node = found
    while parent[node][0] >= 0:
        node, pos = parent[node]
        edge_path.append(pos)
    edge_path.reverse()
    cycle = _fair_cycle(cycles, _part_members(cycles, part, found), found, fairness, {})
    return _lasso(model, graph, cycles, node, edge_path, cycle, lab.prop, instance)


def _part_members(graph: StateGraph, part: Sequence[int], entry: int) -> frozenset[int]:
    """The states of ``entry``'s fair part (strongly connected: found from it), or ``{entry}``."""
    k = part[entry]
    if k < 0:
        return frozenset((entry,))
    offsets, targets = graph.offsets, graph.targets
    seen = {entry}
    todo = [entry]
    while todo:
        v = todo.pop()
        for pos in range(offsets[v], offsets[v + 1]):
            w = targets[pos]
            if w not in seen and part[w] == k:
                seen.add(w)
                todo.append(w)
    return frozenset(seen)


def _fair_cycle(
    graph: StateGraph, part: frozenset[int], entry: int, fairness: Fairness, enabled: dict[int, int]
) -> list[int]:
    """Edge positions of a cycle from ``entry`` back to it inside ``part`` that meets every
    fairness obligation: for each class enabled all along (weak) or anywhere (strong) in the
    part, the cycle takes an edge of it, or (weak) visits a state where it is disabled. The
    shortest such cycle through ``entry`` (``_shortest_fair_cycle``) when the part and its
    obligations are small enough to search exactly, else built greedily from shortest paths
    inside the part; empty for a deadlock (stuttering)."""
    offsets, targets, classes = graph.offsets, graph.targets, graph.classes
    if not any(targets[pos] in part for pos in range(offsets[entry], offsets[entry + 1])) and len(part) == 1:
        return []  # a deadlock: it stutters
    en = {v: enabled[v] if v in enabled else enabled_mask(graph, v) for v in part}
    need = 0
    if fairness.level != "none":
        for v in part:
            need |= en[v]
    weak = fairness.level == "weak"

    def disabled_at(v: int) -> int:
        return need & ~en[v] if weak else 0

    exact = _shortest_fair_cycle(graph, part, entry, need, disabled_at)
    if exact is not None:
        return exact
    cycle: list[int] = []
    current = entry
    satisfied = disabled_at(entry)
    while need & ~satisfied:
        missing = need & ~satisfied

        def meets(pos: int, missing: int = missing) -> bool:
            c = classes[pos]
            return bool((c and missing >> c & 1) or disabled_at(targets[pos]) & missing)

        # The shortest path inside the part to an edge of a missing class (weak: or to a state where
        # one is disabled); the part is fair, so one exists.
        path = _bfs_in_part(graph, part, current, meets)
        for pos in path:
            if classes[pos]:
                satisfied |= (1 << classes[pos]) & need
            satisfied |= disabled_at(targets[pos])
        cycle.extend(path)
        current = targets[path[-1]]
    # Back to the entry (at least one step).
    if not cycle or current != entry:
        cycle.extend(_bfs_in_part(graph, part, current, lambda pos: targets[pos] == entry))
    return cycle


EXACT_CYCLE_LIMIT = 1 << 18
"""Largest (states of the part) x 2^(obligations) product searched for the shortest fair cycle."""


def _shortest_fair_cycle(
    graph: StateGraph, part: frozenset[int], entry: int, need: int, disabled_at: Callable[[int], int]
) -> list[int] | None:
    """The shortest cycle from ``entry`` back to it inside ``part`` meeting every obligation of
    ``need`` (a bit per class: taken on an edge of the cycle, or disabled at one of its states),
    by breadth-first search over (state, obligations met) pairs; None when that product exceeds
    ``EXACT_CYCLE_LIMIT`` (the caller then builds a fair cycle greedily)."""
    bits = [c for c in range(need.bit_length()) if need >> c & 1]
    if len(part) << len(bits) > EXACT_CYCLE_LIMIT:
        return None
    offsets, targets, classes = graph.offsets, graph.targets, graph.classes
    start = (entry, disabled_at(entry) & need)
    parent: dict[tuple[int, int], tuple[tuple[int, int], int]] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        node = queue.popleft()
        v, met = node
        for pos in range(offsets[v], offsets[v + 1]):
            w = targets[pos]
            if w not in part:
                continue
            c = classes[pos]
            now = met | ((1 << c) & need if c else 0) | disabled_at(w)
            if w == entry and now == need:
                path = [pos]
                while node != start:
                    node, p = parent[node]
                    path.append(p)
                path.reverse()
                return path
            nxt = (w, now)
            if nxt not in seen:
                seen.add(nxt)
                parent[nxt] = (node, pos)
                queue.append(nxt)
    raise RuntimeError("no fair cycle inside a fair part: the graph is inconsistent")


def _bfs_in_part(graph: StateGraph, part: frozenset[int], source: int, goal_edge: Callable[[int], bool]) -> list[int]:
    """Edge positions of a shortest path inside ``part`` from ``source`` whose last edge satisfies
    ``goal_edge``."""
    offsets, targets = graph.offsets, graph.targets
    parent: dict[int, tuple[int, int]] = {source: (-1, -1)}
    queue = deque([source])
    while queue:
        v = queue.popleft()
        for pos in range(offsets[v], offsets[v + 1]):
            w = targets[pos]
            if w not in part:
                continue
            if goal_edge(pos):
                path = [pos]
                u = v
                while parent[u][0] >= 0:
                    pu, ppos = parent[u]
                    path.append(ppos)
                    u = pu
                path.reverse()
                return path
            if w not in parent:
                parent[w] = (v, pos)
                queue.append(w)
    raise RuntimeError("no path inside a strongly connected part: the graph is inconsistent")


def _replay(model: PackedModel, graph: StateGraph, states: list[int], edges: list[int]) -> list[tuple[int, int]]:
    """(step id, key) pairs of a path: each edge's step is recomputed from its source's successors
    (the first with the edge's target and fairness class), so the graph need not hold step ids."""
    table = ClassTable()
    table.names = list(graph.class_names)
    table.ids = {name: k for k, name in enumerate(graph.class_names)}
    out = [(-1, graph.keys[states[0]])]
    for v, w, pos in zip(states[:-1], states[1:], edges, strict=True):
        key, target = graph.keys[v], graph.keys[w]
        want = graph.classes[pos]
        for step, nxt in model.successor_keys(key):
            if nxt == target and edge_class_id(model, table, step, key, nxt) == want:
                out.append((step, nxt))
                break
        else:  # pragma: no cover - would mean a non-deterministic successor function
            raise RuntimeError("could not replay the lasso: successors are not deterministic")
    return out


def check(
    config: Any,
    properties: Sequence[Temporal] | None = None,
    fairness: Fairness | None = None,
    max_states: int | None = None,
    time_limit: float | None = None,
    max_depth: int | None = None,
    max_memory: int | None = None,
) -> LivenessResult:
    """Explore the model ``config`` (a recipe) builds and check its liveness properties (by default the
    model's own) under ``fairness``."""
    model = PackedModel(config.model())
    graph = build_graph(model, max_states, time_limit, max_depth, max_memory=max_memory)
    return check_graph(model, graph, properties, fairness)


def lasso_trace(result: LivenessResult, lasso: Lasso) -> dict[str, Any]:
    """The ``kgc-trace`` document of a lasso (``loop_start`` marks the cycle), with the fairness
    it was found under and the property's formula: what ``kgc check --out``, ``kgc mutants`` and
    the report draw."""
    p = lasso.prop
    doc = trace_json(
        lasso.instance,
        p.description,
        lasso.path,
        kind=p.kind,
        source=p.source,
        config=result.config.describe() if hasattr(result.config, "describe") else {},
        loop_start=lasso.loop_start,
        vocabulary=trace_vocabulary(result.config),
    )
    doc["fairness"] = result.fairness.level
    doc["formula"] = p.formula
    explain = result.classes.explainer()
    if explain is not None:
        doc["explanation"] = explain(p, lasso.instance, lasso.path, lasso.loop_start, result.fairness.level).json()
    return doc
