"""What a kernel engineer meets every day, without a browser: errors at the editor's line, a failed compile shown once."""

from __future__ import annotations

from cells import gemm_cell
from htmlcheck import parse

from tilelab.records import Status
from tilelab.views import record_view

MAGIC = "--arch sm_90"
# The GEMM with its T.gemm misspelled: the cell's Python runs, the kernel fails to elaborate.
MISSPELLED_GEMM = gemm_cell(magic=MAGIC).replace("T.gemm(A_shared", "T.gem(A_shared")


def editor_line(cell_with_magic: str, text: str) -> int:
    """The line number JupyterLab's editor shows for ``text`` (the ``%%tilelang`` line is line 1)."""
    return next(n for n, line in enumerate(cell_with_magic.splitlines(), 1) if text in line)


def run_cell(ip, cell_with_magic: str):
    magic_line, body = cell_with_magic.split("\n", 1)
    return ip.run_cell_magic("tilelang", magic_line.removeprefix("%%tilelang").strip(), body)


def test_a_failed_compile_names_the_editors_line_of_the_bad_op(ip):
    run_cell(ip, MISSPELLED_GEMM)

    record = ip.user_ns["matmul_record"]
    assert record.status is Status.FAILED
    assert record.error.line == editor_line(MISSPELLED_GEMM, "T.gem(")


def test_a_failed_compile_says_its_error_once_in_an_explorer_of_only_the_tabs_it_can_fill(ip, capsys):
    run_cell(ip, MISSPELLED_GEMM)

    assert capsys.readouterr().err == ""  # the Explorer says it; stderr does not say it again
    view = record_view(ip.user_ns["matmul_record"])
    assert [tab["id"] for tab in view.core.tabs] in (["overview"], ["overview", "passes"])


def test_the_overview_of_a_failed_cell_links_the_editors_line(ip):
    run_cell(ip, MISSPELLED_GEMM)
    record = ip.user_ns["matmul_record"]

    overview = view_overview(record)

    links = overview.find_all(data_tilelab_line=str(editor_line(MISSPELLED_GEMM, "T.gem(")))
    assert len(links) == 1 and "this cell" in overview.all_text()


def test_a_failed_compile_under_no_show_is_one_line_on_stderr_with_the_editors_line(ip, capsys):
    run_cell(ip, MISSPELLED_GEMM.replace(MAGIC, f"{MAGIC} --no-show", 1))

    err = capsys.readouterr().err
    assert f"line {editor_line(MISSPELLED_GEMM, 'T.gem(')}:" in err and "T.gem(" in err


def test_the_source_tab_numbers_the_cell_as_the_editor_does(ip):
    run_cell(ip, gemm_cell(magic=MAGIC))

    source = ip.user_ns["matmul_record"].source
    assert source.kernel_source.splitlines()[0] == f"%%tilelang {MAGIC}"
    clear_line = editor_line(gemm_cell(magic=MAGIC), "T.clear(C_local)")
    assert source.cuda_lines_for(clear_line)


def view_overview(record):
    view = record_view(record)
    return parse(view.core.answer({"id": 1, "type": "overview"})["html"])


def test_a_views_bundle_names_its_widget_and_the_kernel_session_that_made_it(ip):
    from tilelab.views._bundle import VIEW_MIME, WIDGET_MIME

    run_cell(ip, gemm_cell(magic=MAGIC))

    bundle = record_view(ip.user_ns["matmul_record"])._repr_mimebundle_()

    assert bundle[VIEW_MIME]["model_id"] == bundle[WIDGET_MIME]["model_id"]
    assert bundle[VIEW_MIME]["session"] is None  # no kernel here: the extension then keeps the widget
    assert "data-tilelab='explorer'" in bundle["text/html"]  # what a reopened notebook shows


SOFTMAX = f'''%%tilelang {MAGIC}
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def softmax(M=8192, N=1024, block_M=4, threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            X_local = T.alloc_fragment((block_M, N), T.float32)
            row_max = T.alloc_fragment((block_M,), T.float32)
            row_sum = T.alloc_fragment((block_M,), T.float32)
            T.copy(X[bx * block_M, 0], X_local)
            T.reduce_max(X_local, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                X_local[i, j] = T.exp(X_local[i, j] - row_max[i])
            T.reduce_sum(X_local, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                X_local[i, j] = X_local[i, j] / row_sum[i]
            T.copy(X_local, Y[bx * block_M, 0])
    return main
'''


def reduce_block(cuda: list[str], template: str) -> range:
    """The CUDA lines of the loop around ``template`` (an ``AllReduce<...>`` call), its ``#pragma`` to its ``}``."""
    at = next(n for n, line in enumerate(cuda) if template in line)
    indent = len(cuda[at]) - len(cuda[at].lstrip())
    opener = next(n for n in range(at, -1, -1) if cuda[n].lstrip().startswith("for ") and len(cuda[n]) - len(cuda[n].lstrip()) < indent)
    depth = len(cuda[opener]) - len(cuda[opener].lstrip())
    closer = next(n for n in range(at, len(cuda)) if cuda[n].strip() == "}" and len(cuda[n]) - len(cuda[n].lstrip()) == depth)
    first = opener - 1 if cuda[opener - 1].lstrip().startswith("#pragma") else opener
    return range(first + 1, closer + 2)  # 1-based CUDA line numbers


def test_every_cuda_line_of_a_reduce_links_to_its_cell_line(ip):
    from tilelab.views._source_links import source_links

    run_cell(ip, SOFTMAX.replace(MAGIC, f"{MAGIC} --no-show --no-machine-code", 1))
    source = ip.user_ns["softmax_record"].source
    links = source_links(source)
    cuda = source.device.splitlines()

    for template, op in (("AllReduce<tl::MaxOp", "T.reduce_max("), ("AllReduce<tl::SumOp", "T.reduce_sum(")):
        block = reduce_block(cuda, template)
        assert len(block) >= 6  # the thread-local loop, the barrier, the AllReduce and the braces
        cell_line = editor_line(SOFTMAX, op)
        assert {n: links.cuda_to_cell.get(n) for n in block} == dict.fromkeys(block, cell_line)
