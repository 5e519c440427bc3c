"""``kgc check --engine spark``: the options, their validation, and a run on a Spark session.

Kept apart from ``cmd_check`` so the verb stays one screen: it asks this module for the Spark
settings (None for the local engine) and for the result, which has the same type as the local
explorer's, so the output, exit codes and counterexample files are the same.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from kgc.cli import inputs
from kgc.cli.errors import InputError
from kgc.explorer.search import Bounds, Result
from kgc.explorer.spark_env import SparkSettings, start_session, validate_master
from kgc.model.config import Config
from kgc.properties.base import Property


def add_arguments(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("distributed exploration (--engine spark)")
    group.add_argument(
        "--engine",
        choices=["local", "native", "python", "spark"],
        default="local",
        help="explore in this process (local: the native core when built, else Python; native and python force "
        "one) or breadth-first on Apache Spark",
    )
    group.add_argument(
        "--master", metavar="URL", help="local[N] (default local[2]), spark://HOST:PORT, yarn, k8s://URL"
    )
    group.add_argument(
        "--spark-partitions", type=inputs.integer, metavar="N", help="partitions of each level and the visited set"
    )
    group.add_argument(
        "--spill-dir",
        metavar="DIR",
        help="where the executors keep the visited set, the exchange between levels and the parents "
        "(default: the temporary directory; on several machines: a filesystem all of them mount at DIR)",
    )
    group.add_argument(
        "--spark-exact",
        action="store_true",
        help="compare states byte for byte (stops on a fingerprint collision) instead of by 64-bit fingerprint",
    )
    group.add_argument(
        "--spark-conf", action="append", default=[], metavar="KEY=VALUE", help="any Spark setting (repeatable)"
    )
    group.add_argument(
        "--executor-wait",
        type=float,
        metavar="SECONDS",
        help="on a cluster, how long the first executor may take to join before the run stops (default 120)",
    )


def settings_from_args(args: argparse.Namespace) -> SparkSettings | None:
    """The Spark settings of ``--engine spark`` (None for the local engine), validated."""
    given = [
        opt
        for opt, value in (
            ("--master", args.master),
            ("--spark-partitions", args.spark_partitions),
            ("--spill-dir", args.spill_dir),
            ("--spark-exact", args.spark_exact),
            ("--spark-conf", args.spark_conf),
            ("--executor-wait", args.executor_wait),
        )
        if value
    ]
    if args.engine != "spark":
        if given:
            raise InputError(f"{given[0]} needs --engine spark")
        return None
    if args.strategy != "bfs":
        raise InputError("--engine spark explores breadth-first only; drop --strategy dfs")
    if args.spark_partitions is not None and args.spark_partitions <= 0:
        raise InputError(f"--spark-partitions must be positive, got {args.spark_partitions}")
    conf = []
    for item in args.spark_conf:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InputError(f"--spark-conf needs KEY=VALUE, got {item!r}")
        conf.append((key.strip(), value.strip()))
    master = args.master or "local[2]"
    try:
        validate_master(master)
    except ValueError as exc:
        raise InputError(f"--master: {exc}") from None
    if args.spill_dir is not None and master.startswith("local"):
        # on this machine: shown a writable directory before Spark starts, as every other output
        # is, rather than failing inside a task with exit 153
        inputs.output_dir(args.spill_dir, "--spill-dir")
    wait = 120.0 if args.executor_wait is None else args.executor_wait
    if not 0 < wait <= 86_400:
        raise InputError(f"--executor-wait must be between 0 and 86400 seconds, got {args.executor_wait}")
    return SparkSettings(
        master, args.spark_partitions, args.spill_dir, args.spark_exact, tuple(conf), executor_wait=wait
    )


def run(
    config: Config, properties: Sequence[Property], settings: SparkSettings, bounds: Bounds, progress: bool
) -> Result:
    """Start a session (or reuse the running one), explore on it, stop it if it was started
    here. Raises ``SparkUnavailable`` with one line when Spark cannot run. Ctrl-C (or SIGTERM)
    cancels the running jobs, stops the session and ends in one line (``kgc.cli``)."""
    from kgc.explorer.spark import SparkExplorer, level_progress

    began = time.monotonic()
    with _quiet_py4j():
        spark, owned = start_session(settings)
        # pyspark's own SIGINT handler cancels the jobs from inside whatever py4j call the main
        # thread is in (a reentrant call that py4j logs with tracebacks): Ctrl-C is a plain
        # KeyboardInterrupt instead, and the jobs are cancelled below, once.
        previous = _default_sigint()
        try:
            if progress:
                print(f"spark: session on {settings.master} ready in {time.monotonic() - began:.1f} s", file=sys.stderr)
            explorer = SparkExplorer(config, properties, spark=spark, settings=settings)
            return explorer.run("bfs", bounds, level_progress() if progress else None)
        except KeyboardInterrupt:
            _cancel(spark)
            raise
        finally:
            _restore_sigint(previous)
            if owned:
                _stop(spark)


@contextmanager
def _quiet_py4j() -> Iterator[None]:
    """py4j logs every failed call with a traceback (on the root logger, configuring it on first
    use); a failure that matters reaches kgc as an exception and is reported in one line."""
    root = logging.getLogger()
    null = logging.NullHandler()
    root.addHandler(null)
    py4j = logging.getLogger("py4j")
    level = py4j.level
    py4j.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        py4j.setLevel(level)
        root.removeHandler(null)


def _default_sigint() -> Any:
    try:
        return signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread
        return None


def _restore_sigint(previous: Any) -> None:
    if previous is not None:
        with suppress(ValueError):
            signal.signal(signal.SIGINT, previous)


def _cancel(spark: Any) -> None:
    with suppress(Exception):
        spark.sparkContext.cancelAllJobs()


def _stop(spark: Any) -> None:
    with suppress(Exception):
        spark.stop()
