"""Writing diagrams to files: graphviz output formats by suffix, written atomically."""

from __future__ import annotations

from pathlib import Path

import graphviz

from kgc import files

GRAPH_FORMATS = ("svg", "png", "dot")


class RenderError(Exception):
    """A diagram could not be written; the message is one line."""


def output_format(path: str | Path, allowed: tuple[str, ...] = GRAPH_FORMATS) -> str:
    """The format named by the file's suffix, or a one-line error listing the allowed ones (or
    saying that the file's directory does not exist), checked before any work is done."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in allowed:
        raise RenderError(
            f"cannot tell the output format of {str(path)!r}: use a file name ending in "
            + ", ".join(f".{f}" for f in allowed)
        )
    directory = Path(path).parent
    if not directory.is_dir():
        raise RenderError(f"cannot write {str(path)!r}: directory {str(directory)!r} does not exist")
    return suffix


def write_atomically(path: str | Path, data: bytes) -> None:
    """``kgc.files.write_atomically``, its failures as ``RenderError``: a failure never leaves a
    half-written file or destroys an existing one."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise RenderError(f"cannot write {str(target)!r}: directory {str(directory)!r} does not exist")
    try:
        files.write_atomically(target, data)
    except files.InputError as exc:  # a FIFO or a device would be renamed over
        raise RenderError(str(exc)) from None
    except OSError as exc:
        raise RenderError(f"cannot write {str(target)!r}: {exc.strerror}") from None


def render_graph(graph: graphviz.Digraph, fmt: str) -> bytes:
    """The graph as ``dot`` source or laid out by graphviz's ``dot`` into SVG or PNG."""
    if fmt == "dot":
        return str(graph.source).encode()
    try:
        return bytes(graph.pipe(format=fmt))
    except graphviz.ExecutableNotFound:
        raise RenderError("graphviz's dot is not installed: run ./scripts/setup.sh") from None
    except graphviz.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
        raise RenderError(f"dot failed: {detail[-1] if detail else exc}") from None


def svg_fragment(svg: bytes | str) -> str:
    """An SVG document without its XML prolog and DOCTYPE, ready to inline in HTML."""
    text = svg.decode() if isinstance(svg, bytes) else svg
    start = text.find("<svg")
    return text[start:] if start >= 0 else text
