"""Every notebook in notebooks/ runs top to bottom without an error output.

Cells tagged ``gpu`` need a GPU to run a kernel; without one they must say so
with a printed "skipped" line (never pass silently, never raise). Each
notebook runs in its own kernel with ``cwd=notebooks/`` and a temporary
``TILELAB_DB``, so tuning history never touches the user's file, and with
TileLab's nvcc builds off (``TILELAB_MACHINE_CODE=0``). Where the
browser tests run, the quickstart runs in JupyterLab instead
(tests/ui/test_daily_use_ui.py), and its saved file passes the same checks there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_outputs import error_outputs, silent_gpu_cells, stdout_of
from ui.conftest import why_browser_tests_skip

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CELL_TIMEOUT_S = 300

pytestmark = pytest.mark.notebooks


# tests/ui/test_daily_use_ui.py runs these, saves them and checks their outputs (where it can run).
RUN_IN_THE_BROWSER = set() if why_browser_tests_skip() else {"quickstart"}


def _notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def _execute(path: Path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")

    notebook = nbformat.read(path, as_version=4)
    # "python3" is ipykernel's native spec: it starts the interpreter running the tests (the venv).
    client = nbclient.NotebookClient(
        notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()
    return notebook


@pytest.mark.spread
@pytest.mark.parametrize("path", [p for p in _notebooks() if p.stem not in RUN_IN_THE_BROWSER], ids=lambda p: p.stem)
def test_notebook_runs_without_errors(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from conftest import cuda_available

    monkeypatch.setenv("TILELAB_DB", str(tmp_path / "tilelab.db"))  # the kernel inherits it
    # No nvcc: these runs look for error outputs, which a machine-code build never makes (it notes its failures in
    # the record), and the builds were 45 % of their CPU. tests/test_nbconvert.py, tests/test_machine*.py and the
    # browser tests check machine code in a notebook, and the committed notebooks carry the GPU machine's.
    monkeypatch.setenv("TILELAB_MACHINE_CODE", "0")
    # No compile workers started ahead by %load_ext (a zygote importing TileLang: 3 CPU-s, for nothing in the three
    # notebooks that never tune); a sweep still gets its workers from a zygote. tests/test_zygote.py tests the warming.
    monkeypatch.setenv("TILELAB_POOL_MAX", "0")
    notebook = _execute(path)

    errors = error_outputs(notebook)
    assert not errors, "\n".join(errors)
    if not cuda_available():
        silent = silent_gpu_cells(notebook)
        assert not silent, f"GPU-only cells {silent} printed no 'skipped' line without a GPU"


def test_every_notebook_starts_with_date_and_device():
    import nbformat

    for path in _notebooks():
        first_code = next(cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
        assert "torch.cuda.is_available()" in first_code.source, path.name
        assert "no GPU: lowering only" in first_code.source, path.name


def test_notebooks_are_committed_as_executed_on_a_gpu_and_small():
    """``python notebooks/execute.py`` on the GPU machine wrote them; the first output names the device."""
    import nbformat

    for path in _notebooks():
        notebook = nbformat.read(path, as_version=4)
        first_code = next(cell for cell in notebook.cells if cell.cell_type == "code")
        first_output = stdout_of(first_code)
        assert first_output and "no GPU" not in first_output, f"{path.name} was not executed on a GPU: {first_output!r}"
        assert not error_outputs(notebook), path.name
        assert path.stat().st_size < 5 * 1024 * 1024, path.name
