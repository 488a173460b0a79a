"""The one door to TileLang (tilelab._tilelang): each of TileLang's quirks handled once, for capture and tuning alike."""

from __future__ import annotations

import logging

from kernels import autotuned_matmul, matmul

from tilelab import _tilelang as tl
from tilelab.targets import resolve_target


def test_the_kernels_out_idx_is_never_handed_to_tilelang_itself():
    _, options = tl.elaborate(matmul, (), {"M": 256, "N": 256, "K": 256}, resolve_target("sm_80").tvm_target())

    assert options.out_idx == [-1] and options.out_idx is not matmul.out_idx  # TileLang rewrites it in place


def test_an_autotune_configs_pass_configs_become_pass_configs_not_arguments():
    config = {"block_M": 64, "block_N": 64, "pass_configs": {"tl.disable_warp_specialized": True}}

    func, options = tl.elaborate(autotuned_matmul, (), config, resolve_target("sm_90").tvm_target())

    assert options.pass_configs["tl.disable_warp_specialized"] is True
    assert func.attrs["global_symbol"] == "gemm"


def test_what_a_kernel_is_is_decided_in_one_place():
    assert tl.is_kernel(matmul) and tl.is_kernel(autotuned_matmul) and not tl.is_kernel(print)
    assert tl.is_autotuned(autotuned_matmul) and not tl.is_autotuned(matmul)
    assert tl.kernel_name(autotuned_matmul) == "autotuned_matmul"
    assert tl.python_function(autotuned_matmul).__name__ == "autotuned_matmul"
    assert [c["block_M"] for c in tl.autotune_configs(autotuned_matmul)] == [64, 128, 128]


def test_a_sweeps_cache_hits_do_not_flood_the_log():
    # A sweep's parent compiles each config a worker already built: TileLang's memory-cache hit, warned per config.
    choice = resolve_target("sm_80")  # nvcc builds it here without a GPU

    def elaborated():
        return tl.elaborate(matmul, (), {"M": 256, "N": 256, "K": 256}, choice.tvm_target())

    warned: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: warned.append(record.getMessage())
    cache_log = logging.getLogger("tilelang.cache.kernel_cache")  # tilelang's loggers do not propagate
    cache_log.addHandler(handler)
    try:
        tl.compile_cached(*elaborated(), choice)
        tl.compile_cached(*elaborated(), choice)
        quiet = list(warned)
        import tilelang

        func, options = elaborated()
        tilelang.compile(func, target=choice.tvm_target(), out_idx=options.out_idx)
    finally:
        cache_log.removeHandler(handler)

    assert not [m for m in quiet if "in memory cache" in m]
    assert [m for m in warned if "in memory cache" in m]  # TileLang itself still says it
