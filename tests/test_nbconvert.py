"""An executed notebook converted with nbconvert keeps the Explorer as static HTML.

nbconvert prefers the widget view only when the notebook stores widget state
(JupyterLab does not by default); otherwise it falls back to the ``text/html``
snapshot every TileLab view carries.
"""

from __future__ import annotations

import re

import pytest
from cells import gemm_cell
from htmlcheck import parse_element

from tilelab.machine.build import find_tool

pytestmark = pytest.mark.slow

GEMM_CELL = gemm_cell(size=256, block=64, stages=2, magic="--arch sm_90")
# A later cell that runs until the GEMM's machine code is built, as a notebook's next cells do while nvcc builds.
WAIT_FOR_MACHINE_CODE = """
import threading
from tilelab.registry import default_registry

built = threading.Event()
stop = default_registry().subscribe(lambda event, item: item.id == _tl.id and item.machine_code is not None and built.set())
if default_registry().get(_tl.id).machine_code is not None:
    built.set()
assert built.wait(300), "no machine code after 300 s"
stop()
"""


@pytest.mark.skipif(find_tool("nvcc") is None, reason="needs nvcc")
def test_nbconvert_html_of_an_executed_notebook_shows_the_static_explorer_with_the_machine_code_built_meanwhile(tmp_path):
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    cells = ["%load_ext tilelab", GEMM_CELL, GEMM_CELL, WAIT_FOR_MACHINE_CODE]  # the second: a cache hit, shown again
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in cells])
    # As JupyterLab saves by default (no widget state): with stored state nbconvert embeds the widget instead.
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=300,
        store_widget_state=False,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = notebook.cells[2].outputs  # (the first showing's widget closed when the second was shown)
    assert any("application/vnd.jupyter.widget-view+json" in out.get("data", {}) for out in outputs)

    body, _ = HTMLExporter().from_notebook_node(notebook)

    starts = [found.start() for found in re.finditer('<div class="tilelab-explorer"', body)]
    assert len(starts) == 2
    for start in starts:
        explorer = parse_element(body[start:])
        assert "TileLab Explorer — matmul (sm_90, lowered)" in explorer.all_text()
        sections = [node.attrs["data-section"] for node in explorer.find_all("details") if "data-section" in node.attrs]
        assert sections == ["overview", "passes", "source", "layouts", "machine"]
        assert "PTX / SASS, registers and spills: see Machine code." in explorer.all_text()
        machine = next(node for node in explorer.find_all("details") if node.attrs.get("data-section") == "machine")
        assert "registers per thread" in machine.all_text() and "HGMMA" in machine.all_text()  # sm_90's SASS, read
