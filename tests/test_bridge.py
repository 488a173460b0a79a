"""The panel's comm protocol, spoken to a real ipykernel through jupyter_client.

The test plays the panel: it opens a comm to the target ``tilelab`` with a
``comm_open`` message, sends ``comm_msg`` requests and reads the kernel's
``comm_msg`` replies on iopub.
"""

from __future__ import annotations

import logging
import queue
import textwrap
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from sample_records import sample_record

from tilelab.bridge import PROTOCOL_VERSION, BridgeSession, register, unregister
from tilelab.records import Status
from tilelab.registry import Registry

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

jupyter_client = pytest.importorskip("jupyter_client")

REPO = Path(__file__).resolve().parents[1]

MAKE_RECORD = """
from tilelab.records import CompileMode, KernelRecord, PassRecord, Status
from tilelab.registry import default_registry

record = KernelRecord(
    name={name!r}, status=Status.OK, mode=CompileMode.LOWERED,
    target='{{"kind": "cuda", "arch": "sm_90"}}', arch="sm_90", tilelang_version="0.1.15", cache_key="k",
    passes=(PassRecord(0, "tl.Simplify", "ir", True, 1, 0, 0.01), PassRecord(1, "tl.LowerTileOp", "ir", False, 0, 0, 0.02)),
)
default_registry().add(record)
"""

MAKE_TUNING_RUN = """
class FakeRun:
    id = "run-1"
    def summary(self):
        return {{"id": self.id, "name": {name!r}, "total": 4, "done": 4, "failed": 0, "running": False,
                "partial": False, "best_config": {{"block_M": 128}}, "best_latency_ms": 0.25}}

default_registry().track_tuning(FakeRun())
"""


class Panel:
    """The client side of one ``tilelab`` comm."""

    def __init__(self, client, data: dict | None = None) -> None:
        self.client = client
        self.comm_id = uuid.uuid4().hex
        self.closed = False
        self.widgets_opened: list[str] = []  # comm ids of the widget models the kernel announced
        self._send("comm_open", {"comm_id": self.comm_id, "target_name": "tilelab", "data": data or {}})

    def send(self, data) -> None:
        self._send("comm_msg", {"comm_id": self.comm_id, "data": data})

    def request(self, data: dict, timeout: float = 30) -> dict:
        """Send ``data`` with a fresh ``seq`` and return the reply that echoes it."""
        seq = int(time.monotonic_ns() % 1_000_000_000)
        self.send({**data, "seq": seq})
        return self.wait(lambda m: m.get("seq") == seq, timeout)

    def wait(self, predicate, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.read(deadline - time.monotonic()):
                if predicate(message):
                    return message
            if self.closed:
                raise AssertionError("the kernel closed the comm")
        raise AssertionError("no matching comm message from the kernel")

    def read(self, timeout: float) -> list[dict]:
        """The comm messages for this comm that arrive within ``timeout`` (at least one iopub message)."""
        try:
            msg = self.client.get_iopub_msg(timeout=max(0.05, timeout))
        except queue.Empty:
            return []
        content = msg["content"]
        if msg["msg_type"] == "comm_open" and content.get("target_name") == "jupyter.widget":
            self.widgets_opened.append(content["comm_id"])
        if content.get("comm_id") != self.comm_id:
            return []
        if msg["msg_type"] == "comm_close":
            self.closed = True
            return []
        return [content["data"]] if msg["msg_type"] == "comm_msg" else []

    def close(self) -> None:
        self._send("comm_close", {"comm_id": self.comm_id, "data": {}})

    def _send(self, msg_type: str, content: dict) -> None:
        self.client.shell_channel.send(self.client.session.msg(msg_type, content))


def execute(client, code: str) -> None:
    """Run ``code`` and wait for its reply, leaving iopub (the pushes) to the panel."""
    msg_id = client.execute(textwrap.dedent(code), store_history=False)
    while True:
        reply = client.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    assert reply["content"]["status"] == "ok", reply["content"]


@pytest.fixture(scope="module")
def kernel():
    """A real ipykernel with the bridge registered (as ``%load_ext tilelab`` does)."""
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3", cwd=str(REPO))
    try:
        execute(client, "import tilelab.bridge; tilelab.bridge.register(get_ipython())")
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def hello() -> dict:
    return {"v": PROTOCOL_VERSION, "type": "hello"}


def test_opening_the_comm_with_hello_gets_the_version(kernel):
    panel = Panel(kernel, hello())

    reply = panel.wait(lambda m: m["type"] == "hello")

    assert reply["v"] == PROTOCOL_VERSION
    assert reply["protocol"] == PROTOCOL_VERSION
    assert reply["tilelab"] == __import__("tilelab").__version__
    panel.close()


def test_a_request_of_another_protocol_version_is_refused(kernel):
    panel = Panel(kernel)

    reply = panel.request({"v": PROTOCOL_VERSION + 1, "type": "list"})

    assert reply["type"] == "error"
    assert reply["code"] == "version"
    assert reply["supported"] == [PROTOCOL_VERSION]
    panel.close()


@pytest.mark.parametrize(
    "message",
    [
        {"v": PROTOCOL_VERSION},
        {"v": PROTOCOL_VERSION, "type": 3},
        {"v": PROTOCOL_VERSION, "type": "get", "kind": "layout", "id": "x"},
        {"v": PROTOCOL_VERSION, "type": "get", "kind": "record", "id": 7},
        {"v": PROTOCOL_VERSION, "type": "get", "kind": "record", "id": "x", "html": "yes"},
    ],
)
def test_malformed_requests_get_an_invalid_error(kernel, message):
    panel = Panel(kernel)

    reply = panel.request(message)

    assert reply["type"] == "error"
    assert reply["code"] == "invalid"
    assert reply["message"]
    panel.close()


def test_a_message_that_is_not_an_object_gets_an_invalid_error(kernel):
    panel = Panel(kernel)

    panel.send(["list"])

    assert panel.wait(lambda m: m["type"] == "error")["code"] == "invalid"
    panel.close()


def test_an_unknown_message_type_gets_an_invalid_error_and_runs_nothing(kernel):
    panel = Panel(kernel)

    reply = panel.request({"v": PROTOCOL_VERSION, "type": "execute", "code": "import os; os._exit(1)"})

    assert (reply["type"], reply["code"]) == ("error", "invalid")
    assert "execute" in reply["message"]
    assert panel.request(hello())["type"] == "hello"  # the kernel is still there
    panel.close()


def test_a_comm_message_without_data_gets_a_protocol_error(kernel):
    panel = Panel(kernel)

    panel._send("comm_msg", {"comm_id": panel.comm_id})

    reply = panel.wait(lambda m: m["type"] == "error")
    assert reply["code"] == "invalid" and "needs data" in reply["message"]
    assert panel.request(hello())["type"] == "hello"
    panel.close()


def test_getting_an_unknown_record_says_not_found(kernel):
    panel = Panel(kernel)

    reply = panel.request({"v": PROTOCOL_VERSION, "type": "get", "kind": "record", "id": "nope", "html": False})

    assert (reply["type"], reply["code"]) == ("error", "not_found")
    panel.close()


def test_subscribers_get_new_records_and_tuning_runs_pushed(kernel):
    panel = Panel(kernel, hello())
    panel.wait(lambda m: m["type"] == "hello")
    before = panel.request({"v": PROTOCOL_VERSION, "type": "subscribe"})
    assert before["type"] == "list"

    execute(kernel, MAKE_RECORD.format(name="pushed_gemm"))
    record = panel.wait(lambda m: m["type"] == "update" and m["kind"] == "record")["summary"]
    execute(kernel, MAKE_TUNING_RUN.format(name="pushed_gemm"))
    run = panel.wait(lambda m: m["type"] == "update" and m["kind"] == "tuning")["summary"]
    tuned = panel.wait(lambda m: m["type"] == "update" and m["kind"] == "record")["summary"]

    assert (record["name"], record["arch"], record["mode"], record["passes"]) == ("pushed_gemm", "sm_90", "lowered", 2)
    assert record["best_latency_ms"] is None
    assert (run["id"], run["done"], run["best_latency_ms"]) == ("run-1", 4, 0.25)
    assert (tuned["id"], tuned["best_latency_ms"]) == (record["id"], 0.25)
    listed = panel.request({"v": PROTOCOL_VERSION, "type": "list"})
    assert record["id"] in [r["id"] for r in listed["records"]]
    assert "run-1" in [t["id"] for t in listed["tuning"]]
    panel.close()


def test_get_returns_the_summary_then_the_html_snapshot_on_demand(kernel):
    execute(kernel, MAKE_RECORD.format(name="snap_gemm"))
    panel = Panel(kernel)
    listed = panel.request({"v": PROTOCOL_VERSION, "type": "list"})
    record_id = next(r["id"] for r in listed["records"] if r["name"] == "snap_gemm")

    summary = panel.request({"v": PROTOCOL_VERSION, "type": "get", "kind": "record", "id": record_id})
    detail = panel.request({"v": PROTOCOL_VERSION, "type": "get", "kind": "record", "id": record_id, "html": True})

    assert summary["type"] == "item" and "html" not in summary
    assert summary["summary"]["name"] == "snap_gemm"
    assert detail["type"] == "item", detail
    assert isinstance(detail["html"], str) and "snap_gemm" in detail["html"]
    assert "<script" not in detail["html"].lower()
    panel.close()


def test_open_builds_the_live_explorer_whose_widget_the_front_end_is_told_about(kernel):
    execute(kernel, MAKE_RECORD.format(name="live_gemm"))
    panel = Panel(kernel)
    listed = panel.request({"v": PROTOCOL_VERSION, "type": "list"})["records"]
    record_id = next(r["id"] for r in listed if r["name"] == "live_gemm")

    view = panel.request({"v": PROTOCOL_VERSION, "type": "open", "kind": "record", "id": record_id})

    assert view["type"] == "view" and view["summary"]["current"] is True, view
    assert view["bundle"] is not None, f"no live view: {view['problem']}"  # make setup builds the widgets' bundle
    model_id = view["bundle"]["application/vnd.jupyter.widget-view+json"]["model_id"]
    assert model_id in panel.widgets_opened  # announced on iopub before the reply: the widget manager knows it
    assert "live_gemm" in view["bundle"]["text/plain"]
    panel.close()


def test_without_the_target_the_kernel_closes_the_comm_and_register_is_idempotent(kernel):
    subscribed = Panel(kernel, hello())
    subscribed.request({"v": PROTOCOL_VERSION, "type": "subscribe"})

    execute(kernel, "import tilelab.bridge; tilelab.bridge.unregister(get_ipython()); tilelab.bridge.unregister(get_ipython())")
    try:
        with pytest.raises(AssertionError, match="closed the comm"):
            subscribed.wait(lambda m: False, timeout=10)
        execute(kernel, MAKE_RECORD.format(name="after_unregister"))
        refused = Panel(kernel, hello())
        with pytest.raises(AssertionError, match="closed the comm"):
            refused.wait(lambda m: m["type"] == "hello", timeout=10)
    finally:
        execute(kernel, "tilelab.bridge.register(get_ipython()); tilelab.bridge.register(get_ipython())")

    panel = Panel(kernel, hello())
    assert panel.wait(lambda m: m["type"] == "hello")["type"] == "hello"
    panel.close()


MAKE_TUNE_RESULT = """
from tilelab.registry import default_registry
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus

result = TuneResult(kernel_name="tuned_gemm", configs=({"block_M": 64}, {"block_M": 128}), swept=("block_M",), device="cpu")
result.add(TuneRow(0, {"block_M": 64}, TuneStatus.OK, latency_ms=0.5))
result.add(TuneRow(1, {"block_M": 128}, TuneStatus.COMPILE_ERROR, error="too much shared memory"))
default_registry().track_tuning(result)
"""


def test_a_tuning_run_comes_with_its_best_config_and_table(kernel):
    execute(kernel, MAKE_TUNE_RESULT)
    panel = Panel(kernel)
    run = next(t for t in panel.request({"v": PROTOCOL_VERSION, "type": "list"})["tuning"] if t["name"] == "tuned_gemm")

    detail = panel.request({"v": PROTOCOL_VERSION, "type": "get", "kind": "tuning", "id": run["id"], "html": True})

    assert (run["done"], run["total"], run["failed"]) == (2, 2, 1)
    assert (run["best_config"], run["best_latency_ms"]) == ({"block_M": 64}, 0.5)
    assert detail["type"] == "item", detail
    assert "<table" in detail["html"] and "too much shared memory" in detail["html"]
    assert "<script" not in detail["html"].lower()
    panel.close()


@pytest.mark.skipif(not (REPO / "tilelab" / "magic.py").exists(), reason="the %%tilelang magic is not written yet")
def test_load_ext_tilelab_registers_the_comm_target():
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3", cwd=str(REPO))
    try:
        execute(client, "%load_ext tilelab")
        panel = Panel(client, hello())
        assert panel.wait(lambda m: m["type"] == "hello", timeout=60)["type"] == "hello"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


# -- without a kernel ---------------------------------------------------------
def test_register_is_a_no_op_without_a_kernel():
    class Shell:
        kernel = None

    register(Shell())
    unregister(Shell())
    register(object())


def answers(message, registry: Registry | None = None) -> list[dict]:
    """What a session says back to ``message``."""
    sent: list[dict] = []
    BridgeSession(sent.append, registry or Registry()).handle(message)
    return sent


def runs_of(name: str, statuses: list[Status]) -> Registry:
    """A registry holding one run of ``name`` per status, a second apart, oldest first."""
    registry = Registry()
    for number, status in enumerate(statuses):
        registry.add(replace(sample_record(name), status=status, created=1_000.0 + number, id=f"{name}-{number + 1}"))
    return registry


def test_records_list_with_their_run_number_time_and_current_marker():
    registry = runs_of("gemm", [Status.OK, Status.FAILED, Status.OK])
    registry.add(replace(sample_record("other"), created=999.0, id="other-1"))

    (listed,) = answers({"v": PROTOCOL_VERSION, "type": "list"}, registry)

    facts = {r["id"]: (r["run"], r["created"], r["current"], r["status"]) for r in listed["records"]}
    assert facts == {
        "gemm-1": (1, 1000.0, False, "ok"),
        "gemm-2": (2, 1001.0, False, "failed"),
        "gemm-3": (3, 1002.0, True, "ok"),
        "other-1": (1, 999.0, True, "ok"),
    }


def test_clear_forgets_everything_and_pushes_the_empty_list_to_subscribers():
    registry = runs_of("gemm", [Status.OK, Status.OK])
    pushed: list[dict] = []
    watcher = BridgeSession(pushed.append, registry)
    watcher.handle({"v": PROTOCOL_VERSION, "type": "subscribe"})

    (reply,) = answers({"v": PROTOCOL_VERSION, "type": "clear", "seq": 5}, registry)

    assert (reply["type"], reply["seq"], reply["records"], reply["tuning"]) == ("list", 5, [], [])
    assert registry.records() == []
    assert pushed[-1] == {"v": PROTOCOL_VERSION, "type": "list", "records": [], "tuning": []}


def test_open_answers_a_live_view_bundle_and_reuses_the_widget_already_shown():
    pytest.importorskip("anywidget")
    from tilelab.views import record_view

    registry = runs_of("gemm", [Status.OK])
    shown = record_view(registry.get("gemm-1")).widget  # what the notebook's output shows

    (first,) = answers({"v": PROTOCOL_VERSION, "type": "open", "kind": "record", "id": "gemm-1", "seq": 1}, registry)
    (second,) = answers({"v": PROTOCOL_VERSION, "type": "open", "kind": "record", "id": "gemm-1", "seq": 2}, registry)

    assert first["type"] == "view" and first["summary"]["run"] == 1
    if first["bundle"] is None:  # no built front-end here: the panel falls back to the snapshot
        assert "bundle is missing" in first["problem"]
        return
    widget_view = first["bundle"]["application/vnd.jupyter.widget-view+json"]
    assert widget_view["model_id"] == shown.model_id == second["bundle"][WIDGET_MIME]["model_id"]
    assert set(first["bundle"]) == {WIDGET_MIME, "text/plain"} and first["problem"] is None


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"type": "open", "kind": "record", "id": "nope"}, "not_found"),
        ({"type": "open", "kind": "layout", "id": "gemm-1"}, "invalid"),
        ({"type": "open", "kind": "record"}, "invalid"),
    ],
)
def test_open_refuses_unknown_items_and_malformed_requests(message, code):
    (reply,) = answers({"v": PROTOCOL_VERSION, **message}, runs_of("gemm", [Status.OK]))

    assert (reply["type"], reply["code"]) == ("error", code)


@pytest.mark.parametrize("kind", ["run_cell", "change", "_on_change", "__init__", "close"])
def test_the_session_answers_an_unknown_type_with_an_invalid_error_and_a_warning(caplog, kind):
    with caplog.at_level(logging.WARNING, logger="tilelab.bridge"):
        sent = answers({"v": PROTOCOL_VERSION, "type": kind, "code": "import os", "seq": 4})

    assert [(m["type"], m["code"], m["seq"]) for m in sent] == [("error", "invalid", 4)]
    assert f"unknown type {kind!r}" in caplog.text


@pytest.mark.parametrize("version", [True, "2", 2.0, None, [2], 1])
def test_the_version_must_be_the_integer_protocol_version(version):
    sent = answers({"v": version, "type": "hello", "seq": 3})

    assert [(m["type"], m["code"], m["seq"]) for m in sent] == [("error", "version", 3)]
    assert sent[0]["supported"] == [PROTOCOL_VERSION] == [2]


@pytest.mark.parametrize("seq", ["1", 1.5, True, None, 2**60, [1]])
def test_a_seq_that_is_not_a_safe_integer_is_refused_and_not_echoed(seq):
    sent = answers({"v": PROTOCOL_VERSION, "type": "hello", "seq": seq})

    assert [(m["type"], m["code"]) for m in sent] == [("error", "invalid")]
    assert "seq" not in sent[0] and "seq" in sent[0]["message"]


def test_a_huge_id_or_type_is_never_echoed_or_logged_whole(caplog):
    huge = "x" * 10_000_000

    with caplog.at_level(logging.WARNING, logger="tilelab.bridge"):
        missing = answers({"v": PROTOCOL_VERSION, "type": "get", "kind": "record", "id": huge, "seq": 1})
        unknown = answers({"v": PROTOCOL_VERSION, "type": huge, "seq": 2})
        bad_seq = answers({"v": PROTOCOL_VERSION, "type": "hello", "seq": huge})
        bad_version = answers({"v": huge, "type": "hello"})

    for reply in (*missing, *unknown, *bad_seq, *bad_version):
        assert reply["type"] == "error" and len(reply["message"]) < 400, reply["message"][:100]
    assert missing[0]["code"] == "not_found" and "10000002 characters" in missing[0]["message"]
    assert len(caplog.text) < 1000


def test_closing_the_session_stops_the_pushes():
    sent: list[dict] = []
    registry = Registry()
    session = BridgeSession(sent.append, registry)
    session.handle({"v": PROTOCOL_VERSION, "type": "subscribe"})

    session.close()
    registry.track_tuning(type("Run", (), {"id": "r", "summary": lambda self: {"id": "r"}})())

    assert [m["type"] for m in sent] == ["list"]
