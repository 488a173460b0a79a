"""The Source tab: one dict (``source_data``) that the snapshot and the live tab both render."""

from __future__ import annotations

import ast
import gzip
import json
from dataclasses import replace
from pathlib import Path

from htmlcheck import parse
from sample_records import DEVICE, KERNEL_SOURCE, failed_record, sample_record

import tilelab
from tilelab.changes import record_changes
from tilelab.records import FoundThrough, KernelRecord
from tilelab.source_map import with_source_map
from tilelab.views.explorer import ExplorerView
from tilelab.views.html import sanitiser_proof
from tilelab.views.source import HOW, binary_note, source_data, source_host, source_snapshot

DATA = Path(__file__).parent / "data"


def _quickstart() -> KernelRecord:
    """The quickstart GEMM saved in format 5: no source map in it."""
    with gzip.open(DATA / "quickstart_gemm.record.json.gz", "rt") as file:
        return KernelRecord.from_json(file.read())


def _source_section(html: str) -> str:
    """The snapshot's ``<details data-section='source'>``, up to the next section."""
    start = html.index("<details data-section='source'")
    return html[start : html.find("<details data-section=", start + 1)]


def test_the_source_data_carries_both_texts_the_links_and_why_they_hold():
    data = source_data(sample_record())

    assert [pane["text"] for pane in data["panes"]] == [KERNEL_SOURCE, DEVICE]
    assert [pane["language"] for pane in data["panes"]] == ["python", "cuda"]
    assert [4, 5, "directive"] in data["links"] and data["how"]["directive"]
    assert data["ops"]["6"] == "T.gemm" and data["has_host"]
    assert set(HOW) == {how.value for how in FoundThrough}


def test_a_cpu_kernels_device_code_is_called_c_in_the_tab_its_snapshot_and_the_run_to_run_line():
    cuda = sample_record()
    cpu = replace(cuda, source=replace(cuda.source, language="c"))
    edited = replace(cpu, source=replace(cpu.source, device=cpu.source.device + "extra();\n"))

    assert source_data(cuda)["words"] == ["cell line", "CUDA line"]
    assert source_data(cpu)["words"] == ["cell line", "C line"]
    assert source_host(cpu)["language"] == "c" and source_host(cuda)["language"] == "cuda"
    (table,) = parse(f"<div>{source_snapshot(source_data(cpu))}</div>").find_all("table", data_tilelab="line-links")
    assert "C lines" in table.all_text() and "CUDA" not in table.all_text()
    changes = record_changes(cpu, edited)
    assert "C +1/-0 lines" in changes.headline() and "CUDA" not in changes.headline()
    assert "C lines: +1 -0" in changes.lines()
    assert "no change in passes, C," in record_changes(cpu, cpu).headline()


def test_the_source_data_is_plain_json():
    data = source_data(sample_record())

    assert json.loads(json.dumps(data)) == data


def test_host_code_travels_only_when_asked_for():
    record = sample_record()

    assert "int main()" not in str(source_data(record))
    assert source_host(record)["text"].startswith("// host")


def test_a_record_without_source_says_so():
    data = source_data(failed_record())

    assert data["panes"] == [] and "stopped before code generation" in data["note"]
    assert binary_note(failed_record()) == "No machine code: the compile failed before there was CUDA to build."
    assert "No generated source." in source_snapshot(data) and "before there was CUDA to build" in source_snapshot(data)


def test_the_note_on_machine_code_points_to_it_or_says_it_was_not_built_yet_as_the_machine_code_tab_does():
    with_machine_code = _quickstart()
    without = replace(with_machine_code, machine_code=None)

    assert binary_note(with_machine_code) == "PTX / SASS, registers and spills: see Machine code."
    assert "not built yet when this was shown" in binary_note(without)
    assert "see Machine code." in _source_section(tilelab.to_html(with_machine_code))


def test_the_snapshot_shows_both_texts_tints_linked_lines_and_lists_the_links():
    tree = parse(f"<div>{source_snapshot(source_data(sample_record()))}</div>")

    (python,) = tree.find_all("pre", data_tilelab="python")
    (device,) = tree.find_all("pre", data_tilelab="device")
    assert "T.gemm(A_shared, B, C)" in python.all_text() and "mma(A_shared, B);" in device.all_text()
    assert len([n for n in device.find_all("span") if "background" in (n.attrs.get("style") or "")]) == 4
    (table,) = tree.find_all("table", data_tilelab="line-links")
    assert "4–5" in table.all_text()


def test_the_snapshot_is_rendered_from_the_data_dict_alone():
    record = sample_record()
    data = json.loads(json.dumps(source_data(record)))  # what a browser or a file would hold

    assert sanitiser_proof(source_snapshot(data)) in _source_section(tilelab.to_html(record))


def test_the_snapshot_module_imports_no_records():
    tree = ast.parse((Path(tilelab.__file__).parent / "views" / "source" / "snapshot.py").read_text())
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]

    forbidden = [name for name in imported if name and name.startswith(("tilelab.records", "tilelab.source_map"))]
    assert imported and not forbidden


def test_the_live_tab_receives_the_same_dict():
    record = sample_record()
    core = ExplorerView(record).core

    reply = core.answer({"id": 8, "type": "source"})

    assert {key: value for key, value in reply.items() if key not in ("id", "type")} == source_data(record)
    assert core.answer({"id": 9, "type": "host"})["text"] == source_host(record)["text"]


def test_an_old_record_without_a_map_renders_its_source_as_one_with_it():
    old = _quickstart()
    new = KernelRecord.from_json(replace(old, source=with_source_map(old.source)).to_json())

    assert old.source.source_map is None and new.source.source_map is not None
    assert source_data(old) == source_data(new)
    assert sanitiser_proof(source_snapshot(source_data(new))) in _source_section(tilelab.to_html(old))
