"""The consumer's side of a group, as a real class: what the Java client does with the
coordinator's answers (which partitions it owns, in which generation) and when its auto-commit
runs relative to the fetcher.

Modelled on ``ConsumerCoordinator`` / ``AbstractCoordinator`` (clients 3.6.2; docs/kafka/consumer.md#heartbeats,
docs/kafka/consumer.md#auto-commit and
004), the eager protocol the model checks (``kgc/model/consumer.py``):

* ``onJoinPrepare`` revokes every owned partition before a JoinGroup (``onPartitionsRevoked``);
* a SyncGroup answered NONE completes the join (``onJoinComplete`` → ``onPartitionsAssigned``):
  the consumer is Stable in that generation and owns exactly the assignment;
* UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION reset the generation and lose the partitions
  (``resetGenerationOnResponseError``), as does a LeaveGroup (``maybeLeaveGroup``);
* the auto-commit task is a delayed task of the client's poll (``DelayedTaskQueue``): it runs
  *before* the fetcher hands out the next batch and advances the position, so the committed
  position is always one the application has processed (docs/kafka/consumer.md#auto-commit,
  docs/kafka/requests.md#joingroup.2:
  ``maybeAutoCommitOffsetsAsync`` in ``ConsumerCoordinator.poll``).

Three consumer-side mutants of ``kgc/model/mutants.py`` are hooks here, so a scenario replayed with
one of them switched on drives this consumer with the bug against the reference coordinator:
``assign_without_revoke`` keeps the owned partitions through ``onJoinPrepare`` and adds the new
assignment to them; ``auto_commit_after_fetch`` lets the fetcher advance the position before the
auto-commit task runs; ``commit_member_error_ignored`` keeps the partitions when a commit is answered
UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgc.client.poll import DelayedTaskQueue
from kgc.model import mutants
from kgc.model.types import Errors, MemberState

BATCH = 1
"""Records the fetcher hands out per poll (one is enough to tell a processed record from one
that is only fetched)."""

CONSUMER_MUTANTS = (mutants.ASSIGN_WITHOUT_REVOKE, mutants.AUTO_COMMIT_AFTER_FETCH, mutants.COMMIT_MEMBER_ERROR_IGNORED)
"""The catalogued consumer mutants this class implements. ``no_retry_after_coordinator_error`` is a
liveness mutant (a finite scenario cannot show it); the equivalent consumer mutants change nothing a
scenario's checks can see."""


@dataclass
class GroupConsumer:
    """One consumer process's group membership and fetch position."""

    mutant: str | None = None
    state: MemberState = MemberState.UNJOINED
    generation: int = -1
    owned: tuple[str, ...] = ()
    position: int = 0
    """The fetcher's next offset: every record below it has been handed to the application."""
    processed: int = 0
    """Every record below it has been processed by the application."""
    tasks: DelayedTaskQueue = field(default_factory=DelayedTaskQueue)

    def __post_init__(self) -> None:
        if self.mutant is not None and self.mutant not in CONSUMER_MUTANTS:
            raise ValueError(f"{self.mutant!r} is not a consumer mutant; known: {', '.join(CONSUMER_MUTANTS)}")

    # ------------------------------------------------------------------ membership
    def on_join_prepare(self) -> None:
        """``onJoinPrepare``: revoke every owned partition (eager protocol), then JoinGroup."""
        if self.mutant != mutants.ASSIGN_WITHOUT_REVOKE:
            self.owned = ()
        self.state = MemberState.REBALANCING

    def on_join_answer(self, error: Errors, generation: int) -> None:
        """``JoinGroupResponseHandler``: NONE adopts the generation (the SyncGroup follows)."""
        if error == Errors.NONE:
            self.generation = generation
        elif error == Errors.UNKNOWN_MEMBER_ID:
            self.reset()

    def on_sync_answer(self, error: Errors, assignment: tuple[str, ...]) -> None:
        """``SyncGroupResponseHandler``: NONE → ``onJoinComplete`` (Stable, owning the assignment)."""
        if error == Errors.NONE:
            owned = assignment
            if self.mutant == mutants.ASSIGN_WITHOUT_REVOKE:
                owned = tuple(sorted(set(self.owned) | set(assignment)))
            self.owned, self.state = owned, MemberState.STABLE
        elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            self.reset()
        else:
            self.state = MemberState.REBALANCING

    def on_answer(self, error: Errors, commit: bool = False) -> None:
        """A Heartbeat or OffsetCommit (``commit``) answer: a fencing error loses the generation
        (``commit_member_error_ignored``, franz-go#1326: not on a commit's)."""
        if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            if commit and self.mutant == mutants.COMMIT_MEMBER_ERROR_IGNORED:
                return
            self.reset()

    def on_leave(self) -> None:
        """``maybeLeaveGroup``: LeaveGroup, and the generation and partitions are gone."""
        self.reset()

    def reset(self) -> None:
        self.state, self.generation, self.owned = MemberState.UNJOINED, -1, ()

    # ------------------------------------------------------------------ the application's poll
    def poll_with_auto_commit(self, now_ms: int) -> int:
        """One application poll at which the auto-commit task is due; returns the offset the task
        commits. The application processed every record of the previous poll before this one
        (``processed == position``); the fetcher then hands out ``BATCH`` more, which the
        application processes after the poll returns."""
        committed: list[int] = []
        self.tasks.add(lambda _now: committed.append(self.position), now_ms)
        if self.mutant == mutants.AUTO_COMMIT_AFTER_FETCH:
            self.position += BATCH  # the fetcher first: the task commits records not yet processed
            self.tasks.poll(now_ms)
        else:
            # docs/kafka/consumer.md#auto-commit: a due task makes the client poll return at once, first
            self.tasks.poll(now_ms)
            self.position += BATCH
        self.commit_covers_unprocessed = committed[0] > self.processed
        self.processed = self.position  # the application processes the batch after poll returns
        return committed[0]

    commit_covers_unprocessed: bool = False
    """Whether the last auto-commit covered records the application had not processed."""
