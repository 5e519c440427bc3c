"""Reference pages generated from kgc's code, and measured figures from ``benchmarks/results/``.

Each directive reads the code (or the benchmark JSON) at build time and emits docutils nodes,
so the pages cannot drift from what kgc does:

- ``kgc-cli``: every verb's usage, description, options (argparse) and exit codes;
- ``kgc-exit-codes``: :mod:`kgc.cli.exits` (the table, each code's docstring, codes per verb);
- ``kgc-config-fields``: the fields of :class:`kgc.model.config.Config`, defaults and docstrings;
- ``kgc-properties``: the safety properties, witnesses and liveness properties;
- ``kgc-mutants``: the mutant catalogue;
- ``kgc-formats``: the file formats kgc reads and writes, with the module that defines each;
- ``kgc-benchmark``: the runs of one ``benchmarks/results/NAME.json`` (``:fields:`` to choose columns);
- ``kgc-figure``: one value of one run of a result file, inline in a sentence.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"

Cell = str | tuple[str, str]
"""A table cell: plain text, or ``("code", text)`` for a literal."""


def _cell(value: Cell) -> nodes.entry:
    entry = nodes.entry()
    para = nodes.paragraph()
    if isinstance(value, tuple):
        para += nodes.literal(text=value[1])
    else:
        para += nodes.Text(value)
    entry += para
    return entry


def table(headers: list[str], rows: list[list[Cell]], widths: list[int] | None = None) -> nodes.table:
    """A docutils table; cells are plain text (no markup is interpreted) or literals."""
    tab = nodes.table(classes=["kgc-generated"])
    group = nodes.tgroup(cols=len(headers))
    tab += group
    for width in widths or [1] * len(headers):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    row = nodes.row()
    for h in headers:
        row += _cell(h)
    head += row
    group += head
    body = nodes.tbody()
    for cells in rows:
        row = nodes.row()
        for c in cells:
            row += _cell(c)
        body += row
    group += body
    return tab


def paragraph(text: str) -> nodes.paragraph:
    return nodes.paragraph(text=" ".join(text.split()))


def code(text: str) -> tuple[str, str]:
    return ("code", text)


def attribute_docstrings(module: Any, owner: str | None = None) -> dict[str, str]:
    """The string literal right after each ``NAME = ...`` / ``NAME: T = ...`` (of a module, or of
    class ``owner``): the attribute docstrings Sphinx's autodoc reads."""
    tree = ast.parse(inspect.getsource(module))
    body = tree.body
    if owner is not None:
        (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner]
        body = cls.body
    out: dict[str, str] = {}
    for node, following in zip(body, body[1:], strict=False):
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target = node.target.id
        if (
            target
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            out[target] = " ".join(following.value.value.split())
    return out


def section(ids: str, title: str) -> nodes.section:
    sec = nodes.section(ids=[nodes.make_id(ids)])
    sec += nodes.title(text=title)
    return sec


class CliDirective(Directive):
    """Every verb: its description, usage, options and the exit codes it can end with."""

    def run(self) -> list[nodes.Node]:
        from kgc.cli import _load_verbs, build_parser, exits

        verbs = _load_verbs()
        parser = build_parser(verbs)
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        out: list[nodes.Node] = []
        for verb, module in verbs.items():
            p = sub.choices[verb]  # type: ignore[attr-defined]
            sec = section(f"verb-{verb}", f"kgc {verb}")
            sec += paragraph(module.HELP)
            sec += nodes.literal_block(text=p.format_usage().strip())
            rows: list[list[Cell]] = []
            for action in p._actions:
                if action.help == "==SUPPRESS==" or action.dest == "help":
                    continue
                flags = ", ".join(action.option_strings) or (action.metavar or action.dest)
                if action.option_strings and action.nargs != 0:
                    flags += f" {action.metavar or action.dest.upper()}"
                choices = f" (one of: {', '.join(map(str, action.choices))})" if action.choices else ""
                default = action.default
                shown = "" if default in (None, False, [], "==SUPPRESS==") else f" Default: {default}."
                rows.append([code(str(flags)), f"{action.help or ''}{choices}{shown}".strip()])
            sec += table(["argument", "what it does"], rows, [2, 5])
            codes = exits.BY_VERB.get(verb, ())
            sec += paragraph("Exit codes: " + "; ".join(f"{c} {exits.TABLE[c]}" for c in codes) + "." if codes else "")
            out.append(sec)
        return out


class ExitCodesDirective(Directive):
    def run(self) -> list[nodes.Node]:
        from kgc.cli import exits

        names = {v: k for k, v in vars(exits).items() if k.isupper() and isinstance(v, int) and k != "TABLE"}
        docs = attribute_docstrings(exits)
        rows: list[list[Cell]] = [
            [str(code_), code(names.get(code_, "")), docs.get(names.get(code_, ""), summary)]
            for code_, summary in sorted(exits.TABLE.items())
        ]
        out: list[nodes.Node] = [table(["code", "name", "meaning"], rows, [1, 2, 8])]
        verbs = sorted(exits.BY_VERB)
        codes = sorted(exits.TABLE)
        matrix: list[list[Cell]] = [
            [code(verb), *["✓" if c in exits.BY_VERB[verb] else "" for c in codes]] for verb in verbs
        ]
        out.append(paragraph("Which codes each verb can end with (kgc.cli.exits.BY_VERB):"))
        out.append(table(["verb", *map(str, codes)], matrix))
        return out


class ConfigFieldsDirective(Directive):
    def run(self) -> list[nodes.Node]:
        from kgc.model import config as config_module
        from kgc.model.perturbations import PERTURBATIONS

        docs = attribute_docstrings(config_module, "Config")
        # The budget fields are made from the perturbation registry; each says what its kind is.
        docs |= {f"budget_{p.name}": f"Times along one behaviour that {p.doc}." for p in PERTURBATIONS}
        default = config_module.Config()
        described = default.describe()
        rows: list[list[Cell]] = []
        for f in dataclasses.fields(config_module.Config):
            value = described.get(f.name, getattr(default, f.name))
            if isinstance(value, (list, tuple, frozenset, set)):
                value = ", ".join(sorted(map(str, value)))
            rows.append([code(f.name), code(str(value) if value != "" else '""'), docs.get(f.name, "")])
        return [table(["field", "default", "what it means"], rows, [2, 2, 6])]


class PropertiesDirective(Directive):
    def run(self) -> list[nodes.Node]:
        from kgc.properties import protocol, temporal

        safety = [[code(p.name), p.kind, p.description, p.source] for p in protocol.ALL if not p.witness_of]
        witnesses = [[code(p.name), code(p.witness_of), p.description] for p in protocol.ALL if p.witness_of]
        live = [[code(t.name), code(t.formula), t.description, t.source] for t in temporal.ALL]
        out: list[nodes.Node] = []
        sec = section("safety-properties", "Safety properties")
        sec += table(["name", "kind", "what it says", "source"], safety, [2, 1, 5, 3])
        out.append(sec)
        sec = section("witnesses", "Witnesses (sometimes)")
        sec += table(["name", "shows reachable the premise of", "what it shows"], witnesses, [2, 2, 5])
        out.append(sec)
        sec = section("liveness-properties", "Liveness properties")
        sec += table(["name", "form", "what it says", "source"], live, [2, 2, 5, 3])
        out.append(sec)
        return out


class MutantsDirective(Directive):
    def run(self) -> list[nodes.Node]:
        from kgc.model.mutants import CATALOGUE

        rows: list[list[Cell]] = [
            [
                code(m.name),
                m.side,
                m.description,
                m.where + (f" ({m.jira})" if m.jira else ""),
                code(m.expected) if m.expected else f"equivalent: {m.equivalent}",
                code(m.rule),
            ]
            for m in CATALOGUE
        ]
        return [
            table(
                ["mutant", "side", "what it does differently", "Kafka code path", "killed by", "rule broken"],
                rows,
                [2, 1, 4, 3, 2, 2],
            )
        ]


FORMATS: list[tuple[str, str, str | None]] = [
    ("kgc.explorer.trace", "TRACE_FORMAT", None),
    ("kgc.harness.scenario.format", "FORMAT", "FORMAT_VERSION"),
    ("kgc.harness.conformance.divergence", "KNOWN_FORMAT", "KNOWN_FORMAT_VERSION"),
    ("kgc.harness.clients.machine", "FORMAT", None),
    ("kgc.harness.clients.session", "KNOWN_FORMAT", None),
    ("kgc.serve.trace", "FORMAT", None),
    ("kgc.timing.timeline", "FORMAT", None),
    ("kgc.explorer.checkpoint", "FORMAT", None),
]
"""The file formats: (module, the constant naming the format, the constant of its version)."""


class FormatsDirective(Directive):
    def run(self) -> list[nodes.Node]:
        rows: list[list[Cell]] = []
        for module_name, attr, version_attr in FORMATS:
            module = importlib.import_module(module_name)
            doc = (module.__doc__ or "").strip().split("\n\n")[0]
            version = str(getattr(module, version_attr)) if version_attr else ""
            rows.append([code(getattr(module, attr)), version, code(module_name), " ".join(doc.split())])
        return [table(["format", "version", "defined in", "what it is (the module's docstring)"], rows, [2, 1, 3, 6])]


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list):
        return " – ".join(map(str, value))
    return str(value)


def load_result(name: str) -> dict[str, Any]:
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run benchmarks/record.py to write it")
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("format") != "kgc-benchmark-record":
        raise ValueError(f"{path}: not a kgc-benchmark-record file")
    return doc


def _field(run: dict[str, Any], path: str) -> Any:
    """``run[a][b]…`` for the dotted ``path`` ``a.b…`` (a nested figure, e.g. ``shares_percent.group``);
    ``None`` where the run has no such field."""
    value: Any = run
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _value(run: dict[str, Any], path: str) -> Any:
    value = _field(run, path)
    return "" if value is None else value


class BenchmarkDirective(Directive):
    """``{kgc-benchmark} NAME`` with ``:fields: a, b, c``: the runs of benchmarks/results/NAME.json
    (``:rows-with: FIELD``: only the runs that have FIELD, e.g. a table's rows without its totals; a
    field ``a.b`` reads a nested value)."""

    required_arguments = 1
    option_spec = {"fields": directives.unchanged_required, "rows-with": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        try:
            doc = load_result(name)
        except (OSError, ValueError) as exc:
            raise self.error(str(exc)) from None
        self.state.document.settings.record_dependencies.add(str(RESULTS / f"{name}.json"))
        runs: list[dict[str, Any]] = doc["runs"]
        if "rows-with" in self.options:
            runs = [run for run in runs if _field(run, self.options["rows-with"]) is not None]
        fields = [f.strip() for f in self.options.get("fields", "").split(",") if f.strip()] or sorted(
            {k for run in runs for k, v in run.items() if not isinstance(v, (dict, list))}
        )
        missing = [f for f in fields if not any(_field(run, f) is not None for run in runs)]
        if missing:
            raise self.error(f"benchmarks/results/{name}.json has no field {', '.join(missing)}")
        rows: list[list[Cell]] = [[_fmt(_value(run, f)) for f in fields] for run in runs]
        machine = doc["machine"]
        command = " ".join([f"python {doc['script']}", *doc["arguments"]])
        load = machine.get("load_average")  # records made since benchmarks/record.py keeps it
        under = f", 1-minute load average {load[0]} at the start and {load[1]} at the end" if load else ""
        caption = paragraph(
            f"Recorded {doc['started']} on {machine['processors']} processors, Python {machine['python']} "
            f"({machine['platform']}){under}:"
        )
        caption += nodes.Text(" ")
        caption += nodes.literal(text=command)
        return [caption, table([f.replace("_", " ").replace(".", " ") for f in fields], rows)]


def figure_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: Any = None, content: Any = None
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """``{kgc-figure}`NAME:INDEX:FIELD``` — one value of benchmarks/results/NAME.json, run INDEX."""
    try:
        result, index, field = text.split(":")
        value = load_result(result)["runs"][int(index)][field]
    except (ValueError, KeyError, IndexError, OSError) as exc:
        msg = inliner.reporter.error(f"kgc-figure {text!r}: {exc}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [nodes.Text(_fmt(value))], []


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("kgc-cli", CliDirective)
    app.add_directive("kgc-exit-codes", ExitCodesDirective)
    app.add_directive("kgc-config-fields", ConfigFieldsDirective)
    app.add_directive("kgc-properties", PropertiesDirective)
    app.add_directive("kgc-mutants", MutantsDirective)
    app.add_directive("kgc-formats", FormatsDirective)
    app.add_directive("kgc-benchmark", BenchmarkDirective)
    app.add_role("kgc-figure", figure_role)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
