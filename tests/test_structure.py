"""The package's structure as make test keeps it: one layers contract (lint-imports checks the imports)
that names every module, so a new module cannot sit outside the layers unnoticed."""

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
