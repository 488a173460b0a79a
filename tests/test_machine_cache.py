"""TileLab's machine-code cache: a second build of the same device source is a file read, not an nvcc run."""

from __future__ import annotations

import gzip
import importlib.util
import os
import time
from dataclasses import replace

import pytest
from cells import gemm_cell

import tilelab
from tilelab.machine import cache as machine_cache
from tilelab.machine.build import find_tool, machine_code, start_machine_code

pytestmark = pytest.mark.skipif(find_tool("nvcc") is None, reason="needs nvcc")

TINY = 'extern "C" __global__ void __launch_bounds__(64) add_one(float* x) { x[threadIdx.x] += 1.0f; }\n'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory of this test's own."""
    monkeypatch.setenv("TILELAB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "machine"


@pytest.fixture
def logged_nvcc(tmp_path, monkeypatch):
    """nvcc found first on PATH is a script that keeps a copy of each source it builds, its arguments on the first
    line, then runs the real nvcc; returns the folder of copies (see :func:`nvcc_runs`)."""
    real, runs, bin_dir = find_tool("nvcc"), tmp_path / "nvcc-runs", tmp_path / "bin"
    runs.mkdir()
    bin_dir.mkdir()
    script = bin_dir / "nvcc"
    script.write_text(
        "#!/bin/sh\nfor source; do :; done\n"
        f'case "$source" in *.cu) {{ echo "// nvcc $*"; cat "$source"; }} > "{runs}/$$.cu";; esac\n'
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    find_tool.cache_clear()
    yield runs
    find_tool.cache_clear()


def nvcc_runs(runs, kernel: str = "add_one") -> list[str]:
    """The arguments of each nvcc run that built a source defining ``kernel``. Only those: a kernel an earlier test
    explored may still be building in the background (TileLab builds machine code in a thread), through this nvcc."""
    copies = [path.read_text() for path in runs.glob("*.cu")]
    return [copy.partition("\n")[0] for copy in copies if f" {kernel}(" in copy]


def nvcc_builds(runs, kernel: str = "add_one") -> int:
    return sum("--cubin" in arguments for arguments in nvcc_runs(runs, kernel))


def without_seconds(machine):
    return replace(machine, seconds=0.0)


def test_one_nvcc_run_gives_the_ptx_the_cubin_and_the_resources(cache, logged_nvcc):
    machine = machine_code(TINY, "sm_80")

    (arguments,) = nvcc_runs(logged_nvcc)
    assert "--cubin" in arguments and "--keep-dir" in arguments
    assert ".entry add_one" in machine.ptx and machine.ptx_links and machine.sass_links
    assert machine.resources["add_one"].registers > 0


def test_a_second_build_of_the_same_source_comes_from_the_cache_without_running_nvcc(cache, logged_nvcc):
    first = machine_code(TINY, "sm_80")
    assert find_tool("nvcc") == str(logged_nvcc.parent / "bin" / "nvcc") and nvcc_builds(logged_nvcc) == 1

    second = machine_code(TINY, "sm_80")

    assert nvcc_builds(logged_nvcc) == 1
    assert without_seconds(second) == without_seconds(first) and first.instruction_counts["add_one"]["LDG"] == 1
    assert len(list(cache.glob("*/*.json.gz"))) == 1


def test_another_arch_or_flag_is_another_entry(cache):
    machine_code(TINY, "sm_80")
    machine_code(TINY, "sm_86")
    machine_code(TINY, "sm_80", fast_math=True)

    assert len(list(cache.glob("*/*.json.gz"))) == 3


def test_the_launch_applies_to_a_cached_build(cache, logged_nvcc):
    machine_code(TINY, "sm_80", dynamic_shared_bytes=0)

    machine = machine_code(TINY, "sm_80", dynamic_shared_bytes=65536, threads_per_block=1024)

    assert nvcc_builds(logged_nvcc) == 1
    resources = machine.resources["add_one"]
    assert resources.dynamic_shared_bytes == 65536 and resources.threads_per_block == 1024
    assert machine.occupancy["add_one"].threads_per_block == 1024


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda data: b"not gzip at all",
        lambda data: data[: len(data) // 2],  # a write cut short
        lambda data: gzip.compress(b'{"format": 1, "key": "another", "value": {}}'),
        lambda data: gzip.compress(b'{"format": 1, "key": "%s", "value": {"ptx": 1}}'),
    ],
    ids=["garbage", "truncated", "another-key", "wrong-shape"],
)
def test_a_corrupt_cache_entry_is_a_miss_and_is_built_again(cache, logged_nvcc, corrupt):
    first = machine_code(TINY, "sm_80")
    (entry,) = cache.glob("*/*.json.gz")
    entry.write_bytes(corrupt(entry.read_bytes()).replace(b"%s", entry.name.split(".")[0].encode()))

    again = machine_code(TINY, "sm_80")

    assert without_seconds(again) == without_seconds(first) and not again.error
    assert nvcc_builds(logged_nvcc) == 2
    machine_code(TINY, "sm_80")
    assert nvcc_builds(logged_nvcc) == 2  # the rebuilt entry is good again


def test_the_cache_is_trimmed_to_its_size_least_recently_used_first(cache, monkeypatch):
    sources = [TINY.replace("1.0f", f"{n}.0f") for n in range(3)]
    machine_code(sources[0], "sm_80")
    (oldest,) = cache.glob("*/*.json.gz")
    monkeypatch.setattr(machine_cache, "MAX_BYTES", 2 * oldest.stat().st_size + 100)

    for source in sources[1:]:
        time.sleep(0.01)
        machine_code(source, "sm_80")

    entries = list(cache.glob("*/*.json.gz"))
    assert len(entries) == 2 and oldest not in entries


def test_with_the_cache_off_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELAB_CACHE_DIR", "off")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    machine = machine_code(TINY, "sm_80")

    assert machine.available and not list(tmp_path.rglob("*.json.gz"))


def import_kernel(path, header: str, inline: str):
    """The GEMM of ``cells.gemm_cell`` as a module file, with ``header`` above it and ``inline`` after ``T.clear``."""
    source = gemm_cell(size=512, stages=2).replace("T.clear(C_local)", f"T.clear(C_local)  # {inline}")
    source = source.replace("def gemm(", "def gemm_edited(").replace("return gemm\n", "return gemm_edited\n")  # no other test's
    path.write_text(f"{header}\n{source}")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.matmul


def test_re_exploring_a_kernel_after_a_comment_only_edit_reuses_its_machine_code(cache, logged_nvcc, tmp_path):
    before = tilelab.explore(import_kernel(tmp_path / "gemm_before.py", "", "zero"), arch="sm_90")
    header = "# Two more comment lines\n# move every line below."

    after = tilelab.explore(import_kernel(tmp_path / "gemm_after.py", header, "zero the accumulator"), arch="sm_90")

    assert after.source.device == before.source.device
    assert without_seconds(after.machine_code) == without_seconds(before.machine_code)
    assert nvcc_builds(logged_nvcc, "gemm_edited_kernel") == 1  # the edit's explore ran no nvcc


def test_a_background_build_is_kept_in_the_cache_configured_when_it_was_asked_for(cache, logged_nvcc, tmp_path, monkeypatch):
    build = start_machine_code(TINY, "sm_80")
    monkeypatch.setenv("TILELAB_CACHE_DIR", str(tmp_path / "another"))  # a later cell (or test) points elsewhere

    build.result()

    assert len(list(cache.glob("*/*.json.gz"))) == 1 and not (tmp_path / "another").exists()
