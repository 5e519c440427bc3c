"""One check, as one value: what ``kgc check`` asks of the engines, built once and handed over.

A :class:`CheckRequest` holds everything a run needs — the configuration, the properties and the
temporal properties to check (the spec's, for that configuration: ``kgc.properties.protocol.for_config``
hands them over, so a property can see the configuration's profile), the bounds, the strategy and
engine, the fairness of the liveness check (None: not checked), the workers, the checkpoint and
whether transitions are counted per branch. ``kgc.cli.cmd_check.request_from_args`` builds it from the
command line in one place; nothing downstream reads the command line again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.explorer.liveness import Fairness
from kgc.explorer.search import ENGINES, Bounds

SPARK = "spark"
"""The distributed engine (``kgc.explorer.spark``): no checkpoint, no liveness, no step observer."""


@dataclass(frozen=True)
class Checkpointing:
    """Where a native search checkpoints, how often besides on SIGINT/SIGTERM, and whether it resumes."""

    directory: Path
    every: float | None = None
    resume: bool = False


@dataclass(frozen=True)
class CheckRequest:
    """Everything one check runs with (see the module docstring)."""

    config: Any
    """The model's configuration (``kgc.model.config.Config`` for Kafka's group model)."""
    properties: tuple[Any, ...]
    """The safety properties and witnesses (``kgc.properties.base.Property``)."""
    temporal: tuple[Any, ...]
    """The liveness properties (``kgc.properties.temporal.Temporal``), checked when ``fairness`` is set."""
    bounds: Bounds
    strategy: str = "bfs"
    engine: str = "auto"
    """One of ``kgc.explorer.search.ENGINES`` or ``spark``."""
    fairness: Fairness | None = None
    workers: int = 1
    checkpoint: Checkpointing | None = None
    coverage: bool = False
    spark: Any = None
    """With ``engine`` ``spark``: where and how to run it (``kgc.explorer.spark_env.SparkSettings``)."""

    def __post_init__(self) -> None:
        if self.strategy not in ("bfs", "dfs"):
            raise ValueError(f"unknown strategy {self.strategy!r}")
        if self.engine not in (*ENGINES, SPARK):
            raise ValueError(f"unknown engine {self.engine!r}: one of {', '.join((*ENGINES, SPARK))}")
        if (self.engine == SPARK) != (self.spark is not None):
            raise ValueError("the Spark engine and its settings go together")
        if self.engine == SPARK:
            if self.checkpoint is not None:
                raise ValueError("--checkpoint and --resume need the local engine; Spark checkpoints each level itself")
            if self.coverage:
                raise ValueError("--coverage needs the local engine: --engine spark does not observe steps")
            if self.fairness is not None:
                raise ValueError("the Spark engine checks safety only: liveness needs the local engine")

    @property
    def local_engine(self) -> str | None:
        """The engine ``Explorer`` is asked for (None: its default, ``KGC_ENGINE`` or ``auto``)."""
        return None if self.engine in ("auto", SPARK) else self.engine
