"""An executed notebook converted with nbconvert keeps the Explorer as static HTML.

nbconvert prefers the widget view only when the notebook stores widget state
(JupyterLab does not by default); otherwise it falls back to the ``text/html``
snapshot every TileLab view carries.
"""

from __future__ import annotations

import pytest
from cells import gemm_cell
from htmlcheck import parse_element

pytestmark = pytest.mark.slow

GEMM_CELL = gemm_cell(size=256, block=64, stages=2, magic="--arch sm_90")


def test_nbconvert_html_of_an_executed_notebook_shows_the_static_explorer(tmp_path):
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("%load_ext tilelab"), nbformat.v4.new_code_cell(GEMM_CELL)]
    )
    # As JupyterLab saves by default (no widget state): with stored state nbconvert embeds the widget instead.
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=300,
        store_widget_state=False,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = notebook.cells[1].outputs
    assert any("application/vnd.jupyter.widget-view+json" in out.get("data", {}) for out in outputs)

    body, _ = HTMLExporter().from_notebook_node(notebook)

    explorer = parse_element(body[body.index('<div class="tilelab-explorer"') :])
    assert "TileLab Explorer — matmul (sm_90, lowered)" in explorer.all_text()
    sections = [node.attrs["data-section"] for node in explorer.find_all("details") if "data-section" in node.attrs]
    assert sections == ["overview", "passes", "source", "layouts"]
