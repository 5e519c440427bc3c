"""``kgc check --engine spark``: its options and their validation.

Kept apart from ``cmd_check`` so the verb stays one screen: it asks this module for the Spark
settings (None for the local engine); the run itself, on a Spark session, is the engine's
(``kgc.explorer.spark_env.run_on_session``), and its result has the same type as the local
explorer's, so the output, exit codes and counterexample files are the same.
"""

from __future__ import annotations

import argparse

from kgc.cli import inputs
from kgc.cli.errors import InputError
from kgc.explorer.spark_env import SparkSettings, validate_master


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
