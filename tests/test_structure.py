"""The package's structure as make test keeps it: one layers contract (lint-imports checks the imports)
that names every module, so a new module cannot sit outside the layers unnoticed; and small files."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).parents[1]


def _layered_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    assert not contract.get("allow_indirect_imports")
    return {name.strip() for layer in contract["layers"] for name in layer.replace("|", ":").split(":")}


def test_every_module_of_the_package_is_in_a_layer_of_the_import_contract():
    package = ROOT / "tilelab"
    modules = {f"tilelab.{path.stem}" for path in package.glob("*.py") if path.stem != "__init__"}
    modules |= {f"tilelab.{path.name}" for path in package.iterdir() if (path / "__init__.py").is_file()}

    assert modules - _layered_modules() == set()
    assert _layered_modules() - modules == set()  # no stale names


def test_no_source_file_of_the_package_or_the_widgets_is_over_400_lines():
    """A file that grows past 400 lines is split by what its parts do (as the tuning tab's rows left its data)."""
    sources = [*(ROOT / "tilelab").rglob("*.py"), *(ROOT / "tilelab").rglob("*.css"), *(ROOT / "src").rglob("*.ts")]
    lengths = {str(path.relative_to(ROOT)): len(path.read_text().splitlines()) for path in sources}

    assert len(lengths) > 150
    assert {path: lines for path, lines in lengths.items() if lines > 400} == {}
