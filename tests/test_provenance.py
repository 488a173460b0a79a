"""Provenance: who served a compile (TileLab's cell cache, TileLang's memory or disk cache, or a fresh compile),
TileLang's own key for it, and the key's components, on every record and shown in the Overview."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from htmlcheck import foreign_images, parse
from sample_records import EVIL, sample_record

import tilelab
from tilelab.provenance import CacheSource, KernelSource, KeyComponents, Provenance
from tilelab.records import KernelRecord
from tilelab.views.explorer import ExplorerView
from tilelab.views.overview.data import overview_data
from tilelab.views.overview.snapshot import overview_snapshot

TESTS = Path(__file__).parent

# Compiles one CPU config three times through TileLang's cache, as a tuning worker does, and prints what served each.
COMPILES = """
import json, sys
sys.path.insert(0, {tests!r})
from tilelab import _tilelang as tl
from tilelab.targets import resolve_target
from tune_kernels import scale_add

choice = resolve_target(None, "c")
for block in (64, 64, 32):
    func, options = tl.elaborate(scale_add, (), {{"block": block}}, choice.tvm_target())
    _, outcome = tl.compile_traced(func, options, choice)
    print(json.dumps({{"block": block, "served_by": outcome.served_by, "key": outcome.key.key, "entry": outcome.key.entry}}))
"""


def compile_in_a_fresh_process(cache: Path) -> list[dict]:
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", COMPILES.format(tests=str(TESTS))], env=env, capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_tilelab_computes_the_key_tilelang_files_a_kernel_under_and_tells_fresh_memory_and_disk_apart(tmp_path):
    first = compile_in_a_fresh_process(tmp_path / "cache")
    second = compile_in_a_fresh_process(tmp_path / "cache")

    assert [c["served_by"] for c in first] == ["fresh", "memory", "fresh"]
    assert [c["served_by"] for c in second] == ["disk", "memory", "disk"]
    kernels = Path(first[0]["entry"]).parent  # <cache>/<version>/<platform>-<machine>/kernels
    assert kernels.parents[2] == tmp_path / "cache" and kernels.name == "kernels"
    assert sorted(p.name for p in kernels.iterdir()) == sorted({c["key"] for c in first})  # TileLang's own folders
    assert all(Path(c["entry"]) == kernels / c["key"] for c in first)


def test_an_explored_record_keeps_who_served_it_and_its_key_components_through_json():
    from tune_kernels import scale_add

    record = tilelab.explore(scale_add, target="c", block=32)
    again = KernelRecord.from_json(record.to_json())

    provenance = again.provenance
    assert provenance == record.provenance
    assert provenance.served_by is CacheSource.FRESH and provenance.seconds > 0
    assert len(provenance.key) == 64 and provenance.entry.endswith(provenance.key)
    parts = provenance.components
    assert json.loads(parts.target)["kind"] == "c" and parts.tilelang_version == record.tilelang_version
    assert parts.out_idx == "[-1]" and parts.execution_backend == "cython"
    assert len(parts.tir) == 64 and parts.tir_structure.lstrip("-").isdigit() and len(parts.source) == 64
    assert provenance.source.text.count("def scale_add(") == 1
    assert "\n".join(provenance.source.function_lines).lstrip().startswith("@tilelang.jit")


def test_a_cell_cache_hit_says_so_and_keeps_the_key():
    record = replace(sample_record(), provenance=Provenance(CacheSource.FRESH, 0.5, "k" * 64, "/cache/" + "k" * 64))

    hit = record.with_cache_hit()

    assert hit.provenance.served_by is CacheSource.CELL and hit.provenance.key == record.provenance.key
    assert hit.provenance.text().startswith("TileLab cell cache")


def test_a_format_4_record_still_loads_without_provenance():
    payload = json.loads(sample_record().to_json())
    payload["format"] = 4
    del payload["record"]["provenance"]

    record = KernelRecord.from_json(json.dumps(payload))

    assert record.provenance is None
    assert "miss: compiled now" in overview_snapshot(overview_data(record))


def hostile_provenance() -> Provenance:
    parts = KeyComponents("a" * 64, "123", f'{{"kind": "cuda", "arch": "sm_90{EVIL}"}}', "c", {f"tl.{EVIL}": "True"}, (EVIL,),
                          "[-1]", "tvm_ffi", "0.1.15", "b" * 64)  # fmt: skip
    source = KernelSource(f"<cell {EVIL}>", f"def k():\n    pass  # {EVIL}\n", 1, 2)
    return Provenance(CacheSource.DISK, 0.01, "c" * 64, f"/cache/{EVIL}/" + "c" * 64, True, parts, source)


def test_the_overview_shows_the_cache_line_in_the_snapshot_and_the_widget_escaped():
    record = replace(sample_record(), provenance=hostile_provenance())
    view = ExplorerView(record)

    snapshot = parse(view.to_html())
    widget = parse(overview_snapshot(view.core.answer({"id": 1, "type": "overview"})))

    for tree in (snapshot, widget):
        [line] = tree.find_all("span", data_tilelab="provenance")
        assert line.all_text().startswith(f"TileLang disk cache (/cache/{EVIL}/")
        assert f"key {'c' * 12}" in line.all_text() and f"flags {EVIL}" in line.all_text()
        assert not foreign_images(tree) and not tree.find_all("script")
