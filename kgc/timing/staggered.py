"""Staggered joins: new consumers start one after another while the group rebalances (``kgc timing``'s
``staggered_joins_settled`` and ``staggered_joins_evicts``), as z3 queries over ``kgc/timing/rules.py``.

The scenario (``Scenario.STAGGERED`` on the concrete side): the subject (the configuration's first
member) is Stable alone at t = 0, its timers and the coordinator's starting then; the second member's
process starts at ``new.member.join.ms`` and the third's (with three members) ``join.gap.ms`` after it.
Each new consumer sends JoinGroup without a member id, gets MEMBER_ID_REQUIRED and a pending member id,
and sends JoinGroup with it (KIP-394; ``doNewMemberJoinGroup`` then, for the pending id,
``addMemberAndRebalance``, ``GroupCoordinator.scala`` 3.6.2; ``GroupMetadataManager.classicGroupJoinNewMember``,
then for the pending id ``classicGroupJoinExistingMember`` → ``addMemberThenRebalanceOrCompleteJoin``, Kafka
4.0). The second member's
JoinGroup with its id starts a rebalance in the Stable group (``maybePrepareRebalance``); the subject learns
of it from a heartbeat answer (REBALANCE_IN_PROGRESS), rejoins at its next poll, the join phase completes,
the subject (the leader throughout: it is never removed in the runs examined) assigns and everyone syncs.

Where the third member's JoinGroups land decides what follows:

* **in the first rebalance** — its first JoinGroup arrives before the subject and the second member have
  both joined: its member id is pending and the join phase waits for it (``hasAllMembersJoined`` is false
  while a pending member exists: ``GroupMetadata.hasAllMembersJoined``, 3.6.2; ``ClassicGroup.hasAllMembersJoined``
  with ``pendingJoinMembers``, 4.0); its JoinGroup with the id joins the running join phase;
* **after the first join phase completed** — its JoinGroup with the id starts a second rebalance
  (``addMemberAndRebalance`` → ``prepareRebalance``). In CompletingRebalance (before the leader's SyncGroup
  arrives) the parked SyncGroups are answered REBALANCE_IN_PROGRESS (``resetAndPropagateAssignmentError``)
  and a SyncGroup arriving later gets the same answer: the member rejoins at once. Once the group is Stable
  (the leader's SyncGroup arrived), a member whose SyncGroup was answered learns of the rebalance from a
  heartbeat answer and rejoins at its next poll, and a follower whose SyncGroup arrives after the JoinGroup is
  refused as above. The join completes, the subject assigns and all three sync.

JoinGroups and SyncGroups arriving in the same millisecond, and the other runs the premises leave out, are
reported "not examined".

The helpers of the rolling restart (``_roll_learns``, ``_roll_polls``, ``_roll_alive``, ``_max`` in
``kgc/timing/queries.py``) encode a member's heartbeats, its polls until it rejoins, and its session
until then, for any member and any first poll; this module uses them as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import z3

from kgc.timing import rules
from kgc.timing.config import TimingConfig
from kgc.timing.queries import (
    HEARTBEATS,
    MAX_HEARTBEATS,
    Encoded,
    Outcome,
    Question,
    _after_commit,
    _heartbeats,
    _max,
    _resumed_heartbeats,
    _roll_alive,
    _roll_learns,
    _roll_polls,
    _Segment,
    _sent,
    _sync_commit,
    _true,
    _val,
)
from kgc.timing.rules import Env, Message
from kgc.timing.simulate import COORDINATOR, Run, Scenario

#: the most members the scenario covers: the subject and two new consumers
MAX_MEMBERS = 3


def staggered_rounds(config: TimingConfig) -> tuple[int, int]:
    """The heartbeats the scenario unrolls for a member already in the group: the subject's before its
    first rejoin (from t = 0 to the latest second JoinGroup of the second member, a heartbeat round trip
    to learn of the rebalance and the slowest batch), and each one's after the first rebalance (from its
    JoinGroup answer to the third member's latest second JoinGroup, a round trip and the slowest batch),
    each at least ``HEARTBEATS`` and at most ``MAX_HEARTBEATS``; runs that need more are reported not
    examined by a premise."""
    env = config.environment
    net = env["network.delay.ms"].hi
    slowest = max(m["max.poll.records"].hi for m in config.members) * env["record.processing.ms"].hi
    learn = max(m["heartbeat.interval.ms"].hi + m["retry.backoff.ms"].hi for m in config.members) + 2 * net
    interval = max(min(m["heartbeat.interval.ms"].lo for m in config.members), 1)
    join = env["new.member.join.ms"]
    before = join.hi + 3 * net + learn + slowest
    after = join.hi - join.lo + env["join.gap.ms"].hi + 3 * net + learn + slowest
    return tuple(max(HEARTBEATS, min(MAX_HEARTBEATS, -(-span // interval) + 2)) for span in (before, after))  # type: ignore[return-value]


@dataclass
class _Sync:
    """One rebalance's sync phase: per member the JoinGroup answer's arrival, the SyncGroup's send and
    arrival, when the coordinator answers it and when the answer arrives."""

    ja: dict[int, z3.ArithRef] = field(default_factory=dict)
    sent: dict[int, z3.ArithRef] = field(default_factory=dict)
    arrives: dict[int, z3.ArithRef] = field(default_factory=dict)
    handled: dict[int, z3.ArithRef] = field(default_factory=dict)
    answered: dict[int, z3.ArithRef] = field(default_factory=dict)


@dataclass
class _Staggered:
    """The symbolic staggered-joins run, shared by both questions."""

    premises: list[tuple[str, z3.BoolRef]]
    #: when the last new member's process started
    last_start: z3.ArithRef
    #: when the group is Stable with every member holding its assignment (the last SyncGroup answer of
    #: the last rebalance)
    settled: z3.ArithRef
    #: each member removed by a join phase's timeout (NOT_REJOINED): (member, when, whether)
    evictions: list[tuple[str, z3.ArithRef, z3.BoolRef]]
    #: every rebalance completed by its members (no eviction)
    complete: z3.BoolRef
    #: the third member starts the second rebalance (False: two members, or it joined the first)
    second: z3.BoolRef
    #: per member already in the group: it learns of the second rebalance from a heartbeat answer (its
    #: heartbeats and batches after the first rebalance are in the run), else from its refused SyncGroup
    by_heartbeat: dict[int, z3.BoolRef]
    #: per member already in the group: heartbeats and polls before its first rejoin and after it
    hbs1: dict[int, list[Message]]
    hbs2: dict[int, list[Message]]
    seg1: dict[int, _Segment]
    seg2: dict[int, _Segment]
    #: the choice giving the third member's gap after the second's start, and the second's start
    gap: z3.ArithRef | None
    first_start: z3.ArithRef


def _sync_phase(
    env: Env,
    premises: list[tuple[str, z3.BoolRef]],
    guard: z3.BoolRef,
    completed: z3.ArithRef,
    names: dict[int, tuple[str, str]],
    present: dict[int, z3.BoolRef] | None = None,
) -> _Sync:
    """The sync phase of a rebalance completed at ``completed`` with the members ``names`` (index →
    the names of its JoinGroup answer and SyncGroup in the schedule, e.g. ``("join2", "sync1")``; a
    member of ``present`` only when its condition holds, e.g. the third member in the first rebalance). The
    subject (index 0) leads: it assigns for ``assignment.ms`` (one choice, the same in every rebalance,
    as the replay takes it) after its JoinGroup answer; a follower sends SyncGroup at its JoinGroup
    answer and is answered when the leader's SyncGroup arrives if it came first (``propagateAssignment``,
    ``GroupCoordinator.scala`` 3.6.2), else at once. Premises: those of the rebalance scenario (a
    follower's SyncGroup not in the leader's millisecond, every SyncGroup within its member's session
    deadline and the pending-sync timeout) and no heartbeat of the leader before its SyncGroup."""
    cfg = env.config
    asg = env.env_range("assignment.ms")
    present = present or {}
    out = _Sync()
    for j, (join, sync) in names.items():
        nm = cfg.members[j].name
        out.ja[j] = completed + env.net(f"{nm}.{join}.resp", guard)
        if j == 0:
            assign = env.choose(f"{nm}.assign", asg.lo, asg.hi, guard)
            out.sent[j] = out.ja[j] + assign
            premises.append(
                (
                    "the leader's assignment outlasts heartbeat.interval.ms (a heartbeat precedes its SyncGroup)",
                    z3.Implies(guard, out.sent[j] < out.ja[j] + env.setting(0, "heartbeat.interval.ms")),
                )
            )
        else:
            out.sent[j] = out.ja[j]
        out.arrives[j] = out.sent[j] + env.net(f"{nm}.{sync}.req", guard)
    lead = out.arrives[0]
    # the DelayedSync waits the group's rebalance timeout: the largest of its members' (an absent member's
    # stands in for the leader's, which is counted anyway)
    leader_timeout = rules.join_rebalance_timeout(env, 0)
    timeout = rules.rebalance_timeout(
        [z3.If(present.get(j, z3.BoolVal(True)), rules.join_rebalance_timeout(env, j), leader_timeout) for j in names]
    )
    for j, (_, sync) in names.items():
        nm = cfg.members[j].name
        guard_j = z3.And(guard, present.get(j, z3.BoolVal(True)))
        out.handled[j] = out.arrives[j] if j == 0 else z3.If(out.arrives[j] > lead, out.arrives[j], lead)
        out.answered[j] = out.handled[j] + env.net(f"{nm}.{sync}.resp", guard)
        if j:
            premises.append(
                ("a follower's SyncGroup arrives with the leader's", z3.Implies(guard_j, out.arrives[j] != lead))
            )
        premises.append(
            (
                "a SyncGroup arrives after its member's session deadline (needless_expiry, evicted_while_assigning)",
                z3.Implies(
                    guard_j, z3.Not(rules.missed_deadline(rules.rearm_deadline(env, j, completed), out.arrives[j]))
                ),
            )
        )
        premises.append(
            (
                "a SyncGroup arrives after the pending-sync timeout (DelayedSync evicts the member)",
                z3.Implies(
                    guard_j,
                    z3.Not(rules.missed_deadline(rules.pending_sync_deadline(completed, timeout), out.arrives[j])),
                ),
            )
        )
    return out


def _new_member(
    env: Env, j: int, start: z3.ArithRef, premises: list[tuple[str, z3.BoolRef]]
) -> tuple[z3.ArithRef, z3.ArithRef]:
    """A new consumer starting at ``start``: its first JoinGroup's arrival (the pending member id handed
    out with MEMBER_ID_REQUIRED) and its second's (with the id), with the premise that the pending id does
    not expire in between."""
    nm = env.config.members[j].name
    first = start + env.net(f"{nm}.join1.req")
    again = first + env.net(f"{nm}.join1.resp") + env.net(f"{nm}.join2.req")
    premises.append(
        (
            f"{nm}'s pending member id expires before its second JoinGroup",
            z3.Not(rules.missed_deadline(rules.rearm_deadline(env, j, first), again)),
        )
    )
    return first, again


def _staggered(env: Env) -> _Staggered:
    """The symbolic run (the module's docstring tells it)."""
    cfg = env.config
    n = len(cfg.members)
    if n < 2:
        raise ValueError("the staggered-joins scenario needs at least two members")
    premises: list[tuple[str, z3.BoolRef]] = [
        (
            f"the group has more than {MAX_MEMBERS} members (the scenario has the subject and two new consumers)",
            z3.BoolVal(n <= MAX_MEMBERS),
        )
    ]
    n = min(n, MAX_MEMBERS)
    # auto-commit: a member that rejoins from a poll commits synchronously first (``onJoinPrepare`` →
    # ``maybeAutoCommitOffsetsSync``, ``ConsumerCoordinator.java`` clients 3.6.2: ``rules.rejoin_join_sent``);
    # one refused by its SyncGroup's answer sends JoinGroup again without (``joinGroupIfNeeded`` runs
    # ``onJoinPrepare`` once per completed join, ``needsJoinPrepare``); a new member has nothing to commit. The
    # periodic commits are left out: each only re-arms its member's deadline (``rules.commit_rearms``), which
    # the premises on the sessions leave out, so they can only exclude more runs.
    auto = {i: env.setting(i, "enable.auto.commit") == 1 for i in range(n)}
    subject = cfg.members[0].name
    rounds1, rounds2 = staggered_rounds(cfg)
    at = env.env_range("new.member.join.ms")
    start2 = env.choose(f"{cfg.members[1].name}.join_at", at.lo, at.hi)
    f2, a2 = _new_member(env, 1, start2, premises)
    gap: z3.ArithRef | None = None
    last_start = start2
    if n == 3:
        g = env.env_range("join.gap.ms")
        gap = env.choose(f"{cfg.members[2].name}.join_gap", g.lo, g.hi)
        last_start = start2 + gap
        f3, a3 = _new_member(env, 2, last_start, premises)
        premises.append(
            (
                f"{cfg.members[2].name}'s JoinGroup with its member id arrives no later than "
                f"{cfg.members[1].name}'s (the later member starts the first rebalance)",
                a3 > a2,
            )
        )
    started1 = a2

    # --- the first rebalance: the subject learns of it, rejoins at its next poll
    sent1 = z3.Int(f"{subject}.join_sent1")
    hbs1 = {0: _heartbeats(env, 0, subject, stop=sent1, count=rounds1)}
    learned1, some1 = _roll_learns(hbs1[0], started1)
    premises.append((f"{subject}'s {rounds1} unrolled heartbeats all arrive before the first rebalance starts", some1))
    for m in hbs1[0]:
        premises.append(
            (
                "a heartbeat arrives in the millisecond a rebalance starts",
                z3.Or(z3.Not(m.is_sent), m.arrives != started1),
            )
        )
    seg1 = {0: _roll_polls(env, 0, "", z3.IntVal(0), learned1, some1)}
    commit1 = _sync_commit(env, f"{subject}.rejoin-commit", seg1[0].rejoin, auto[0])
    env.add(sent1 == _after_commit(rules.rejoin_join_sent, auto[0], seg1[0].rejoin, commit1))
    premises.append(
        (
            "a batch exceeds max.poll.interval.ms (the member leaves: poll_timeout_leave)",
            seg1[0].current <= env.setting(0, "max.poll.interval.ms"),
        )
    )
    join1 = sent1 + env.net(f"{subject}.join1.req")
    premises.append(
        (
            f"{subject}'s session expires or lapses before it rejoins (needless_expiry)",
            _roll_alive(env, 0, hbs1[0], rules.rearm_deadline(env, 0, z3.IntVal(0)), z3.IntVal(0), sent1, join1),
        )
    )
    # the DelayedJoin is armed once, when the rebalance starts, with the largest rebalance timeout of the
    # members then in the group: the subject and the second member (``prepareRebalance``, 3.6.2)
    rt1 = rules.rebalance_timeout([rules.join_rebalance_timeout(env, 0), rules.join_rebalance_timeout(env, 1)])
    others = _max([join1, a2])
    joined = [join1, a2]
    in_first = z3.BoolVal(False)
    if n == 3:
        # the third member is pending (or a member) before the first join phase would complete without it:
        # when the subject and the second member have both joined, or at the rebalance timeout
        alone = z3.If(others <= started1 + rt1, others, started1 + rt1)
        in_first = f3 < alone
        premises.append(
            (
                f"{cfg.members[2].name}'s first JoinGroup arrives in the millisecond the first join phase completes",
                f3 != alone,
            )
        )
        joined.append(z3.If(in_first, a3, others))
        premises.append(
            (
                f"{cfg.members[2].name}'s JoinGroup with its member id arrives after the first rebalance's timeout "
                "(it would start the next one while the first completes: not encoded)",
                z3.Implies(in_first, a3 <= started1 + rt1),
            )
        )
    completed1, by1 = rules.join_completes(_max(joined), started1, rt1)
    evictions: list[tuple[str, z3.ArithRef, z3.BoolRef]] = [(subject, started1 + rt1, z3.Not(by1))]
    timer = "a new member's 5-minute new-member timer fires before its join phase completes (evicted_while_parked)"
    premises.append((timer, z3.Not(rules.new_member_timer_first(a2, completed1, by1, z3.BoolVal(True)))))
    names1 = {0: ("join1", "sync1"), 1: ("join2", "sync1")}
    present: dict[int, z3.BoolRef] = {}
    if n == 3:
        premises.append(
            (timer, z3.Implies(in_first, z3.Not(rules.new_member_timer_first(a3, completed1, by1, z3.BoolVal(False)))))
        )
        names1[2] = ("join2", "sync1")
        present[2] = in_first
        # the third member's JoinGroup answer and SyncGroup: in the first rebalance or in the second
        nm3 = cfg.members[2].name
        for name in ("join2.resp", "sync1.req", "sync1.resp"):
            env.net(f"{nm3}.{name}", by1)
    sync1 = _sync_phase(env, premises, by1, completed1, names1, present)
    settled1 = _max([sync1.answered[0], sync1.answered[1]])
    if n == 3:
        settled1 = z3.If(in_first, _max([settled1, sync1.answered[2]]), settled1)
    rules.fifo(
        env,
        _sent(
            [
                *hbs1[0],
                commit1,
                # removed by the join phase's timeout, the subject gets its JoinGroup answered (UNKNOWN_MEMBER_ID)
                # when it arrives; the answers after it are not modelled
                Message(sent1, join1, z3.If(by1, sync1.ja[0], join1 + sync1.ja[0] - completed1), z3.BoolVal(True), 0),
                Message(sync1.sent[0], sync1.arrives[0], sync1.answered[0], by1, 0),
            ]
        ),
    )
    if n == 2:
        return _Staggered(
            premises,
            last_start,
            settled1,
            evictions,
            by1,
            z3.BoolVal(False),
            {},
            hbs1,
            {},
            seg1,
            {},
            gap,
            start2,
        )

    # --- the third member's JoinGroup with its id after the first join phase completed: a second rebalance,
    # from CompletingRebalance (before the leader's SyncGroup arrives) or from Stable (after it). In
    # CompletingRebalance ``prepareRebalance`` answers the parked SyncGroups REBALANCE_IN_PROGRESS
    # (``resetAndPropagateAssignmentError``) and cancels the DelayedSync (``removeSyncExpiration``), 3.6.2;
    # ``GroupMetadataManager.prepareRebalance``, 4.0); a SyncGroup arriving once the rebalance started, in
    # PreparingRebalance, gets the same answer (``doSyncGroup``). A member so refused is still in the poll
    # that rejoined (``joinGroupIfNeeded``): it sends JoinGroup again at once, no poll between
    # (``AbstractCoordinator.java`` 3.6.2, lines 503-511). A member whose SyncGroup was answered before
    # (NONE: the leader's, and a follower's that arrived by then) is Stable: it learns of the rebalance from
    # a heartbeat answer and rejoins at its next poll.
    second = z3.And(by1, z3.Not(in_first))
    lead1 = sync1.arrives[0]
    premises.append(
        (
            f"{cfg.members[2].name}'s JoinGroup with its member id arrives in the millisecond a SyncGroup of the first "
            "rebalance arrives",
            z3.Implies(second, z3.And(a3 != lead1, a3 != sync1.arrives[1])),
        )
    )
    by_heartbeat = {0: z3.And(second, a3 > lead1)}
    by_heartbeat[1] = z3.And(second, a3 > lead1, sync1.arrives[1] < a3)
    started2 = a3
    refused = {0: sync1.answered[0]}
    refused[1] = z3.If(sync1.arrives[1] > a3, sync1.arrives[1], a3) + sync1.answered[1] - sync1.handled[1]
    for j in (0, 1):
        premises.append(
            (
                f"a heartbeat of {cfg.members[j].name} goes out before its SyncGroup's REBALANCE_IN_PROGRESS answer "
                "(not encoded)",
                z3.Implies(
                    z3.And(second, z3.Not(by_heartbeat[j]), rules.heartbeats_while_completing(env)),
                    refused[j] < sync1.ja[j] + env.setting(j, "heartbeat.interval.ms"),
                ),
            )
        )
    hbs2: dict[int, list[Message]] = {}
    seg2: dict[int, _Segment] = {}
    join2: dict[int, z3.ArithRef] = {}
    join_names = {0: "join2", 1: "join3"}
    for j in (0, 1):
        nm = cfg.members[j].name
        mpi = env.setting(j, "max.poll.interval.ms")
        sent2 = z3.Int(f"{nm}.join_sent2")
        # the heartbeat thread (and the poll timer: ``resetTimeouts``) restarts at the JoinGroup answer
        resumed = _resumed_heartbeats(
            env,
            j,
            sync1.ja[j],
            sync1.answered[j],
            sync1.handled[j],
            sent2,
            by_heartbeat[j],
            started2,
            rounds2,
            premises,
            "the second rebalance",
        )
        out, restarted, learned2, some2 = resumed.hbs, resumed.restarted, resumed.learned, resumed.some
        n_rec = env.setting(j, "max.poll.records")
        slow = n_rec * env.env_range("record.processing.ms").hi
        cap = z3.If(slow < mpi, slow, mpi)
        premises.append(
            (
                f"{nm}'s first batch after the first rebalance may end past max.poll.interval.ms since its poll "
                "timer restarted (poll_timeout_leave)",
                z3.Implies(by_heartbeat[j], sync1.answered[j] + cap <= restarted + mpi),
            )
        )
        seg = _roll_polls(env, j, "p2.", sync1.answered[j], learned2, z3.And(by_heartbeat[j], some2))
        # the subject's second commit before a rejoin, the second member's first
        commit2 = _sync_commit(
            env,
            f"{nm}.rejoin-commit2" if j == 0 else f"{nm}.rejoin-commit",
            seg.rejoin,
            z3.And(by_heartbeat[j], auto[j]),
        )
        env.add(sent2 == _after_commit(rules.rejoin_join_sent, auto[j], seg.rejoin, commit2))
        premises.append(
            (
                "a batch exceeds max.poll.interval.ms (the member leaves: poll_timeout_leave)",
                z3.Implies(by_heartbeat[j], seg.current <= mpi),
            )
        )
        join2[j] = z3.If(by_heartbeat[j], sent2, refused[j]) + env.net(f"{nm}.{join_names[j]}.req", second)
        premises.append(
            (
                f"{nm}'s session expires or lapses before it rejoins (needless_expiry)",
                z3.Implies(
                    by_heartbeat[j],
                    _roll_alive(
                        env,
                        j,
                        out,
                        rules.rearm_deadline(env, j, sync1.handled[j]),
                        restarted,
                        sent2,
                        join2[j],
                        sync1.handled[j],
                    ),
                ),
            )
        )
        hbs2[j], seg2[j] = out, seg
        sync_answered = z3.If(z3.And(second, z3.Not(by_heartbeat[j])), refused[j], sync1.answered[j])
        rejoin_sent = z3.If(by_heartbeat[j], sent2, refused[j])
        messages = [
            Message(sync1.sent[j], sync1.arrives[j], sync_answered, by1, 0),
            *out,
            commit2,
            Message(rejoin_sent, join2[j], None, second, 0),
        ]
        rules.fifo(env, _sent(messages))
    rt2 = rules.rebalance_timeout([rules.join_rebalance_timeout(env, j) for j in range(3)])
    completed2, by2 = rules.join_completes(_max([started2, join2[0], join2[1]]), started2, rt2)
    evictions += [
        (cfg.members[j].name, started2 + rt2, z3.And(second, z3.Not(by2), join2[j] > started2 + rt2)) for j in (0, 1)
    ]
    premises.append(
        (
            "a new member's 5-minute new-member timer fires before its join phase completes (evicted_while_parked)",
            z3.Implies(second, z3.Not(rules.new_member_timer_first(a3, completed2, by2, z3.BoolVal(True)))),
        )
    )
    sync2 = _sync_phase(
        env,
        premises,
        z3.And(second, by2),
        completed2,
        {0: ("join2", "sync2"), 1: ("join3", "sync2"), 2: ("join2", "sync1")},
    )
    settled2 = _max(list(sync2.answered.values()))
    return _Staggered(
        premises,
        last_start,
        z3.If(second, settled2, settled1),
        evictions,
        z3.And(by1, z3.Or(z3.Not(second), by2)),
        second,
        by_heartbeat,
        hbs1,
        hbs2,
        seg1,
        seg2,
        gap,
        start2,
    )


def _hook(env: Env, run: _Staggered) -> Callable[[z3.ModelRef, dict[str, int]], dict[str, int]]:
    """The simulation's names for a model of ``_staggered``: the third member's start as its ``join_at``;
    a member's batches numbered on across its segments (each segment's earlier batches split evenly, as
    ``schedule_of`` does for one segment; the second member's first batch is the one after its first
    SyncGroup answer). Heartbeats keep their names: the twin names a member's heartbeats from its first
    JoinGroup answer on ``p2hb{k}`` as z3 does (``Scenario.STAGGERED``), and a heartbeat of the subject
    that falls due after its rejoin, unsent, keeps the lateness z3 gave it."""
    cfg = env.config

    def hook(model: z3.ModelRef, out: dict[str, int]) -> dict[str, int]:
        if run.gap is not None:
            out.pop(f"{cfg.members[2].name}.join_gap", None)
            out[f"{cfg.members[2].name}.join_at"] = _val(model, run.first_start + run.gap)
        for j in (0, 1):
            nm = cfg.members[j].name
            second = j in run.by_heartbeat and _true(model, run.by_heartbeat[j])
            base = 0
            segments = [(run.seg1.get(j), "", True), (run.seg2.get(j), "p2.", second)]
            for seg, tag, used in segments:
                if seg is None:
                    continue
                out.pop(f"{nm}.{tag}current_batch", None)
                if not used:
                    continue
                earlier, total, current = (_val(model, e) for e in (seg.earlier, seg.before, seg.current))
                for i in range(earlier):
                    out[f"{nm}.batch{base + i}"] = total // earlier + (1 if i < total % earlier else 0)
                out[f"{nm}.batch{base + earlier}"] = current
                base += earlier + 1
        return out

    return hook


def _encode_settled(env: Env) -> Encoded:
    """From the last new member's start until the group is Stable with all its members, each holding its
    assignment (the last SyncGroup answer of the last rebalance), takes longer than
    ``staggered.settle.max.ms``. ``--solve staggered.settle.max.ms`` gives the worst case."""
    run = _staggered(env)
    limit = env.global_setting("questions", "staggered.settle.max.ms")
    took = run.settled - run.last_start
    premises = [*run.premises, ("a member is removed by a join phase's timeout (staggered_joins_evicts)", run.complete)]
    subject = env.config.members[0].name

    def predict(model: z3.ModelRef) -> Outcome:
        return Outcome("settled_late", subject, _val(model, run.settled), _val(model, took))

    return Encoded(env, took > limit, premises, predict, _hook(env, run))


def _encode_evicts(env: Env) -> Encoded:
    """A member already in the group, polling and heartbeating on time, is removed while the new members
    join: it has not rejoined when a join phase's rebalance timeout passes (``DelayedJoin`` →
    ``onCompleteJoin`` removes it, NOT_REJOINED). Its session running out is needless_expiry's question and
    a parked member's is evicted_while_parked's, both excluded by premises."""
    run = _staggered(env)

    def predict(model: z3.ModelRef) -> Outcome:
        t, name = min((_val(model, t), name) for name, t, b in run.evictions if _true(model, b))
        return Outcome("evicted", name, t)

    return Encoded(env, z3.Or(*[b for _, _, b in run.evictions]), run.premises, predict, _hook(env, run))


def _last_start(run: Run) -> int | None:
    """When the last new member's process started: its first JoinGroup's send."""
    starts = [m.sent for m in run.messages if m.dst == COORDINATOR and m.name == "join1" and m.src != run.subject]
    return max(starts) if starts else None


def _observe_settled(run: Run) -> Outcome | None:
    """The first moment the group is Stable with all its members, each with its assignment, after the last
    new member started, if that is more than ``staggered.settle.max.ms`` after it."""
    last = _last_start(run)
    if last is None:
        return None
    t = next((t for t in run.settled if t >= last), None)
    if t is None or t - last <= run.stagger_limit:
        return None
    return Outcome("settled_late", run.subject, t, t - last)


def _observe_evicted(run: Run) -> Outcome | None:
    """The first member removed other than by its own LeaveGroup (expired or NOT_REJOINED)."""
    hits = run.roll_evictions
    if not hits:
        return None
    m, t, _ = hits[0]
    return Outcome("evicted", m, t)


HORIZON = (
    "horizon: staggered joins — the subject Stable alone at t = 0, one or two new consumers starting "
    "new.member.join.ms and join.gap.ms apart — through every rebalance they cause: the first, and a second when "
    "the third member's JoinGroup arrives after the first join phase completed (in CompletingRebalance or once "
    "the group is Stable again); with auto-commit on, the synchronous commit before each rejoin from a poll "
    "(the periodic commits only re-arm deadlines, which the premises on the sessions leave out, so they can "
    "only exclude more runs); more than three members, a member leaving, a restart, a stall: not examined"
)


QUESTIONS: tuple[Question, ...] = (
    Question(
        "staggered_joins_settled",
        "can the group take longer than staggered.settle.max.ms, after the last of several new consumers started "
        "(staggered joins, join.gap.ms apart), to be Stable with all its members, each holding its assignment?",
        Scenario.STAGGERED,
        _encode_settled,
        _observe_settled,
        horizon=HORIZON,
    ),
    Question(
        "staggered_joins_evicts",
        "can a member that polls and heartbeats on time be removed (NOT_REJOINED) while new consumers join one "
        "after another (staggered joins, join.gap.ms apart)?",
        Scenario.STAGGERED,
        _encode_evicts,
        _observe_evicted,
        horizon=HORIZON,
    ),
)
