"""Is there a behaviour of the model that explains a group's log?

The validator runs an abstraction of the classic group coordinator over a group's events: the group
state (Kafka's five, ``kgc.model.types.GroupState``), the generation, and what the log tells of the
members (who joined, who left for good, how many stabilised). It keeps the *set* of abstract states
the group can be in after each line — a search over the behaviours consistent with the log so far —
and a line is explained when some state in the set allows it. The rules are the model's and the
reference coordinator's (``kgc/model/coordinator.py``, ``kgc/reference/coordinator.py``; reference
docs/kafka/group.md#states for the states and their valid previous states, ``VALID_PREVIOUS_STATES``;
docs/kafka/timers.md#join-phase for join
completion and generations; docs/kafka/requests.md#leavegroup, docs/kafka/timers.md#heartbeat-expiry for removals;
docs/kafka/timers.md#delayedsync pending-sync expiry; docs/kafka/group.md#unload load and unload):

* ``Preparing to rebalance … old generation g`` — a transition to PreparingRebalance, from Stable,
  CompletingRebalance or Empty only, in generation g; its reason names the trigger, which must fit
  the state (a leader's rejoin "during Stable" in Stable; a removal from Stable/CompletingRebalance;
  from Empty only a join).
* ``Stabilized group … generation g+1 … with k members`` — join completion: PreparingRebalance of
  generation g to CompletingRebalance of g+1 (k ≥ 1); ``… is now empty`` — the same to Empty.
* ``Assignment received from leader … generation g`` — the leader's SyncGroup, in
  CompletingRebalance of generation g only; its member count is the count the generation
  stabilised with.
* A member that failed (session expiry) or left (LeaveGroup) is a current member of a state with
  members; removed from Stable or CompletingRebalance it starts a rebalance at once (the next line
  of the group must be ``Preparing to rebalance``). A member id that left never comes back: a
  consumer that left rejoins with a new id (``UNKNOWN_MEMBER_ID``, docs/kafka/requests.md#joingroup), so a departed id
  acting again (leader, removed again, rejoining) is unexplained.
* ``Loading group metadata … generation g`` — the coordinator moved here: Stable or Empty in g.
  ``Unloading … generation g`` — to Dead. A Dead group that gets a JoinGroup again is a new group
  (Empty, generation 0).

What a log does not show is allowed for: requests that change no state are not logged; the store
callback that makes CompletingRebalance Stable is silent (so both are kept); releases that log a
removal at DEBUG only (member failure before 2.0, LeaveGroup before 2.2) just show the rebalance;
an excerpt may start anywhere (the first line's state and generation are unknown until a line fixes
them); and every coordinator (broker) of a group is followed separately, as its own tenure, so logs
of several brokers interleave freely. Version-specific rules come from the profile the line formats
point to (``templates.profile_for``) or ``--profile``: pending-sync expiry exists from 3.0, static
membership from 2.3 (``kgc/model/profiles.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kgc.logs import templates as T
from kgc.logs.events import Event
from kgc.model.profiles import profile_named
from kgc.model.types import VALID_PREVIOUS_STATES, GroupState

EMPTY = GroupState.EMPTY
PR = GroupState.PREPARING_REBALANCE
CR = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
DEAD = GroupState.DEAD

CONSISTENT = "consistent"
INCONSISTENT = "inconsistent"

_STATE_NAMES = {
    "empty": EMPTY,
    "preparingrebalance": PR,
    "completingrebalance": CR,
    "awaitingsync": CR,
    "stable": STABLE,
    "dead": DEAD,
}


def state_named(name: str | None) -> GroupState | None:
    """A state name as logged (``Stable``, ``PREPARING_REBALANCE``, ``AwaitingSync``), or None."""
    if not name:
        return None
    return _STATE_NAMES.get(name.replace("_", "").lower())


@dataclass(frozen=True)
class Abstract:
    """One abstract coordinator state: group state and generation (None: not known yet), and an
    obligation the next line of the group must meet (``prepare``: a removal from Stable or
    CompletingRebalance has started a rebalance) with the line that created it."""

    state: GroupState | None
    generation: int | None
    must: str | None = None
    must_line: int | None = None

    def describe(self) -> str:
        st = self.state.kafka_name if self.state is not None else "any state"
        gen = f"generation {self.generation}" if self.generation is not None else "any generation"
        return f"{st}, {gen}"


UNKNOWN = Abstract(None, None)


@dataclass
class Members:
    """What the log says about the members of one group (across all its coordinators)."""

    present: set[str] = field(default_factory=set)
    #: member id → the line it left at
    departed: dict[str, str] = field(default_factory=dict)
    #: the member count the current generation stabilised with, if logged
    stabilized: int | None = None
    stabilized_at: str | None = None


@dataclass(frozen=True)
class Unexplained:
    """The first line the model cannot explain."""

    source: str
    line: int
    text: str
    why: str
    allowed: tuple[str, ...]
    states: tuple[str, ...]
    release: str

    def as_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "line": self.line,
            "text": self.text,
            "why": self.why,
            "allowed": list(self.allowed),
            "states": list(self.states),
            "release": self.release,
        }


@dataclass(frozen=True)
class Verdict:
    """A group's verdict."""

    cluster: str
    group: str
    verdict: str
    events: int
    releases: tuple[str, ...]
    release: str
    profile: str
    first_unexplained: Unexplained | None
    coordinators: tuple[str, ...]
    final_states: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "cluster": self.cluster,
            "group": self.group,
            "verdict": self.verdict,
            "events": self.events,
            "release": self.release,
            "profile": self.profile,
            "coordinators": list(self.coordinators),
            "final_states": list(self.final_states),
            "first_unexplained": self.first_unexplained.as_json() if self.first_unexplained else None,
        }


class _Reject(Exception):
    """A line an abstract state cannot explain, with why."""


def _member_check(event: Event, members: Members) -> str | None:
    """A departed member id named as acting, or None."""
    acting: list[tuple[str, str]] = []
    if event.kind in (T.MEMBER_FAILED, T.MEMBER_LEFT) and event.member:
        acting.append((event.member, "is removed again"))
    if event.kind == T.ASSIGNMENT and event.leader:
        acting.append((event.leader, "sends the leader's SyncGroup"))
    if event.kind in (T.MEMBER_ADDED, T.MEMBER_PENDING) and event.member:
        acting.append((event.member, "is added as a new member"))
    if event.kind == T.STATIC_REPLACED and event.old_member:
        acting.append((event.old_member, "is replaced as a current static member"))
    if event.kind == T.PREPARE and event.trigger_member and event.trigger in (
        "join_new", "member_update", "leader_rejoin", "member_join", "static_update", "static_protocol", "store_error"
    ):  # fmt: skip
        acting.append((event.trigger_member, f"triggers a rebalance ({event.trigger.replace('_', ' ')})"))
    for member, what in acting:
        if member in members.departed:
            return (
                f"member {member} left the group at {members.departed[member]} but {what} here; a member id "
                "never returns (a consumer that left rejoins with a new id, docs/kafka/requests.md#joingroup)"
            )
    if (
        event.kind == T.ASSIGNMENT
        and event.members is not None
        and members.stabilized is not None
        and event.members != members.stabilized
    ):
        return (
            f"the group has {event.members} members at the leader's SyncGroup but stabilised with "
            f"{members.stabilized} at {members.stabilized_at}, and membership changes only through a rebalance"
        )
    return None


def _prepare(a: Abstract, e: Event, delayed_sync: bool) -> Abstract:
    if a.state is not None and a.state not in VALID_PREVIOUS_STATES[PR]:
        raise _Reject(f"a rebalance cannot start from {a.state.kafka_name} (valid: Stable, CompletingRebalance, Empty)")
    if a.generation is not None and e.generation is not None and a.generation != e.generation:
        raise _Reject(f"the old generation is {e.generation} but the group is in generation {a.generation}")
    trigger, named_state = e.trigger or "unknown", state_named(e.trigger_state)
    if named_state is not None and a.state is not None and named_state != a.state:
        raise _Reject(f"the reason names {named_state.kafka_name} but the group is {a.state.kafka_name}")
    if trigger in ("heartbeat_expired", "leave", "sync_expired") and a.state not in (None, STABLE, CR):
        raise _Reject(
            f"a removal ({trigger.replace('_', ' ')}) starts a rebalance from Stable or CompletingRebalance only"
        )
    if trigger == "sync_expired" and not delayed_sync:
        raise _Reject("pending-sync expiry (DelayedSync) exists from Kafka 3.0 only")
    if trigger == "store_error" and a.state not in (None, CR):
        raise _Reject("a failed assignment write starts a rebalance from CompletingRebalance only")
    if a.state == EMPTY and trigger not in ("join_new", "unknown", "other"):
        raise _Reject("an Empty group rebalances only when a member joins")
    return Abstract(PR, e.generation if e.generation is not None else a.generation)


def _complete(a: Abstract, e: Event, to: GroupState) -> Abstract:
    if a.state is not None and a.state != PR:
        raise _Reject(f"a join phase completes in PreparingRebalance only, the group is {a.state.kafka_name}")
    if a.generation is not None and e.generation is not None and e.generation != a.generation + 1:
        skipped = " (a generation skipped)" if e.generation > a.generation + 1 else ""
        raise _Reject(
            f"the new generation must be {a.generation + 1} (one more than {a.generation}), not {e.generation}{skipped}"
        )
    if to == CR and e.members is not None and e.members < 1:
        raise _Reject("a group with no members goes Empty, it does not stabilise")
    return Abstract(
        to, e.generation if e.generation is not None else (a.generation + 1 if a.generation is not None else None)
    )


def step(a: Abstract, e: Event, delayed_sync: bool, static_membership: bool) -> list[Abstract]:
    """The abstract states after ``e`` from ``a`` (raises ``_Reject`` when ``a`` cannot explain it)."""
    if a.must == "prepare" and e.kind != T.PREPARE:
        raise _Reject(f"the removal at line {a.must_line} must start a rebalance first (removeMemberAndUpdateGroup)")
    k, s, g = e.kind, a.state, a.generation
    if k == T.PREPARE:
        return [_prepare(a, e, delayed_sync)]
    if k == T.STABILIZED:
        return [_complete(a, e, CR)]
    if k == T.EMPTY:
        return [_complete(a, e, EMPTY)]
    if k == T.DEAD_REMOVED:
        # 0.10.0 onCompleteJoin: every member gone, the group goes Dead in its current generation
        if s is not None and s != PR:
            raise _Reject(f"a join phase completes in PreparingRebalance only, the group is {s.kafka_name}")
        if g is not None and e.generation is not None and e.generation != g:
            raise _Reject(f"the group dies in its generation {g}, not {e.generation} (no new generation in 0.10.0)")
        return [Abstract(DEAD, e.generation if e.generation is not None else g)]
    if k == T.ASSIGNMENT:
        if s is not None and s != CR:
            raise _Reject(f"the leader's assignment is logged in CompletingRebalance only, the group is {s.kafka_name}")
        if g is not None and e.generation is not None and g != e.generation:
            raise _Reject(f"the assignment is for generation {e.generation} but the group is in generation {g}")
        return [Abstract(CR, e.generation if e.generation is not None else g)]
    if k in (T.MEMBER_FAILED, T.MEMBER_LEFT):
        if s in (EMPTY, DEAD):
            raise _Reject(f"a {s.kafka_name} group has no member to remove")
        if s in (STABLE, CR):
            return [Abstract(s, g, "prepare", e.line)]
        if s is None:  # unknown: either it rebalances now or it was PreparingRebalance already
            return [Abstract(PR, g), Abstract(STABLE, g, "prepare", e.line), Abstract(CR, g, "prepare", e.line)]
        return [a]
    if k in (T.PENDING_REMOVED, T.PENDING_LEFT, T.MEMBER_PENDING, T.FENCED):
        if s == DEAD:
            raise _Reject("a Dead group has no pending members")
        return [Abstract(s, g)]
    if k == T.NOT_REJOINED:
        if s not in (None, PR, DEAD):
            raise _Reject(
                f"members that did not rejoin are removed when a join phase completes, the group is {s.kafka_name}"
            )
        return [Abstract(s, g)]
    if k == T.MEMBER_ADDED:
        named = state_named(e.state)
        if named is not None and s is not None and named != s:
            raise _Reject(f"the line names {named.kafka_name} but the group is {s.kafka_name}")
        if s == DEAD or named == DEAD:
            raise _Reject("a Dead group takes no member")
        return [Abstract(named if named is not None else s, g)]
    if k in (T.STATIC_REPLACED, T.STATIC_NO_REBALANCE):
        if not static_membership:
            raise _Reject("static membership (KIP-345) exists from Kafka 2.3 only")
        named = state_named(e.state) if k == T.STATIC_REPLACED else STABLE
        if named is not None and s is not None and named != s:
            raise _Reject(f"the line names {named.kafka_name} but the group is {s.kafka_name}")
        if named in (EMPTY, DEAD) or s in (EMPTY, DEAD):
            raise _Reject("a static member is replaced only in a group that has it as a member")
        return [Abstract(named if named is not None else s, g)]
    if k == T.DEAD_SKIP:
        if s not in (None, DEAD):
            raise _Reject(f"the join completion found the group Dead, but it is {s.kafka_name}")
        return [Abstract(DEAD, g)]
    if k == T.LOADED:
        if g is not None and e.generation is not None and e.generation < g and s != DEAD:
            raise _Reject(f"loaded in generation {e.generation}, older than the current {g}")
        return [Abstract(STABLE, e.generation), Abstract(EMPTY, e.generation)]
    if k == T.UNLOADED:
        if s == DEAD:
            raise _Reject("the group is Dead already")
        if g is not None and e.generation is not None and g != e.generation:
            raise _Reject(f"unloaded in generation {e.generation} but the group is in generation {g}")
        return [Abstract(DEAD, e.generation if e.generation is not None else g)]
    if k == T.EXPIRED_DEAD:
        if s is not None and s != EMPTY:
            raise _Reject(f"a group goes Dead when its offsets expire only if it is Empty, it is {s.kafka_name}")
        if g is not None and e.generation is not None and g != e.generation:
            raise _Reject(f"Dead in generation {e.generation} but the group is in generation {g}")
        return [Abstract(DEAD, e.generation if e.generation is not None else g)]
    return [a]


def closure(states: Iterable[Abstract]) -> set[Abstract]:
    """Add what can happen without a line: CompletingRebalance → Stable (the assignment's store
    callback), and a Dead group recreated by a JoinGroup (Empty, generation 0)."""
    out: set[Abstract] = set()
    for a in states:
        out.add(a)
        if a.must is None and a.state == CR:
            out.add(Abstract(STABLE, a.generation))
        if a.must is None and a.state == DEAD:
            out.add(Abstract(EMPTY, 0))
    return out


def allowed(states: Iterable[Abstract]) -> list[str]:
    """What the model would have allowed next, from each state of the set."""
    out: list[str] = []
    for a in sorted(
        states, key=lambda x: (x.state is None, int(x.state) if x.state is not None else 0, x.generation or 0)
    ):
        g = a.generation
        gs = str(g) if g is not None else "g"
        g1 = str(g + 1) if g is not None else "g+1"
        if a.must == "prepare":
            out.append(
                f"{a.describe()}: 'Preparing to rebalance … old generation {gs}' (the removal at line {a.must_line})"
            )
            continue
        if a.state is None:
            out.append("any line (nothing is known of the group yet)")
        elif a.state == EMPTY:
            out.append(
                f"Empty, generation {gs}: a member joins ('Preparing to rebalance … old generation {gs}'), "
                f"offsets expire ('transitioned to Dead in generation {gs}'), 'Unloading … generation {gs}'"
            )
        elif a.state == PR:
            out.append(
                f"PreparingRebalance, generation {gs}: 'Stabilized … generation {g1}', '… generation {g1} is now "
                f"empty', a member fails or leaves, 'Unloading … generation {gs}'"
            )
        elif a.state == CR:
            out.append(
                f"CompletingRebalance, generation {gs}: 'Assignment received … generation {gs}', 'Preparing to "
                f"rebalance … old generation {gs}', a member fails or leaves, 'Unloading … generation {gs}'"
            )
        elif a.state == STABLE:
            out.append(
                f"Stable, generation {gs}: 'Preparing to rebalance … old generation {gs}' (a join, a leader's "
                f"rejoin, a removal), a static member replaced, 'Unloading … generation {gs}'"
            )
        else:
            out.append(
                f"Dead, generation {gs}: 'Loading group metadata' (the coordinator moved), or a new group "
                "('Preparing to rebalance … old generation 0')"
            )
    return list(dict.fromkeys(out))


def _tenure_key(e: Event) -> str:
    return e.broker if e.broker is not None else f"file {e.source}"


def validate_group(events: Sequence[Event], profile: str | None = None) -> Verdict:
    """The verdict of one group's events (sorted by time)."""
    releases = _common_releases(events)
    prof_name = profile or T.profile_for(releases)
    prof = profile_named(prof_name)
    delayed_sync, static_membership = prof.delayed_sync, prof.static_membership
    if profile is None and releases:
        # without --profile, the rule holds if some release the lines fit has it
        delayed_sync = any(_at_least(r, (3, 0)) for r in releases)
        static_membership = any(_at_least(r, (2, 3)) for r in releases)
    members = Members()
    tenures: dict[str, set[Abstract]] = {}
    first: Unexplained | None = None
    for e in events:
        key = _tenure_key(e)
        states = tenures.get(key, {UNKNOWN})
        why = _member_check(e, members)
        nxt: set[Abstract] = set()
        reasons: list[str] = []
        if why is None:
            for a in closure(states):
                try:
                    nxt.update(step(a, e, delayed_sync, static_membership))
                except _Reject as r:
                    reasons.append(str(r))
            if not nxt:
                why = "; ".join(dict.fromkeys(reasons))
        if why is not None:
            first = Unexplained(
                e.source,
                e.line,
                e.text,
                why,
                tuple(allowed(closure(states))),
                tuple(sorted(a.describe() for a in closure(states))),
                T.describe_releases(e.releases),
            )
            break
        tenures[key] = nxt
        _update_members(e, members)
    finals = sorted({a.describe() for states in tenures.values() for a in closure(states)})
    return Verdict(
        cluster=events[0].cluster if events else "",
        group=events[0].group if events else "",
        verdict=CONSISTENT if first is None else INCONSISTENT,
        events=len(events),
        releases=tuple(releases),
        release=T.describe_releases(releases),
        profile=prof_name,
        first_unexplained=first,
        coordinators=tuple(tenures) if first is None else tuple(dict.fromkeys(_tenure_key(e) for e in events)),
        final_states=tuple(finals),
    )


def _at_least(release: str, line: tuple[int, int]) -> bool:
    """``scala-2.8`` ≥ (2, 3); Java releases always (3.7+)."""
    impl, _, version = release.partition("-")
    if impl == T.JAVA:
        return True
    parts = tuple(int(x) for x in version.split("."))
    return parts[:2] >= line


def _update_members(e: Event, m: Members) -> None:
    here = e.where
    if e.kind in (T.MEMBER_FAILED, T.MEMBER_LEFT) and e.member:
        m.present.discard(e.member)
        m.departed[e.member] = here
        m.stabilized = None
    elif e.kind == T.NOT_REJOINED:
        for x in e.removed:
            m.present.discard(x)
            m.departed[x] = here
        m.stabilized = None
    elif e.kind == T.PREPARE and e.trigger == "sync_expired":
        for x in e.removed:
            m.present.discard(x)
            m.departed[x] = here
    elif e.kind == T.STATIC_REPLACED and e.old_member:
        m.present.discard(e.old_member)
        m.departed[e.old_member] = here
        if e.member:
            m.present.add(e.member)
    elif e.kind == T.MEMBER_ADDED and e.member:
        m.present.add(e.member)
    elif e.kind == T.PREPARE and e.trigger == "join_new" and e.trigger_member:
        m.present.add(e.trigger_member)
    elif e.kind == T.STABILIZED:
        m.stabilized, m.stabilized_at = e.members, here
    if e.kind in (T.PREPARE, T.LOADED, T.UNLOADED):
        m.stabilized = None
    elif e.kind in (T.EMPTY, T.DEAD_REMOVED):
        for x in m.present:
            m.departed.setdefault(x, here)
        m.present.clear()
        m.stabilized = None


def _common_releases(events: Sequence[Event]) -> list[str]:
    """The releases every line's format fits (or, if no release fits them all, every release any
    line fits)."""
    sets = [set(e.releases) for e in events if e.releases]
    if not sets:
        return []
    common = set.intersection(*sets)
    chosen = common or set.union(*sets)
    return [r for r in T.all_releases() if r in chosen]


def validate(groups: dict[tuple[str, str], list[Event]], profile: str | None = None) -> list[Verdict]:
    """Every group's verdict, in (cluster, group) order."""
    return [validate_group(groups[k], profile) for k in sorted(groups)]
