"""A lease-based lock service, written against ``kgc.model.protocol.ComponentModel``: the engines
(the packed form ``kgc.explorer.components.PackedModel``, BFS and DFS, Spark) run a model of
components that is not Kafka's (``tests/examples_models/test_lease_lock.py`` pins its counts).

The shared component is the lock service (who holds the lease, the next lease serial), each
client's local component what it believes it holds and its inbox, and the budget bounds the
perturbations: a lease expiring while its client still holds it (the classic lease hazard:
Gray and Cheriton, "Leases", SOSP 1989 — the holder may act after its lease ran out), a client
crash, a lost notice, a fail-over of the service. Every step changes the service and at most one
client, and an expiry sends the holder a notice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from kgc.model.temporal import CONSUMER, FairnessClasses, leads_to
from kgc.properties.base import Property, sometimes_state, state_invariant

NO_LEASE = (-1, -1)
EXPIRED = "expired"


class Service(NamedTuple):
    holder: tuple[int, int]
    """The lease granted: (client index, serial); ``NO_LEASE`` when the lock is free."""
    serial: int
    """The next lease's serial."""


class Client(NamedTuple):
    holds: tuple[int, int]
    """The lease the client believes it holds."""
    inbox: tuple[str, ...]


class Faults(NamedTuple):
    crash: int
    lost: int
    expiry: int
    failover: int
    total: int


class Lease(NamedTuple):
    service: Service
    clients: tuple[Client, ...]
    budget: Faults


class Step(NamedTuple):
    """An action: its kind and the client that takes it (-1: the service)."""

    kind: str
    client: int = -1

    def key(self) -> tuple[str, int]:
        return (self.kind, self.client)


# kgc.properties.base types a check's argument as Kafka's State; this model's states are Leases,
# so each check takes Any and names its real type once.
@state_invariant("exclusive", "No two clients believe they hold the lock at once.", "Leases (SOSP 1989)")
def exclusive(state: Any) -> bool:
    s: Lease = state
    return sum(c.holds != NO_LEASE for c in s.clients) <= 1


@sometimes_state("held", "Some client holds the lock.", "exclusive")
def held(state: Any) -> bool:
    s: Lease = state
    return any(c.holds != NO_LEASE for c in s.clients)


def orphaned(service: Service, client: Client, i: int) -> bool:
    """the service holds a lease client i no longer holds"""
    return service.holder != NO_LEASE and service.holder[0] == i and client.holds != service.holder


@leads_to(
    "lease_given_up",
    "A lease the service still holds for a client that no longer holds it (it crashed) is eventually given up: "
    "the lock does not stay with a client that has let it go.",
    "Leases (SOSP 1989): a lease bounds how long a failed holder can keep the lock",
    CONSUMER,
    orphaned,
    "a client crashed while the service still held its lease",
)
def lease_given_up(service: Service, client: Client, i: int) -> bool:
    """the service no longer holds a lease for client i that it does not hold"""
    return not orphaned(service, client, i)


TEMPORAL = (lease_given_up,)
"""The lease lock's temporal properties."""


def step_class(action: Any, spends: bool) -> str:
    """The fairness class of a lease-lock step ("" for none): a client's notice read, its request for a
    free lock and its release, per client; the service's lease timer (``lease_timer``) when it frees a
    lease its holder no longer holds. A step that spends a perturbation (an expiry under a live holder,
    a crash, a lost notice, a fail-over) belongs to no class."""
    step: Step = action
    if spends or step.kind in ("crash", "lose", "failover"):
        return ""
    if step.kind == "expire":
        return "lease_timer"
    return f"{step.kind}(c{step.client + 1})"


FAIRNESS = FairnessClasses(
    name="lease lock",
    classes={
        "read": "a client reads the notice at the head of its inbox",
        "acquire": "a client that holds nothing asks for the lock while it is free",
        "release": "a client that believes it holds the lock releases it",
        "lease_timer": "the service's lease timer frees a lease its holder no longer holds",
    },
    step_class=step_class,
    unfair="never forced (perturbations, bounded by the budgets): a lease expiring under its holder, "
    "a client crash, a lost notice, a fail-over",
    temporal=TEMPORAL,
)
"""The lease lock's fairness classes (``kgc.model.temporal.FairnessClasses``): what the liveness check
reads of it."""


def _lease(lease: tuple[int, int]) -> str | None:
    """A lease as a trace writes it: ``c1:0`` (client 1's lease of serial 0), None for no lease."""
    return None if lease == NO_LEASE else f"c{lease[0] + 1}:{lease[1]}"


def _actor(client: int) -> str:
    return "service" if client < 0 else f"c{client + 1}"


class LeaseTrace:
    """The lease lock in a ``kgc-trace`` (``kgc.model.protocol.TraceVocabulary``, handed over as
    ``LeaseLockConfig.trace``): a state is the service (the lease it holds, the next serial), each
    client (the lease it believes it holds, its inbox) and the budget left; a step is who acted
    (a client, or the service) and what it did."""

    def header_json(self, state: Any, config: dict[str, Any] | None) -> dict[str, Any]:
        s: Lease = state
        return {"clients": len(s.clients)}

    def state_json(self, state: Any, config: dict[str, Any] | None) -> dict[str, Any]:
        s: Lease = state
        return {
            "service": {"holder": _lease(s.service.holder), "serial": s.service.serial},
            "clients": [
                {"name": _actor(i), "holds": _lease(c.holds), "inbox": list(c.inbox)} for i, c in enumerate(s.clients)
            ],
            "budget": s.budget._asdict(),
        }

    def step_json(self, action: Any) -> dict[str, Any]:
        step: Step = action
        return {"actor": _actor(step.client), "action": step.kind}

    def changed(self, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
        out = [f"service.{k}" for k, v in after["service"].items() if before["service"].get(k) != v]
        for old, new in zip(before["clients"], after["clients"], strict=True):
            out += [f"{new['name']}.{k}" for k, v in new.items() if k != "name" and old.get(k) != v]
        return out + [f"budget.{k}" for k, v in after["budget"].items() if before["budget"].get(k) != v]

    def step_text(self, action: Any) -> str:
        step: Step = action
        return f"{_actor(step.client)}: {step.kind}"

    def where(self, state: Any) -> str:
        s: Lease = state
        return f"lease {_lease(s.service.holder) or 'free'}, next serial {s.service.serial}"

    def state_lines(self, state: Any, previous: Any | None, config: dict[str, Any] | None) -> list[str]:
        s: Lease = state
        before: Lease | None = previous

        def mark(changed: bool) -> str:
            return "*" if before is not None and changed else " "

        lines = [f"{mark(before is not None and before.service != s.service)} service: {self.where(s)}"]
        for i, c in enumerate(s.clients):
            inbox = f", inbox {', '.join(c.inbox)}" if c.inbox else ""
            changed = before is not None and before.clients[i] != c
            lines.append(f"{mark(changed)} {_actor(i)}: holds {_lease(c.holds) or 'nothing'}{inbox}")
        left = ", ".join(f"{k} {v}" for k, v in s.budget._asdict().items() if k != "total")
        lines.append(f"{mark(before is not None and before.budget != s.budget)} budget: {left}")
        return lines

    def checker(self, doc: dict[str, Any], schema: Any, model: bool) -> LeaseTraceChecker:
        return LeaseTraceChecker(doc, schema)


class LeaseTraceChecker:
    """The checks of one lease-lock trace's model part (``kgc.model.protocol.TraceChecker``): the client
    count, every lease names one of them, actors and actions are the model's."""

    KINDS = ("read", "acquire", "release", "expire", "crash", "lose", "failover")

    def __init__(self, doc: dict[str, Any], schema: Any) -> None:
        self.s = s = schema
        self.clients: int = s.required(doc, "clients", "", lambda v, at: s.integer(v, at, 1, 16))
        self.names = [_actor(i) for i in range(self.clients)]

    def lease(self, v: Any, at: str) -> object:
        if v is None:
            return None
        text = self.s.string(v, at)
        name, _, serial = text.partition(":")
        if name not in self.names or not serial.isdigit():
            self.s.fail(at, f"{text!r} is not a lease of the trace's {self.clients} clients (cN:serial)")
        return text

    def state(self, value: Any, at: str) -> None:
        s = self.s

        def service(v: Any, a: str) -> object:
            obj = s.obj(v, a)
            s.required(obj, "holder", a, self.lease)
            s.required(obj, "serial", a, lambda x, b: s.integer(x, b, 0))
            return obj

        def clients(v: Any, a: str) -> object:
            items = s.array(v, a)
            if len(items) != self.clients:
                s.fail(a, f"{len(items)} clients, but the trace has {self.clients}")
            for i, item in enumerate(items):
                c = s.obj(item, f"{a}[{i}]")
                s.required(c, "name", f"{a}[{i}]", lambda x, b, i=i: s.string(x, b, (self.names[i],)))
                s.required(c, "holds", f"{a}[{i}]", self.lease)
                s.required(c, "inbox", f"{a}[{i}]", lambda x, b: s.array(x, b, lambda y, d: s.string(y, d, (EXPIRED,))))
            return items

        def budget(v: Any, a: str) -> object:
            obj = s.obj(v, a)
            for key in Faults._fields:
                s.required(obj, key, a, lambda x, b: s.integer(x, b, 0, 1000))
            return obj

        s.required(value, "service", at, service)
        s.required(value, "clients", at, clients)
        s.required(value, "budget", at, budget)

    def step(self, value: dict[str, Any], at: str) -> None:
        s = self.s
        s.required(value, "actor", at, lambda x, a: s.string(x, a, [*self.names, "service"]))
        s.required(value, "action", at, lambda x, a: s.string(x, a, self.KINDS))
        self.state(value, at)

    def rest(self, doc: dict[str, Any]) -> None:
        """A lease-lock trace has nothing else of the model's."""


LEASE_TRACE = LeaseTrace()
"""The lease lock's trace vocabulary (``LeaseLockConfig.trace``)."""


@dataclass(frozen=True)
class LeaseLockConfig:
    """A lease lock's size and perturbation budgets: the recipe an engine builds it from where it runs
    (``kgc.model.protocol.ModelRecipe``: a Spark executor builds its own copy)."""

    clients: int = 3
    expiry: int = 0
    crash: int = 0
    lost: int = 0
    failover: int = 0
    lease_timer: bool = True
    """The service's lease timer runs; False is a mutant without it (no lease ever expires: the lease of
    a crashed client is held for ever, and ``lease_given_up`` fails)."""

    def model(self) -> LeaseLock:
        model = LeaseLock(self.clients, self.expiry, self.crash, self.lost, self.failover, self.lease_timer)
        model.config = self
        return model

    @property
    def trace(self) -> LeaseTrace:
        """How the lease lock's states and steps are written in a ``kgc-trace`` (``LEASE_TRACE``)."""
        return LEASE_TRACE

    @property
    def fairness(self) -> FairnessClasses:
        """The lease lock's fairness classes and temporal property (``kgc.model.temporal``)."""
        return FAIRNESS

    def basis(self, boundary: int, depth_bound: int | None) -> list[str]:
        """What a verdict rests on: the lease bound when it cut states, the depth bound when the search
        met it, the perturbation budget."""
        out = [f"for leases ≤ {LeaseLock.max_serial}"] if boundary else []
        if depth_bound is not None:
            out.append(f"to depth {depth_bound}")
        total = self.expiry + self.crash + self.lost + self.failover
        return [*out, f"with ≤ {total} perturbation{'s' if total != 1 else ''}" if total else "without perturbations"]


class LeaseLock:
    """``clients`` clients of one lock; at most ``max_serial`` leases are granted (the boundary)."""

    max_serial = 3

    perturbations: tuple[str, ...] = Faults._fields[:-1]
    local_spends: tuple[str, ...] = ()
    process_faults: tuple[str, ...] = ("crash", "lost")
    """Its classes of process fault: a client's crash, a lost notice (``process_fault``)."""
    removal_spends = "expiry"

    config: Any = None
    """The recipe the model was built from (``LeaseLockConfig.model`` sets it)."""

    def __init__(
        self,
        clients: int,
        expiry: int = 0,
        crash: int = 0,
        lost: int = 0,
        failover: int = 0,
        lease_timer: bool = True,
    ) -> None:
        self.processes = clients
        self.lease_timer = lease_timer
        self.budget = Faults(crash, lost, expiry, failover, crash + lost + expiry + failover)

    # ------------------------------------------------------------------ the model
    def init_states(self) -> Sequence[Lease]:
        return [Lease(Service(NO_LEASE, 0), (Client(NO_LEASE, ()),) * self.processes, self.budget)]

    def within_boundary(self, state: Lease) -> bool:
        return self.shared_within_boundary(state.service)

    def properties(self) -> Sequence[Property]:
        return [exclusive, held]

    def actions(self, state: Lease) -> list[Step]:
        return [a for a, _ in self.successors(state)]

    def next_state(self, state: Lease, action: Step) -> Lease | None:
        return next((n for a, n in self.successors(state) if a == action), None)

    def successors(self, state: Lease) -> list[tuple[Step, Lease]]:
        """Written out on its own (not through the component functions' recombination): each
        client's steps, the expiry, crashes, lost notices, the fail-over."""
        service, clients, budget = state
        out: list[tuple[Step, Lease]] = []

        def put(action: Step, new_service: Service, i: int, client: Client | None, b: Faults | None) -> None:
            if b is None:
                return
            after = list(clients)
            if client is not None:
                after[i] = client
            out.append((action, Lease(new_service, tuple(after), b)))

        for i, c in enumerate(clients):
            if c.inbox:
                put(
                    Step("read", i),
                    service,
                    i,
                    Client(NO_LEASE if c.inbox[0] == EXPIRED else c.holds, c.inbox[1:]),
                    budget,
                )
            elif c.holds == NO_LEASE and service.holder == NO_LEASE:
                lease = (i, service.serial)
                put(Step("acquire", i), Service(lease, service.serial + 1), i, Client(lease, ()), budget)
            if c.holds != NO_LEASE:
                freed = Service(NO_LEASE, service.serial) if service.holder == c.holds else service
                put(Step("release", i), freed, i, Client(NO_LEASE, c.inbox), budget)
        if service.holder != NO_LEASE:
            holder = service.holder
            still = clients[holder[0]].holds == holder
            b: Faults | None = self.spend(budget, "expiry") if still else budget
            if b is not None and self.lease_timer:
                after = list(clients)
                after[holder[0]] = Client(after[holder[0]].holds, after[holder[0]].inbox + (EXPIRED,))
                out.append((Step("expire", -1), Lease(Service(NO_LEASE, service.serial), tuple(after), b)))
        for i, c in enumerate(clients):
            if c != Client(NO_LEASE, ()):
                put(Step("crash", i), service, i, Client(NO_LEASE, ()), self.spend(budget, "crash"))
        for i, c in enumerate(clients):
            if c.inbox:
                put(Step("lose", i), service, i, Client(c.holds, c.inbox[1:]), self.spend(budget, "lost"))
        if service.holder != NO_LEASE:
            put(Step("failover", -1), Service(NO_LEASE, service.serial), -1, None, self.spend(budget, "failover"))
        return out

    # ------------------------------------------------------------------ its components
    def compose(self, shared: Service, local: tuple[Client, ...], budget: Faults) -> Lease:
        return Lease(shared, local, budget)

    def shared_within_boundary(self, shared: Service) -> bool:
        return shared.serial <= self.max_serial

    def halted(self, shared: Service) -> bool:
        return False

    def holder(self, local: Client) -> tuple[int, int]:
        return local.holds

    def spend(self, budget: Faults, kind: str) -> Faults | None:
        left: int = getattr(budget, kind)
        if left == 0 or budget.total == 0:
            return None
        return budget._replace(**{kind: left - 1, "total": budget.total - 1})

    def exhausted(self, budget: Faults) -> bool:
        return budget.total == 0

    def deliver(self, local: Client, answer: Any) -> Client:
        return Client(local.holds, local.inbox + (answer,))

    def own_steps(self, index: int, local: Client) -> list[tuple[Any, Client]]:
        """What a client does by itself: read a notice, ask for the lock, release it."""
        out: list[tuple[Any, Client]] = []
        if local.inbox:
            holds = NO_LEASE if local.inbox[0] == EXPIRED else local.holds
            out.append((Step("read", index), Client(holds, local.inbox[1:])))
        elif local.holds == NO_LEASE:
            out.append((Step("acquire", index), local))
        if local.holds != NO_LEASE:
            out.append((Step("release", index), Client(NO_LEASE, local.inbox)))
        return out

    def process_steps(
        self, shared: Service, index: int, local: Client, affordable: frozenset[str], own: list[tuple[Any, Client]]
    ) -> list[tuple[Any, tuple[str, ...], Service, Client, tuple[tuple[int, Any], ...]]]:
        """A client's steps with the service's answer: an acquire is granted if the lock is free
        (else it is no step), a release frees the lock if the lease is still the client's."""
        out: list[tuple[Any, tuple[str, ...], Service, Client, tuple[tuple[int, Any], ...]]] = []
        for action, after in own:
            if action.kind == "acquire":
                if shared.holder != NO_LEASE:
                    continue
                lease = (index, shared.serial)
                out.append((action, (), Service(lease, shared.serial + 1), Client(lease, ()), ()))
            elif action.kind == "release":
                freed = Service(NO_LEASE, shared.serial) if shared.holder == local.holds else shared
                out.append((action, (), freed, after, ()))
            else:
                out.append((action, (), shared, after, ()))
        return out

    def live_candidates(self, shared: Service) -> tuple[tuple[int, int], ...]:
        return (shared.holder,) if shared.holder != NO_LEASE else ()

    def timer_steps(
        self, shared: Service, keep: frozenset[tuple[int, int]]
    ) -> list[tuple[Any, tuple[str, ...], Service, tuple[tuple[int, Any], ...], tuple[tuple[int, int], ...]]]:
        """The lease expires (and its holder is told), unless its holder is to be kept."""
        if shared.holder == NO_LEASE or shared.holder in keep or not self.lease_timer:
            return []
        notice = ((shared.holder[0], EXPIRED),)
        return [(Step("expire", -1), (), Service(NO_LEASE, shared.serial), notice, (shared.holder,))]

    def fault_steps(
        self, shared: Service
    ) -> list[tuple[Any, tuple[str, ...], Service, tuple[tuple[int, Any], ...], tuple[tuple[int, int], ...]]]:
        """The service fails over and forgets the lease (its holder is not told)."""
        if shared.holder == NO_LEASE:
            return []
        return [(Step("failover", -1), ("failover",), Service(NO_LEASE, shared.serial), (), ())]

    def process_fault(
        self, kind: int, shared: Service, index: int, local: Client
    ) -> tuple[Any, tuple[str, ...], Service, Client, tuple[tuple[int, Any], ...]] | None:
        """A client's fault of class ``kind`` (``process_faults``): 0 it crashes, 1 its next notice is lost."""
        return self.crash(shared, index, local) if kind == 0 else self.lose_answer(shared, index, local)

    def crash(
        self, shared: Service, index: int, local: Client
    ) -> tuple[Any, tuple[str, ...], Service, Client, tuple[tuple[int, Any], ...]] | None:
        if local == Client(NO_LEASE, ()):
            return None
        return (Step("crash", index), ("crash",), shared, Client(NO_LEASE, ()), ())

    def lose_answer(
        self, shared: Service, index: int, local: Client
    ) -> tuple[Any, tuple[str, ...], Service, Client, tuple[tuple[int, Any], ...]] | None:
        if not local.inbox:
            return None
        return (Step("lose", index), ("lost",), shared, Client(local.holds, local.inbox[1:]), ())
