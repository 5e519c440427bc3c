"""The packages import only the way docs/architecture.md draws them: each layer may import the
layers above it, never one below. Read from the source (every ``import``, also inside
functions), so a back-reference cannot hide in a lazy import."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS: list[set[str]] = [
    {"kgc.paths", "kgc.files"},
    {"kgc.model"},
    {"kgc.properties", "kgc.examples_models"},
    {"kgc.explorer"},
    {"kgc.diagrams", "kgc.engine_support"},
    {
        "kgc.interface",
        "kgc.reference",
        "kgc.oracle",
        "kgc.client",
        "kgc.transport",
        "kgc.broker",
        "kgc.serve",
        "kgc.harness",
    },
    {"kgc.timing", "kgc.logs"},
    {"kgc.cli"},
]
"""Top to bottom, as in docs/architecture.md: the ``kgc`` package's sub-packages (and modules)."""
LEVEL = {package: i for i, layer in enumerate(LAYERS) for package in layer}


def _unit(module: str) -> str:
    """The sub-package (or top-level module) of ``kgc`` a module belongs to: ``kgc.model.state``
    is ``kgc.model``; anything outside ``kgc`` is itself."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "kgc" and len(parts) > 1 else parts[0]


REFERENCE = re.compile(r"(kgc(?:\.\w+)+):(\w+)")
"""A ``"module:NAME"`` reference: how a recipe names what it does not import (Kafka's ``Config`` names
its default properties ``"kgc.properties.protocol:ALL"``; ``kgc.model.protocol.default_properties`` and
``kgc.model.temporal`` resolve them with ``importlib``)."""

REFERENCES_MAY_POINT_DOWN = {("kgc.model", "kgc.properties")}
"""The one way a reference may point below its module's layer: a model names its own properties, which
live in the layer below it (``kgc.properties`` reads the model; the model never imports them)."""


def references(path: Path) -> set[tuple[str, str]]:
    """Every ``(module, NAME)`` a module names by string — a ``"module:NAME"`` constant, or the
    argument of ``importlib.import_module("module")`` (NAME empty) — so an import by string is seen
    like any other."""
    found: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (m := REFERENCE.fullmatch(node.value)):
            found.add((m.group(1), m.group(2)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and node.args[0].value.startswith("kgc.")
        ):
            found.add((node.args[0].value, ""))
    return found


def unresolved_references(root: Path = ROOT) -> list[str]:
    """The references of ``kgc/`` (``references``) that name no module or no attribute of it."""
    bad = []
    for path in sorted((root / "kgc").rglob("*.py")):
        for module, name in sorted(references(path)):
            try:
                target = importlib.import_module(module)
            except ImportError:
                bad.append(f"{path.relative_to(root)}: no module {module}")
                continue
            if name and not hasattr(target, name):
                bad.append(f"{path.relative_to(root)}: {module} has no {name}")
    return bad


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = {_unit(module) for module, _ in references(path)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {_unit(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "kgc":
                names |= {f"kgc.{alias.name}" for alias in node.names}
            else:
                names.add(_unit(node.module))
    return names


def wrong_way_imports(root: Path = ROOT) -> list[str]:
    found = []
    for package, level in LEVEL.items():
        base = root / package.replace(".", "/")
        paths = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
        for path in paths:
            if not path.exists():
                continue
            by_string = {_unit(module) for module, _ in references(path)}
            for name in sorted(_imports(path)):
                if name in LEVEL and LEVEL[name] > level:
                    if name in by_string and (package, name) in REFERENCES_MAY_POINT_DOWN:
                        continue
                    found.append(f"{path.relative_to(root)} imports {name}")
    return found


def test_packages_import_only_upwards() -> None:
    assert wrong_way_imports() == []


def test_every_package_is_in_the_picture() -> None:
    units = {f"kgc.{p.parent.name}" for p in (ROOT / "kgc").glob("*/__init__.py")}
    units |= {f"kgc.{p.stem}" for p in (ROOT / "kgc").glob("*.py") if not p.stem.startswith("__")}
    assert units <= set(LEVEL), f"add {sorted(units - set(LEVEL))} to docs/architecture.md and LAYERS"
    assert not [p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name not in ("tests", "kgc")], (
        "one package: kgc"
    )


def test_a_wrong_way_import_is_found(tmp_path: Path) -> None:
    (tmp_path / "kgc" / "model").mkdir(parents=True)
    (tmp_path / "kgc" / "model" / "bad.py").write_text("def f():\n    from kgc import cli\n", encoding="utf-8")
    (tmp_path / "kgc" / "model" / "worse.py").write_text("import kgc.harness.fuzz\n", encoding="utf-8")
    assert wrong_way_imports(tmp_path) == ["kgc/model/bad.py imports kgc.cli", "kgc/model/worse.py imports kgc.harness"]


GENERIC = {
    "kgc.model",
    "kgc.model.protocol",
    "kgc.model.property",
    "kgc.model.temporal",
    "kgc.model.schema",
    "kgc.model._compiled",
}
"""What the engine may import of the model side: the model protocol and its vocabulary of properties
(``kgc.model.property``: kinds, scopes, what a state check reads; no model's state) and of liveness
(``kgc.model.temporal``: temporal properties and fairness classes as data), the checking of a parsed
document against a small description (``kgc.model.schema``, which a model's trace vocabulary uses), and
the package
itself and its switch to compiled modules, which choose compiled or source modules before any other loads."""

KAFKA_IN_EXPLORER: dict[str, set[str]] = {}
"""The engine modules that import Kafka's model or properties, and what they import: none (the debt
issue 31 named, ``docs/architecture.md``, "The engine boundary", is paid: the last three, ``trace.py``,
``native.py`` and ``spark.py``, take what they need from the model protocol). A Kafka import in
``kgc/explorer/`` — by ``import``, by a ``"module:NAME"`` reference or by ``importlib`` — fails
``test_the_engine_imports_no_new_kafka_module`` (``test_a_kafka_import_in_the_engine_is_found`` shows
it does)."""


def _modules(path: Path) -> set[str]:
    """Every module ``path`` imports, by full name (``from kgc.model import state``: ``kgc.model.state``),
    also by string (``references``)."""
    names: set[str] = {module for module, _ in references(path)}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in ("kgc", "kgc.model", "kgc.properties"):
                names |= {f"{node.module}.{alias.name}" for alias in node.names}
            else:
                names.add(node.module)
    return names


def kafka_imports_of_the_engine(root: Path = ROOT) -> dict[str, set[str]]:
    """Per module of ``kgc/explorer/`` (path below it), the Kafka modules it imports: anything of
    ``kgc.model`` or ``kgc.properties`` but the model protocol."""
    found = {}
    for path in sorted((root / "kgc" / "explorer").rglob("*.py")):
        kafka = {m for m in _modules(path) if m.startswith(("kgc.model", "kgc.properties")) and m not in GENERIC}
        if kafka:
            found[str(path.relative_to(root / "kgc" / "explorer"))] = kafka
    return found


def test_the_engine_imports_no_new_kafka_module() -> None:
    assert kafka_imports_of_the_engine() == KAFKA_IN_EXPLORER


def test_a_kafka_import_in_the_engine_is_found(tmp_path: Path) -> None:
    (tmp_path / "kgc" / "explorer").mkdir(parents=True)
    (tmp_path / "kgc" / "explorer" / "generic.py").write_text("from kgc.model.protocol import Model\n", "utf-8")
    (tmp_path / "kgc" / "explorer" / "bad.py").write_text(
        "def f():\n    from kgc.model import system\n    import kgc.properties.protocol\n", "utf-8"
    )
    assert kafka_imports_of_the_engine(tmp_path) == {"bad.py": {"kgc.model.system", "kgc.properties.protocol"}}


def test_every_reference_by_string_resolves() -> None:
    assert unresolved_references() == []
    # The recipe's references are seen: Kafka's Config names its default properties by string.
    assert ("kgc.properties.protocol", "ALL") in references(ROOT / "kgc" / "model" / "config.py")
    assert ("kgc.properties.temporal", "ALL") in references(ROOT / "kgc" / "model" / "fairness.py")


def test_a_wrong_reference_by_string_is_found(tmp_path: Path) -> None:
    (tmp_path / "kgc" / "model").mkdir(parents=True)
    (tmp_path / "kgc" / "explorer").mkdir(parents=True)
    (tmp_path / "kgc" / "model" / "typo.py").write_text(
        'ALL = "kgc.properties.protocol:ALLL"\nGONE = "kgc.properties.nowhere:ALL"\n', "utf-8"
    )
    (tmp_path / "kgc" / "model" / "down.py").write_text('MAIN = "kgc.cli:main"\n', "utf-8")
    (tmp_path / "kgc" / "model" / "own.py").write_text('ALL = "kgc.properties.protocol:ALL"\n', "utf-8")
    (tmp_path / "kgc" / "explorer" / "hidden.py").write_text(
        'import importlib\nSPEC = "kgc.model.system:ClassicGroupModel"\n'
        'def f():\n    return importlib.import_module("kgc.properties.protocol")\n',
        "utf-8",
    )
    assert unresolved_references(tmp_path) == [
        "kgc/model/typo.py: no module kgc.properties.nowhere",
        "kgc/model/typo.py: kgc.properties.protocol has no ALLL",
    ]
    # A model naming its own properties by string is allowed; naming the command line is not.
    assert wrong_way_imports(tmp_path) == ["kgc/model/down.py imports kgc.cli"]
    assert kafka_imports_of_the_engine(tmp_path) == {"hidden.py": {"kgc.model.system", "kgc.properties.protocol"}}
