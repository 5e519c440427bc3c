"""``kgc logs --engine spark``: the pipeline on Apache Spark.

1. The driver lists the files (``kgc.logs.parse.iter_files``: a directory tree, gzip too) and
   parallelises their paths; each task reads and parses one file (``read_records`` → events), so the
   files must be readable from the executors (local disk for ``local[N]``, a shared filesystem on a
   cluster).
2. Events are keyed by ``(cluster, group)`` and grouped (``groupByKey``); the grouped map sorts each
   group's events by time and validates and diagnoses them (``validate_group``, ``diagnose``,
   ``kgc.logs.pipeline.make_row``: the local engine's code), keeping each group's chart.
3. The rows become a DataFrame written as Parquet (a directory of part files, written at a fresh
   hidden name and swapped in whole: ``verdicts.parquet`` is a link to the newest complete version,
   ``kgc.files.publish_directory``); the input statistics are merged on the driver (``reduce``),
   and the summary page is written there.

The session comes from ``kgc.explorer.spark_env.start_session`` (local masters bind to 127.0.0.1; a
session already running, as the tests' fixture, is reused). What the executors run is
``kgc.logs.spark_tasks``, pickled by value; on a non-local master the driver ships the installed
``kgc`` package (with its compiled extensions) as the Spark engine does
(``kgc.explorer.spark_env.ship_kgc``), and each entry point makes it importable before it imports
the pipeline's code (``kgc.explorer.spark_tasks._ensure_kgc``).
"""

from __future__ import annotations

import importlib.machinery
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from kgc import files as kgc_files
from kgc.explorer import spark_tasks as engine_tasks
from kgc.logs import spark_tasks as tasks
from kgc.logs.diagnose import diagnose
from kgc.logs.events import Event, events_of, sort_key
from kgc.logs.parse import ParseStats, iter_files, open_source, read_records
from kgc.logs.pipeline import CHARTS, ROW_COLUMNS, Analysis, Chart, chart, make_row
from kgc.logs.validate import validate_group

_EXTENSION = importlib.machinery.EXTENSION_SUFFIXES[0]
"""This machine's extension suffix: an executor that cannot load it runs the shipped source."""


def parse_file(item: tuple[str, str, str]) -> tuple[list[dict[str, Any]], ParseStats]:
    """One file ``(path, source, cluster)`` read and parsed: its event rows and statistics."""
    path, source, cluster = item
    stats = ParseStats(files=1)
    stream = open_source(Path(path), source, stats)
    if stream is None:
        return [], stats
    with stream:
        rows = [e.as_row() for e in events_of(read_records(stream, source, stats), cluster, stats)]
    return rows, stats


def analyse_group(rows: Iterable[dict[str, Any]], profile: str | None) -> tuple[dict[str, Any], Chart | None]:
    """One group's events, sorted by time, validated and diagnosed: its row and its chart."""
    events = sorted((Event.from_row(r) for r in rows), key=sort_key)
    diag = diagnose(events)
    return make_row(validate_group(events, profile), diag), (chart(diag) if diag.rebalances else None)


@contextmanager
def _by_value() -> Iterator[None]:
    """The executors' entry points travel by value while the pipeline runs: on a cluster they run
    before kgc is importable there."""
    from pyspark import cloudpickle

    for module in (tasks, engine_tasks):
        cloudpickle.register_pickle_by_value(module)  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        for module in (tasks, engine_tasks):
            cloudpickle.unregister_pickle_by_value(module)  # type: ignore[no-untyped-call]


def analyse_spark(
    spark: Any, paths: Iterable[str | Path], profile: str | None = None, out: Path | None = None
) -> Analysis:
    """The pipeline on ``spark``; with ``out``, the rows are written to ``out/verdicts.parquet``."""
    began = time.monotonic()
    files = [(str(p), source, cluster) for p, source, cluster in iter_files(paths)]
    if not files:
        return Analysis("spark", ParseStats(), [], time.monotonic() - began)
    with _by_value():
        return _analyse(spark, files, profile, out, began)


def _analyse(
    spark: Any, files: list[tuple[str, str, str]], profile: str | None, out: Path | None, began: float
) -> Analysis:
    from pyspark.sql.types import (
        ArrayType,
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    from kgc.explorer.spark_env import ship_kgc

    sc = spark.sparkContext

    archive = None if sc.master.startswith("local") else ship_kgc(sc)

    slices = max(1, min(len(files), 4 * sc.defaultParallelism))
    parsed = sc.parallelize(files, slices).mapPartitions(partial(tasks.parse, archive, _EXTENSION)).cache()
    stats: ParseStats = parsed.mapPartitions(partial(tasks.stats, archive, _EXTENSION)).reduce(tasks.merge)
    keyed = parsed.mapPartitions(partial(tasks.keyed, archive, _EXTENSION))
    grouped = keyed.groupByKey().mapPartitions(partial(tasks.group, archive, _EXTENSION, profile)).cache()
    rows_rdd = grouped.mapPartitions(partial(tasks.row_tuples, archive, _EXTENSION, tuple(ROW_COLUMNS)))
    text, num, lst = StringType(), LongType(), ArrayType(StringType())
    types = {
        "events": num, "unexplained_line": num, "rebalances": num, "rebalance_ms_mean": DoubleType(),
        "rebalance_ms_max": num, "joins": num, "failures": num, "leaves": num, "dropped_not_rejoined": num,
        "static_replacements": num, "first_ms": num, "last_ms": num,
        "coordinators": lst, "allowed": lst, "patterns": lst,
    }  # fmt: skip
    schema = StructType([StructField(c, types.get(c, text), True) for c in ROW_COLUMNS])
    frame = spark.createDataFrame(rows_rdd, schema)
    write_error = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        # A directory of part files, written at a fresh name and swapped in whole (kgc.files): a
        # failed or concurrent run leaves the previous verdicts.parquet readable. A failure (a full
        # disk: an OSError here, a Java exception from Spark) is reported after the results.
        try:
            kgc_files.publish_directory(
                out / "verdicts.parquet", lambda at: frame.write.mode("overwrite").parquet(str(at))
            )
        except Exception as exc:  # noqa: BLE001 - py4j's errors share no base class with OSError
            first = (str(getattr(exc, "strerror", None) or exc).strip().splitlines() or [type(exc).__name__])[0]
            write_error = f"cannot write {out / 'verdicts.parquet'}: {first[:300]}"
    rows = sorted((_as_row(r) for r in frame.collect()), key=lambda r: (r["cluster"], r["group"]))
    charts = grouped.mapPartitions(partial(tasks.charts, archive, _EXTENSION)).takeOrdered(CHARTS, key=tasks.chart_key)
    grouped.unpersist()
    parsed.unpersist()
    return Analysis("spark", stats, rows, time.monotonic() - began, charts, write_error)


def _as_row(r: Any) -> dict[str, Any]:
    d: dict[str, Any] = r.asDict()
    for c in ("coordinators", "allowed", "patterns"):
        d[c] = list(d[c] or [])
    return d
