"""The timing mutants: each breaks one *timing* rule, switched on by name (``kgc timing --mutant``).

They are a vocabulary of their own, not entries of the model's catalogue (``kgc/model/mutants.py``):
the catalogue's mutants break rules of the untimed protocol, read by both coordinators from
``kgc.model.mutants.Rules`` and killed by the explorer's properties (``kgc mutants``); a timing
mutant breaks a rule about milliseconds — a client timer, a timeout carried in a request, a
coordinator deadline — that the untimed model does not have. Each is implemented twice, as the
timing layer itself is: a z3 constraint patched in ``kgc/timing/rules.py`` (``env.mutant``) and the
concrete simulation's rule in ``kgc/timing/simulate.py`` (``self.mutant``); ``tests/timing/
test_mutants.py`` shows each one flipping a shipped verdict on both sides.

Two timing mutants *are* catalogue mutants, under the catalogue's names: the same broken rule
seen through its timing (the consumer's auto-commit after the fetcher; the coordinator's expiry
ignoring a parked request, which the simulation switches on in the reference coordinator).

Adding a timing mutant: its name and description here, its constraint in ``kgc/timing/rules.py``,
its concrete rule in ``kgc/timing/simulate.py``, and its flip in ``tests/timing/test_mutants.py``.
"""

from __future__ import annotations

from kgc.model import mutants as catalogue

CLIENT_IGNORES_POLL_TIMER = "client_ignores_poll_timer"
SESSION_TIMER_FROM_SEND = "session_timer_from_send"
AUTO_COMMIT_AFTER_FETCH = catalogue.AUTO_COMMIT_AFTER_FETCH
LIVENESS_IGNORES_PARKED = catalogue.LIVENESS_IGNORES_PARKED
REBALANCE_TIMEOUT_IS_SESSION_TIMEOUT = "rebalance_timeout_is_session_timeout"
INITIAL_DELAY_NOT_EXTENDED = "initial_delay_not_extended"
HEARTBEAT_NOT_REARMED = "heartbeat_not_rearmed"
NEW_MEMBER_TIMER_NOT_COMPLETED = "new_member_timer_not_completed"
STATIC_REJOIN_KEEPS_OLD_TIMEOUTS = "static_rejoin_keeps_old_timeouts"
NO_HEARTBEAT_WHILE_COMPLETING = "no_heartbeat_while_completing"
COMMIT_NOT_REARMED = "commit_not_rearmed"

#: Every timing mutant by name, with what it does differently.
MUTANTS: dict[str, str] = {
    CLIENT_IGNORES_POLL_TIMER: "the heartbeat thread never checks the poll timer (no leave)",
    SESSION_TIMER_FROM_SEND: "the client's session timer restarts when a heartbeat is sent, not answered",
    AUTO_COMMIT_AFTER_FETCH: "auto-commit commits the position after the fetcher handed out the next batch",
    LIVENESS_IGNORES_PARKED: "the coordinator's heartbeat expiry ignores a parked JoinGroup/SyncGroup (KAFKA-9752)",
    REBALANCE_TIMEOUT_IS_SESSION_TIMEOUT: (
        "JoinGroup carries session.timeout.ms as rebalance timeout (v0, docs/kafka/group.md#states)"
    ),
    INITIAL_DELAY_NOT_EXTENDED: "the initial rebalance delay is not extended when new members join (KIP-134)",
    HEARTBEAT_NOT_REARMED: (
        "the coordinator's Heartbeat handler does not re-arm the member's DelayedHeartbeat "
        "(completeAndScheduleNextHeartbeatExpiration left out): a member heartbeating on time is expired "
        "session.timeout.ms after its last join, sync or commit"
    ),
    NEW_MEMBER_TIMER_NOT_COMPLETED: (
        "KAFKA-9232 put back (Kafka 2.4.0, fixed by apache/kafka#7753): the DelayedHeartbeat a JoinGroup v3 "
        "new member gets with the fixed 5-minute new-member timeout is never completed by the join's completion "
        "or a heartbeat, and removes the member when it fires although the member heartbeats on time"
    ),
    STATIC_REJOIN_KEEPS_OLD_TIMEOUTS: (
        "KAFKA-14009 put back (Kafka <= 3.3.1, fixed by apache/kafka#12308 in 3.3.2/3.4.0): a static member that "
        "rejoins with a new process (JoinGroup with its group.instance.id, no member id) keeps the session and "
        "rebalance timeouts of the process it replaces (updateStaticMemberAndRebalance's updateMember took no "
        "timeouts), so the coordinator holds it to the old session.timeout.ms"
    ),
    NO_HEARTBEAT_WHILE_COMPLETING: (
        "KAFKA-10134 put back (clients before 2.7.0, fixed by apache/kafka#8834): the heartbeat thread sends nothing "
        "until the member is Stable (HeartbeatThread.run disabled itself while the state was not STABLE), "
        "so between its JoinGroup answer and its SyncGroup answer — the leader's assignment — nothing re-arms the "
        "member's session at the coordinator"
    ),
    COMMIT_NOT_REARMED: (
        "the coordinator's OffsetCommit handler does not re-arm the committer's DelayedHeartbeat "
        "(completeAndScheduleNextHeartbeatExpiration left out of doCommitOffsets): a member's auto-commits no "
        "longer keep its session, so a dead member's commits just before it died no longer delay its expiry"
    ),
}

#: The timing mutants that are the model catalogue's, under the same name.
IN_CATALOGUE = frozenset(name for name in MUTANTS if name in catalogue.NAMES)
