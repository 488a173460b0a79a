"""What a kernel engineer meets every day, without a browser: errors at the editor's line, a failed compile shown once."""

from __future__ import annotations

from cells import gemm_cell, softmax_cell
from htmlcheck import parse

from tilelab.records import Status
from tilelab.views import record_view
from tilelab.views.overview.snapshot import overview_snapshot

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
    magic = f"{MAGIC} --force"  # compiled here: the session may hold this kernel from another cell
    run_cell(ip, gemm_cell(magic=magic))

    source = ip.user_ns["matmul_record"].source
    assert source.kernel_source.splitlines()[0] == f"%%tilelang {magic}"
    clear_line = editor_line(gemm_cell(magic=magic), "T.clear(C_local)")
    assert source.source_map.cuda_lines_for(clear_line)


def view_overview(record):
    view = record_view(record)
    return parse(overview_snapshot(view.core.answer({"id": 1, "type": "overview"})))  # drawn from what the widget gets


def test_a_views_bundle_names_its_widget_and_the_kernel_session_that_made_it(ip):
    from tilelab.views._bundle import VIEW_MIME, WIDGET_MIME

    run_cell(ip, gemm_cell(magic=MAGIC))

    bundle = record_view(ip.user_ns["matmul_record"])._repr_mimebundle_()

    assert bundle[VIEW_MIME]["model_id"] == bundle[WIDGET_MIME]["model_id"]
    assert bundle[VIEW_MIME]["session"] is None  # no kernel here: the extension then keeps the widget
    assert "data-tilelab='explorer'" in bundle["text/html"]  # what a reopened notebook shows


SOFTMAX = softmax_cell(magic=MAGIC)


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
    run_cell(ip, SOFTMAX.replace(MAGIC, f"{MAGIC} --no-show --no-machine-code", 1))
    source = ip.user_ns["softmax_record"].source
    links = source.source_map  # computed at capture
    cuda = source.device.splitlines()

    for template, op in (("AllReduce<tl::MaxOp", "T.reduce_max("), ("AllReduce<tl::SumOp", "T.reduce_sum(")):
        block = reduce_block(cuda, template)
        assert len(block) >= 6  # the thread-local loop, the barrier, the AllReduce and the braces
        cell_line = editor_line(SOFTMAX, op)
        assert {n: links.cuda_to_cell.get(n) for n in block} == dict.fromkeys(block, cell_line)


class RunChangedMidRead:
    """A tuning run whose first summary fails as a dict read while a sweep's thread adds a row does."""

    id = "run-1"
    running = True

    def __init__(self) -> None:
        self.reads = 0

    def summary(self) -> dict:
        self.reads += 1
        if self.reads == 1:
            raise RuntimeError("dictionary changed size during iteration")
        return {"name": "scale_add", "done": 3, "total": 8}


def test_the_panel_bridge_reads_a_run_again_that_a_sweep_changed_under_it():
    from tilelab.bridge import PROTOCOL_VERSION, BridgeSession
    from tilelab.registry import Registry

    registry, sent = Registry(), []
    run = RunChangedMidRead()
    registry.track_tuning(run)
    run.reads = 0  # the panel's read below is the one that meets the change

    BridgeSession(sent.append, registry).handle({"v": PROTOCOL_VERSION, "type": "list"})

    (summary,) = sent[-1]["tuning"]
    assert (summary["id"], summary["done"], summary["total"]) == ("run-1", 3, 8)


def panel_state(registry) -> dict[str, dict]:
    """The record summaries a subscribed panel holds after the bridge's list and every push since."""
    from tilelab.bridge import PROTOCOL_VERSION, BridgeSession

    sent: list[dict] = []
    BridgeSession(sent.append, registry).handle({"v": PROTOCOL_VERSION, "type": "subscribe"})
    return {summary["id"]: summary for summary in sent[-1]["records"]}, sent


def followed(sent: list[dict], held: dict[str, dict]) -> dict[str, dict]:
    for message in sent:
        if message["type"] == "update" and message["kind"] == "record":
            held[message["summary"]["id"]] = message["summary"]
    return held


def test_of_two_failed_runs_only_the_later_is_current_in_the_panel():
    from sample_records import failed_record

    from tilelab.registry import Registry

    registry = Registry()
    first, second = failed_record(), failed_record()
    registry.add(first)
    held, sent = panel_state(registry)
    before = len(sent)
    registry.add(second)

    held = followed(sent[before:], held)
    assert [summary["current"] for summary in (held[first.id], held[second.id])] == [False, True]


def test_a_cache_hit_of_an_earlier_run_makes_it_the_current_run_and_machine_code_arriving_does_not(ip):
    from tilelab.registry import default_registry

    quiet = f"{MAGIC} --no-show --no-machine-code"
    run_cell(ip, gemm_cell(block=128, magic=quiet))
    earlier = ip.user_ns["matmul_record"]
    run_cell(ip, gemm_cell(block=64, magic=quiet))
    later = ip.user_ns["matmul_record"]
    registry = default_registry()

    run_cell(ip, gemm_cell(block=128, magic=quiet))  # the first cell again: a cache hit of the earlier run
    held, _ = panel_state(registry)
    assert ip.user_ns["matmul_record"].from_cache
    assert held[earlier.id]["current"] and not held[later.id]["current"]
    assert held[earlier.id]["run"] < held[later.id]["run"]  # run numbers follow the compiles

    registry.update(later)  # the later run's machine code arriving in the background: it stays where it is
    held, _ = panel_state(registry)
    assert held[earlier.id]["current"] and not held[later.id]["current"]


def test_a_run_after_a_failed_one_is_compared_with_the_last_run_that_compiled(ip):
    from tilelab.registry import default_registry
    from tilelab.runs import since_last_run

    quiet = f"{MAGIC} --no-show --no-machine-code"
    run_cell(ip, gemm_cell(block=128, stages=2, magic=quiet))
    run_cell(ip, MISSPELLED_GEMM.replace(MAGIC, quiet, 1))
    failed = ip.user_ns["matmul_record"]
    run_cell(ip, gemm_cell(block=128, stages=1, magic=quiet))
    compiled = ip.user_ns["matmul_record"]

    assert "failed" in since_last_run(default_registry(), failed).text()
    since = since_last_run(default_registry(), compiled)
    assert since.against == since.run - 2 and "(the runs between failed)" in since.text()


def test_two_tuning_runs_of_one_kernel_are_told_apart_in_the_panel():
    from tilelab.bridge import PROTOCOL_VERSION, BridgeSession
    from tilelab.registry import Registry
    from tilelab.tune.result import TuneResult

    registry, sent = Registry(), []
    for n in (1 << 16, 1 << 17):
        registry.track_tuning(TuneResult("scale_add", ({"block": 64},), ("block", "chunk"), "cpu: <b>EPYC</b>", fixed={"N": n}))

    BridgeSession(sent.append, registry).handle({"v": PROTOCOL_VERSION, "type": "list"})

    details = [run["detail"] for run in sent[-1]["tuning"]]
    assert details == ["N=65536 · block × chunk · grid · cpu: <b>EPYC</b>", "N=131072 · block × chunk · grid · cpu: <b>EPYC</b>"]


def test_a_lowering_only_sweep_says_what_it_lowered_for_not_on_none():
    from tilelab.targets import gpu_name, resolve_target
    from tilelab.tune.result import TuneResult
    from tilelab.views.tuning import TuningView

    choice = resolve_target("sm_80", None)  # "no GPU" here; on an H200: "the GPU, NVIDIA H200, is sm_90a"
    lowered = TuneResult("matmul", ({"block_M": 64},), ("block_M",), "none (lowered for sm_80)", choice=choice, runnable=False)

    header = TuningView(lowered).progress_html()

    assert f"matmul</b> lowered for sm_80 ({choice.lowered_because})" in header and "on none" not in header
    assert choice.lowered_because in ("no GPU", f"the GPU, {gpu_name()}, is {resolve_target().arch}")
