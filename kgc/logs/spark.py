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
session already running, as the tests' fixture, is reused). On a non-local master the packages the
executors import (``logs``, ``sut``, ``model``) are shipped as a zip (``addPyFile``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgc import files as kgc_files
from kgc.logs.diagnose import diagnose
from kgc.logs.events import Event, events_of, sort_key
from kgc.logs.parse import ParseStats, iter_files, open_source, read_records
from kgc.logs.pipeline import CHARTS, ROW_COLUMNS, Analysis, Chart, chart, chart_order, make_row
from kgc.logs.validate import validate_group


def _parse_file(item: tuple[str, str, str]) -> tuple[list[dict[str, Any]], ParseStats]:
    path, source, cluster = item
    stats = ParseStats(files=1)
    stream = open_source(Path(path), source, stats)
    if stream is None:
        return [], stats
    with stream:
        rows = [e.as_row() for e in events_of(read_records(stream, source, stats), cluster, stats)]
    return rows, stats


def _merge(a: ParseStats, b: ParseStats) -> ParseStats:
    a.merge(b)
    return a


def _group(rows: Iterable[dict[str, Any]], profile: str | None) -> tuple[dict[str, Any], Chart | None]:
    events = sorted((Event.from_row(r) for r in rows), key=sort_key)
    diag = diagnose(events)
    return make_row(validate_group(events, profile), diag), (chart(diag) if diag.rebalances else None)


def _ship(spark: Any) -> None:
    from kgc.explorer.spark_env import project_zip

    spark.sparkContext.addPyFile(str(project_zip()))


def analyse_spark(
    spark: Any, paths: Iterable[str | Path], profile: str | None = None, out: Path | None = None
) -> Analysis:
    """The pipeline on ``spark``; with ``out``, the rows are written to ``out/verdicts.parquet``."""
    from pyspark.sql.types import (
        ArrayType,
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    began = time.monotonic()
    sc = spark.sparkContext
    if not sc.master.startswith("local"):
        _ship(spark)
    files = [(str(p), source, cluster) for p, source, cluster in iter_files(paths)]
    if not files:
        return Analysis("spark", ParseStats(), [], time.monotonic() - began)
    slices = max(1, min(len(files), 4 * sc.defaultParallelism))
    parsed = sc.parallelize(files, slices).map(_parse_file).cache()
    stats: ParseStats = parsed.map(lambda x: x[1]).reduce(_merge)
    keyed = parsed.flatMap(lambda x: [((r["cluster"], r["group"]), r) for r in x[0]])
    prof = profile
    grouped = keyed.groupByKey().map(lambda kv: _group(kv[1], prof)).cache()
    rows_rdd = grouped.map(lambda rc: rc[0])
    text, num, lst = StringType(), LongType(), ArrayType(StringType())
    types = {
        "events": num, "unexplained_line": num, "rebalances": num, "rebalance_ms_mean": DoubleType(),
        "rebalance_ms_max": num, "joins": num, "failures": num, "leaves": num, "dropped_not_rejoined": num,
        "static_replacements": num, "first_ms": num, "last_ms": num,
        "coordinators": lst, "allowed": lst, "patterns": lst,
    }  # fmt: skip
    schema = StructType([StructField(c, types.get(c, text), True) for c in ROW_COLUMNS])
    frame = spark.createDataFrame(rows_rdd.map(lambda r: tuple(_coerce(r[c]) for c in ROW_COLUMNS)), schema)
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
    charts = grouped.map(lambda rc: rc[1]).filter(lambda c: c is not None).takeOrdered(CHARTS, key=chart_order)
    grouped.unpersist()
    parsed.unpersist()
    return Analysis("spark", stats, rows, time.monotonic() - began, charts, write_error)


def _coerce(v: Any) -> Any:
    return float(v) if isinstance(v, float) else v


def _as_row(r: Any) -> dict[str, Any]:
    d: dict[str, Any] = r.asDict()
    for c in ("coordinators", "allowed", "patterns"):
        d[c] = list(d[c] or [])
    return d
