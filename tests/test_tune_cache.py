"""A config compiled in one process loads from TileLang's disk cache in another (nvcc needed, no GPU)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile CUDA without a GPU"),
]

SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
from tilelab.targets import TargetChoice
from tilelab.tune.build import build
from tune_kernels import gemm

choice = TargetChoice({{"kind": "cuda", "arch": "sm_90a"}}, "sm_90a", True, "nvcc only")
for block in (64, 128):
    started = time.perf_counter()
    build(gemm, (256, 256, 256), {{"block_M": block, "block_N": block, "block_K": 32}}, choice)
    print(f"block {{block}}: {{time.perf_counter() - started:.3f}}", flush=True)
print("out_idx", gemm.out_idx)
"""


def run(tmp_path: Path) -> str:
    env = {**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "cache")}
    code = SCRIPT.format(tests=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=True)
    return done.stdout + done.stderr


def test_every_config_compiled_by_a_worker_is_a_disk_cache_hit_in_the_parent(tmp_path):
    run(tmp_path)  # the "worker": compiles both configs into the disk cache
    parent = run(tmp_path)
    assert "begins to compile" not in parent, parent
    assert "out_idx [-1]" in parent  # tilelang may normalise its copy, never the kernel's own list
