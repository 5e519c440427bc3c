"""What the Spark executors run for ``kgc logs --engine spark``, shipped by value: this module imports
nothing of kgc at its top, so an executor can unpickle its functions before ``kgc`` is importable there.

On a cluster the driver ships kgc itself as an archive (``kgc.explorer.spark_env.ship_kgc``, as the
Spark engine does), and every entry point below first makes it importable
(``kgc.explorer.spark_tasks._ensure_kgc``, shipped by value with this module), then imports the
pipeline's code. Each works on a whole partition (``mapPartitions``): a partition of cached
records holds kgc's values (``ParseStats``, ``Chart``), which a worker can unpickle only once kgc is
importable, and a partition's records are unpickled as it is iterated, after the entry point ran.
On ``local[N]`` nothing is shipped (``archive`` None): the workers run the driver's interpreter.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kgc.explorer.spark_tasks import _ensure_kgc


def parse(archive: str | None, suffix: str, items: Iterable[tuple[str, str, str]]) -> Iterator[tuple[Any, Any]]:
    """Each file ``(path, source, cluster)`` read and parsed: its event rows and its statistics."""
    _ensure_kgc(archive, suffix)
    from kgc.logs.spark import parse_file

    return map(parse_file, items)


def stats(archive: str | None, suffix: str, parsed: Iterable[tuple[Any, Any]]) -> Iterator[Any]:
    """The statistics of each parsed file."""
    _ensure_kgc(archive, suffix)
    return (s for _rows, s in parsed)


def merge(a: Any, b: Any) -> Any:
    """Two files' statistics in one (``ParseStats.merge``)."""
    a.merge(b)
    return a


def keyed(archive: str | None, suffix: str, parsed: Iterable[tuple[Any, Any]]) -> Iterator[tuple[Any, Any]]:
    """Each event row keyed by its ``(cluster, group)``."""
    _ensure_kgc(archive, suffix)
    return (((r["cluster"], r["group"]), r) for rows, _s in parsed for r in rows)


def group(archive: str | None, suffix: str, profile: str | None, groups: Iterable[tuple[Any, Any]]) -> Iterator[Any]:
    """Each group's events validated and diagnosed: its row and its chart (None without rebalances)."""
    _ensure_kgc(archive, suffix)
    from kgc.logs.spark import analyse_group

    return (analyse_group(rows, profile) for _key, rows in groups)


def row_tuples(archive: str | None, suffix: str, columns: tuple[str, ...], grouped: Iterable[Any]) -> Iterator[Any]:
    """Each group's row as the DataFrame's tuple (``columns`` in order)."""
    _ensure_kgc(archive, suffix)
    return (tuple(float(v) if isinstance(v, float) else v for v in (row[c] for c in columns)) for row, _ in grouped)


def charts(archive: str | None, suffix: str, grouped: Iterable[Any]) -> Iterator[Any]:
    """The groups' charts (groups without rebalances have none)."""
    _ensure_kgc(archive, suffix)
    return (c for _row, c in grouped if c is not None)


def chart_key(chart: Any) -> Any:
    """The order the summary page lists charts in (``kgc.logs.pipeline.chart_order``)."""
    from kgc.logs.pipeline import chart_order

    return chart_order(chart)
