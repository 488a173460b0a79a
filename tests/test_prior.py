"""The static prior of a search: CUDA configs ranked from the elaborated kernel alone (no lowering, no nvcc)."""

from __future__ import annotations

import itertools

from kernels import flash_attention, matmul
from search_kernels import axpy_repeat

from tilelab import _tilelang as tl
from tilelab.targets import resolve_target
from tilelab.tune.prior import FRAGMENT_WORDS_LIMIT, static_order
from tilelab.tune.result import TuneRow, TuneStatus
from tilelab.tune.search import SearchSettings, StudyFeed

HOPPER = resolve_target("sm_90")
GEMM_SPACE = {"block_M": [64, 128, 256], "block_N": [64, 128, 256], "block_K": [32, 64], "threads": [128, 256]}


def _todo(space: dict) -> list[tuple[int, dict]]:
    return list(enumerate(dict(zip(space, values, strict=True)) for values in itertools.product(*space.values())))


def test_fragment_words_per_thread_are_the_accumulators_a_thread_holds():
    def words(**config):
        func, _ = tl.elaborate(matmul, (), config, HOPPER.tvm_target())
        return tl.fragment_words_per_thread(func)

    assert words(block_M=128, block_N=256, threads=256) == 128 * 256 / 256  # one fp32 accumulator each
    assert words(block_M=128, block_N=256, threads=128) == 256 > FRAGMENT_WORDS_LIMIT  # over 255 registers: it spills


def test_the_gemm_space_puts_the_largest_tiles_that_fit_in_registers_first_and_spilling_ones_last():
    todo = _todo(GEMM_SPACE)
    config = dict(todo)

    order = static_order(matmul, (4096, 4096, 4096), {"num_stages": 3}, todo, HOPPER, seed=0)

    first = [config[index] for index in order[:4]]
    assert len(order) == len(todo)
    assert {(c["block_M"], c["block_N"], c["threads"]) for c in first} == {(128, 256, 256), (256, 128, 256)}
    spilling = {i for i, c in todo if c["block_M"] * c["block_N"] / c["threads"] > FRAGMENT_WORDS_LIMIT}
    assert set(order[-len(spilling) :]) == spilling


def test_the_attention_space_puts_128_by_128_tiles_on_256_threads_first():
    space = {"block_M": [64, 128], "block_N": [64, 128], "num_stages": [1, 2], "threads": [128, 256]}
    todo = _todo(space)
    config = dict(todo)

    order = static_order(flash_attention, (1, 32, 4096, 128, False), {}, todo, HOPPER, seed=0)

    assert [(config[i]["block_M"], config[i]["block_N"], config[i]["threads"]) for i in order[:2]] == [(128, 128, 256)] * 2


def test_a_cpu_kernel_has_no_prior():
    assert static_order(axpy_repeat, (), {}, _todo({"block": [32, 64]}), resolve_target(target="c"), seed=0) == []


def test_a_study_takes_its_first_batch_from_the_prior_then_asks_its_sampler():
    todo = _todo(GEMM_SPACE)
    configs = [c for _, c in todo]
    order = static_order(matmul, (4096, 4096, 4096), {"num_stages": 3}, todo, HOPPER, seed=0)
    settings = SearchSettings("optuna", "optuna", 8, 0, "tpe", True)

    feed = StudyFeed(configs, list(GEMM_SPACE), todo, [], settings, width=3, batch=False, prior=order)
    jobs = feed.take(3)

    assert [job.index for job in jobs] == order[:3] and {job.chosen_by for job in jobs} == {"static prior"}
    for job in jobs:
        feed.told(TuneRow(job.index, job.config, TuneStatus.OK, latency_ms=1.0 + job.trial))
    assert {job.chosen_by for job in feed.take(3)} == {"sampler"}
