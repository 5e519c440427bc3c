"""Behaviour profiles: where Kafka releases (and its two coordinator implementations) answer the same
request differently. The one registry of profiles: the model's configuration, scenario files, the
reference coordinator and the fuzzer all name a :class:`Profile` from here.

The model covers the profiles whose ``modelled`` flag is set; for the others, ``model_profile``
names the modelled profile whose rules the model applies when a tool checks such a run against it
(the fuzzer's model checks), stated here rather than assumed where it is used.

The reference implementation is written once, in the shape of the Scala ``GroupCoordinator`` of
3.6.2, and each difference is a named switch here. The profile names are those of
docs/reference/scenario-format.md (*Profiles*). An older profile names a range of releases; the switches are set to
the range's **newest** release (2.6, 2.3 and 2.2) for behaviours that changed inside the range, and
no scenario tagged with that profile depends on those behaviours.

Not modelled: liveness up to 2.4 was computed from heartbeat timestamps (docs/kafka/timers.md#heartbeat-expiry); its
observable outcome is the one of ``heartbeatSatisfied`` used here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

from kgc.model.types import Errors


class MaxSizeRule(Enum):
    """How ``group.max.size`` decides whether a JoinGroup is accepted (docs/kafka/requests.md#joingroup)."""

    KIP_389 = "2.2"  # 2.2-2.5: only id-less joins are refused, or non-rejoined members of an oversized group
    KAFKA_9885 = "2.6"  # 2.6+: ``acceptJoiningMember`` counts parked members in PreparingRebalance


@dataclass(frozen=True, repr=False)
class Profile:
    """One coordinator behaviour. Each field names the rule, the reference section and the release
    (or the implementation) it belongs to.

    Every configuration holds the value itself (the model's ``Config``, the fuzzer's options, the
    reference's ``CoordinatorConfig``); what is written down — files, the command line, traces,
    checkpoints, JSON — carries its :attr:`name`. So that a value printed where a name was meant
    still reads as the name, ``str``, ``format`` (f-strings) and ``repr`` show the name; compared
    with a string (``name in applies_to`` written as ``profile in applies_to``) it raises
    TypeError instead of being silently unequal; and a registered profile pickles as its name (it
    unpickles to the registry's own value)."""

    name: str
    description: str
    #: docs/kafka/timers.md#join-phase, docs/kafka/versions.md#scala-and-java: ``newMemberAdded`` (initial delay
    #: extension) is set while the generation is 0
    #: (Scala) or while the current join phase started from Empty (Java 4.0).
    new_member_added_needs_generation_zero: bool = True
    #: docs/kafka/versions.md#scala-and-java: in Java a member or pending id expiring in PreparingRebalance completes
    #: the join phase
    #: at once when everyone left has joined, even during the initial delay.
    expiry_completes_initial_join: bool = False
    #: docs/kafka/requests.md#syncgroup, docs/kafka/versions.md#scala-and-java: SyncGroup in Stable restarts the
    #: member's session timer (Scala only).
    sync_in_stable_restarts_heartbeat: bool = True
    #: docs/kafka/requests.md#leavegroup: LeaveGroup for an unknown group answers top-level
    #: UNKNOWN_MEMBER_ID instead of NONE with per-member UNKNOWN_MEMBER_ID. No release does: Java's
    #: ``GroupMetadataManager`` throws UNKNOWN_MEMBER_ID, but ``GroupCoordinatorService.leaveGroup``
    #: (4.0.2) answers it as Scala does.
    leave_unknown_group_fails_request: bool = False
    #: docs/kafka/requests.md#leavegroup, docs/kafka/versions.md#scala-and-java: a pending member id's
    #: LeaveGroup counts as a valid leave, so a Stable or CompletingRebalance group rebalances (Java:
    #: ``classicGroupLeaveToClassicGroup``, 4.0.2, then ``maybePrepareRebalanceOrCompleteJoin``);
    #: Scala only drops the id.
    pending_leave_rebalances: bool = False
    #: docs/kafka/requests.md#joingroup: after refusing a JoinGroup with GROUP_MAX_SIZE_REACHED in
    #: PreparingRebalance the join phase may complete at once (Scala checks the join purgatory after
    #: every JoinGroup); Java only removes the member (``classicGroupJoinToClassicGroup``, 4.0.2).
    max_size_refusal_checks_join: bool = True
    #: docs/kafka/requests.md#joingroup: a static member's record moved to its new member id keeps
    #: ``isNew`` (Scala moves the same ``MemberMetadata``); Java builds a fresh
    #: ``ClassicGroupMember``, which is not new (``ClassicGroup.replaceStaticMember``, 4.0.2).
    static_replacement_keeps_is_new: bool = True
    #: docs/kafka/requests.md#offsetcommit, docs/kafka/versions.md#scala-and-java: OffsetCommit v9+ to an unknown group
    #: with generation >= 0 answers
    #: GROUP_ID_NOT_FOUND (Java) instead of ILLEGAL_GENERATION.
    commit_unknown_group_v9_group_id_not_found: bool = False
    #: Java cancels a pending member id's timer when that id leaves (``timer.cancel`` in
    #: ``classicGroupLeaveToClassicGroup``); Scala leaves it armed, to fire later with no effect.
    leave_cancels_pending_timer: bool = False
    #: docs/kafka/group.md#the-storegroup-race, docs/kafka/versions.md#scala-and-java: what an append REQUEST_TIMED_OUT
    #: becomes in SyncGroup answers.
    request_timed_out_maps_to: Errors = Errors.REBALANCE_IN_PROGRESS
    #: docs/kafka/timers.md#delayedsync: DelayedSync, removal of members that never send SyncGroup (3.0+, KAFKA-12890).
    delayed_sync: bool = True
    #: docs/kafka/requests.md#heartbeat: Heartbeat in CompletingRebalance answers NONE and restarts the timer (2.7+,
    #: KAFKA-10134);
    #: before, REBALANCE_IN_PROGRESS without a restart.
    heartbeat_completing_rebalance_ok: bool = True
    #: docs/kafka/requests.md#heartbeat, docs/kafka/versions.md#history: Heartbeat validates membership and generation
    #: before looking at the state (2.3+);
    #: up to 2.2 the CompletingRebalance branch checked membership only.
    heartbeat_validates_before_state: bool = True
    #: docs/kafka/group.md#unload, docs/kafka/versions.md#history: a Dead group answers COORDINATOR_NOT_AVAILABLE
    #: (2.3+, KAFKA-8386); before,
    #: UNKNOWN_MEMBER_ID.
    dead_group_error: Errors = Errors.COORDINATOR_NOT_AVAILABLE
    #: docs/kafka/requests.md#joingroup, docs/kafka/versions.md#history: static membership, FENCED_INSTANCE_ID and
    #: leader election at join completion (2.3+).
    #: Without it a ``group_instance_id`` is ignored (those request versions cannot carry one).
    static_membership: bool = True
    #: docs/kafka/requests.md#offsetcommit, docs/kafka/versions.md#history: OffsetCommit validates member and
    #: generation before the CompletingRebalance check
    #: (2.4+, KAFKA-8487); before, every group-managed commit in CompletingRebalance got 27.
    commit_validates_member_first: bool = True
    #: docs/kafka/requests.md#joingroup: the group.max.size rule.
    max_size_rule: MaxSizeRule = MaxSizeRule.KAFKA_9885
    #: ListGroups reads the coordinator's last committed view (Java: ``GroupMetadataManager.listGroups``
    #: iterates ``groups.values(committedOffset)``, 4.0.2), so a group no record has been written for
    #: yet (created by a JoinGroup answered MEMBER_ID_REQUIRED, say) is listed only once some later
    #: write to its ``__consumer_offsets`` partition commits; Scala lists every group in memory that is
    #: not Dead (``GroupCoordinator.handleListGroups``, 3.6.2).
    list_groups_reads_committed: bool = False
    #: docs/model-scope.md (A Dead group that stays addressable): a group marked Dead stays in the
    #: coordinator's cache for a while, so a request that looked it up before reaches its Dead branch.
    #: Scala: ``handleDeleteGroups`` turns an Empty group Dead under the group lock and
    #: ``cleanupGroupMetadata`` removes it from the cache after (``groupMetadataCache.remove``), and
    #: ``removeGroupsAndOffsets`` runs ``onGroupUnloaded`` before removing the group (3.6.2
    #: ``GroupCoordinator.scala``, ``GroupMetadataManager.scala``). Java 4.0 has no such window: a
    #: deleted group is removed when its tombstone is replayed, in the same operation
    #: (``GroupMetadataManager.replay``: "Tombstone. Group should be removed."), and a classic group
    #: turns Dead only in ``onUnloaded``, when the whole shard goes (4.0.2).
    dead_group_cached: bool = True
    #: Whether the model (``kgc/model/coordinator.py``) covers this profile's rules.
    modelled: bool = False
    #: The modelled profile whose rules stand in for this one when a run is checked against the
    #: model: itself when modelled; Scala 3.x for the older Scala releases (the model has none of
    #: their switches, so such checks hold only where those releases answer as 3.x does).
    model_profile: str = "scala-3.x"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            # A name where a profile was meant (a file's field, a CLI value): never silently unequal.
            raise TypeError(f"Profile {self.name!r} compared with the string {other!r}: compare its .name")
        if not isinstance(other, Profile):
            return NotImplemented
        return self is other or all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self))

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    def __repr__(self) -> str:
        return f"Profile({self.name!r})"

    def __reduce__(self) -> tuple[Callable[..., Profile], tuple[Any, ...]]:
        if PROFILES.get(self.name) is self:
            return profile_named, (self.name,)
        return Profile, tuple(getattr(self, f.name) for f in fields(self))


SCALA_3X = Profile(
    name="scala-3.x",
    description="Scala GroupCoordinator 3.0-3.9 (read at 3.6.2)",
    modelled=True,
)

JAVA_4_0 = Profile(
    name="java-4.0",
    description="Java classic-group coordinator, default from 4.0 (read at trunk 2024-10-25)",
    new_member_added_needs_generation_zero=False,
    expiry_completes_initial_join=True,
    sync_in_stable_restarts_heartbeat=False,
    pending_leave_rebalances=True,
    max_size_refusal_checks_join=False,
    static_replacement_keeps_is_new=False,
    commit_unknown_group_v9_group_id_not_found=True,
    leave_cancels_pending_timer=True,
    request_timed_out_maps_to=Errors.COORDINATOR_NOT_AVAILABLE,
    list_groups_reads_committed=True,
    dead_group_cached=False,
    modelled=True,
    model_profile="java-4.0",
)

SCALA_2_2_TO_2_6 = Profile(
    name="scala-2.2-2.6",
    description="Scala GroupCoordinator 2.2-2.6 (switches set to 2.6)",
    delayed_sync=False,
    heartbeat_completing_rebalance_ok=False,
)

SCALA_2_2_TO_2_3 = Profile(
    name="scala-2.2-2.3",
    description="Scala GroupCoordinator 2.2-2.3 (switches set to 2.3)",
    delayed_sync=False,
    heartbeat_completing_rebalance_ok=False,
    commit_validates_member_first=False,
    max_size_rule=MaxSizeRule.KIP_389,
)

SCALA_2_0_TO_2_2 = Profile(
    name="scala-2.0-2.2",
    description="Scala GroupCoordinator 2.0-2.2 (switches set to 2.2)",
    delayed_sync=False,
    heartbeat_completing_rebalance_ok=False,
    heartbeat_validates_before_state=False,
    dead_group_error=Errors.UNKNOWN_MEMBER_ID,
    static_membership=False,
    commit_validates_member_first=False,
    max_size_rule=MaxSizeRule.KIP_389,
)

#: Every profile by name, in the order docs/reference/scenario-format.md lists them.
PROFILES: dict[str, Profile] = {
    p.name: p for p in (SCALA_3X, JAVA_4_0, SCALA_2_2_TO_2_6, SCALA_2_2_TO_2_3, SCALA_2_0_TO_2_2)
}

#: The profile of a configuration that names none.
DEFAULT_PROFILE = SCALA_3X

#: The names of the profiles the model covers.
MODELLED = tuple(name for name, p in PROFILES.items() if p.modelled)


def profile_named(name: str) -> Profile:
    """The profile called ``name``; ValueError naming the known ones otherwise (one sentence)."""
    try:
        return PROFILES[name]
    except (KeyError, TypeError):
        known = ", ".join(PROFILES)
        raise ValueError(f"unknown profile {name!r} (known: {known})") from None
