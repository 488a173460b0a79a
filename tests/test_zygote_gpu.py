"""On a GPU host the zygote forks the compile workers too, and they compile what spawned workers compile."""

from __future__ import annotations

import pytest

import tilelab
from tilelab.tune.pool import session_pool

pytestmark = pytest.mark.gpu

M = N = K = 1024


def _sweep():
    import torch
    from tune_kernels import gemm

    return tilelab.tune(
        gemm, M, N, K,
        block_M=tilelab.choices([64, 128]), block_N=tilelab.choices([64, 128]),
        reference=lambda a, b: (a.float() @ b.float()).to(torch.float16),
        workers=2, rebench=0, db=":memory:",
    )  # fmt: skip


def _compiled(result) -> dict:
    """Per config: TileLang's cache key (its TIR, target and options) and the machine code's resources."""
    return {
        tuple(sorted(row.config.items())): (row.status, row.cache_key, row.registers, row.spills, row.shared_bytes)
        for row in result.rows.values()
    }


def test_the_zygote_forks_the_workers_on_a_gpu_host_and_they_compile_what_spawned_workers_do(monkeypatch, tmp_path):
    session_pool().shutdown()
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "forked"))  # a cold cache and a zygote of its own
    forked = _sweep()
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "spawned"))
    monkeypatch.setenv("TILELAB_ZYGOTE", "0")
    session_pool().shutdown()
    spawned = _sweep()
    session_pool().shutdown()

    assert forked.timeline_record.worker_start()["forked"] == 2, forked.timeline_summary()
    assert spawned.timeline_record.worker_start()["spawned"] == 2
    assert all(row.ok and row.cache_key and row.registers for row in forked.rows.values())
    assert _compiled(forked) == _compiled(spawned)
