"""The consumer client: what it sends and how it reacts to answers.

Modelled on the Java client's ``AbstractCoordinator`` / ``ConsumerCoordinator`` (docs/kafka/consumer.md#heartbeats and
004: ``joinGroupIfNeeded``, ``JoinGroupResponseHandler``, ``onJoinLeader`` / ``onJoinFollower``,
``HeartbeatResponseHandler``, ``maybeLeaveGroup``, ``resetGeneration``), with the eager rebalance
protocol: every owned partition is revoked before a JoinGroup (``onPartitionsRevoked``) and the
new assignment installed on a successful SyncGroup (``onPartitionsAssigned``).

A consumer whose assignor is ``cooperative-sticky`` (``Config.cooperative``) follows the cooperative
(incremental) protocol instead (KIP-429; ``ConsumerCoordinator``, Kafka 4.0): ``onJoinPrepare`` revokes
nothing unless its generation was reset (then the partitions are lost, which the model does where it
resets), its JoinGroup's subscription carries the partitions it owns and its generation
(``ConsumerCoordinator.metadata``: ``ConsumerProtocolSubscription`` ``OwnedPartitions`` and
``GenerationId``), the leader plans with ``CooperativeStickyAssignor`` over those claims
(``kgc/model/assignors.py``), and ``onJoinComplete`` revokes only the owned partitions the new
assignment leaves out, then asks for a rejoin (``requestRejoin``: "need to revoke partitions and re-join").

A consumer has one connection and one request in flight at a time (docs/kafka/group.md#what-it-keeps: the broker
handles one request per connection and mutes it while a request is parked).
"""

from __future__ import annotations

from typing import Any

from kgc.model.actions import (
    CHANGE_METADATA,
    RECEIVE,
    SEND_COMMIT,
    SEND_FETCH,
    SEND_HEARTBEAT,
    SEND_JOIN,
    SEND_LEAVE,
    Action,
)
from kgc.model.assignors import (
    CLAIMS_BY_GENERATION,
    CLAIMS_OF_HIGHEST_GENERATION,
    CLAIMS_OLDEST_GENERATION,
    CLAIMS_STALE_HIDE_MOVES,
    CLAIMS_WITHOUT_GENERATION,
    assign,
)
from kgc.model.config import JOIN_VERSION_SYNC_PROTOCOL, Config
from kgc.model.mutants import RULES
from kgc.model.state import (
    NO_GENERATION,
    NO_MEMBER,
    Consumer,
    MemberId,
    Request,
    Response,
    initial_consumer,
    replace,
)
from kgc.model.types import ApiKey, Errors, MemberState

#: Errors that mean "find the coordinator again" (``markCoordinatorUnknown``).
COORDINATOR_ERRORS = frozenset({Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE})
#: Errors that mean "you are no longer this generation's member" (``resetGenerationOnResponseError``).
MEMBER_ERRORS = frozenset({Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION})
#: JoinGroup errors the Java client treats as fatal, among those the model's coordinator answers:
#: kafka-clients 4.0.2 ``AbstractCoordinator.JoinGroupResponseHandler`` raises them ("JoinGroup failed
#: due to fatal error", ``GroupMaxSizeReachedException`` for GROUP_MAX_SIZE_REACHED) and, none being a
#: ``RetriableException``, ``joinGroupIfNeeded`` throws them out of ``poll`` to the application
#: (``else if (!future.isRetriable()) throw exception``). FENCED_INSTANCE_ID, fatal on every request,
#: is handled before (``fenced``).
FATAL_JOIN_ERRORS = frozenset(
    {Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT, Errors.GROUP_MAX_SIZE_REACHED}
)


def _send(consumer: Consumer, request: Request, **changes: Any) -> Consumer:
    return replace(consumer, awaiting=int(request.api), requests=consumer.requests + (request,), **changes)


def consumer_steps(config: Config, index: int, consumer: Consumer) -> list[tuple[Action, Consumer]]:
    """The consumer's enabled steps, in a fixed order. Steps that spend a perturbation budget
    (leave, metadata change) are included; the caller checks the budget."""
    steps: list[tuple[Action, Consumer]] = []
    if consumer.responses:
        response = consumer.responses[0]
        steps.append((Action(RECEIVE, index, response=response), receive(config, consumer, index)))
    if consumer.awaiting:
        return steps
    if consumer.rejoin_needed:
        request = join_request(config, index, consumer.mid, consumer.meta, consumer.owned, consumer.generation)
        steps.append((Action(SEND_JOIN, index, request=request), send_join(config, consumer, request)))
    elif consumer.state == MemberState.STABLE:
        # The heartbeat thread runs while the member is stable; once a rejoin is needed the
        # next poll sends the JoinGroup instead.
        hb = Request(ApiKey.HEARTBEAT, consumer.mid, consumer.generation)
        steps.append((Action(SEND_HEARTBEAT, index, request=hb), _send(consumer, hb)))
        if config.auto_commit and consumer.owned:
            commit = auto_commit_request(config, consumer)
            steps.append((Action(SEND_COMMIT, index, request=commit), _send(consumer, commit)))
        if config.offset_fetch and consumer.owned:
            fetch = Request(ApiKey.OFFSET_FETCH, consumer.mid, consumer.generation)
            steps.append((Action(SEND_FETCH, index, request=fetch), _send(consumer, fetch)))
    if config.application_commits:
        own = application_commit_request(config, consumer)
        if own is not None:
            steps.append((Action(SEND_COMMIT, index, choice=APPLICATION, request=own), _send(consumer, own)))
    if consumer.mid != NO_MEMBER and not config.is_static(index):
        # A static member does not leave on close or on a poll timeout (KIP-345): its instance
        # id keeps its place until its session times out.
        leave = Request(ApiKey.LEAVE_GROUP, consumer.mid)
        steps.append((Action(SEND_LEAVE, index, request=leave), send_leave(consumer, leave)))
    changed = replace(consumer, meta=consumer.meta ^ 1, rejoin_needed=True)
    steps.append((Action(CHANGE_METADATA, index), changed))
    return steps


def join_request(
    config: Config,
    index: int,
    mid: MemberId,
    meta: int,
    owned: tuple[int, ...] = (),
    generation: int = NO_GENERATION,
) -> Request:
    """Consumer ``index``'s JoinGroup: its protocols and protocol type (``Config.protocols``,
    ``Config.protocol_types``; the configured assignor and ``consumer`` by default). A cooperative
    consumer's subscription also carries the partitions it owns and its generation (KIP-429); the model
    leaves them out for an eager consumer, whose assignors never read them."""
    cooperative = config.cooperative(index)
    return Request(
        ApiKey.JOIN_GROUP,
        mid,
        meta=meta,
        protocols=config.protocol_codes(index),
        protocol_type=config.protocol_type_code(index),
        session_timeout_ms=config.session_timeout_ms(index),
        owned=owned if cooperative else (),
        owned_generation=generation if cooperative else NO_GENERATION,
    )


def auto_commit_request(config: Config, consumer: Consumer) -> Request:
    """The auto-commit task runs inside ``poll`` before the fetcher advances the position, so the
    committed position never covers records the application has not processed (docs/kafka/consumer.md#auto-commit)."""
    after_fetch = not RULES[config.mutant].auto_commit_processed_only
    return Request(ApiKey.OFFSET_COMMIT, consumer.mid, consumer.generation, covers_unprocessed=after_fetch)


APPLICATION = ("application",)
"""The choice that marks an OffsetCommit the application asked for (``Config.application_commits``), as
against the auto-commit task's: a step of its own, never forced by fairness."""


def application_commit_request(config: Config, consumer: Consumer) -> Request | None:
    """The OffsetCommit of the application's ``commitSync()`` (``Config.application_commits``), or None when
    it sends nothing. Kafka 4.0 ``ConsumerCoordinator.sendOffsetCommitRequest``: no offsets, no request; with
    auto-assigned partitions the generation is ``generationIfStable()``, so a Stable consumer commits the
    positions of the partitions it owns with its member id and generation (also while a rejoin is pending:
    ``onJoinPrepare`` calls ``onPartitionsRevoked`` before ``initiateJoinGroup`` leaves STABLE), and any other
    fails in the client (RebalanceInProgressException, CommitFailedException). Where the auto-commit step sends
    the same request (Stable, no rejoin pending, ``auto_commit``) that step is the commit.

    kafka-python#2614 put back (rule ``commit_needs_stable_generation`` broken): kafka-python before 2.2.4
    sent ``self.generation() or Generation.NO_GENERATION``, so a consumer that is not Stable commits with
    generation -1 and no member id (nor ``group.instance.id``: its OffsetCommit is v6 at most). It still has
    offsets to commit: kafka-python's ``_on_join_prepare`` tells the listener the partitions are revoked but
    keeps them assigned until the join completes. The model offers that commit to a consumer that holds a
    member id (one that never joined has nothing to commit)."""
    if consumer.state == MemberState.STABLE:
        if not consumer.owned or (config.auto_commit and not consumer.rejoin_needed):
            return None
        return Request(ApiKey.OFFSET_COMMIT, consumer.mid, consumer.generation)
    if RULES[config.mutant].commit_needs_stable_generation or consumer.mid == NO_MEMBER:
        return None
    return Request(ApiKey.OFFSET_COMMIT, NO_MEMBER, NO_GENERATION)


def send_join(config: Config, consumer: Consumer, request: Request) -> Consumer:
    """``joinGroupIfNeeded``: ``onJoinPrepare`` revokes every owned partition (eager protocol; a
    cooperative consumer keeps them), then JoinGroup with the known member id (empty for a new member)."""
    # Only a cooperative consumer's subscription names owned partitions (``join_request``).
    kept = consumer.owned if request.owned or not RULES[config.mutant].revoke_before_assign else ()
    return _send(consumer, request, owned=kept, state=MemberState.REBALANCING)


def send_leave(consumer: Consumer, request: Request) -> Consumer:
    """``maybeLeaveGroup`` (docs/kafka/consumer.md#heartbeats, docs/kafka/group.md#states "LeaveGroup"): send
    LeaveGroup and reset the member
    id and generation. The consumer rejoins at its next poll (a poll-timeout leave); a consumer
    that never acts again is a closed one."""
    return _send(
        consumer,
        request,
        state=MemberState.UNJOINED,
        mid=NO_MEMBER,
        generation=NO_GENERATION,
        owned=(),
        rejoin_needed=True,
    )


def _reset(consumer: Consumer, reset_member_id: bool, keep_owned: bool = False) -> Consumer:
    """``resetGenerationOnResponseError``: forget the generation (and the member id on
    UNKNOWN_MEMBER_ID), lose the partitions, rejoin. The partitions are lost by the ``onJoinPrepare``
    that runs before the next JoinGroup (``onPartitionsLost``: the generation was reset); nothing the
    consumer does in between reads them, so the model drops them here. ``keep_owned``: that
    ``onJoinPrepare`` does not run (KAFKA-12983 put back)."""
    return replace(
        consumer,
        state=MemberState.UNJOINED,
        mid=NO_MEMBER if reset_member_id else consumer.mid,
        generation=NO_GENERATION,
        owned=consumer.owned if keep_owned else (),
        rejoin_needed=True,
    )


def fenced(consumer: Consumer) -> Consumer:
    """FENCED_INSTANCE_ID is fatal (``FencedInstanceIdException``, KIP-345): another consumer holds
    the instance id; this one gives up its partitions and stops taking part."""
    return replace(
        consumer, state=MemberState.UNJOINED, mid=NO_MEMBER, generation=NO_GENERATION, owned=(), rejoin_needed=False
    )


def refused(consumer: Consumer) -> Consumer:
    """A fatal JoinGroup or SyncGroup error (:data:`FATAL_JOIN_ERRORS`; SyncGroup's
    INCONSISTENT_GROUP_PROTOCOL, which ``SyncGroupResponseHandler`` raises as an unexpected
    ``KafkaException``) reaches the application from ``poll``; the model's application closes the
    consumer, as for FENCED_INSTANCE_ID: it gives up its partitions and stops taking part. (The
    Java client has already called ``requestRejoin``, so an application that polls again would
    rejoin and be refused again; the model leaves that loop out. ``close`` sends no LeaveGroup here:
    the member id it might hold is removed by the refusal (GROUP_MAX_SIZE_REACHED) or by its timer.)"""
    return fenced(consumer)


def receive(config: Config, consumer: Consumer, index: int = -1) -> Consumer:
    """Handle the response at the head of consumer ``index``'s connection (-1: an eager consumer)."""
    response = consumer.responses[0]
    c = replace(consumer, responses=consumer.responses[1:], awaiting=0)
    api, error = response.api, response.error
    if error == Errors.FENCED_INSTANCE_ID:
        return fenced(c)
    if api == ApiKey.JOIN_GROUP:
        return _on_join_response(config, c, response)
    if api == ApiKey.SYNC_GROUP:
        if error == Errors.INCONSISTENT_GROUP_PROTOCOL:
            return refused(c)
        if error == Errors.NONE:
            # onJoinComplete → onPartitionsAssigned.
            owned = response.assignment
            if index >= 0 and config.cooperative(index):
                # ConsumerCoordinator.onJoinComplete (4.0), COOPERATIVE: revoke the owned partitions the
                # assignment leaves out (onPartitionsRevoked), then requestRejoin so that they can be
                # assigned in the follow-up rebalance.
                revoked = bool(set(c.owned) - set(owned))
                return replace(c, state=MemberState.STABLE, owned=owned, rejoin_needed=revoked)
            if not RULES[config.mutant].revoke_before_assign:
                owned = tuple(sorted(set(c.owned) | set(owned)))
            return replace(c, state=MemberState.STABLE, owned=owned)
        keep = not RULES[config.mutant].reset_reruns_join_prepare
        if error == Errors.UNKNOWN_MEMBER_ID:
            return _reset(c, reset_member_id=True, keep_owned=keep)
        if error == Errors.ILLEGAL_GENERATION:
            return _reset(
                c, reset_member_id=not RULES[config.mutant].illegal_generation_keeps_member_id, keep_owned=keep
            )
        if error in COORDINATOR_ERRORS and not RULES[config.mutant].retry_after_coordinator_error:
            return replace(c, state=MemberState.REBALANCING)
        if error in COORDINATOR_ERRORS and not RULES[config.mutant].coordinator_error_keeps_member:
            return _reset(c, reset_member_id=True)  # KAFKA-13214 put back: resetStateAndRejoin
        if error == Errors.REBALANCE_IN_PROGRESS and not RULES[config.mutant].sync_rebalance_keeps_generation:
            # KAFKA-13891/KAFKA-14016 put back (apache/kafka#12140, 3.3.0-3.3.1): the generation is reset, so
            # onJoinPrepare loses every owned partition (onPartitionsLost); the member id is kept.
            return _reset(c, reset_member_id=False)
        return replace(c, rejoin_needed=True, state=MemberState.REBALANCING)
    if api in (ApiKey.HEARTBEAT, ApiKey.OFFSET_COMMIT):
        rules = RULES[config.mutant]
        commit = api == ApiKey.OFFSET_COMMIT
        if error == Errors.REBALANCE_IN_PROGRESS:
            if commit and not rules.rebalance_in_progress_keeps_generation:
                return _reset(c, reset_member_id=True)
            return replace(c, rejoin_needed=True)
        if commit and error in MEMBER_ERRORS and not rules.commit_member_error_resets:
            return c
        if error == Errors.UNKNOWN_MEMBER_ID:
            return _reset(c, reset_member_id=True)
        if error == Errors.ILLEGAL_GENERATION:
            return _reset(c, reset_member_id=not rules.illegal_generation_keeps_member_id)
        return c
    return c


def _on_join_response(config: Config, c: Consumer, response: Response) -> Consumer:
    """``JoinGroupResponseHandler``: on success adopt the generation and send SyncGroup at once —
    the leader with the plan it computes from the member list (``onJoinLeader``), a follower
    empty (``onJoinFollower``)."""
    error = response.error
    if error == Errors.NONE:
        # The leader plans with the assignor the coordinator selected (the answer's protocol name).
        assignor = config.protocol_name(response.protocol)
        plan = (
            assign(assignor, response.members, config.partitions, response.claims, _claims_rule(config))
            if response.leader == response.mid
            else ()
        )
        if not RULES[config.mutant].plan_lists_every_member:
            plan = tuple((mid, owned) for mid, owned in plan if owned)
        sync = Request(ApiKey.SYNC_GROUP, response.mid, response.generation, plan=plan)
        index = response.mid[0]
        if config.join_version(index) >= JOIN_VERSION_SYNC_PROTOCOL:
            # JoinGroup v7+ pairs with SyncGroup v5+, which carries the protocol type and name (KIP-559).
            sync = replace(
                sync, sync_protocol_type=config.protocol_type_code(index), sync_protocol_name=response.protocol
            )
        return _send(
            c,
            sync,
            mid=response.mid,
            generation=response.generation,
            state=MemberState.REBALANCING,
            rejoin_needed=False,
        )
    if error == Errors.MEMBER_ID_REQUIRED:
        # KIP-394: rejoin at once with the id the coordinator handed out.
        request = join_request(config, response.mid[0], response.mid, c.meta, c.owned, c.generation)
        return _send(replace(c, mid=response.mid), request)
    if error in FATAL_JOIN_ERRORS:
        return refused(c)
    if error == Errors.UNKNOWN_MEMBER_ID:
        return _reset(c, reset_member_id=True, keep_owned=not RULES[config.mutant].reset_reruns_join_prepare)
    if error in COORDINATOR_ERRORS and not RULES[config.mutant].retry_after_coordinator_error:
        return replace(c, rejoin_needed=False)
    if error in COORDINATOR_ERRORS and not RULES[config.mutant].coordinator_error_keeps_member:
        # KAFKA-13214 put back: before apache/kafka#11231 joinGroupIfNeeded answered a retriable error
        # with resetStateAndRejoin, forgetting the member id (generation = NO_GENERATION).
        return _reset(c, reset_member_id=True)
    return replace(c, rejoin_needed=True)


def _claims_rule(config: Config) -> int:
    """How the leader's cooperative-sticky assignor reads conflicting claims: Kafka 3.5+'s, or the
    older rule a mutant puts back."""
    rules = RULES[config.mutant]
    if not rules.claims_carry_generation:
        return CLAIMS_WITHOUT_GENERATION
    if not rules.stale_claims_counted:
        return CLAIMS_OF_HIGHEST_GENERATION
    if not rules.stale_claim_moves_withheld:
        return CLAIMS_STALE_HIDE_MOVES
    if not rules.newest_claim_wins:
        return CLAIMS_OLDEST_GENERATION
    return CLAIMS_BY_GENERATION


def lose_response(consumer: Consumer) -> Consumer:
    """The response never arrives (docs/kafka/group.md#states: a follower or the leader loses its JoinGroup
    response). The client's request times out and it carries on: a JoinGroup or SyncGroup is
    retried by rejoining with the member id it knows."""
    response = consumer.responses[0]
    c = replace(consumer, responses=consumer.responses[1:], awaiting=0)
    if response.api in (ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP):
        return replace(c, rejoin_needed=True, state=MemberState.REBALANCING)
    return c


def crash(consumer: Consumer) -> Consumer:
    """The consumer process dies and restarts: its connection closes (queued requests and answers
    are gone) and it starts over with no member id. The coordinator still has its old member
    until a timer removes it."""
    return replace(initial_consumer(), meta=consumer.meta)
