"""Directory outputs written whole or not at all (``kgc.files.publish_directory``,
``replace_output``): Spark's ``verdicts.parquet`` is a directory of part files, so it is written at
a fresh hidden name and swapped in by renaming a symbolic link. A failed write leaves the previous
output readable; concurrent writers each leave a whole version; no hidden version is left behind."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kgc import files


def write_parts(n: int, tag: str):  # type: ignore[no-untyped-def]
    def build(at: Path) -> None:
        for k in range(n):
            (at / f"part-{k}").write_text(tag)
        (at / "_SUCCESS").write_text("")

    return build


def contents(target: Path) -> set[str]:
    return {p.read_text() for p in target.glob("part-*")}


def hidden(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".") and not p.name.endswith(".lock"))


def test_a_directory_is_swapped_in_whole(tmp_path: Path) -> None:
    target = tmp_path / "verdicts.parquet"
    files.publish_directory(target, write_parts(3, "one"))
    assert target.is_symlink() and contents(target) == {"one"}
    first = hidden(tmp_path)
    assert len(first) == 1  # the version the link names
    files.publish_directory(target, write_parts(2, "two"))
    assert contents(target) == {"two"} and len(list(target.glob("part-*"))) == 2
    assert len(hidden(tmp_path)) == 1 and hidden(tmp_path) != first  # the earlier version removed


def test_a_failed_write_leaves_the_previous_output(tmp_path: Path) -> None:
    target = tmp_path / "verdicts.parquet"
    files.publish_directory(target, write_parts(3, "good"))
    before = hidden(tmp_path)

    def failing(at: Path) -> None:
        (at / "part-0").write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        files.publish_directory(target, failing)
    assert contents(target) == {"good"} and len(list(target.glob("part-*"))) == 3
    assert hidden(tmp_path) == before  # the failed version's directory is gone


def test_an_earlier_layout_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "verdicts.parquet"
    target.mkdir()  # a real directory (Spark writing in place, before)
    (target / "part-old").write_text("old")
    files.publish_directory(target, write_parts(1, "new"))
    assert contents(target) == {"new"} and hidden(tmp_path) and len(hidden(tmp_path)) == 1
    single = tmp_path / "single.tmp"  # the local engine writes one file over the link
    single.write_text("file")
    files.replace_output(single, target)
    assert target.is_file() and not target.is_symlink() and target.read_text() == "file"
    assert hidden(tmp_path) == []  # the linked version went with the link
    files.publish_directory(target, write_parts(1, "again"))  # and a directory over a file
    assert contents(target) == {"again"}


def test_a_link_the_user_made_is_not_followed_into_deletion(tmp_path: Path) -> None:
    mine = tmp_path / "elsewhere"
    mine.mkdir()
    (mine / "keep").write_text("x")
    target = tmp_path / "verdicts.parquet"
    target.symlink_to(mine)
    files.publish_directory(target, write_parts(1, "new"))
    assert (mine / "keep").read_text() == "x" and contents(target) == {"new"}


def test_concurrent_writers_each_leave_a_whole_version(tmp_path: Path) -> None:
    target = tmp_path / "verdicts.parquet"
    seen: list[set[str]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer(tag: str) -> None:
        try:
            for _ in range(30):
                files.publish_directory(target, write_parts(4, tag))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def reader() -> None:
        while not stop.is_set():
            try:
                found = contents(target.resolve())  # a reader that resolves the link once sees one version
            except FileNotFoundError:  # a version removed while it was listed: read again
                continue
            if found:
                seen.append(found)

    threads = [threading.Thread(target=writer, args=(t,)) for t in ("a", "b")]
    watch = threading.Thread(target=reader)
    watch.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    watch.join()
    assert errors == []
    assert contents(target) in ({"a"}, {"b"}) and len(list(target.glob("part-*"))) == 4
    assert all(len(s) == 1 for s in seen)  # never a mix of two versions
    assert len(hidden(tmp_path)) == 1
