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
