"""A catalogue of protocol bugs the checker must catch: named mutants of the coordinator and the
consumer, switched on by name (``Config.mutant``, ``kgc check --mutant NAME``), never by editing
code.

Each mutant is a realistic deviation from Kafka 3.6.2's classic group protocol: a guard left out,
a callback not invoked, a rule of an older release. It names the Kafka code path (and JIRA where
one exists) it corresponds to and the property expected to kill it: the property that the
explorer's shortest counterexample violates. ``kgc mutants`` runs the explorer against each.

Each mutant *breaks one rule* of the protocol. :class:`Rules` names every rule a mutant can
break, after the Kafka rule it is (``sync_checks_generation``: ``validateSyncGroup`` answers
ILLEGAL_GENERATION to another generation); :data:`KAFKA` follows them all, and a mutant's entry
names the rule it breaks (``rule=``); :data:`RULES`, the patch table, gives each mutant's rules.
The coordinators ask the rule, never the mutant: the model binds ``RULES[config.mutant]`` once
per transaction (``GroupTx.rules`` in ``kgc/model/coordinator.py``; ``kgc/model/consumer.py`` indexes it
where a consumer rule applies) and reads a field where the rule applies (``if ... and
tx.rules.sync_checks_generation``): an attribute load where a string comparison was, on the
engine's hot path. The reference implementation (``kgc/reference/coordinator.py``) reads the same
rules (``ReferenceCoordinator.rules``). So a new mutant of a rule already listed is one entry
here; a mutant of a new rule adds the field here and reads it where that rule lives in each
coordinator.

The generation checks of SyncGroup and OffsetCommit are reached only through static membership
(KIP-345, ``Config.static_consumers``, one by default): a static member that misses a forced join
completion stays in the group with an older generation, and its consumer's next SyncGroup or
OffsetCommit carries it. Without static members a current member never sends a stale generation
(one request in flight per connection; dynamic members that did not rejoin are removed), so on
``static_consumers = 0`` those two mutants are equivalent (the tests show it). Two deviations are
*equivalent* under the model whatever the configuration: Heartbeat's pre-2.7 answer in
CompletingRebalance, since a current member never heartbeats there, and an OffsetCommit's
REBALANCE_IN_PROGRESS resetting the consumer (the second half of kafka-python#2614), since the model's
consumer never commits between its JoinGroup and SyncGroup answers (nor does the application's own commit,
``Config.application_commits``, which needs the consumer Stable). They are catalogued with that reason
(``equivalent``) and shown equivalent by the tests (identical reachable state graphs), not counted as
kills.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

COORDINATOR = "coordinator"
CONSUMER = "consumer"

# The mutants' names (``Config.mutant``, ``kgc check --mutant NAME``).
SYNC_NONE_IN_PREPARING = "sync_none_in_preparing"
REBALANCE_KEEPS_PARKED_SYNCS = "rebalance_keeps_parked_syncs"
SYNC_SKIPS_GENERATION_CHECK = "sync_skips_generation_check"
STORE_CALLBACK_UNGUARDED = "store_callback_unguarded"
STORE_CALLBACK_SKIPS_GENERATION = "store_callback_skips_generation"
DELAYED_JOIN_PER_JOIN = "delayed_join_per_join"
LIVENESS_IGNORES_PARKED = "liveness_ignores_parked"
COMPLETE_JOIN_KEEPS_ABSENT = "complete_join_keeps_absent"
LEADER_NOT_REELECTED = "leader_not_reelected"
HEARTBEAT_NONE_IN_REBALANCE = "heartbeat_none_in_rebalance"
HEARTBEAT_REBALANCING_IN_COMPLETING = "heartbeat_rebalancing_in_completing"
COMMIT_SKIPS_GENERATION_CHECK = "commit_skips_generation_check"
COMMIT_UNFENCED = "commit_unfenced"
FOLLOWER_REJOIN_REBALANCES = "follower_rejoin_rebalances"
LEAVE_SKIPS_REBALANCE = "leave_skips_rebalance"
AUTO_COMMIT_AFTER_FETCH = "auto_commit_after_fetch"
ASSIGN_WITHOUT_REVOKE = "assign_without_revoke"
STATIC_JOIN_ADDS_MEMBER = "static_join_adds_member"
# Liveness mutants: no safety property tells them apart, a liveness property does.
JOIN_EXPIRY_NOT_FORCED = "join_expiry_not_forced"
HEARTBEAT_RESETS_REBALANCE = "heartbeat_resets_rebalance"
JOIN_IN_REBALANCE_REJECTED = "join_in_rebalance_rejected"
NO_RETRY_AFTER_COORDINATOR_ERROR = "no_retry_after_coordinator_error"
# Rules of other clients, put back for the real bugs of kgc/model/bugs.py.
COMMIT_MEMBER_ERROR_IGNORED = "commit_member_error_ignored"
ILLEGAL_GENERATION_RESETS_MEMBER_ID = "illegal_generation_resets_member_id"
REBALANCE_IN_PROGRESS_RESETS_GENERATION = "rebalance_in_progress_resets_generation"
PLAN_OMITS_UNASSIGNED = "plan_omits_unassigned"
STATIC_REPLACEMENT_SKIPS_REBALANCE = "static_replacement_skips_rebalance"
LEADER_ANSWER_UNWRITABLE = "leader_answer_unwritable"
COORDINATOR_ERROR_RESETS_MEMBER = "coordinator_error_resets_member"
COMPLETE_JOIN_KEEPS_HEARTBEATS = "complete_join_keeps_heartbeats"
UNLOAD_LEAVES_PARKED = "unload_leaves_parked"
SIMPLE_COMMIT_CHECKS_INSTANCE_ID = "simple_commit_checks_instance_id"
STANDALONE = (("standalone_committer", "true"),)
"""What a mutant of the commit rule for clients outside the group needs (``Mutant.needs``): such a client
(``Config.standalone_committer``)."""
COMMIT_OUTSIDE_STABLE_WITHOUT_GENERATION = "commit_outside_stable_without_generation"
APPLICATION_COMMITS = (("application_commits", "true"),)
"""What the mutants of the application's commits need (``Mutant.needs``): the application commit step
(``Config.application_commits``)."""
# Rules of the cooperative protocol (KIP-429; Config.assignor = "cooperative-sticky").
COOPERATIVE = (("assignor", "cooperative-sticky"),)
"""What the cooperative protocol's mutants need (``Mutant.needs``): consumers that offer the
cooperative-sticky assignor alone."""
JOIN_PREPARE_SKIPPED_AFTER_RESET = "join_prepare_skipped_after_reset"
CLAIMS_WITHOUT_GENERATION = "claims_without_generation"
STALE_CLAIMS_DROPPED = "stale_claims_dropped"
SYNC_REBALANCE_RESETS_GENERATION = "sync_rebalance_resets_generation"
STALE_CLAIM_HIDES_MOVE = "stale_claim_hides_move"
OLDEST_CLAIM_WINS = "oldest_claim_wins"


@dataclass(frozen=True)
class Mutant:
    """One named deviation of the protocol."""

    name: str
    description: str
    """One line: what the mutant does differently."""
    side: str
    """``coordinator`` or ``consumer``."""
    where: str
    """The Kafka code path (3.6.2 unless said otherwise), seed or reference section it deviates from."""
    jira: str
    """The Kafka JIRA / KIP it corresponds to, or "" when none does."""
    expected: str
    """The property expected to kill it ("" for an equivalent mutant); a liveness property
    (``kgc.properties.temporal``) for the liveness mutants."""
    equivalent: str = ""
    """Why no behaviour of the model can tell it from the protocol ("" for a killable mutant)."""
    rule: str = field(kw_only=True)
    """The field of :class:`Rules` it breaks: with this mutant the rule does not hold."""
    needs: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)
    """Configuration fields (name, value as on the command line) without which the rule is never
    exercised, set over the run's configuration when the mutant is explored
    (``kgc.engine_support.mutation.explore``): the cooperative protocol's rules need a cooperative
    assignor. Empty for a rule of every configuration."""

    def __reduce__(self) -> tuple[Callable[..., Mutant], tuple[Any, ...]]:
        """Pickled by its fields, every one (a compiled frozen class cannot be unpickled attribute by
        attribute): the positional ones in order, then the keyword-only ``rule`` and ``needs``, which
        ``Mutant(*args)`` cannot take, so a worker gets back the mutant it was sent."""
        return (
            _unpickle_mutant,
            (
                self.name,
                self.description,
                self.side,
                self.where,
                self.jira,
                self.expected,
                self.equivalent,
                self.rule,
                self.needs,
            ),
        )

    @property
    def killable(self) -> bool:
        return not self.equivalent

    @property
    def liveness(self) -> bool:
        """Killed by a liveness property only: no safety property tells it apart."""
        return self.expected in LIVENESS_PROPERTIES

    @property
    def in_reference(self) -> bool:
        """The reference implementation (``kgc/reference``) has it too: a coordinator mutant a
        finite run shows. The liveness mutants are the model's only (their effect is an infinite
        behaviour; a scenario or a fuzz run would pass them either way)."""
        return self.side == COORDINATOR and not self.liveness


class Rules(NamedTuple):
    """The rules of Kafka 3.6.2's classic group protocol that a catalogued mutant breaks, each
    ``True`` where the protocol follows it (:data:`KAFKA`). A coordinator reads them where the
    rule applies; :func:`rules_for` gives a mutant's, with its rule ``False``."""

    rebalance_needs_can_rebalance: bool = True
    """``maybePrepareRebalance`` starts a rebalance only when ``canRebalance`` (Stable,
    CompletingRebalance, Empty): one DelayedJoin per rebalance (docs/kafka/group.md#states)."""
    rebalance_fails_parked_syncs: bool = True
    """``prepareRebalance`` from CompletingRebalance answers the parked SyncGroups
    REBALANCE_IN_PROGRESS (``resetAndPropagateAssignmentError``; docs/kafka/requests.md#syncgroup,
    docs/kafka/group.md#the-storegroup-race)."""
    complete_join_removes_absent: bool = True
    """``onCompleteJoin`` removes the dynamic members that did not rejoin (docs/kafka/timers.md#join-phase)."""
    leader_reelected: bool = True
    """``GroupMetadata.remove`` and ``maybeElectNewJoinedLeader`` replace a leader that left or did
    not rejoin (docs/kafka/timers.md#join-phase)."""
    static_join_replaces_holder: bool = True
    """A static member's JoinGroup without a member id takes the place of the member holding its
    ``group.instance.id`` (``doStaticNewMemberJoinGroup``; docs/kafka/requests.md#joingroup)."""
    join_in_rebalance_parked: bool = True
    """A known member's JoinGroup in PreparingRebalance is parked until the join phase completes
    (``doCurrentMemberJoinGroup``; docs/kafka/requests.md#joingroup)."""
    follower_rejoin_answered_at_once: bool = True
    """A follower's JoinGroup in Stable with unchanged metadata is answered at once, without a
    rebalance (``doCurrentMemberJoinGroup``, case Stable; docs/kafka/group.md#states)."""
    sync_checks_generation: bool = True
    """``validateSyncGroup`` answers ILLEGAL_GENERATION to another generation (docs/kafka/requests.md#syncgroup)."""
    sync_in_preparing_rebalancing: bool = True
    """SyncGroup in PreparingRebalance answers REBALANCE_IN_PROGRESS (``doSyncGroup``; docs/kafka/group.md#states)."""
    store_callback_guarded: bool = True
    """The storeGroup callback acts only if the group is still in CompletingRebalance of the
    write's generation (``doSyncGroup``; docs/kafka/group.md#the-storegroup-race)."""
    store_callback_checks_generation: bool = True
    """That guard compares the generation too, not only the state (docs/kafka/group.md#the-storegroup-race, the
    storeGroup
    race)."""
    heartbeat_keeps_join_phase: bool = True
    """A Heartbeat in PreparingRebalance leaves the join phase alone (``handleHeartbeat``)."""
    heartbeat_in_preparing_rebalancing: bool = True
    """Heartbeat in PreparingRebalance answers REBALANCE_IN_PROGRESS (``handleHeartbeat``;
    docs/kafka/group.md#states)."""
    heartbeat_none_in_completing: bool = True
    """Heartbeat in CompletingRebalance answers NONE (2.7+, KAFKA-10134; docs/kafka/requests.md#heartbeat,
    docs/kafka/versions.md#history)."""
    leave_rebalances: bool = True
    """LeaveGroup removes the member through ``removeMemberAndUpdateGroup``, which rebalances
    (docs/kafka/group.md#states)."""
    commit_fenced: bool = True
    """OffsetCommit validates the member (``validateOffsetCommit``, KIP-447; docs/kafka/group.md#states)."""
    commit_checks_generation: bool = True
    """OffsetCommit answers ILLEGAL_GENERATION to another generation (``validateOffsetCommit``;
    docs/kafka/requests.md#offsetcommit)."""
    parked_member_alive: bool = True
    """``hasSatisfiedHeartbeat``: a member parked in JoinGroup or SyncGroup is alive when its
    heartbeat timer expires (KAFKA-9752; docs/kafka/group.md#states)."""
    join_expiry_forces_completion: bool = True
    """The join timer's expiry forces the join phase to complete (``DelayedOperation.run`` →
    ``forceComplete``; docs/kafka/timers.md#join-phase)."""
    auto_commit_processed_only: bool = True
    """The consumer's auto-commit covers only processed records (docs/kafka/consumer.md#auto-commit)."""
    revoke_before_assign: bool = True
    """The eager consumer revokes its partitions before rejoining (``onJoinPrepare``;
    docs/kafka/requests.md#syncgroup)."""
    retry_after_coordinator_error: bool = True
    """After COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR on a JoinGroup or SyncGroup the consumer
    rediscovers the coordinator and rejoins (``AbstractCoordinator``; docs/kafka/consumer.md#heartbeats)."""
    commit_member_error_resets: bool = True
    """An OffsetCommit answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION resets the consumer: it gives
    up its partitions and rejoins (Java ``OffsetCommitResponseHandler`` → ``resetGenerationOnResponseError``;
    franz-go 1.21.3, twmb/franz-go 824e34d2, for franz-go#1326)."""
    illegal_generation_keeps_member_id: bool = True
    """ILLEGAL_GENERATION resets the consumer's generation but keeps its member id, so it rejoins as the
    same member (Java ``resetGenerationOnResponseError``, KAFKA-13419, apache/kafka#11451; kafka-python
    3.0.0, dpkp/kafka-python#3017)."""
    rebalance_in_progress_keeps_generation: bool = True
    """An OffsetCommit answered REBALANCE_IN_PROGRESS only asks for a rejoin: the member id and
    generation are kept (Java ``OffsetCommitResponseHandler``, ``requestRejoin``; kafka-python 2.2.4,
    dpkp/kafka-python#2614)."""
    static_replacement_rebalances_completing: bool = True
    """A static member's id-less JoinGroup in CompletingRebalance starts a rebalance: the leader may have
    planned for the old member id (``updateStaticMemberAndRebalance``, KAFKA-9801, apache/kafka#8405,
    2.5.1/2.6.0; docs/kafka/requests.md#joingroup)."""
    leader_answer_without_instance_ids: bool = True
    """The JoinGroup answer to a leader that sent JoinGroup below v5 can be written although members carry a
    ``group.instance.id``: the field is ignorable in the answer's member list (``JoinGroupResponse.json``,
    KAFKA-14422, apache/kafka#12909, 3.2.4/3.3.2/3.4.0)."""
    complete_join_cancels_heartbeats: bool = True
    """``onCompleteJoin`` completes the heartbeat timer of each member it removes, so no timer of a removed
    member fires later (``removeHeartbeatForLeavingMember``, KAFKA-7196, apache/kafka#5556, 2.1.0)."""
    coordinator_error_keeps_member: bool = True
    """A JoinGroup or SyncGroup answered COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR (a retriable error) only
    asks for a rejoin: the member id and generation are kept, so the consumer rejoins as the same member
    (``AbstractCoordinator.joinGroupIfNeeded``, KAFKA-13214, apache/kafka#11231, 2.8.1/3.0.0)."""
    plan_lists_every_member: bool = True
    """The leader's SyncGroup plan has an entry for every member, empty for a member given no partition
    (sarama 1.35.0, IBM/sarama#2292; the Java ``ConsumerCoordinator.onLeaderElected`` plan has one too)."""
    reset_reruns_join_prepare: bool = True
    """A cooperative consumer whose member id or generation is reset by a JoinGroup or SyncGroup answer
    runs ``onJoinPrepare`` again before it rejoins, so it loses the partitions it owned
    (``AbstractCoordinator.resetStateAndRejoin`` sets ``needsJoinPrepare``; KAFKA-12983,
    apache/kafka#10986, 3.0.0)."""
    claims_carry_generation: bool = True
    """The cooperative-sticky assignor reads the generation each member's owned partitions were owned in
    and drops a partition two members of one generation claim (``CooperativeStickyAssignor.memberData``,
    ``AbstractStickyAssignor.allSubscriptionsEqual``; KAFKA-12984, apache/kafka#10985, 3.0.0)."""
    stale_claims_counted: bool = True
    """The cooperative-sticky assignor counts the claim of a member of an older generation when no newer
    member claims the partition, instead of taking that member to own nothing
    (``AbstractStickyAssignor.allSubscriptionsEqual``; KAFKA-14639, apache/kafka#13550, 3.5.0)."""
    sync_rebalance_keeps_generation: bool = True
    """A SyncGroup answered REBALANCE_IN_PROGRESS only asks for a rejoin: the consumer keeps its generation, so a
    cooperative consumer's ``onJoinPrepare`` revokes nothing and its JoinGroup claims what it owns
    (``AbstractCoordinator.SyncGroupResponseHandler``; the reset that apache/kafka#12140, KAFKA-13891, added in
    3.3.0 was reverted by apache/kafka#12794, KAFKA-14016, 3.3.2/3.4.0)."""
    stale_claim_moves_withheld: bool = True
    """A partition the cooperative-sticky plan gives a member whose own claim on it a strictly newer claim of
    another member beats is a move like any other: it is left out for a round while its owner revokes it
    (Kafka 4.0.2 ``AbstractStickyAssignor`` computes the transfers from the claims it validated; franz-go
    1.21.4, ``BalancePlan.AdjustCooperative``, twmb/franz-go d7ae9db9)."""
    newest_claim_wins: bool = True
    """Of two claims of one partition from different generations the cooperative-sticky assignor lets the newer
    keep it, and it drops a partition two members claim from one generation (Kafka 4.0.2
    ``AbstractStickyAssignor.allSubscriptionsEqual``; librdkafka 2.2.0, ``prepopulateCurrentAssignments``,
    confluentinc/librdkafka#4252)."""
    commit_needs_stable_generation: bool = True
    """A commit the application asks for while its consumer is not Stable fails in the client and sends
    nothing (Kafka 4.0 ``ConsumerCoordinator.sendOffsetCommitRequest``: with auto-assigned partitions
    ``generationIfStable()`` is null outside STABLE, and the commit fails with RebalanceInProgressException or
    CommitFailedException; kafka-python 2.2.4, dpkp/kafka-python#2614, commit d9c2009d)."""
    unload_completes_parked: bool = True
    """Unloading the group's partition answers its parked JoinGroups (PreparingRebalance) and SyncGroups
    (CompletingRebalance, Stable) NOT_COORDINATOR (Kafka 4.0.2 ``GroupMetadataManager.onUnloaded``, added by
    KAFKA-16148, apache/kafka#15446, 3.8.0; 3.6.2 ``GroupCoordinator.onGroupUnloaded`` did it already)."""
    simple_commit_accepted_when_empty: bool = True
    """An OffsetCommit with generation -1 (a client outside the group: an ``assign()`` consumer or an admin
    client) to an Empty group is accepted before its member id and ``group.instance.id`` are validated
    (Kafka 4.0.2 ``ClassicGroup.validateOffsetCommit``; 3.3.0+ ``GroupCoordinator.validateOffsetCommit``,
    KAFKA-14201, apache/kafka#12598)."""


KAFKA = Rules()
"""Every rule as Kafka follows it: the rules without a mutant."""


CATALOGUE: tuple[Mutant, ...] = (
    Mutant(
        SYNC_NONE_IN_PREPARING,
        "SyncGroup in PreparingRebalance answers NONE with the member's old assignment instead of "
        "REBALANCE_IN_PROGRESS.",
        COORDINATOR,
        "GroupCoordinator.doSyncGroup, case PreparingRebalance; docs/kafka/group.md#states (SyncGroup in "
        "PreparingRebalance)",
        "",
        "no_stale_assignment",
        rule="sync_in_preparing_rebalancing",
    ),
    Mutant(
        REBALANCE_KEEPS_PARKED_SYNCS,
        "prepareRebalance from CompletingRebalance does not fail the parked SyncGroup callbacks "
        "(resetAndPropagateAssignmentError skipped).",
        COORDINATOR,
        "GroupCoordinator.prepareRebalance; docs/kafka/requests.md#syncgroup; docs/kafka/group.md#the-storegroup-race",
        "",
        "parked_only_in_phase",
        rule="rebalance_fails_parked_syncs",
    ),
    Mutant(
        SYNC_SKIPS_GENERATION_CHECK,
        "doSyncGroup skips the generation check (validateSyncGroup never answers ILLEGAL_GENERATION).",
        COORDINATOR,
        "GroupCoordinator.validateSyncGroup; docs/kafka/requests.md#syncgroup (doSyncGroup: ILLEGAL_GENERATION)",
        "",
        "no_stale_assignment",
        rule="sync_checks_generation",
    ),
    Mutant(
        STORE_CALLBACK_UNGUARDED,
        "The storeGroup callback applies the leader's assignment without re-checking the group's state and generation.",
        COORDINATOR,
        "GroupCoordinator.doSyncGroup, storeGroup callback guard; docs/kafka/requests.md#syncgroup; "
        "docs/kafka/group.md#the-storegroup-race",
        "",
        "parked_only_in_phase",
        rule="store_callback_guarded",
    ),
    Mutant(
        STORE_CALLBACK_SKIPS_GENERATION,
        "The storeGroup callback re-checks the state (CompletingRebalance) but not the generation, so "
        "the outcome of a late write of generation g acts on generation g+1.",
        COORDINATOR,
        "GroupCoordinator.doSyncGroup, storeGroup callback guard (generationId == group.generationId); "
        "docs/kafka/group.md#the-storegroup-race (the storeGroup race)",
        "",
        "rebalance_triggers",
        rule="store_callback_checks_generation",
    ),
    Mutant(
        DELAYED_JOIN_PER_JOIN,
        "Every JoinGroup creates its own DelayedJoin: prepareRebalance runs even in PreparingRebalance.",
        COORDINATOR,
        "GroupCoordinator.maybePrepareRebalance (canRebalance); docs/kafka/group.md#states (one DelayedJoin per "
        "rebalance)",
        "",
        "one_join_per_generation",
        rule="rebalance_needs_can_rebalance",
    ),
    Mutant(
        LIVENESS_IGNORES_PARKED,
        "The DelayedHeartbeat alive check ignores awaitingJoin / awaitingSync, so a parked member's "
        "session timeout removes it.",
        COORDINATOR,
        "MemberMetadata.hasSatisfiedHeartbeat, GroupCoordinator.onExpireHeartbeat; docs/kafka/group.md#states "
        "(member is alive)",
        "KAFKA-9752",
        "no_expiry_while_parked",
        rule="parked_member_alive",
    ),
    Mutant(
        COMPLETE_JOIN_KEEPS_ABSENT,
        "onCompleteJoin keeps members that did not rejoin in the new generation.",
        COORDINATOR,
        "GroupCoordinator.onCompleteJoin (removal of dynamic members not awaiting join); "
        "docs/kafka/timers.md#join-phase",
        "KAFKA-8220",
        "generation_members_rejoined",
        rule="complete_join_removes_absent",
    ),
    Mutant(
        LEADER_NOT_REELECTED,
        "The leader is not re-elected when it leaves or is removed, nor at join completion.",
        COORDINATOR,
        "GroupMetadata.remove, GroupMetadata.maybeElectNewJoinedLeader; docs/kafka/timers.md#join-phase (leader)",
        "KAFKA-8220",
        "leader_is_member",
        rule="leader_reelected",
    ),
    Mutant(
        HEARTBEAT_NONE_IN_REBALANCE,
        "Heartbeat answers NONE during a rebalance (PreparingRebalance), so members never learn to rejoin.",
        COORDINATOR,
        "GroupCoordinator.handleHeartbeat, case PreparingRebalance; docs/kafka/group.md#states (heartbeat handling)",
        "",
        "heartbeat_errors",
        rule="heartbeat_in_preparing_rebalancing",
    ),
    Mutant(
        HEARTBEAT_REBALANCING_IN_COMPLETING,
        "Heartbeat in CompletingRebalance answers REBALANCE_IN_PROGRESS (the rule up to 2.6).",
        COORDINATOR,
        "GroupCoordinator.handleHeartbeat, case CompletingRebalance; docs/kafka/requests.md#heartbeat, "
        "docs/kafka/versions.md#history",
        "KAFKA-10134",
        "",
        "a current member never heartbeats in CompletingRebalance in the model: a consumer heartbeats "
        "only once Stable, which it becomes in a generation only after its group left "
        "CompletingRebalance for that generation; a static member left behind carries an older "
        "generation and is answered ILLEGAL_GENERATION first",
        rule="heartbeat_none_in_completing",
    ),
    Mutant(
        COMMIT_SKIPS_GENERATION_CHECK,
        "OffsetCommit is accepted from a stale generation (doCommitOffsets skips the generation check).",
        COORDINATOR,
        "GroupCoordinator.validateOffsetCommit (generationId != group.generationId); "
        "docs/kafka/requests.md#offsetcommit",
        "",
        "commit_fencing",
        rule="commit_checks_generation",
    ),
    Mutant(
        COMMIT_UNFENCED,
        "OffsetCommit is accepted without member and generation fencing, so a zombie of an older "
        "generation (removed by its session timeout) commits.",
        COORDINATOR,
        "GroupCoordinator.validateOffsetCommit (validateCurrentMember, generation); docs/kafka/group.md#states "
        "(commit fencing)",
        "KIP-447",
        "commit_fencing",
        rule="commit_fenced",
    ),
    Mutant(
        STATIC_JOIN_ADDS_MEMBER,
        "A static member's JoinGroup without a member id is added as a new member even when its "
        "group.instance.id is held, instead of taking the old member's place.",
        COORDINATOR,
        "GroupCoordinator.doStaticNewMemberJoinGroup (currentStaticMemberId, replaceStaticMember); "
        "docs/kafka/requests.md#joingroup",
        "KIP-345",
        "one_member_per_instance",
        rule="static_join_replaces_holder",
    ),
    Mutant(
        FOLLOWER_REJOIN_REBALANCES,
        "A follower's JoinGroup in Stable with unchanged metadata triggers a rebalance instead of an immediate answer.",
        COORDINATOR,
        "GroupCoordinator.doCurrentMemberJoinGroup, case Stable; docs/kafka/group.md#states (follower lost its "
        "JoinGroup response)",
        "",
        "rebalance_triggers",
        rule="follower_rejoin_answered_at_once",
    ),
    Mutant(
        LEAVE_SKIPS_REBALANCE,
        "LeaveGroup removes the member without starting a rebalance.",
        COORDINATOR,
        "GroupCoordinator.removeMemberAndUpdateGroup from handleLeaveGroup; docs/kafka/group.md#states (LeaveGroup "
        "in each state)",
        "",
        "empty_iff_no_members",
        rule="leave_rebalances",
    ),
    Mutant(
        AUTO_COMMIT_AFTER_FETCH,
        "Auto-commit commits the position after the fetcher advanced it, covering records not yet processed.",
        CONSUMER,
        "ConsumerCoordinator.maybeAutoCommitOffsetsAsync inside KafkaConsumer.poll; docs/kafka/consumer.md#auto-commit",
        "",
        "commit_fencing",
        rule="auto_commit_processed_only",
    ),
    Mutant(
        ASSIGN_WITHOUT_REVOKE,
        "The consumer keeps its partitions through a rebalance and adds the new assignment to them "
        "(incremental assignment without the revocation round of the cooperative protocol).",
        CONSUMER,
        "ConsumerCoordinator.onJoinPrepare (eager revocation) and onJoinComplete; docs/kafka/requests.md#syncgroup "
        "(joinGroupIfNeeded)",
        "KIP-429, KAFKA-12984",
        "exclusive_ownership",
        rule="revoke_before_assign",
    ),
    Mutant(
        JOIN_EXPIRY_NOT_FORCED,
        "The join timer's expiry does not force the join phase to complete (DelayedOperation.forceComplete "
        "skipped): a DelayedJoin completes only once every member has rejoined, an InitialDelayedJoin never.",
        COORDINATOR,
        "DelayedJoin / InitialDelayedJoin (onExpiration → onComplete → GroupCoordinator.onCompleteJoin), "
        "DelayedOperation.run; docs/kafka/timers.md#join-phase",
        "",
        "rebalance_completes",
        rule="join_expiry_forces_completion",
    ),
    Mutant(
        HEARTBEAT_RESETS_REBALANCE,
        "A Heartbeat in PreparingRebalance restarts the join phase: the coordinator forgets which members "
        "have rejoined (awaitingJoinCallback cleared) without answering their parked JoinGroups.",
        COORDINATOR,
        "GroupCoordinator.handleHeartbeat, case PreparingRebalance; MemberMetadata.awaitingJoinCallback; "
        "docs/kafka/requests.md#heartbeat, docs/kafka/timers.md#join-phase",
        "",
        "rebalance_completes",
        rule="heartbeat_keeps_join_phase",
    ),
    Mutant(
        JOIN_IN_REBALANCE_REJECTED,
        "A known member's JoinGroup in PreparingRebalance is answered REBALANCE_IN_PROGRESS instead of being "
        "parked, so the member rejoins endlessly and never counts as rejoined.",
        COORDINATOR,
        "GroupCoordinator.doCurrentMemberJoinGroup, case PreparingRebalance (updateMemberAndRebalance); "
        "docs/kafka/requests.md#joingroup",
        "",
        "rebalance_completes",
        rule="join_in_rebalance_parked",
    ),
    Mutant(
        NO_RETRY_AFTER_COORDINATOR_ERROR,
        "After COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR on a JoinGroup or SyncGroup the consumer marks the "
        "coordinator unknown and never rejoins.",
        CONSUMER,
        "AbstractCoordinator.SyncGroupResponseHandler / JoinGroupResponseHandler (markCoordinatorUnknown, then "
        "requestRejoin); docs/kafka/consumer.md#heartbeats (joinGroupIfNeeded retries); "
        "docs/kafka/group.md#the-storegroup-race",
        "",
        "rebalance_completes",
        rule="retry_after_coordinator_error",
    ),
)

CATALOGUE += (
    Mutant(
        COMMIT_MEMBER_ERROR_IGNORED,
        "An OffsetCommit answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION is ignored: the consumer keeps its "
        "partitions and consumes on as a zombie (franz-go before 1.21.3, franz-go#1326).",
        CONSUMER,
        "ConsumerCoordinator.OffsetCommitResponseHandler (resetGenerationOnResponseError); franz-go "
        "pkg/kgo/consumer_group.go, commit error handling (twmb/franz-go 824e34d2)",
        "franz-go#1326",
        "fenced_consumer_releases",
        rule="commit_member_error_resets",
    ),
    Mutant(
        ILLEGAL_GENERATION_RESETS_MEMBER_ID,
        "ILLEGAL_GENERATION (Heartbeat, SyncGroup, OffsetCommit) resets the member id as well as the generation, "
        "so the consumer rejoins as a new member (kafka-python before 3.0.0; Java before KAFKA-13419).",
        CONSUMER,
        "AbstractCoordinator.resetGenerationOnResponseError (apache/kafka#11451); kafka-python "
        "kafka/coordinator/consumer.py, _handle_offset_commit_response (dpkp/kafka-python#3017)",
        "KAFKA-13419",
        "member_identity_stable",
        rule="illegal_generation_keeps_member_id",
    ),
    Mutant(
        REBALANCE_IN_PROGRESS_RESETS_GENERATION,
        "An OffsetCommit answered REBALANCE_IN_PROGRESS resets the member id and generation and gives up the "
        "partitions, instead of only asking for a rejoin (kafka-python before 2.2.4).",
        CONSUMER,
        "ConsumerCoordinator.OffsetCommitResponseHandler (REBALANCE_IN_PROGRESS: requestRejoin); kafka-python "
        "kafka/coordinator/consumer.py, _handle_offset_commit_response (dpkp/kafka-python#2614)",
        "",
        "",
        "never taken in the model: Kafka answers an OffsetCommit REBALANCE_IN_PROGRESS only in CompletingRebalance "
        "and only to a member of that generation (GroupCoordinator.doCommitOffsets, 3.6.2), that is between the "
        "member's JoinGroup and SyncGroup answers, and the model's consumer commits only while Stable with no "
        "request in flight, so no commit of it meets that answer (the state graphs are the protocol's, "
        "tests/model/test_mutants.py). Where the reset is taken, member_identity_stable fails (a hand-made step, "
        "tests/model/test_bugs.py); reaching it needs a consumer that commits during a rebalance (kafka-python "
        "commits from poll whatever the rebalance's phase)",
        rule="rebalance_in_progress_keeps_generation",
    ),
    Mutant(
        COMMIT_OUTSIDE_STABLE_WITHOUT_GENERATION,
        "A commit the application asks for while its consumer is not Stable goes out with generation -1 and no "
        "member id, instead of failing in the client; a group with members answers it UNKNOWN_MEMBER_ID, on which "
        "the consumer forgets its member id (kafka-python before 2.2.4).",
        CONSUMER,
        "kafka-python kafka/coordinator/consumer.py, _send_offset_commit_request (generation = self.generation() "
        "or Generation.NO_GENERATION, before dpkp/kafka-python#2614, commit d9c2009d); Kafka 4.0 "
        "ConsumerCoordinator.sendOffsetCommitRequest (generationIfStable)",
        "",
        "member_identity_stable",
        rule="commit_needs_stable_generation",
        needs=APPLICATION_COMMITS,
    ),
    Mutant(
        STATIC_REPLACEMENT_SKIPS_REBALANCE,
        "A static member's id-less JoinGroup in CompletingRebalance takes over its instance id and is answered "
        "at once with the current generation, as in Stable, without a rebalance (Kafka 2.3-2.5.0).",
        COORDINATOR,
        "GroupCoordinator.updateStaticMemberAndRebalance, case Stable | CompletingRebalance (before "
        "apache/kafka#8405); docs/kafka/requests.md#joingroup",
        "KAFKA-9801",
        "rebalance_triggers",
        rule="static_replacement_rebalances_completing",
    ),
    Mutant(
        LEADER_ANSWER_UNWRITABLE,
        "At join completion the answer to a leader that joined with JoinGroup below v5 cannot be written while a "
        "static member is in the group: its join callback fails and stays set (Kafka before 3.2.4/3.3.2/3.4.0).",
        COORDINATOR,
        "GroupCoordinator.onCompleteJoin, maybeInvokeJoinCallback; JoinGroupResponse.json (GroupInstanceId not "
        "ignorable before apache/kafka#12909); docs/kafka/requests.md#joingroup",
        "KAFKA-14422",
        "generation_members_rejoined",
        rule="leader_answer_without_instance_ids",
    ),
    Mutant(
        PLAN_OMITS_UNASSIGNED,
        "The leader leaves a member given no partition out of its SyncGroup plan (sarama before 1.35.0).",
        CONSUMER,
        "ConsumerCoordinator.onLeaderElected (one plan entry per member); sarama consumer_group.go, "
        "syncGroupRequest (IBM/sarama#2292)",
        "",
        "plan_lists_every_member",
        rule="plan_lists_every_member",
    ),
    Mutant(
        COORDINATOR_ERROR_RESETS_MEMBER,
        "A JoinGroup or SyncGroup answered COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR resets the consumer's member "
        "id and generation, so it rejoins as a new member while its old member stays in the group (Java before "
        "2.8.1/3.0.0).",
        CONSUMER,
        "AbstractCoordinator.joinGroupIfNeeded, a retriable failure: resetStateAndRejoin before apache/kafka#11231, "
        "requestRejoin after",
        "KAFKA-13214",
        "member_identity_stable",
        rule="coordinator_error_keeps_member",
    ),
    Mutant(
        COMPLETE_JOIN_KEEPS_HEARTBEATS,
        "onCompleteJoin removes the dynamic members that did not rejoin but leaves their heartbeat timers armed; "
        "one that fires later starts a rebalance that removes nobody (Kafka before 2.1.0).",
        COORDINATOR,
        "GroupCoordinator.onCompleteJoin, removeHeartbeatForLeavingMember (added by apache/kafka#5556); "
        "onExpireHeartbeat, removeMemberAndUpdateGroup (2.0)",
        "KAFKA-7196",
        "rebalance_triggers",
        rule="complete_join_cancels_heartbeats",
    ),
    Mutant(
        UNLOAD_LEAVES_PARKED,
        "Unloading the group's partition leaves its parked JoinGroups and SyncGroups unanswered: the group is "
        "gone from the coordinator, the consumers' requests hang until their own timeout (Kafka 3.7's new "
        "coordinator).",
        COORDINATOR,
        "GroupMetadataManager.onUnloaded (added by apache/kafka#15446: completeJoinFuture / completeSyncFuture "
        "with NOT_COORDINATOR); 3.6.2 GroupCoordinator.onGroupUnloaded; docs/kafka/group.md#unload",
        "KAFKA-16148",
        "parked_only_in_phase",
        rule="unload_completes_parked",
    ),
)

CATALOGUE += (
    Mutant(
        JOIN_PREPARE_SKIPPED_AFTER_RESET,
        "A cooperative consumer whose JoinGroup or SyncGroup is answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION "
        "resets its member id and generation but keeps its partitions: onJoinPrepare already ran for this "
        "rebalance and is not run again, so it rejoins claiming them (Java 2.4-2.8).",
        CONSUMER,
        "AbstractCoordinator.resetStateAndRejoin (needsJoinPrepare not set before apache/kafka#10986); "
        "ConsumerCoordinator.onJoinPrepare (onPartitionsLost on a reset generation)",
        "KAFKA-12983",
        "fenced_consumer_releases",
        rule="reset_reruns_join_prepare",
        needs=COOPERATIVE,
    ),
    Mutant(
        CLAIMS_WITHOUT_GENERATION,
        "The cooperative-sticky assignor reads no generation with the owned partitions and does not detect a "
        "partition claimed by two members: every claimant keeps its claim (Java 2.4-2.8).",
        CONSUMER,
        "CooperativeStickyAssignor.memberData (generation Optional.empty() before apache/kafka#10985); "
        "AbstractStickyAssignor.allSubscriptionsEqual (no partitionsWithMultiplePreviousOwners)",
        "KAFKA-12984",
        "plan_partitions_disjoint",
        rule="claims_carry_generation",
        needs=COOPERATIVE,
    ),
    Mutant(
        STALE_CLAIMS_DROPPED,
        "The cooperative-sticky assignor counts only the claims of the members of the highest generation: a "
        "member of an older generation is taken to own nothing, so its partitions are assigned to others in the "
        "round that revokes them from it (Java 3.0-3.4).",
        CONSUMER,
        "AbstractStickyAssignor.allSubscriptionsEqual (membersOfCurrentHighestGeneration, before apache/kafka#13550)",
        "KAFKA-14639",
        "plan_respects_claims",
        rule="stale_claims_counted",
        needs=COOPERATIVE,
    ),
    Mutant(
        SYNC_REBALANCE_RESETS_GENERATION,
        "A SyncGroup answered REBALANCE_IN_PROGRESS resets the consumer's generation (not its member id): a "
        "cooperative consumer then loses every partition it owns (onPartitionsLost) and rejoins claiming none, "
        "so partitions the next assignment would have left with it are revoked too (Java 3.3.0-3.3.1).",
        CONSUMER,
        "AbstractCoordinator.SyncGroupResponseHandler, REBALANCE_IN_PROGRESS (resetGenerationOnResponseError added "
        "by apache/kafka#12140, reverted by apache/kafka#12794); ConsumerCoordinator.onJoinPrepare "
        "(onPartitionsLost on a reset generation)",
        "KAFKA-13891, KAFKA-14016",
        "partitions_kept_unless_moved",
        rule="sync_rebalance_keeps_generation",
        needs=COOPERATIVE,
    ),
    Mutant(
        STALE_CLAIM_HIDES_MOVE,
        "The cooperative-sticky plan's moves are found from the members' raw claims: a partition handed back to a "
        "member that claims it from an older generation, while another member claims it from a newer one, is not "
        "left out for a round, so the stale claimant is told it owns it while its newer owner still does "
        "(franz-go before 1.21.4).",
        CONSUMER,
        "franz-go pkg/kgo/group_balancer.go, BalancePlan.AdjustCooperative (added := planned - owned over raw "
        "OwnedPartitions before twmb/franz-go d7ae9db9); Kafka 4.0.2 AbstractStickyAssignor "
        "(partitionsTransferringOwnership from the validated claims), CooperativeStickyAssignor.adjustAssignment",
        "",
        "",
        "not reached within the default configuration's bounds: an exhaustive search of it with the "
        "cooperative-sticky assignor finds no plan this rule changes. The rule is taken only when a member that "
        "claims a partition from a stale generation is under its quota while the member that claims it from a "
        "newer one is over it; in the model a consumer that missed a generation stays a member only as a static "
        "member left behind, which is planned its share of that generation, so its own claims keep it at its "
        "quota. Where the rule is taken, plan_respects_claims fails (tests/properties/test_properties_can_fail.py; "
        "the fix's repro on the assignor, tests/model/test_cooperative.py)",
        rule="stale_claim_moves_withheld",
        needs=COOPERATIVE,
    ),
    Mutant(
        OLDEST_CLAIM_WINS,
        "The cooperative-sticky assignor lets the oldest of two claims of one partition keep it, and the first "
        "read of two claims of one generation: a member that claims a partition from a stale generation is "
        "planned it while the member that claims it from a newer one still owns it (librdkafka before 2.2.0).",
        CONSUMER,
        "librdkafka src/rdkafka_sticky_assignor.c, prepopulateCurrentAssignments (lowest generation first, a "
        "second claimant of one generation skipped, before confluentinc/librdkafka#4252); Kafka 4.0.2 "
        "AbstractStickyAssignor.allSubscriptionsEqual",
        "",
        "plan_respects_claims",
        rule="newest_claim_wins",
        needs=COOPERATIVE,
    ),
    Mutant(
        SIMPLE_COMMIT_CHECKS_INSTANCE_ID,
        "An OffsetCommit with generation -1 that carries a group.instance.id is validated as a member's before "
        "the Empty group's exemption: an assign()-mode consumer configured with a group.instance.id is refused "
        "UNKNOWN_MEMBER_ID by a group with no members (Kafka before 3.3.0).",
        COORDINATOR,
        "GroupCoordinator.validateOffsetCommit (Scala, before apache/kafka#12598: the member and instance ids "
        "are validated whenever a generation, a member id or an instance id is sent, and only a commit with none "
        "reaches the Empty group's exemption); Kafka 4.0.2 ClassicGroup.validateOffsetCommit",
        "KAFKA-14201",
        "standalone_commit_answered",
        rule="simple_commit_accepted_when_empty",
        needs=STANDALONE,
    ),
)

LIVENESS_PROPERTIES = frozenset(
    {
        "rebalance_completes",
        "join_answered",
        "sync_answered",
        "consumer_eventually_stable",
        "partitions_reowned",
        "pending_resolved",
        "rebalancing_stops",
        "group_settles",
    }
)
"""The names of ``kgc.properties.temporal.ALL`` (kept here so the catalogue needs no import of them)."""

NAMES: tuple[str, ...] = tuple(m.name for m in CATALOGUE)
KILLABLE: tuple[Mutant, ...] = tuple(m for m in CATALOGUE if m.killable)


def _unpickle_mutant(
    name: str,
    description: str,
    side: str,
    where: str,
    jira: str,
    expected: str,
    equivalent: str,
    rule: str,
    needs: tuple[tuple[str, str], ...],
) -> Mutant:
    """``Mutant.__reduce__``'s constructor: the keyword-only fields passed by keyword."""
    return Mutant(name, description, side, where, jira, expected, equivalent, rule=rule, needs=needs)


def by_name(name: str) -> Mutant:
    """The catalogued mutant called ``name``; ``KeyError`` with the known names otherwise."""
    for m in CATALOGUE:
        if m.name == name:
            return m
    raise KeyError(f"unknown mutant {name!r}; known mutants: {', '.join(NAMES)}")


RULES: dict[str, Rules] = {"": KAFKA} | {m.name: KAFKA._replace(**{m.rule: False}) for m in CATALOGUE}
"""The patch table, by ``Config.mutant``: each mutant's rules (its own rule broken); ``""``, no
mutant, Kafka's. On the model's hot path index it directly (``RULES[config.mutant]``, one
subscript where a string comparison was) and bind the result for the transaction."""


def rules_for(mutant: str | None) -> Rules:
    """The rules a coordinator follows with ``mutant`` switched on (Kafka's for none). Bind the
    result once per transaction or coordinator; reading a field costs one attribute load."""
    return RULES[mutant or ""]
