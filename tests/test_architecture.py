"""The packages import only the way docs/architecture.md draws them: each layer may import the
layers above it, never one below. Read from the source (every ``import``, also inside
functions), so a back-reference cannot hide in a lazy import."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS: list[set[str]] = [{"model"}, {"properties"}, {"explorer"}, {"diagrams"}, {"sut"}, {"timing", "logs"}, {"kgc"}]
"""Top to bottom, as in docs/architecture.md."""
LEVEL = {package: i for i, layer in enumerate(LAYERS) for package in layer}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def wrong_way_imports(root: Path = ROOT) -> list[str]:
    found = []
    for package, level in LEVEL.items():
        for path in sorted((root / package).rglob("*.py")) if (root / package).is_dir() else ():
            for name in sorted(_imports(path)):
                if name in LEVEL and LEVEL[name] > level:
                    found.append(f"{path.relative_to(root)} imports {name}")
    return found


def test_packages_import_only_upwards() -> None:
    assert wrong_way_imports() == []


def test_every_package_is_in_the_picture() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages <= set(LEVEL), f"add {sorted(packages - set(LEVEL))} to docs/architecture.md and LAYERS"


def test_a_wrong_way_import_is_found(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "bad.py").write_text("def f():\n    from kgc import cli\n", encoding="utf-8")
    assert wrong_way_imports(tmp_path) == ["model/bad.py imports kgc"]
