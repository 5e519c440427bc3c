"""What kgc can ask of "a group coordinator you can talk to", split by concern.

- :mod:`kgc.interface.messages`: the requests and the answers, field for field Kafka's messages.
- :mod:`kgc.interface.events`: what a coordinator reports besides answers (timers, removals,
  state changes), and the buffer implementations share.
- :mod:`kgc.interface.coordinator`: the coordinator itself (:class:`GroupCoordinator`) and the
  capabilities beyond the wire protocol: :class:`Clock` (virtual time) and :class:`Failover`.

The shape follows Kafka's own request path: a client sends a request and gets a handle back; the
answer arrives as an event, possibly much later (a JoinGroup parked in the join purgatory, a
SyncGroup waiting for the leader's assignment to be written). Nothing here reaches into a
coordinator's internals, so a wire adapter implements :class:`GroupCoordinator` as well as the
in-process reference implementation does; what only the reference offers (storage completion,
``mark_dead``, a snapshot of its state) is ``kgc.reference.controls.ReferenceControls``.
"""
