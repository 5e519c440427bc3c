"""Targets a scenario can run against, built from a scenario's config and a behaviour profile.

A target is any :class:`kgc.interface.coordinator.GroupCoordinator`; what else it offers decides
which scenarios it can run: :class:`~kgc.interface.coordinator.Clock` for ``advance_time``,
:class:`~kgc.interface.coordinator.Failover` for ``coordinator_unload``,
:class:`~kgc.reference.controls.ReferenceControls` for ``store_complete``, ``mark_dead`` and manual
store completion. The runner asks only these protocols, so a wire adapter to a real broker plugs
in through :func:`make_target` unchanged.

:func:`observe_group` reads the group after a step: from a full snapshot when the target offers
``introspect`` (the reference implementation), otherwise from DescribeGroups, with the fields
DescribeGroups cannot carry reported as unobservable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgc.harness.scenario.format import ScenarioConfig
from kgc.interface.coordinator import GroupCoordinator
from kgc.model.profiles import Profile
from kgc.oracle import KafkaCoordinator, broker_properties
from kgc.oracle.coordinator import NEW_MEMBER_JOIN_TIMEOUT_MS
from kgc.reference import CoordinatorConfig, ReferenceCoordinator
from kgc.reference.controls import ReferenceControls, StoreCompletion

#: The one group of a scenario (its id is irrelevant, docs/reference/scenario-format.md *The world*).
GROUP_ID = "kgc-scenario-group"

#: The coordinators :func:`make_target` builds. ``kgc replay`` offers one more target, the model
#: as a judge (``kgc.harness.scenario.replay.REPLAY_TARGETS``), which is not a coordinator.
TARGETS = ("reference", "kafka")

#: The profile Apache Kafka's own coordinator (target ``kafka``, release 4.0.2) implements.
KAFKA_PROFILE = "java-4.0"


class TargetUnavailable(Exception):
    """The target cannot run this scenario (a missing capability or implementation); the scenario
    is reported as skipped with this reason."""


@dataclass(frozen=True)
class GroupObservation:
    """The group after a step, with member ids still raw. ``None`` in a field means the target
    cannot observe it; ``exists`` False means the coordinator holds no such group."""

    exists: bool
    state: str | None = None
    generation: int | None = None
    leader: str | None = None
    members: tuple[str, ...] | None = None
    pending_members: tuple[str, ...] | None = None
    #: ``(member id, client id)`` of each member, when the target reports client ids
    client_ids: tuple[tuple[str, str], ...] = ()


TargetFactory = Callable[[str, ScenarioConfig, str], GroupCoordinator]


def make_target(name: str, config: ScenarioConfig, profile: Profile, mutant: str | None = None) -> GroupCoordinator:
    """A fresh coordinator of kind ``name`` configured for one scenario, with the catalogued
    protocol bug ``mutant`` switched on if given (``kgc/model/mutants.py``). Raises
    :class:`TargetUnavailable` when it cannot be built (an unknown name is a ValueError)."""
    if name == "reference":
        return _reference(config, profile, mutant)
    if name == "kafka":
        return _kafka(config, profile, mutant)
    raise ValueError(f"unknown target {name!r}; known targets: {', '.join(TARGETS)}")


def coordinator_config(config: ScenarioConfig, profile: Profile, mutant: str | None = None) -> CoordinatorConfig:
    """The reference coordinator's settings for a scenario's config and a behaviour profile
    (one place for every target that runs the reference: in process, or served over the wire)."""
    return CoordinatorConfig.of(config, profile, mutant, new_member_join_timeout_ms=config.new_member_join_timeout_ms)


def _reference(config: ScenarioConfig, profile: Profile, mutant: str | None = None) -> GroupCoordinator:
    completion = StoreCompletion(config.store_completion)
    coordinator: GroupCoordinator = ReferenceCoordinator(coordinator_config(config, profile, mutant), completion, 0)
    return coordinator


def _kafka(config: ScenarioConfig, profile: Profile, mutant: str | None = None) -> GroupCoordinator:
    """Apache Kafka 4.0.2's coordinator shard in the oracle JVM (``kgc.oracle``), configured with the
    scenario's broker settings. Kafka's new-member join timeout is fixed at 5 minutes, so a scenario
    asking for another cannot run on it."""
    if mutant is not None:
        raise ValueError("a mutant is switched on in the reference target only, not in Kafka's code")
    if profile.name != KAFKA_PROFILE:
        raise ValueError(f"the kafka target runs Apache Kafka 4.0.2, whose behaviour is profile {KAFKA_PROFILE}")
    if config.new_member_join_timeout_ms != NEW_MEMBER_JOIN_TIMEOUT_MS:
        raise TargetUnavailable(
            f"new_member_join_timeout_ms {config.new_member_join_timeout_ms}: Kafka fixes it at "
            f"{NEW_MEMBER_JOIN_TIMEOUT_MS} (GroupCoordinatorConfig.classicGroupNewMemberJoinTimeoutMs)"
        )
    properties = broker_properties(
        initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
        min_session_timeout_ms=config.min_session_timeout_ms,
        max_session_timeout_ms=config.max_session_timeout_ms,
        group_max_size=config.group_max_size,
    )
    coordinator: GroupCoordinator = KafkaCoordinator(properties, StoreCompletion(config.store_completion))
    return coordinator


def observe_group(coordinator: GroupCoordinator, group_id: str = GROUP_ID) -> GroupObservation:
    """The group as the target shows it after a step."""
    if isinstance(coordinator, ReferenceControls) and hasattr(coordinator, "introspect"):
        return _from_snapshot(coordinator.introspect(), group_id)
    described = coordinator.describe_group(group_id)
    if described.error.name != "NONE" or (described.state == "Dead" and not described.members):
        # DescribeGroups answers "Dead" with no members for a group it does not hold.
        return GroupObservation(exists=described.error.name == "NONE" and described.state != "Dead")
    leader = described.leader
    return GroupObservation(
        exists=True,
        state=described.state,
        generation=described.generation_id,
        leader=None if leader is None else leader,
        members=tuple(m.member_id for m in described.members),
        pending_members=None,
        client_ids=tuple((m.member_id, m.client_id) for m in described.members),
    )


def _from_snapshot(snapshot: Any, group_id: str) -> GroupObservation:
    """Read a reference ``CoordinatorSnapshot``: its ``groups`` map holds every group object the
    coordinator still references, Dead ones included (an unloaded group is kept for inspection)."""
    groups = snapshot.groups
    group = groups.get(group_id) if isinstance(groups, dict) else None
    if group is None:
        return GroupObservation(exists=False)
    return GroupObservation(
        exists=True,
        state=group.state.kafka_name,
        generation=group.generation_id,
        leader=group.leader_id or "",
        members=tuple(m.member_id for m in group.members),
        pending_members=tuple(group.pending_members),
        client_ids=tuple((m.member_id, m.client_id) for m in group.members),
    )
