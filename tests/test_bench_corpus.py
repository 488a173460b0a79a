"""``bench/corpus.py`` on a tiny examples tree shaped like TileLang's: kernels found, lowered both ways, counted."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tilelab

ROOT = Path(__file__).resolve().parent.parent

SMALL_GEMM = '''
import argparse

import tilelang
import tilelang.language as T
import torch


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=64, block_N=64, block_K=32, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main(size=256):
    kernel = matmul(size, size, size)
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(a, a), a @ a)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=256)
    main(parser.parse_args().size)
'''

ADD_AND_A_NEWER_API = '''
import not_installed_reference_library as reference  # only the reference needs it

import tilelang
import tilelang.language as T
import torch


@tilelang.jit(out_idx=[-1])
def add_one(n):
    @T.prim_func
    def add(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i] + 1

    return add


@tilelang.jit(out_idx=[-1])
def newer_api(n):
    @T.prim_func
    def scale(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            T.api_from_a_later_tilelang(A, B)

    return scale


def main():
    x = torch.ones(512, device="cuda")
    n = int(x.shape[0])  # a shape read from a tensor, as the examples do
    kernel, other = add_one(n), newer_api(n)
    assert torch.equal(kernel(x), reference.add_one(x))


if __name__ == "__main__":
    main()
'''

REUSES_ADD = '''
import tilelang  # noqa: F401

from example_add import add_one

if __name__ == "__main__":
    add_one(1024)
'''

CALLS_GEMM_BUT_IS_A_TEST = '''
from example_small_gemm import matmul

if __name__ == "__main__":
    matmul(64, 64, 64)
'''


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """One run of ``bench/corpus.py`` for sm_90 on a fake examples tree: (stdout, the JSON report)."""
    examples = tmp_path_factory.mktemp("tilelang") / "examples"
    for relative, source in {
        "gemm/example_small_gemm.py": SMALL_GEMM,
        "gemm/test_example_small_gemm.py": CALLS_GEMM_BUT_IS_A_TEST,
        "elementwise/example_add.py": ADD_AND_A_NEWER_API,
        "elementwise/example_reuse.py": REUSES_ADD,
    }.items():
        (examples / relative).parent.mkdir(parents=True, exist_ok=True)
        (examples / relative).write_text(textwrap.dedent(source))
    out, records = examples.parent / "corpus.json", examples.parent / "records"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "corpus.py"), str(examples.parent), "--arch", "sm_90", "--json", str(out),
         "--records", str(records)],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout, json.loads(out.read_text())


def test_corpus_finds_each_kernel_once_with_the_arguments_its_example_gave(corpus):
    _, report = corpus

    kernels = {row["kernel"]: row for row in report["rows"]}

    assert sorted(kernels) == ["elementwise/example_add.py::add_one", "elementwise/example_add.py::newer_api", "gemm/example_small_gemm.py::matmul"]
    assert kernels["gemm/example_small_gemm.py::matmul"]["arguments"] == "arg0=256, arg1=256, arg2=256"
    assert kernels["elementwise/example_add.py::add_one"]["arguments"] == "arg0=512"
    assert kernels["gemm/example_small_gemm.py::matmul"]["device_kernels"] == 1
    assert [f["file"] for f in report["files"]] == ["elementwise/example_add.py", "elementwise/example_reuse.py", "gemm/example_small_gemm.py"]
    assert [f["kernels"] for f in report["files"]] == [2, 0, 1]


def test_corpus_counts_a_newer_tilelang_api_as_a_tilelang_failure_not_a_tilelab_one(corpus):
    stdout, report = corpus

    summary = report["summary"][0]
    newer = next(row for row in report["rows"] if row["kernel"].endswith("::newer_api"))

    assert (summary["arch"], summary["tried"], summary["tilelang_ok"]) == ("sm_90", 3, 2)
    assert summary["tilelab_ok"] == 2 and summary["tilelab_only_failures"] == 0
    assert not newer["tilelang_ok"] and "api_from_a_later_tilelang" in newer["tilelang_error"]
    assert "| sm_90 | 3 | 2 | 2 | 0 |" in stdout


def test_corpus_overhead_is_explore_cpu_time_over_plain_cpu_time_for_kernels_both_lowered(corpus):
    _, report = corpus

    lowered = [row for row in report["rows"] if row["tilelang_ok"] and row["tilelab_ok"]]

    assert len(lowered) == 2
    for row in lowered:
        assert row["ratio"] == pytest.approx(row["tilelab_cpu_s"] / row["tilelang_cpu_s"])
        assert row["wall_ratio"] == pytest.approx(row["tilelab_s"] / row["tilelang_s"])
        assert 0 < row["elaborate_s"] < row["tilelang_s"]
    assert report["summary"][0]["median_ratio"] > 0


def test_corpus_counts_the_cuda_lines_the_source_map_links_and_keeps_each_record(corpus):
    stdout, report = corpus

    gemm = next(row for row in report["rows"] if row["kernel"] == "gemm/example_small_gemm.py::matmul")
    explored = [row for row in report["rows"] if row["tilelab_ok"]]
    record = tilelab.load(next(Path(report["path"]).parent.glob("records/sm_90/*small_gemm*matmul.json")))

    assert 0 < gemm["linked_lines"] <= gemm["cuda_lines"] and sum(gemm["linked_by"].values()) == gemm["linked_lines"]
    assert gemm["linked_lines"] <= len(record.source.source_map.links) and len(record.launches) == gemm["device_kernels"]
    share = sum(row["linked_lines"] for row in explored) / sum(row["cuda_lines"] for row in explored)
    assert report["summary"][0]["linked_share"] == pytest.approx(share)
    assert f"| {share:.1%} |" in stdout
