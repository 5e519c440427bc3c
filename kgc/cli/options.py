"""The options every exploring verb shares, built in one place.

``check``, ``report``, ``diagram states|graph``, ``mutants`` and ``diff`` take the same model options
(:func:`add_model_arguments`: a configuration file, the fields with flags of their own, ``--set
FIELD=VALUE`` for any other, ``--mutant``) and the same bounds (:func:`add_bounds_arguments`), so a
configuration that works with one verb works with all of them. Values are read back with
:func:`config_from_args` and :func:`bounds_from_args`, which validate them through
:mod:`kgc.cli.inputs`.
"""

from __future__ import annotations

import argparse
from typing import Any

from kgc.cli import inputs
from kgc.cli.errors import InputError
from kgc.explorer import memory
from kgc.explorer.search import Bounds
from kgc.explorer.worker import default_workers
from kgc.model.config import Config, ConfigError
from kgc.model.mutants import CATALOGUE

#: The model fields with a flag of their own (``--max-generation`` → ``max_generation``).
MODEL_FLAGS = (
    "consumers",
    "static_consumers",
    "partitions",
    "max_generation",
    "faults",
    "max_perturbations",
    "assignor",
    "initial_rebalance_delay_ms",
    "profile",
    "atomic_requests",
    "mutant",
)


def add_model_arguments(p: argparse.ArgumentParser, *, mutant: str = "one") -> None:
    """The model's options. ``mutant="one"``: ``--mutant NAME`` switches one catalogued bug on;
    ``"many"``: repeatable, into ``args.mutants`` (``kgc mutants``); ``"none"``: no flag."""
    g = p.add_argument_group("model")
    g.add_argument("--config", metavar="FILE", help="a TOML or JSON file of model settings")
    g.add_argument("--consumers", type=inputs.integer, metavar="N")
    g.add_argument(
        "--static-consumers",
        type=inputs.integer,
        metavar="S",
        help="how many consumers join with a group.instance.id (default 1)",
    )
    g.add_argument("--partitions", type=inputs.integer, metavar="P")
    g.add_argument(
        "--max-generation",
        type=_generation_bound,
        metavar="G",
        help="the generation bound (default 3), or 'unbounded': every generation, through the generation-shift "
        "quotient (docs/verdicts.md)",
    )
    g.add_argument("--faults", metavar="LIST", help="comma-separated faults, or 'all' / 'none'")
    g.add_argument("--max-perturbations", type=inputs.integer, metavar="K")
    g.add_argument("--assignor", metavar="NAME")
    g.add_argument("--initial-rebalance-delay-ms", type=inputs.integer, metavar="MS")
    g.add_argument("--profile", metavar="NAME")
    g.add_argument(
        "--no-atomic-requests",
        dest="atomic_requests",
        action="store_false",
        default=None,
        help="explore fully asynchronous request/response channels",
    )
    g.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="any other model field")
    if mutant == "one":
        g.add_argument("--mutant", metavar="NAME", help="switch on a catalogued protocol bug (kgc mutants --list)")
    elif mutant == "many":
        g.add_argument(
            "--mutant",
            dest="mutants",
            action="append",
            default=[],
            metavar="NAME",
            help="run only this mutant (repeatable); default: every mutant the model can tell apart",
        )


def _generation_bound(text: str) -> int | str:
    """``--max-generation``: a whole number, or ``unbounded``."""
    if text == "unbounded":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number or 'unbounded', not {text!r}") from None


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    """The search strategy and the bounds."""
    p.add_argument("--strategy", choices=["bfs", "dfs"], default="bfs")
    p.add_argument(
        "--workers",
        type=inputs.integer,
        choices=[1, 2],
        help="processes that compute the model's steps and check the liveness properties (default: KGC_WORKERS, "
        "else 2 on a machine with two cores or more); the results are the same",
    )
    add_bounds_arguments(p)


def workers_from_args(args: argparse.Namespace) -> int:
    """``--workers``, else ``KGC_WORKERS``, else what the machine has (``kgc.explorer.worker``)."""
    if getattr(args, "workers", None) is not None:
        return int(args.workers)
    try:
        return default_workers()
    except ValueError as exc:
        raise InputError(str(exc)) from None


DEFAULT_TIME_LIMIT = 3600.0
"""Seconds a search runs when no ``--time-limit`` is given: a gate never hangs. A run that reaches
it ends as any bounded run does, "incomplete" with its statistics (exit 4). ``--time-limit none``
lifts it, as ``--max-memory none`` lifts the default memory bound (:func:`memory.default_limit`)."""

_NO_LIMIT = ("none", "off", "unlimited")


def add_bounds_arguments(p: argparse.ArgumentParser) -> None:
    """The bounds, and whether a run they cut short may pass."""
    g = p.add_argument_group("bounds")
    g.add_argument(
        "--max-depth",
        type=inputs.integer,
        metavar="D",
        help="explore behaviours of at most D steps (part of the model)",
    )
    g.add_argument(
        "--max-states", type=inputs.integer, metavar="S", help="stop after S distinct states (the run is incomplete)"
    )
    g.add_argument(
        "--time-limit",
        metavar="SECONDS",
        help=f"stop after SECONDS (the run is incomplete; default {DEFAULT_TIME_LIMIT:g}, 'none' for no limit)",
    )
    g.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="stop cleanly once this process's resident memory reaches SIZE (2G, 500M, 1.5G; K/M/G/T are powers of "
        "1024; the run is incomplete, its statistics printed, --checkpoint DIR written; default "
        f"{round(memory.DEFAULT_SHARE * 100)}%% of the machine's or the container's memory, 'none' for no limit)",
    )
    g.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="exit 0, not 4, when --time-limit, --max-states or --max-memory cut the exploration short",
    )


def config_mapping_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The flags and ``--set`` items as configuration fields (not yet validated)."""
    overrides: dict[str, Any] = {}
    for name in MODEL_FLAGS:
        value = getattr(args, name, None)
        if value is not None:
            overrides[name] = value
    for item in getattr(args, "set", []) or []:
        if "=" not in item:
            raise InputError(f"--set needs FIELD=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        overrides[key.strip()] = value.strip()
    return overrides


def config_from_args(args: argparse.Namespace, base: Config | None = None) -> Config:
    """The configuration: defaults, then ``--config FILE`` (through :mod:`kgc.cli.inputs`), then the
    flags."""
    config = base or Config()
    if getattr(args, "config", None):
        try:
            config = Config.from_mapping(inputs.load_config_mapping(args.config), base=config)
        except ConfigError as exc:
            raise InputError(f"{args.config}: {exc}") from None
    try:
        overrides = config_mapping_from_args(args)
        return Config.from_mapping(overrides, base=config) if overrides else config
    except ConfigError as exc:
        raise InputError(str(exc)) from None


def bounds_from_args(args: argparse.Namespace) -> Bounds:
    """The bounds, each positive and finite (``--time-limit nan`` is refused); ``--max-memory``
    in bytes (:func:`kgc.cli.inputs.memory_size`)."""
    for name in ("max_depth", "max_states"):
        value = getattr(args, name, None)
        inputs.finite_positive(value, f"--{name.replace('_', '-')}")  # at most MAX_INT: inputs.integer
    time_limit = time_limit_from_args(args)
    size = getattr(args, "max_memory", None)
    spark = getattr(args, "engine", None) == "spark"
    if size is None:
        max_memory = None if spark else memory.default_limit()
    elif str(size).strip().lower() in _NO_LIMIT:
        max_memory = None
    else:
        max_memory = inputs.memory_size(size, "--max-memory")
        if spark:
            raise InputError(
                "--max-memory bounds this process; under --engine spark the memory is Spark's: "
                "--spark-conf spark.driver.memory=SIZE / spark.executor.memory=SIZE"
            )
    return Bounds(args.max_depth, args.max_states, time_limit, max_memory)


def time_limit_from_args(args: argparse.Namespace) -> float | None:
    """``--time-limit``: :data:`DEFAULT_TIME_LIMIT` when not given, None for ``none``, else a
    positive finite number of seconds."""
    raw = getattr(args, "time_limit", None)
    if raw is None:
        return DEFAULT_TIME_LIMIT
    if isinstance(raw, str) and raw.strip().lower() in _NO_LIMIT:
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise InputError(f"--time-limit must be a number of seconds or 'none', got {raw!r}") from None
    inputs.finite_positive(value, "--time-limit")
    return value


def coordinator_mutant(name: str | None) -> str | None:
    """``--mutant NAME`` of a verb that runs the reference coordinator: a catalogued
    coordinator-side mutant (``kgc/model/mutants.py``), or None."""
    if name is None:
        return None
    by_name = {m.name: m for m in CATALOGUE}
    if name not in by_name or not by_name[name].in_reference:
        known = ", ".join(m.name for m in CATALOGUE if m.in_reference)
        raise InputError(f"--mutant: unknown coordinator mutant {name!r}; known: {known}")
    return name


# ---------------------------------------------------------------------- the wire verbs (serve, clients)


def add_coordinator_arguments(p: argparse.ArgumentParser, *, delay: bool = True) -> None:
    """The reference coordinator's options of the verbs that serve it (``serve``, ``clients``):
    ``--mutant`` and, with ``delay``, ``--profile`` and ``--initial-rebalance-delay-ms``. Values
    are read back with :func:`coordinator_from_args`."""
    from kgc.harness.scenario.format import PROFILES
    from kgc.model.profiles import DEFAULT_PROFILE

    p.add_argument("--mutant", metavar="NAME", help="switch on a catalogued coordinator bug (kgc/model/mutants.py)")
    if delay:
        p.add_argument(
            "--profile", choices=PROFILES, default=DEFAULT_PROFILE.name, help="coordinator behaviour profile"
        )
        p.add_argument(
            "--initial-rebalance-delay-ms",
            default="3000",
            metavar="MS",
            help="group.initial.rebalance.delay.ms (default 3000)",
        )


def coordinator_from_args(args: argparse.Namespace) -> Any:
    """The ``kgc.reference.CoordinatorConfig`` of :func:`add_coordinator_arguments`' options,
    validated (:func:`coordinator_mutant`; the delay a whole number of ms up to a day)."""
    from kgc.model.profiles import profile_named
    from kgc.reference.config import BrokerGroupSettings, CoordinatorConfig

    delay = inputs.whole_number(args.initial_rebalance_delay_ms, "--initial-rebalance-delay-ms", 0, 86_400_000)
    return CoordinatorConfig.of(
        BrokerGroupSettings(initial_rebalance_delay_ms=delay),
        profile_named(args.profile),
        coordinator_mutant(args.mutant),
    )


def port_from_args(text: str, option: str = "--port") -> int:
    """A TCP port on 127.0.0.1 (0: a free one)."""
    return inputs.whole_number(text, option, 0, 65535)


def address_from_args(text: str, option: str) -> Any:
    """``HOST:PORT`` (``[v6]:PORT``) as ``kgc.broker.address.Address``."""
    from kgc.broker import parse_bootstrap

    try:
        return parse_bootstrap(text)
    except ValueError as exc:
        raise InputError(f"{option}: {exc}") from None
