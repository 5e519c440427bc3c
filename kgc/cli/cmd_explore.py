"""kgc explore: an interactive explorer of the model in the browser, served on 127.0.0.1.

``kgc explore [TRACE.json] [model options]`` opens a counterexample, lasso or witness (a
``kgc-trace`` file, whose configuration it takes) or, without one, the initial state of the
configuration given, and serves a page (``kgc.diagrams.explore_page``) on 127.0.0.1 only: step
forward and back, the per-role panels of any state, its enabled successors to click through, the
sequence chart of the path, and a shareable URL per state (``#path=3.0.5``: the successor chosen
at each step). It prints the URL and serves until interrupted (exit 0; a port in use or bad input
exits 150 with one line, ``kgc.cli.exits``). ``--html FILE`` writes a self-contained page instead
(``kgc.diagrams.explore.embedded_nodes``: the trace's states and every state up to ``--depth`` steps
off it, at most ``--max-states`` states, the bound stated in the file) and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from kgc.cli import exits, inputs
from kgc.cli.errors import InputError
from kgc.cli.options import add_model_arguments, config_from_args
from kgc.diagrams.explore import (
    DEFAULT_DEPTH,
    DEFAULT_MAX_STATES,
    Explorer,
    NodeError,
    embedded_nodes,
    node_json,
    trace_node,
)
from kgc.diagrams.explore_page import explore_page
from kgc.model.config import Config, ConfigError

VERB = "explore"
HELP = "Explore the model in the browser: any state, its successors, a counterexample step by step."
INPUT_ERROR_EXIT = exits.BAD_INPUT
ORDER = 110
"""Its place in ``kgc --help`` (verbs are listed by it)."""
EXITS = (exits.OK, exits.BAD_INPUT)
"""The exit codes it may end with (``kgc.cli.exits.BY_VERB`` is made from every verb's)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", nargs="?", metavar="TRACE", help="a kgc-trace file to open (a counterexample or lasso)")
    add_model_arguments(p)
    p.add_argument("--port", type=inputs.integer, default=0, help="the port on 127.0.0.1 (default: a free one)")
    p.add_argument(
        "--html",
        metavar="FILE",
        help="write a self-contained explorer page (no server): the trace's states with their panels and "
        "charts, and every state up to --depth steps off it (at most --max-states states), then exit",
    )
    p.add_argument(
        "--depth",
        type=inputs.integer,
        default=DEFAULT_DEPTH,
        help=f"with --html: how many steps off the trace the file reaches (default {DEFAULT_DEPTH})",
    )
    p.add_argument(
        "--max-states",
        type=inputs.integer,
        default=DEFAULT_MAX_STATES,
        help=f"with --html: the most states the file holds, nearest the trace first (default {DEFAULT_MAX_STATES})",
    )


def explorer_from_args(args: argparse.Namespace) -> Explorer:
    """The explorer of the trace given (in its own configuration) or of the configuration given."""
    if args.trace is None:
        return Explorer(config_from_args(args))
    doc = inputs.load_trace(args.trace)
    if doc.get("config") is None:
        raise InputError(f"{args.trace}: the trace names no configuration (a format version 1 file): rerun kgc check")
    try:
        config = Config.from_mapping(doc["config"])
    except ConfigError as exc:
        raise InputError(f"{args.trace}: config: {exc}") from None
    explorer = Explorer(config, title=str(doc["property"]), loop_start=doc.get("loop_start"))
    try:
        explorer.trace = trace_node(explorer, doc)
    except NodeError as exc:
        raise InputError(f"{args.trace}: {exc}") from None
    return explorer


def make_server(explorer: Explorer, port: int = 0) -> ThreadingHTTPServer:
    """The HTTP server of the explorer on 127.0.0.1 (``port`` 0: a free one); serve it with
    ``serve_forever`` and stop it with ``shutdown``."""
    lock = threading.Lock()
    page = explore_page(explorer.title or "the model", explorer.trace).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def send(self, code: int, body: bytes, kind: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            url = urlparse(self.path)
            if url.path in ("/", "/index.html"):
                self.send(200, page, "text/html; charset=utf-8")
                return
            if url.path == "/favicon.ico":  # browsers ask for one: none, and no error in their console
                self.send(204, b"", "image/x-icon")
                return
            if url.path != "/api/node":
                self.send(404, b"not found", "text/plain; charset=utf-8")
                return
            raw = parse_qs(url.query).get("path", [""])[0]
            try:
                path = tuple(int(x) for x in raw.split(".") if x != "")
                with lock:
                    doc = node_json(explorer, path)
            except (ValueError, NodeError) as exc:
                self.send(400, f"no such state: {exc}".encode(), "text/plain; charset=utf-8")
                return
            self.send(200, json.dumps(doc).encode(), "application/json")

    try:
        return ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise InputError(f"--port {port}: cannot listen on 127.0.0.1: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise InputError(f"--port must be between 0 and 65535, got {args.port}")
    target = inputs.output_file(args.html, ("html", "htm"), "--html") if args.html else None
    explorer = explorer_from_args(args)
    if target is not None:
        try:
            embedded = embedded_nodes(explorer, args.depth, args.max_states)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        page = explore_page(explorer.title or "the model", explorer.trace, embedded)
        inputs.write_atomically(target, page, "--html")
        print(
            f"kgc explore: {len(embedded.nodes)} states written to {target} ({len(page.encode()) // 1024} KiB; "
            f"complete to {embedded.complete_depth} of {embedded.depth} steps off the trace; "
            "open it in a browser, no server)"
        )
        return exits.OK
    server = make_server(explorer, args.port)
    port = server.server_address[1]
    print(f"kgc explore: serving on http://127.0.0.1:{port}/ (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("kgc explore: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return exits.OK
