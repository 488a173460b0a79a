"""The Overview's cache line and the line that says why a kernel recompiled, after an edit, in a real JupyterLab;
a CPU kernel's device code is called C there and in its Source tab."""

from __future__ import annotations

import pytest

from ui.explorer_page import at_1280_with_sidebars, dark_theme, screenshot, show_tab

pytestmark = pytest.mark.ui

CELL = '''%%tilelang --target c --no-machine-code
import tilelang
import tilelang.cpu.language as C


@tilelang.jit(target="c", out_idx=[-1])
def scaled(N=256, block=32):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = A[bx * block + i] * {factor}

    return main
'''
OUTPUTS = ".jp-Cell .jp-OutputArea"


def test_an_edited_kernel_says_what_changed_in_the_key_and_the_overview_says_who_served_the_compile(lab):
    page = lab.page
    lab.write_notebook("why.ipynb", ["%load_ext tilelab", CELL.format(factor="2.0"), CELL.format(factor="3.0")])
    lab.open_notebook("why.ipynb")
    at_1280_with_sidebars(page)
    lab.run_all()

    why = page.locator(f"{OUTPUTS} [data-tilelab='why']").last
    why.wait_for()
    cache = page.locator(f"{OUTPUTS} [data-tilelab='provenance']").last

    assert "TIR changed" in why.inner_text() and "3.0" in why.inner_text()
    assert "compiled fresh" in cache.inner_text() and "key" in cache.inner_text()
    since = page.locator(f"{OUTPUTS}").last.inner_text()
    assert "C +1/-1 lines" in since and "CUDA" not in since
    page.locator(f"{OUTPUTS} .tilelab-explorer").last.evaluate("node => node.scrollIntoView({block: 'start'})")
    screenshot(page, "why-after-an-edit.png")
    with dark_theme(page):
        screenshot(page, "why-after-an-edit-dark.png")

    explorer = page.locator(f"{OUTPUTS} .tilelab-explorer").last
    show_tab(explorer, "Source")
    status = explorer.locator(".tl-linked .tl-status")
    status.wait_for()
    assert status.inner_text().endswith(" C lines.") and "CUDA" not in explorer.locator(".tl-linked .tl-toolbar").inner_text()
    explorer.locator(".tl-linked .tl-pane-right").scroll_into_view_if_needed()  # the C pane
    screenshot(page, "why-cpu-source.png")
    with dark_theme(page):
        screenshot(page, "why-cpu-source-dark.png")
