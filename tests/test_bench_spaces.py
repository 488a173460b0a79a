"""The benchmark suite's search spaces, budget planner and report, and its new kernels lowered for Hopper (no GPU)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import suite_budget  # noqa: E402  (bench/ is not a package)
import suite_report  # noqa: E402
import suite_spaces  # noqa: E402

GEMM_SHAPES = [(4096, 1024, 8192), (4096, 8192, 8192), (4096, 28672, 8192), (8192, 8192, 28672)]
ATTENTION = [(seq, causal) for seq in (512, 1024, 4096) for causal in (False, True)]


@pytest.mark.parametrize("shape", GEMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_gemm_shape_searches_at_least_200_configs_that_fit_a_hopper_block(shape):
    space = suite_spaces.gemm_space(*shape)

    assert len(space) >= 200
    assert len({json.dumps(c, sort_keys=True) for c in space}) == len(space)
    for config in space:
        assert suite_spaces.gemm_shared_bytes(config) + suite_spaces.BARRIER_BYTES <= suite_spaces.SHARED_LIMIT, config
        assert config["block_M"] * config["block_N"] / config["threads"] <= suite_spaces.ACCUMULATOR_WORDS, config
        assert shape[2] % (config["split_k"] * config["block_K"]) == 0, config


def test_gemm_spaces_share_their_keys_so_one_shapes_winner_can_seed_the_next():
    keys = {tuple(config) for shape in GEMM_SHAPES for config in suite_spaces.gemm_space(*shape)}

    assert keys == {("block_M", "block_N", "block_K", "num_stages", "threads", "swizzle", "policy", "ws", "split_k")}


def test_split_k_is_searched_on_skinny_and_long_k_shapes_only():
    def splits(shape):
        return {config["split_k"] for config in suite_spaces.gemm_space(*shape)}

    assert splits((4096, 1024, 8192)) == splits((8192, 8192, 28672)) == {1, 2, 4}
    assert splits((4096, 8192, 8192)) == {1}


def test_gemm_space_offers_every_schedule_tile_and_swizzle_choice():
    counts = suite_spaces.value_counts(suite_spaces.gemm_space(8192, 8192, 8192))

    assert set(counts["ws"]) == {"auto", "role_based", "off"}
    assert set(counts["block_K"]) == {"32", "64", "128"} and set(counts["num_stages"]) == {"2", "3", "4", "5"}
    assert "256" in counts["block_N"] and "256" in counts["block_M"] and "0" in counts["swizzle"]
    assert set(counts["policy"]) == {"FullRow", "Square"}


def test_one_consumer_warpgroup_is_never_swept_over_warp_policies_that_give_the_same_kernel():
    space = suite_spaces.gemm_space(4096, 8192, 8192)

    assert all(config["policy"] == "FullRow" for config in space if config["threads"] == 128)


def test_the_role_based_schedule_counts_the_c_tile_it_keeps_apart_from_the_pipeline():
    config = {"block_M": 128, "block_N": 256, "block_K": 64, "num_stages": 4, "split_k": 1}

    assert suite_spaces.gemm_shared_bytes({**config, "ws": "auto"}) == 4 * 384 * 64 * 2
    assert suite_spaces.gemm_shared_bytes({**config, "ws": "role_based"}) == 4 * 384 * 64 * 2 + 128 * 256 * 2


@pytest.mark.parametrize(("seq", "causal"), ATTENTION)
def test_every_attention_problem_searches_at_least_64_configs(seq, causal):
    space = suite_spaces.attention_space(seq, causal)

    assert len(space) >= 64
    assert all(seq % config["block_N"] == 0 for config in space)
    assert all(suite_spaces.attention_shared_bytes(config) + suite_spaces.BARRIER_BYTES <= suite_spaces.SHARED_LIMIT for config in space)


def test_causal_attention_keeps_only_the_schedule_that_lowers_with_its_mask():
    causal = suite_spaces.value_counts(suite_spaces.attention_space(4096, True))
    plain = suite_spaces.value_counts(suite_spaces.attention_space(4096, False))

    assert set(causal["ws"]) == {"auto"} and set(causal["heavy_first"]) == {"True", "False"}
    assert set(plain["ws"]) == {"auto", "role_based", "off"} and set(plain["heavy_first"]) == {"True"}


def test_the_planner_gives_every_problem_left_the_same_count_and_the_big_ones_more_seconds():
    model = suite_budget.CostModel(compile_s=4.5, workers=16, bench_s=0.3, check_ns=8.0, fixed_s=15.0)

    small = model.plan([4096 * 1024, 8192 * 28672], seconds_left=400.0, space=700)
    big = model.plan([8192 * 28672], seconds_left=400.0 - small.expected_s, space=700)

    assert small.budget == int((400 - 30) / (model.per_config_s(4096 * 1024) + model.per_config_s(8192 * 28672)))
    assert big.budget >= small.budget and big.per_config_s > small.per_config_s


def test_the_planner_never_asks_for_more_configs_than_the_space_nor_fewer_than_its_minimum():
    model = suite_budget.CostModel(compile_s=4.5, workers=16, bench_s=0.3, check_ns=0.0, fixed_s=15.0)

    assert model.plan([1000], seconds_left=10_000.0, space=40).budget == 40
    assert model.plan([1000], seconds_left=5.0, space=40).budget == suite_budget.MIN_BUDGET


def test_only_the_first_problem_pays_for_starting_the_compile_workers():
    model = suite_budget.CostModel(compile_s=4.5, workers=16, bench_s=0.5, check_ns=0.0, fixed_s=10.0, startup_s=15.0)

    first = model.plan([1000, 1000], seconds_left=200.0, space=700)
    model.learn(outputs=1000, configs=first.budget, seconds=first.expected_s)
    second = model.plan([1000], seconds_left=200.0 - first.expected_s, space=700)

    assert first.expected_s == pytest.approx(25.0 + first.budget * 0.5)
    assert model.scale == pytest.approx(1.0) and second.expected_s == pytest.approx(10.0 + second.budget * 0.5)


def test_the_planner_learns_from_a_problem_that_took_twice_its_estimate():
    model = suite_budget.CostModel(compile_s=4.5, workers=16, bench_s=0.5, check_ns=0.0, fixed_s=10.0)
    before = model.per_config_s(1000)

    model.learn(outputs=1000, configs=40, seconds=10.0 + 2 * 40 * before)

    assert model.scale == pytest.approx(2.0)
    assert model.per_config_s(1000) == pytest.approx(2 * before)


def test_a_section_run_later_is_merged_into_the_devices_report_keeping_the_other_section(tmp_path):
    env = {"device": "NVIDIA H100 80GB HBM3", "driver": "1", "cuda": "13.0", "nvcc": None, "torch": "2", "tilelang": "0.1.15",
           "python": "3.12", "cpus": 16, "date": "2026-11-26"}  # fmt: skip

    def report(section, speedup):
        row = {"section": section, "problem": f"{section} 1", "status": "ok", "speedup": speedup, "space": 300, "budget": 50}
        return {"env": env, "runs": {section: {"budget_s": 480.0, "wall_s": 470.0, "mode": "GPU", "check": "every"}}, "rows": [row]}

    suite_report.write_results(tmp_path, report("attention", 1.1))
    json_path, md_path = suite_report.write_results(tmp_path, report("gemm", 0.9))

    merged = json.loads(json_path.read_text())
    assert json_path.name == "results-h100.json" and md_path.name == "results-h100.md"
    assert merged["sections"] == ["gemm", "attention"] and [r["section"] for r in merged["rows"]] == ["gemm", "attention"]
    assert {g["section"]: g["met"] for g in merged["goals"]} == {"gemm": False, "attention": True}


def test_device_names_become_short_file_names():
    assert suite_report.device_slug("NVIDIA H200") == "h200"
    assert suite_report.device_slug("NVIDIA H100 80GB HBM3") == "h100"
    assert suite_report.device_slug("none (lowered for sm_90a)") == "cpu"
    assert suite_report.device_slug("NVIDIA A100-SXM4-80GB") == "a100-sxm4-80gb"


def test_config_labels_name_the_schedule_and_split_and_leave_out_defaults():
    config = {"block_M": 128, "block_N": 256, "swizzle": 0, "policy": "Square", "ws": "off", "split_k": 2}

    assert suite_report._config(config) == "M=128 N=256 swz=0 Square ws=off split-K 2"
    assert suite_report._config({**config, "ws": "auto", "split_k": 1}) == "M=128 N=256 swz=0 Square"


@pytest.mark.slow
def test_the_gemms_new_schedules_lower_for_hopper_as_their_pass_configs_say():
    import suite_kernels

    import tilelab

    small = {"block_M": 64, "block_N": 128, "block_K": 64, "num_stages": 2, "threads": 128}
    role = tilelab.explore(suite_kernels.matmul, 128, 256, 256, arch="sm_90a", machine_code=False, ws="role_based", **small)
    split = tilelab.explore(suite_kernels.matmul, 128, 256, 256, arch="sm_90a", machine_code=False, split_k=2, **small)

    assert "C_shared_full" in role.source.device  # the role-based scheduler's own barriers: the producer stores C
    assert "gemm_split_k_kernel_1" in split.source.device  # the second launch adds the partial products
    assert "W[" not in split.source.device and "float* __restrict__ W" in split.source.device
