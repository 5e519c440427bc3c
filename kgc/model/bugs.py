"""A catalogue of real, shipped bugs of Kafka's classic consumer group protocol, and how each is
put back into kgc's model (or why it cannot be).

Each :class:`Bug` names the tracker id, the component it shipped in, what it broke and the
release that fixed it. A bug *inside the model* is put back as the inverse of its fix: the
:class:`~kgc.model.mutants.Rules` field the fix introduced is switched off through the catalogued
mutant that breaks that rule (``mutant=``), and ``kgc bugs`` runs the same iterative-deepening
search as ``kgc mutants`` on it. A bug *outside the model* says what the model would need
(``outside=``). A bug whose rule lives in the model but which no behaviour of the model can tell
apart says why (``equivalent=``); it is not counted as found.

Only entries whose fix was read (pull request cited in ``fix``) are marked put back; the others
are listed with ``fix=""`` until someone reads their fix. The property named by ``expected`` is
one of the protocol's own properties (``kgc.properties``), none written for one bug.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kgc.model import mutants as m
from kgc.model.config import Config

SCALA_COORDINATOR = "coordinator (Scala, <= 3.9)"
JAVA_COORDINATOR = "coordinator (Java, 4.x)"
JAVA_CLIENT = "Java client"
OTHER_CLIENT = "other client"


@dataclass(frozen=True)
class Bug:
    """One shipped bug and its place in (or outside) the model."""

    id: str
    component: str
    broke: str
    """What it broke, one line."""
    fixed_in: str
    """The release that fixed it ("open" if none)."""
    fix: str = ""
    """The fix's pull request or commit, as read ("" when not yet read)."""
    mutant: str = ""
    """The catalogued mutant whose rule is the inverse of the fix ("" when not put back)."""
    fidelity: str = ""
    """How closely the mutant is the inverse of the fix (what it does beyond or short of it)."""
    outside: str = ""
    """What the model would need to express it ("" when inside)."""
    equivalent: str = ""
    """Why the model cannot tell the put-back bug from the protocol ("" otherwise)."""
    pending: str = ""
    """Why a bug that may lie inside the model is not put back yet ("" otherwise)."""
    timing_mutant: str = ""
    """A bug about milliseconds, put back in the timing layer instead: its timing mutant
    (``kgc/timing/mutants.py``), the inverse of the fix on the z3 side and the concrete twin."""
    question: str = ""
    """The timing question (``kgc/timing/queries.py``) that finds the timed bug."""
    example: str = ""
    """The shipped timing configuration (``examples/timing/``) the question is asked on."""
    faults: frozenset[str] = frozenset()
    """The fault kinds its search enables, when fewer than the run's (``kgc.model.config.FAULTS``; empty: the
    run's): a smaller configuration within the default's bounds, for a bug whose shortest counterexample needs
    only these (``search_config``). The catch is then the same as on the full configuration or longer, never
    shorter, and found in fewer states."""

    @property
    def timed(self) -> bool:
        """Put back as a timing mutant and found by a timing question (``kgc.timing.bugs``)."""
        return bool(self.timing_mutant)

    consumers: int = 0
    """The number of consumers its search runs with, when fewer than the run's (0: the run's): like
    :attr:`faults`, a smaller configuration within the default's bounds for a bug whose shortest counterexample
    needs only that many (a consumer that never acts adds no behaviour, so the catch is the same as on the full
    configuration or longer, never shorter). Applied only where the run's configuration names no per-consumer
    settings and has no more static consumers than that."""

    def search_config(self, config: Config) -> Config:
        """``config`` with only the fault kinds of :attr:`faults` it enables and at most :attr:`consumers`
        consumers (itself when neither applies)."""
        narrowed = replace(config, faults=config.faults & self.faults) if self.faults else config
        per_consumer = config.join_versions or config.protocols or config.protocol_types or config.session_timeouts_ms
        if 0 < self.consumers < config.consumers and not per_consumer and config.static_consumers <= self.consumers:
            narrowed = replace(narrowed, consumers=self.consumers)
        return narrowed

    @property
    def put_back(self) -> bool:
        return bool(self.mutant) and not self.equivalent

    @property
    def expected(self) -> str:
        """The property expected to catch it: the mutant's (a timed bug's: its timing question)."""
        if self.timed:
            return self.question
        return m.by_name(self.mutant).expected if self.mutant else ""

    @property
    def status(self) -> str:
        if self.put_back:
            return "put back"
        if self.timed:
            return "put back (timed)"
        if self.equivalent:
            return "equivalent"
        if self.outside:
            return "outside"
        return "not yet put back"

    @property
    def reason(self) -> str:
        """What the model lacks, why it cannot tell the bug apart, or why it is not put back yet."""
        return self.outside or self.equivalent or self.pending


CATALOGUE: tuple[Bug, ...] = (
    # Scala GroupCoordinator.
    Bug(
        "KAFKA-9752",
        SCALA_COORDINATOR,
        "rebalance never completes after the new-member timeout of old JoinGroup versions",
        "2.5.0",
        fix="apache/kafka#8339 (MemberMetadata.hasSatisfiedHeartbeat: members awaiting join or sync satisfy "
        "their heartbeat)",
        mutant=m.LIVENESS_IGNORES_PARKED,
        fidelity="the inverse of the rule the fix made explicit (a parked member is alive); the model has no "
        "new-member timeout, so the bug shows as a parked member expired rather than the stuck group",
    ),
    Bug(
        "KAFKA-8220",
        SCALA_COORDINATOR,
        "a leader that did not rejoin stayed leader; members removed by the rebalance timeout",
        "2.3.0",
        fix="apache/kafka#6666 (GroupMetadata.maybeElectNewJoinedLeader in onCompleteJoin)",
        mutant=m.LEADER_NOT_REELECTED,
        fidelity="broader than the fix: the mutant also skips re-election when the leader leaves",
    ),
    Bug(
        "KAFKA-9801",
        SCALA_COORDINATOR,
        "a static member replaced in CompletingRebalance is given nothing: the leader planned for its old member id",
        "2.5.1",
        fix="apache/kafka#8405 (GroupCoordinator.updateStaticMemberAndRebalance: CompletingRebalance starts a "
        "rebalance instead of answering as Stable)",
        mutant=m.STATIC_REPLACEMENT_SKIPS_REBALANCE,
        fidelity="the inverse of the fix's coordinator half (the client half, not resetting the state to UNJOINED "
        "when already rebalancing, is not modelled); Kafka 2.3-2.5.0 answered the replaced member at once with "
        "the current generation and the old leader, as the mutant does",
    ),
    Bug(
        "KAFKA-7196",
        SCALA_COORDINATOR,
        "a member removed at the join phase's completion kept its heartbeat timer, whose expiry started another "
        "rebalance",
        "2.1.0",
        fix="apache/kafka#5556 (GroupCoordinator.onCompleteJoin: removeHeartbeatForLeavingMember for each member "
        "that did not rejoin, commit 260b07a6)",
        mutant=m.COMPLETE_JOIN_KEEPS_HEARTBEATS,
        fidelity="the inverse of the fix: the removed members' timers stay armed (Group.stale_heartbeats) and one "
        "that fires runs Kafka 2.0's onExpireHeartbeat on a member no longer in the group, which removes nobody and "
        "rebalances from Stable or CompletingRebalance; the model lets the stale timer fire at any moment, as it "
        "does every timer",
    ),
    Bug(
        "KAFKA-9232",
        SCALA_COORDINATOR,
        "a new member's first heartbeat never completed; evicted after the new-member timeout",
        "2.4.1",
        fix="apache/kafka#7753 (MemberMetadata.shouldKeepAlive: the DelayedHeartbeat a JoinGroup v3 new member gets "
        "with the 5-minute new-member timeout is completed once the member is no longer awaiting its join)",
        fidelity="the effect the fix removed, on the timed reference: the new-member timer of a member that joined "
        "with JoinGroup v3 is never completed (neither by the join's completion nor by a heartbeat) and removes the "
        "member when it fires; the reference keeps 2.5's heartbeatSatisfied bookkeeping (KAFKA-9752), so the "
        "mutant withholds the completion rather than restoring 2.4.0's shouldKeepAlive line by line; the untimed "
        "model cannot tell it apart (a running member's session expiry is an allowed fault there)",
        timing_mutant="new_member_timer_not_completed",
        question="needless_expiry",
        example="defaults.toml",
    ),
    Bug(
        "KAFKA-10284",
        SCALA_COORDINATOR,
        "static member fenced after coordinator failover",
        "2.7.0",
        outside="coordinator failover with the group reloaded from __consumer_offsets: the fix (apache/kafka#9270, "
        "GroupCoordinator.updateStaticMemberAndRebalance stores the group after a static member's id is "
        "replaced in Stable) is seen only by a coordinator that loads the group from its last record, and the"
        " model's unload ends the group's life on this coordinator. A reload-on-failover fault would bring it"
        " inside, but not within the default bounds: its shortest counterexample needs the static member "
        "replaced in Stable and then the failover, and the replacement alone already takes the default "
        "configuration's one perturbation (the static consumer must lose its member id: a crash, a lost "
        "JoinGroup answer or a LeaveGroup). Shown by an exhaustive search of the default configuration "
        "without perturbations (11,122 states), which never replaces a static member in Stable, while the "
        "search with one perturbation does (tests/model/test_bugs.py); the failover would be a second",
    ),
    Bug(
        "KAFKA-10614",
        SCALA_COORDINATOR,
        "stale or missing group state after failover",
        "3.0.0",
        outside="partition leadership changes and concurrent load/unload callbacks",
    ),
    Bug(
        "KAFKA-13636",
        SCALA_COORDINATOR,
        "committed offsets deleted",
        "3.2.0",
        outside="offset retention and expiry with a clock",
    ),
    Bug(
        "KAFKA-14009",
        SCALA_COORDINATOR,
        "static member rejoin keeps its old rebalance timeout",
        "3.3.2/3.4.0",
        fix="apache/kafka#12308 (GroupCoordinator.updateStaticMemberAndRebalance passes the rejoining static "
        "member's rebalance and session timeouts to GroupMetadata.updateMember, and restores the old ones when "
        "the group's store fails; merged to trunk and 3.3)",
        fidelity="the inverse of the fix on the timed reference: a static member's new process that rejoins keeps "
        "the old member's rebalance and session timeouts (updateMember stores none of the JoinGroup's), as Kafka "
        "<= 3.3.1 did; the question sees the session-timeout half: the restarted member, heartbeating at its new "
        "interval, is expired by the old session timeout after its SyncGroup; the rebalance-timeout half (a later "
        "join phase waiting only the old max.poll.interval.ms) needs a rebalance after the restart, which the "
        "question's scenario does not have; the untimed model has no timeout values",
        timing_mutant="static_rejoin_keeps_old_timeouts",
        question="static_restart_new_timeouts",
        example="static-new-timeouts.toml",
    ),
    Bug(
        "KAFKA-14201",
        SCALA_COORDINATOR,
        "assign()-mode commits refused",
        "3.3.0",
        fix="apache/kafka#12598 (GroupCoordinator.validateOffsetCommit: a commit with generation -1 to an Empty "
        "group is accepted before the member and instance ids are validated; the client half, apache/kafka#12599, "
        "stops sending group.instance.id with an empty member id)",
        mutant=m.SIMPLE_COMMIT_CHECKS_INSTANCE_ID,
        fidelity="the inverse of the fix's coordinator half: a commit with generation -1, no member id and a "
        "group.instance.id is validated as a member's first (validateCurrentMember: no member holds the instance "
        "id, UNKNOWN_MEMBER_ID), so a group with no members refuses it, as Kafka did from the check order of "
        "apache/kafka#9958 (2021) until 3.3.0; the client half is not put back (the model's committer is any client"
        " outside the group, and the fixed coordinator accepts its commit either way). Searched with the standalone"
        " committer (Config.standalone_committer, a client outside the group that commits with and without an "
        "instance id; the mutant's needs), otherwise the default configuration; caught at the committer's first "
        "commit, to the initial Empty group, by standalone_commit_answered",
    ),
    Bug(
        "KAFKA-14422",
        SCALA_COORDINATOR,
        "rebalance stuck when the leader uses JoinGroup < v5 and a static member is in the group",
        "3.4.0",
        fix="apache/kafka#12909 (GroupInstanceId made ignorable in JoinGroupResponse's members, so the answer to a "
        "leader below v5 can be written)",
        mutant=m.LEADER_ANSWER_UNWRITABLE,
        fidelity="the answer to a dynamic leader that joined below v5 is never sent and its callback stays set, as "
        "in Kafka; narrower than Kafka, where the exception also aborts onCompleteJoin for the members after the "
        "leader (HashMap order) and the CompletingRebalance rejoin answer to such a leader fails the same way; the "
        "model's dynamic consumers send JoinGroup v3 unless Config.join_versions says otherwise, so the default "
        "configuration has the bug's mix (a v3 leader, a static member)",
    ),
    Bug(
        "KAFKA-16371",
        SCALA_COORDINATOR,
        "stale pending offset commit",
        "3.8.0",
        outside="OFFSET_METADATA_TOO_LARGE and the pending-commit table of transactional/offset writes",
    ),
    # Java coordinator and online migration.
    Bug(
        "KAFKA-16148",
        JAVA_COORDINATOR,
        "requests left hanging after shard unload",
        "3.8.0",
        fix="apache/kafka#15446 (GroupMetadataManager.onUnloaded: the classic group becomes Dead and its parked "
        "JoinGroups (PreparingRebalance) and SyncGroups (CompletingRebalance, Stable) are completed "
        "NOT_COORDINATOR; the runtime cancels the shard's timers)",
        mutant=m.UNLOAD_LEAVES_PARKED,
        fidelity="the inverse of the fix's classic-group half: the unload turns the group Dead and answers no "
        "parked request, which stays parked in a group no request reaches any more; the timers half is not "
        "observable in the model, which follows an unloaded group no further (nor is it on 4.0.2, whose runtime "
        "cancels the shard's timers); the model's unload is the 4.x shard unload of one group's partition",
    ),
    Bug(
        "KAFKA-16861",
        JAVA_COORDINATOR,
        "online downgrade exceeds group.max.size",
        "3.8.0",
        outside="KIP-848 consumer groups and classic<->consumer conversion",
    ),
    Bug(
        "KAFKA-17228",
        JAVA_COORDINATOR,
        "upgrade stalls behind a classic static member",
        "4.0.0",
        outside="KIP-848 consumer groups and classic<->consumer conversion",
    ),
    Bug(
        "KAFKA-17317",
        JAVA_COORDINATOR,
        "group left in the wrong type",
        "4.0.0",
        outside="KIP-848 consumer groups and classic<->consumer conversion",
    ),
    Bug(
        "KAFKA-19546",
        JAVA_COORDINATOR,
        "stale assignment kept after a downgrade",
        "4.0.2",
        outside="KIP-848 consumer groups and classic<->consumer conversion",
    ),
    Bug(
        "KAFKA-20272/KAFKA-20273",
        JAVA_COORDINATOR,
        "stale assignment, churn in mixed groups",
        "unreleased",
        outside="KIP-848 consumer groups, target assignments and classic<->consumer conversion",
    ),
    Bug(
        "KAFKA-21117",
        JAVA_COORDINATOR,
        "shard fails to load after a downgrade",
        "open",
        outside="log compaction and replay of the coordinator's records",
    ),
    # Java client.
    Bug(
        "KAFKA-10134",
        JAVA_CLIENT,
        "members evicted while the leader assigns; rebalance never completes",
        "2.7.0",
        fix="apache/kafka#8834 (AbstractCoordinator: the JoinGroup answer enables the heartbeat thread, which "
        "heartbeats in COMPLETING_REBALANCE — HeartbeatThread.run skips only a member that has not joined; "
        "GroupCoordinator.handleHeartbeat in CompletingRebalance re-arms the member's deadline and answers NONE)",
        fidelity="the inverse of the fix's client half on the timed client: the heartbeat thread sends nothing "
        "between the JoinGroup answer and the SyncGroup answer and is enabled again (its timers reset) when the "
        "join completes, as the pre-2.7 thread, which disabled itself in every state but STABLE; the coordinator "
        "is 3.6.2's, which re-arms a heartbeat in CompletingRebalance (before the fix it answered "
        "REBALANCE_IN_PROGRESS: the catalogue mutant heartbeat_rebalancing_in_completing, which the untimed model "
        "cannot tell apart, as its consumer heartbeats only once Stable and its leader assigns in no time); "
        "found on a slow assignor: the leader, computing the assignment for longer than its session timeout, is "
        "removed while it assigns",
        timing_mutant="no_heartbeat_while_completing",
        question="evicted_while_assigning",
        example="slow-assignment.toml",
    ),
    Bug(
        "KAFKA-8104/KAFKA-9140",
        JAVA_CLIENT,
        "consumer never rejoins",
        "2.4.0",
        outside="two client threads (heartbeat thread vs. consumer thread)",
    ),
    Bug(
        "KAFKA-9815",
        JAVA_CLIENT,
        "stuck unassigned after a metadata-triggered rebalance",
        "2.5.0",
        outside="a subscription that changes and changes back while a JoinGroup is outstanding: the fix "
        "(apache/kafka#8420, ConsumerCoordinator.rejoinNeededOrPending calls requestRejoin when the metadata "
        "snapshot differs) matters only when the metadata reverts before the failed JoinGroup is retried; the"
        " model's metadata change (budget_metadata_change) already sets rejoin_needed and changes the "
        "subscription only between requests, and the bug would take three perturbations (two metadata changes"
        " and the failed JoinGroup), where the default configuration allows one and no metadata change at all"
        " (budget_metadata_change = 0): not within the default bounds whatever the model's extension",
    ),
    Bug(
        "KAFKA-10793",
        JAVA_CLIENT,
        "consumer waits forever for the coordinator",
        "2.8.0",
        outside="two client threads and FindCoordinator futures",
    ),
    Bug(
        "KAFKA-12983",
        JAVA_CLIENT,
        "cooperative double claims (onJoinPrepare skipped)",
        "3.0.0",
        fix="apache/kafka#10986 (AbstractCoordinator.resetStateAndRejoin sets needsJoinPrepare, so onJoinPrepare "
        "runs again and loses the partitions of a reset generation; commit 1f64df92)",
        mutant=m.JOIN_PREPARE_SKIPPED_AFTER_RESET,
        fidelity="the inverse of the fix on the cooperative consumer (assignor cooperative-sticky): a JoinGroup or "
        "SyncGroup answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION resets the member but keeps the partitions, "
        "which the consumer then claims with generation -1; caught the step the answer is read, by the rule every "
        "client follows on those answers (onPartitionsLost), before the double claim it leads to",
    ),
    Bug(
        "KAFKA-12984",
        JAVA_CLIENT,
        "one partition owned by two members",
        "3.0.0",
        fix="apache/kafka#10985 (CooperativeStickyAssignor.memberData reads the generation the subscription "
        "carries; AbstractStickyAssignor.allSubscriptionsEqual drops a partition two members of one generation "
        "claim; commit 37d086fa)",
        mutant=m.CLAIMS_WITHOUT_GENERATION,
        fidelity="the claim handling before the fix (no generation, every claimant keeps its claim) under 4.0's "
        "quota builder (ConstrainedAssignmentBuilder); where that builder would throw on a partition two members "
        "keep, the model gives the partition to the least loaded member; the fix's third part (a quota bug of an "
        "unreleased commit) is not put back. Searched with the one fault its shortest counterexample needs (a "
        "static member left behind by a join phase the timer completed: session_expiry); the leader's plan then "
        "gives a partition to two members (plan_partitions_disjoint) three steps before two Stable consumers "
        "own it (exclusive_ownership)",
        faults=frozenset({"session_expiry"}),
        consumers=2,
    ),
    Bug(
        "KAFKA-13214",
        JAVA_CLIENT,
        "rebalance waits for the old member's session timeout",
        "2.8.1/3.0.0",
        fix="apache/kafka#11231 (AbstractCoordinator.joinGroupIfNeeded: a retriable JoinGroup/SyncGroup failure "
        "only requests a rejoin instead of resetStateAndRejoin, which forgot the member id)",
        mutant=m.COORDINATOR_ERROR_RESETS_MEMBER,
        fidelity="the inverse of the fix: a JoinGroup or SyncGroup answered COORDINATOR_NOT_AVAILABLE or "
        "NOT_COORDINATOR (in the model a failed plan write or an unload) resets the member id and generation; "
        "caught the step the consumer reads the answer and forgets the id of a member the coordinator still has "
        "(member_identity_stable), which is what makes the rebalance wait for that member's session timeout; the "
        "wait itself is time, which the untimed model does not measure",
    ),
    Bug(
        "KAFKA-13891/KAFKA-14016",
        JAVA_CLIENT,
        "cooperative members revoke too much",
        "3.3.2",
        fix="apache/kafka#12794 (reverts apache/kafka#12140, which reset the generation on a SyncGroup answered "
        "REBALANCE_IN_PROGRESS)",
        mutant=m.SYNC_REBALANCE_RESETS_GENERATION,
        fidelity="the inverse of the revert, that is apache/kafka#12140 itself: a SyncGroup answered "
        "REBALANCE_IN_PROGRESS resets the generation (resetGenerationOnResponseError; the member id is kept), so "
        "the cooperative consumer loses every partition it owns (onJoinPrepare, onPartitionsLost) and rejoins "
        "claiming none; caught the step it reads the answer, by partitions_kept_unless_moved (KIP-429: a "
        "cooperative member revokes only what moves)",
    ),
    Bug(
        "KAFKA-14639",
        JAVA_CLIENT,
        "partition revoked and assigned in one round",
        "3.5.0",
        fix="apache/kafka#13550 (AbstractStickyAssignor.allSubscriptionsEqual counts the claims of every generation: "
        "the higher generation wins a partition claimed twice; commit c6ad151a)",
        mutant=m.STALE_CLAIMS_DROPPED,
        fidelity="the inverse of the fix: only the claims of the highest generation count, as in 3.0-3.4; a "
        "member of an older generation (in the model a static member left behind, or one whose JoinGroup came "
        "late) is taken to own nothing, so its partitions are handed to others in the round that revokes them. "
        "Searched with the one fault its shortest counterexample needs (session_expiry: the static member left "
        "behind)",
        faults=frozenset({"session_expiry"}),
        consumers=2,
    ),
    Bug(
        "KAFKA-13310/KAFKA-14024",
        JAVA_CLIENT,
        "member dropped at the rebalance timeout",
        "3.3.0",
        outside="async commits pending across onJoinPrepare and a rebalance timeout",
    ),
    Bug(
        "KAFKA-14196",
        JAVA_CLIENT,
        "duplicates after eager revocation with auto-commit",
        "3.3.0",
        outside="fetching that continues while an async commit is in flight",
    ),
    Bug(
        "KAFKA-20985",
        JAVA_CLIENT,
        "static consumer fences its own pending join",
        "open",
        outside="unsubscribe() of a static consumer and its suppressed LeaveGroup, and a JoinGroup the client "
        "abandoned (request timeout) that the broker still handles, so that two JoinGroups of one consumer are in "
        "flight; the model's consumer has one request in flight. The proposed fix (apache/kafka#23266, open: keep "
        "the member id when no LeaveGroup was sent) is not merged, so Kafka's own client has the bug",
    ),
    # Other clients.
    Bug(
        "librdkafka#4059/#4908",
        OTHER_CLIENT,
        "assignment marked lost",
        "librdkafka 2.10.0",
        outside="a commit in flight while the consumer sends its next JoinGroup (librdkafka commits from its own "
        "thread, so an ILLEGAL_GENERATION answer can arrive for a generation the consumer has already left); the "
        "model's consumer has one request in flight, so every answer it reads is for its current generation",
    ),
    Bug(
        "librdkafka-1.7.0",
        OTHER_CLIENT,
        "commits refused during rebalances",
        "librdkafka 1.7.0",
        fix="confluentinc/librdkafka commit fee6b90c6 (CHANGELOG 1.7.0: rd_kafka_cgrp_offset_commit_tmr_cb returns "
        "unless the join state is STEADY, 'since the rkcg_generation_id is most likely in flux'); the cooperative "
        "leave on unsubscribe() is a separate fix of the same release",
        outside="the first half (the timed auto-commit during a rebalance) was tried and is not found: a rule "
        "that let the model's auto-commit also run outside Stable, committing the partitions a cooperative "
        "consumer keeps with the generation of its last JoinGroup answer (as librdkafka set rkcg_generation_id), "
        "was searched exhaustively on the default configuration with the cooperative-sticky assignor (1.35 million "
        "states) and broke no property, so it is not kept. With one request in flight the model's consumer commits "
        "during a rebalance only after an answer ended its part in it (a lost JoinGroup answer, a SyncGroup answered "
        "REBALANCE_IN_PROGRESS); the commit is then accepted in PreparingRebalance or refused ILLEGAL_GENERATION "
        "in CompletingRebalance, and the ILLEGAL_GENERATION that follows is a fencing every property allows "
        "(partitions_kept_unless_moved, fenced_consumer_releases: the consumer loses its partitions and rejoins "
        "with its member id). The 'Illegal generation' errors of the CHANGELOG come from a commit librdkafka "
        "queues on the coordinator connection behind its parked JoinGroup, built with the old generation and "
        "handled after the join phase completed: two requests in flight, which the model's consumer does not have; "
        "and telling that refusal from a fencing needs a property that a member that joined the current "
        "generation is never fenced, which the catalogue does not have. The second half (a cooperative member "
        "that does not leave on unsubscribe) needs unsubscribe() in the consumer model",
    ),
    Bug(
        "librdkafka-1.8.0",
        OTHER_CLIENT,
        "second JoinGroup sent during an outstanding one",
        "librdkafka 1.8.0",
        outside="subscription changes in the consumer model",
    ),
    Bug(
        "librdkafka-2.2.0",
        OTHER_CLIENT,
        "two owners from the sticky assignor",
        "librdkafka 2.2.0",
        fix="confluentinc/librdkafka#4252 (commit 966b63dc, CHANGELOG 2.2.0: prepopulateCurrentAssignments takes the "
        "highest-generation claimant of a partition as its owner instead of the lowest, and invalidates a partition "
        "two members claim from one generation instead of skipping the second claimant)",
        mutant=m.OLDEST_CLAIM_WINS,
        fidelity="the inverse of the fix's two claim rules under the model's (Kafka 4.0's) quota builder and "
        "adjustAssignment: the lowest generation keeps a partition claimed twice, the first read of two claims of "
        "one generation (members in member-id order; librdkafka read them in the JoinGroup answer's order); "
        "librdkafka's own sticky balancing and its cooperative adjustment "
        "(rd_kafka_cooperative_protocol_adjust_assignment, which compares with one raw claimant per partition) "
        "are not put back. Searched with the one fault its shortest counterexample needs (session_expiry: a static "
        "member left behind claims its partitions from a stale generation); the leader's plan then gives the stale "
        "claimant a partition the member that claims it from the newer generation still owns (plan_respects_claims)",
        faults=frozenset({"session_expiry"}),
        consumers=2,
    ),
    Bug(
        "franz-go#686",
        OTHER_CLIENT,
        "partitions orphaned on eager->cooperative upgrade",
        "franz-go 1.17.0",
        outside="franz-go's own eager-to-cooperative upgrade (a consumer that switches protocol between "
        "generations once every member supports cooperative-sticky); the model's consumer follows the Java rule: "
        "its protocol is fixed by the assignors it offers",
    ),
    Bug(
        "franz-go#1326",
        OTHER_CLIENT,
        "zombie consumer after a refused commit",
        "franz-go 1.21.3",
        fix="twmb/franz-go 824e34d2 (rejoin a classic group when a commit returns a fatal member error)",
        mutant=m.COMMIT_MEMBER_ERROR_IGNORED,
        fidelity="the inverse of the consumer's reset on an OffsetCommit answered UNKNOWN_MEMBER_ID or "
        "ILLEGAL_GENERATION: the consumer keeps its partitions; caught by fenced_consumer_releases, the rule "
        "every client follows on those answers (Java: resetGenerationOnResponseError, onPartitionsLost)",
    ),
    Bug(
        "franz-go-d7ae9db9",
        OTHER_CLIENT,
        "two owners (AdjustCooperative)",
        "franz-go 1.21.4",
        fix="twmb/franz-go d7ae9db9 (BalancePlan.AdjustCooperative: a claim beaten by a strictly higher-generation "
        "claim elsewhere no longer counts as owned, so a partition the plan moves back to a stale claimant is "
        "withheld for one round)",
        mutant=m.STALE_CLAIM_HIDES_MOVE,
        equivalent="put back (mutant stale_claim_hides_move, the inverse of the fix on the model's assignor: a "
        "partition the plan gives a member whose own claim on it a strictly newer claim beats is not taken to move) "
        "and caught where its rule is taken (plan_respects_claims, tests/properties/test_properties_can_fail.py; the "
        "fix's repro on the assignor, tests/model/test_cooperative.py), but not reached within the default "
        "configuration's bounds: the search with the cooperative-sticky assignor and every fault is exhaustive "
        "there (1.34 million states) and finds nothing. The rule is taken only when the stale claimant is under "
        "its quota while the newer owner is over it; a consumer that missed a generation stays a member only as a "
        "static member left behind, which is planned its share in the generation it missed, so its claim keeps it "
        "at quota unless the group shrinks or grows between two later generations, which takes more generations "
        "or perturbations than the default's (3 and 1)",
    ),
    Bug(
        "sarama#2292",
        OTHER_CLIENT,
        "members with no partition left out of the leader's SyncGroup plan",
        "sarama 1.35.0",
        fix="IBM/sarama#2292 (include assignment-less members in SyncGroup; issue IBM/sarama#2290)",
        mutant=m.PLAN_OMITS_UNASSIGNED,
        fidelity="the inverse of the fix: the leader's plan has no entry for a member given no partition (in the "
        "default configuration a fourth member: a dynamic consumer restarted while its old member waits for its "
        "timer); Kafka's coordinator fills the missing entries in with empty assignments and warns, so members "
        "get what the full plan gives them; caught where the plan is handled, by plan_lists_every_member",
    ),
    Bug(
        "kafka-python#2614",
        OTHER_CLIENT,
        "needless churn: a commit outside Stable answered UNKNOWN_MEMBER_ID, or REBALANCE_IN_PROGRESS, reset the "
        "member",
        "kafka-python 2.2.4",
        fix="dpkp/kafka-python#2614 (commit d9c2009d: ConsumerCoordinator._send_offset_commit_request fails a commit "
        "made while not Stable in the client instead of sending it with Generation.NO_GENERATION; "
        "_handle_offset_commit_response no longer calls reset_generation on RebalanceInProgressError)",
        mutant=m.COMMIT_OUTSIDE_STABLE_WITHOUT_GENERATION,
        fidelity="the inverse of the fix's first half, with the application's own commits on "
        "(application_commits, which the mutant needs; Kafka 4.0 ConsumerCoordinator.sendOffsetCommitRequest "
        "commits only with generationIfStable()): an application commit while the consumer is not Stable goes "
        "out with generation -1 and no member id, as kafka-python <= 2.2.3 sent `self.generation() or "
        "Generation.NO_GENERATION`; a group with members answers UNKNOWN_MEMBER_ID (4.0 "
        "ClassicGroup.validateOffsetCommit) and the consumer forgets its member id (kafka-python reset_generation, "
        "as Java's resetGenerationOnResponseError), which member_identity_stable catches the step it is read: the "
        "member the coordinator still has rejoins under a new id. The fix's second half (no reset on "
        "REBALANCE_IN_PROGRESS, mutant rebalance_in_progress_resets_generation) is not reached: Kafka answers a "
        "commit so only in CompletingRebalance and only to a member of that generation, between its JoinGroup and "
        "SyncGroup answers, when no client commits with a generation (the fix's own comment: 'Consumer never tries "
        "to commit offset in between join-group and sync-group'); that mutant's state graph is the protocol's "
        "(tests/model/test_mutants.py). Not replayed against kafka-python 2.2.3: the counterexample needs the "
        "coordinator to answer a SyncGroup REBALANCE_IN_PROGRESS at a chosen moment and the application to commit "
        "before it rejoins, which needs a scripted broker or the reference served over the wire driving a real "
        "kafka-python client step by step, not built",
    ),
    Bug(
        "kafka-python#3017",
        OTHER_CLIENT,
        "needless rejoin after ILLEGAL_GENERATION",
        "kafka-python 3.0.0",
        fix="dpkp/kafka-python#3017 (preserve member id on IllegalGeneration error; the Java client's rule since "
        "KAFKA-13419, apache/kafka#11451)",
        mutant=m.ILLEGAL_GENERATION_RESETS_MEMBER_ID,
        fidelity="the inverse of the fix: ILLEGAL_GENERATION resets the member id as well; in the model only a "
        "static consumer left behind by a join phase is answered ILLEGAL_GENERATION, and it forgets the id of a "
        "member the coordinator still has, then takes its own place back under a new id "
        "(member_identity_stable); a dynamic member's churn needs a consumer that sends a stale generation "
        "while still a member (two client threads), which the model does not have",
    ),
)

IDS: tuple[str, ...] = tuple(b.id for b in CATALOGUE)
PUT_BACK: tuple[Bug, ...] = tuple(b for b in CATALOGUE if b.put_back)
TIMED: tuple[Bug, ...] = tuple(b for b in CATALOGUE if b.timed)


def by_id(bug_id: str) -> Bug:
    """The catalogued bug ``bug_id``; ``KeyError`` naming the known ids otherwise."""
    for b in CATALOGUE:
        if b.id.lower() == bug_id.lower():
            return b
    raise KeyError(f"unknown bug {bug_id!r}; known bugs: {', '.join(IDS)}")


def markdown() -> str:
    """The catalogue as the Markdown table ``docs/bugs.md`` embeds (``scripts/bugs_doc.py``)."""
    lines = [
        "| id | component | broke | fixed in | fix read | status | put back as / why not |",
        "|---|---|---|---|---|---|---|",
    ]
    for b in CATALOGUE:
        if b.put_back:
            needs = m.by_name(b.mutant).needs
            with_ = f" (searched with {', '.join(f'`{k} = {v}`' for k, v in needs)})" if needs else ""
            how = f"mutant `{b.mutant}`{with_}, caught by `{b.expected}`; {b.fidelity}"
        elif b.timed:
            how = f"timing mutant `{b.timing_mutant}`, found by `{b.question}` on `{b.example}`; {b.fidelity}"
        else:
            how = b.reason
        cells = (b.id, b.component, b.broke, b.fixed_in, b.fix or "–", b.status, how)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    counts = {
        s: sum(b.status == s for b in CATALOGUE)
        for s in ("put back", "put back (timed)", "equivalent", "outside", "not yet put back")
    }
    lines += ["", f"{len(CATALOGUE)} bugs: " + ", ".join(f"{n} {s}" for s, n in counts.items()) + "."]
    return "\n".join(lines) + "\n"
