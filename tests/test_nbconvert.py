"""An executed notebook converted with nbconvert keeps the Explorer as static HTML.

nbconvert prefers the widget view only when the notebook stores widget state
(JupyterLab does not by default); otherwise it falls back to the ``text/html``
snapshot every TileLab view carries.
"""

from __future__ import annotations

import pytest
from htmlcheck import parse_element

pytestmark = pytest.mark.slow

GEMM_CELL = """%%tilelang --arch sm_90
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def matmul(M=256, N=256, K=256, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm
"""


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
