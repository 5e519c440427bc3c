"""One check is one value (``kgc.explorer.request.CheckRequest``): ``kgc check`` builds it from the command
line in one function, with the spec's properties for the configuration, and a contradictory request is
refused in one sentence."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kgc.cli import build_parser, cmd_check
from kgc.cli.errors import InputError
from kgc.explorer.liveness import Fairness
from kgc.explorer.request import Checkpointing, CheckRequest
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.properties import protocol
from kgc.properties.temporal import ALL as TEMPORAL


def request_of(*argv: str) -> CheckRequest:
    args = build_parser({"check": cmd_check}).parse_args(["check", *argv])
    return cmd_check.request_from_args(args)


def test_the_command_line_becomes_one_frozen_request(tmp_path: Path) -> None:
    request = request_of(
        "--consumers", "2", "--max-generation", "2", "--strategy", "dfs", "--engine", "python",
        "--fairness", "strong", "--max-states", "50", "--checkpoint", str(tmp_path), "--workers", "1",
    )  # fmt: skip
    assert request.config == Config(consumers=2, max_generation=2)
    assert (request.strategy, request.engine, request.local_engine, request.workers) == ("dfs", "python", "python", 1)
    assert (request.bounds.max_states, request.bounds.max_depth) == (50, None)  # and kgc check's default limits
    assert request.fairness == Fairness("strong")
    assert request.checkpoint == Checkpointing(tmp_path, None, False)
    assert request.temporal == TEMPORAL and request.spark is None and not request.coverage
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.strategy = "bfs"  # type: ignore[misc]


def test_the_properties_are_the_spec_s_for_the_configuration() -> None:
    """The check asks the spec for its properties (the configuration's dimensions, its profile's
    ``rebalance_triggers``): the CLI appends nothing."""
    plain = request_of()
    assert plain.properties == protocol.for_config(plain.config)
    assert protocol.rebalance_triggers not in plain.properties
    assert protocol.rebalance_triggers_pending_leave_stays in plain.properties
    java = request_of("--profile", "java-4.0")
    assert protocol.rebalance_triggers_pending_leave_rebalances in java.properties
    sized = protocol.for_config(Config(group_max_size=2))
    assert {"max_size_refusal_removes", "witness_max_size_refused"} <= {p.name for p in sized}
    assert [p.name for p in plain.properties] == [p.name for p in protocol.ALL]


def test_liveness_off_and_auto_engine() -> None:
    request = request_of("--no-liveness")
    assert request.fairness is None and request.engine == "auto" and request.local_engine is None
    assert request_of("--engine", "local").engine == "auto"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"strategy": "random"}, "unknown strategy 'random'"),
        ({"engine": "gpu"}, "unknown engine 'gpu'"),
        ({"engine": "spark"}, "the Spark engine and its settings go together"),
        ({"engine": "spark", "spark": object(), "coverage": True}, "--coverage needs the local engine"),
        ({"engine": "spark", "spark": object(), "checkpoint": Checkpointing(Path("x"))}, "need the local engine"),
        ({"engine": "spark", "spark": object(), "fairness": Fairness()}, "checks safety only"),
    ],
)
def test_a_contradictory_request_is_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CheckRequest(Config(), protocol.ALL, TEMPORAL, Bounds(), **fields)  # type: ignore[arg-type]


def test_bad_options_stay_one_line_errors() -> None:
    with pytest.raises(InputError, match="--checkpoint-every needs --checkpoint DIR"):
        request_of("--checkpoint-every", "5")
    with pytest.raises(InputError, match="--coverage needs the local engine"):
        request_of("--engine", "spark", "--coverage", "--no-liveness")
    with pytest.raises(InputError, match="--checkpoint and --resume need the local engine"):
        request_of("--engine", "spark", "--no-liveness", "--checkpoint", "somewhere")
