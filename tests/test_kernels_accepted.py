"""Kernels as the field writes them: @autotune-wrapped, several device kernels, reducers, over-limit launches."""

from __future__ import annotations

import json

import pytest
from kernels import autotuned_matmul, matmul, two_kernels
from reducer_kernels import row_sum, row_sum_epoch

import tilelab
from tilelab.errors import error_record
from tilelab.records import FORMAT_VERSION, KernelRecord, LayoutKind


def test_an_autotuned_kernel_is_explored_with_its_first_config_and_says_so():
    record = tilelab.explore(autotuned_matmul, arch="sm_80")

    assert record.ok and record.name == "autotuned_matmul"
    assert record.arguments["block_M"] == "64" and record.arguments["block_N"] == "64"
    assert record.launch.grid == (8, 8, 1)
    assert any("first of 3 configs" in warning for warning in record.warnings)


def test_an_autotuned_kernel_takes_explicit_config_values_without_a_note():
    record = tilelab.explore(autotuned_matmul, arch="sm_80", block_M=128, block_N=64)

    assert record.launch.grid == (8, 4, 1)
    assert not any("@autotune" in warning for warning in record.warnings)


def test_a_cell_defining_an_autotuned_kernel_is_explored_by_the_magic(ip):
    cell = '''
import tilelang
import tilelang.language as T

@tilelang.autotune(configs=[{"block_M": 64}, {"block_M": 128}])
@tilelang.jit(out_idx=[-1])
def scaled(N=1024, block_M=128):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block_M), threads=128) as bx:
            for i in T.Parallel(block_M):
                B[bx * block_M + i] = A[bx * block_M + i] * 2.0
    return main
'''
    ip.run_cell_magic("tilelang", "--arch sm_80 --no-show", cell)

    record = ip.user_ns["scaled_record"]
    assert record.ok and record.launch.grid == (16, 1, 1)


def test_every_device_kernel_has_its_launch_and_its_own_layouts():
    record = tilelab.explore(two_kernels, arch="sm_90")

    assert [launch.kernel for launch in record.launches] == ["main_kernel", "main_kernel_1"]
    assert [launch.threads for launch in record.launches] == [128, 256]
    assert record.layouts["main_kernel/acc"].shape == (128, 32)
    assert record.layouts["main_kernel_1/acc"].shape == (128, 64)
    assert record.layouts["main_kernel_1/acc"].kernel == "main_kernel_1"


@pytest.mark.parametrize("kernel", [row_sum, row_sum_epoch], ids=["v1", "epoch"])
def test_a_reducer_layout_is_tabulated_as_a_fragment(kernel):
    record = tilelab.explore(kernel, arch="sm_90")

    reducer = record.layouts["acc"]
    assert reducer.kind is LayoutKind.FRAGMENT and reducer.replicas > 1
    assert reducer.thread.shape == (reducer.replicas, 128)
    assert not record.warnings


def test_a_kernel_over_the_arch_shared_memory_limit_cannot_launch_and_says_by_how_much():
    record = tilelab.explore(
        matmul, arch="sm_90", M=4096, N=4096, K=4096, block_M=256, block_N=256, block_K=64, num_stages=4, threads=256
    )

    assert record.ok and not record.launchable
    (problem,) = record.launch_problems
    assert "262144 B" in problem and "232448 B" in problem and "sm_90" in problem


def test_more_than_1024_threads_a_block_cannot_launch():
    record = tilelab.explore(matmul, arch="sm_80", threads=2048)

    assert not record.launchable and "2048 threads" in record.launch_problems[0]


def test_a_record_of_format_1_still_loads():
    record = tilelab.explore(matmul, arch="sm_80")
    payload = json.loads(record.to_json())
    assert payload["format"] == FORMAT_VERSION
    old = dict(payload["record"])
    launch = old.pop("launches")[0]
    launch.pop("kernel")
    old.pop("launch_problems")
    old["launch"] = launch

    loaded = KernelRecord.from_json(json.dumps({"format": 1, "record": old}))

    assert loaded.launch.grid == record.launch.grid and loaded.launchable


def test_a_cpp_check_failure_points_at_the_users_line_not_tilelangs_source(tmp_path):
    # A frame in TileLang's C++ (its wheel was built under /project/src) below the user's frame.
    cxx = compile("raise RuntimeError('Check failed: (producer) is false: bad warp role')", "/project/src/cuda/transform/producer_consumer_ws.cc", "exec")
    user_file = tmp_path / "my_kernel.py"
    user_file.write_text("def build():\n    exec(CXX)\n")
    namespace = {"CXX": cxx}
    exec(compile(user_file.read_text(), str(user_file), "exec"), namespace)

    with pytest.raises(RuntimeError) as caught:
        namespace["build"]()
    error = error_record(caught.value, kernel_file=str(user_file))

    assert error.file == str(user_file) and error.line == 2


def test_a_hopper_consumer_fragment_knows_its_first_thread_index():
    record = tilelab.explore(matmul, arch="sm_90", machine_code=False)

    assert record.layouts["C_local"].thread_start == 128  # the producer warpgroup holds threadIdx.x 0..127
    assert tilelab.explore(matmul, arch="sm_80", machine_code=False).layouts["C_local"].thread_start == 0


def test_an_autotuned_kernel_called_with_positional_config_values_keeps_them():
    record = tilelab.explore(autotuned_matmul, 512, 512, 512, 128, 64, arch="sm_80", machine_code=False)

    assert record.launch.grid == (8, 4, 1)  # block_M=128, block_N=64 as given, not the first config's 64×64
    assert not any("@autotune" in warning for warning in record.warnings)
