"""Hypothesis stateful fuzzing of a group coordinator against the model (issue 3).

``coordinator_machine(options, factory)`` builds a ``RuleBasedStateMachine`` whose rules are client
requests and environment events; after every atomic step of the coordinator it checks the
explorer's property functions on the abstracted state and refinement against the model.
"""

from kgc.harness.fuzz.machine import CoordinatorMachine, coordinator_machine, model_config
from kgc.harness.fuzz.target import GROUP_ID, FuzzOptions, FuzzTarget, TargetFactory, reference_target

__all__ = [
    "GROUP_ID",
    "CoordinatorMachine",
    "FuzzOptions",
    "FuzzTarget",
    "TargetFactory",
    "coordinator_machine",
    "model_config",
    "reference_target",
]
