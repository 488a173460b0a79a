"""The Explorer in a real JupyterLab: tabs, a pass diff, linked source lines, a plotly layout plot."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.ui

GEMM_CELL = """%%tilelang --arch sm_90
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def matmul(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm
"""

EXPLORER = ".jp-OutputArea-output .tilelab-explorer"


def test_the_explorer_shows_tabs_a_pass_diff_linked_source_and_a_layout_plot(lab):
    lab.write_notebook("explorer.ipynb", ["%load_ext tilelab", GEMM_CELL])
    lab.open_notebook("explorer.ipynb")

    lab.run_all()
    page = lab.page
    explorer = page.wait_for_selector(EXPLORER)
    tabs = explorer.query_selector_all(".lm-TabBar-tab")
    assert [tab.inner_text().strip() for tab in tabs] == ["Overview", "Passes", "Source", "Layouts"]
    assert "lowered only" in explorer.inner_text()

    # Passes: select LayoutInference and see its diff, fetched from the kernel on selection.
    tabs[1].click()
    row = page.wait_for_selector(f"{EXPLORER} .tl-pass-row.tl-changed:has(.tl-name:text-is('tl.LayoutInference'))")
    row.click()
    page.wait_for_selector(f"{EXPLORER} .tl-detail-head:has-text('tl.LayoutInference')")
    assert page.query_selector_all(f"{EXPLORER} .tl-diff .tl-diff-add")
    page.select_option(f"{EXPLORER} select.tl-mode", "split")
    page.wait_for_selector(f"{EXPLORER} .tl-diff-split")
    lab.screenshot("explorer-passes.png")

    # Source: a linked Python line highlights the device lines it became.
    tabs[2].click()
    page.locator(f"{EXPLORER} .tl-pane-python .tl-line.tl-linked").first.click()
    page.wait_for_selector(f"{EXPLORER} .tl-pane-device .tl-line.tl-hl")
    lab.screenshot("explorer-source.png")

    # Layouts: the figure is built when the tab opens and drawn by plotly.
    tabs[3].click()
    page.wait_for_selector(f"{EXPLORER} .js-plotly-plot .heatmaplayer, {EXPLORER} .js-plotly-plot .hm", timeout=60_000)
    lab.screenshot("explorer.png")


def test_compare_shows_one_pass_of_two_architectures_side_by_side(lab):
    sm80 = GEMM_CELL.replace("--arch sm_90", "--arch sm_80 --no-show")
    cells = [
        "%load_ext tilelab",
        sm80,
        "sm80 = matmul_record",
        GEMM_CELL.replace("sm_90", "sm_90 --no-show"),
        "import tilelab\ntilelab.compare(sm80, matmul_record)",
    ]
    lab.write_notebook("compare.ipynb", cells)
    lab.open_notebook("compare.ipynb")

    lab.run_all()
    page = lab.page
    compare = page.wait_for_selector(".jp-OutputArea-output .tl-compare")
    assert "only in" in compare.inner_text()
    page.locator(".tl-compare .tl-compare-row:has(.tl-name:has-text('tl.LayoutInference'))").first.click()
    page.wait_for_selector(
        ".tl-compare .tl-detail .tl-diff-split, .tl-compare .tl-detail .tl-hint:has-text('Identical')"
    )
    lab.screenshot("compare.png")
