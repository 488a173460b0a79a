"""The JupyterLab panel ships inside the wheel: installing it is enough to get the panel.

The wheel is built once from the bundle that ``make setup`` built (no npm run
here), then installed with ``--no-deps`` into a fresh venv that borrows
JupyterLab from this one through a ``.pth`` file.
"""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUNDLE = REPO / "extension" / "labextension"
SHARE = "share/jupyter/labextensions/tilelab"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def labextension_list(python: Path | str, env: dict[str, str] | None = None) -> str:
    """``jupyter labextension list`` as run by ``python``, without colours."""
    done = subprocess.run(
        [str(python), "-m", "jupyterlab.labextensions", "list"],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    return ANSI.sub("", done.stdout + done.stderr)


def enabled_in(listing: str) -> str | None:
    """The folder under which ``listing`` shows tilelab enabled and OK, if it does."""
    folder = None
    for line in listing.splitlines():
        if not line.startswith((" ", "\t")):
            folder = line.strip()
        elif re.match(r"\s+tilelab v\S+ enabled\s+OK", line):
            return folder
    return None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    assert (BUNDLE / "package.json").exists(), "the panel is not built: run `make setup`"
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        check=True, timeout=300,
    )  # fmt: skip
    (built,) = out.glob("tilelab-*.whl")
    return built


def test_the_wheel_carries_the_prebuilt_panel(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    data = [name.split(".data/data/", 1)[1] for name in names if ".data/data/" in name]

    assert f"{SHARE}/package.json" in data
    assert f"{SHARE}/install.json" in data
    assert f"{SHARE}/schemas/tilelab/plugin.json" in data
    assert any(re.fullmatch(rf"{SHARE}/static/remoteEntry\.[0-9a-f]+\.js", name) for name in data)
    assert "tilelab/bridge.py" in names


@pytest.mark.slow
def test_pip_install_into_a_fresh_venv_enables_the_panel(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    fresh_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # JupyterLab itself comes from this venv; only tilelab is installed fresh.
    (Path(fresh_site) / "_borrowed_jupyterlab.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, timeout=300,
    )  # fmt: skip
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUPYTER")}
    env.update(JUPYTER_DATA_DIR=str(tmp_path / "data"), JUPYTER_CONFIG_DIR=str(tmp_path / "config"))

    listing = labextension_list(python, env)

    assert enabled_in(listing) == str(venv / "share" / "jupyter" / "labextensions"), listing


def test_the_development_install_shows_the_panel_enabled():
    listing = labextension_list(sys.executable)

    assert enabled_in(listing) is not None, listing


def test_the_panel_source_never_logs_nor_injects_html():
    sources = {str(path.relative_to(REPO / "src")): path.read_text() for path in (REPO / "src").rglob("*.ts")}

    assert {"index.ts", "model.ts", "panel.ts", "protocol.ts", "tabs.ts"} <= set(sources)
    assert any(name.startswith("widgets/") for name in sources)  # the Explorer's widgets, in the same codebase
    for name, text in sources.items():
        assert "console.log" not in text, name
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text, name
        assert "requestExecute" not in text, f"{name}: the panel never asks the kernel to run code"
    assert sum(text.count("console.") for text in sources.values()) == 1  # the unknown-message warning
