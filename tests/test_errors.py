"""Errors a user causes: one short message with the cell line, earlier results kept."""

from __future__ import annotations

import pytest
from cells import fill_cell
from IPython.core.error import UsageError

from tilelab.records import Status
from tilelab.registry import default_registry

HEADER = "import tilelang\nimport tilelang.language as T\n\n"

COPY_MISMATCH = HEADER + '''@tilelang.jit
def bad_copy(M=256, N=256):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), B: T.Tensor((M, N), T.float16)):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), T.float16)
            T.copy(A[0:128, 0:32], S)
            T.copy(S, B[0, 0])
    return main
'''

MISSPELLED = HEADER + '''@tilelang.jit
def bad_name(M=256):
    @T.prim_func
    def main(A: T.Tensor((M, M), T.float16)):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), T.float16)
            T.copy(A_typo[0, 0], S)
    return main
'''

MIXED_GEMM = HEADER + '''@tilelang.jit
def bad_gemm(M=128):
    @T.prim_func
    def main(A: T.Tensor((M, M), T.float16), B: T.Tensor((M, M), T.float32), C: T.Tensor((M, M), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((64, 32), T.float16)
            Bs = T.alloc_shared((32, 64), T.float32)
            Cl = T.alloc_fragment((64, 64), T.float32)
            T.clear(Cl)
            T.copy(A[0, 0], As)
            T.copy(B[0, 0], Bs)
            T.gemm(As, Bs, Cl)
            T.copy(Cl, C[0, 0])
    return main
'''

FLOAT_FOR_INT = HEADER + '''@tilelang.jit
def bad_extent(M=128, block=64.5):
    @T.prim_func
    def main(A: T.Tensor((M, M), T.float16)):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((block, 64), T.float16)
            T.copy(A[0, 0], S)
    return main
'''

GOOD = fill_cell("good")


def line_of(cell: str, text: str) -> int:
    """The editor's line number of ``text``: the ``%%tilelang`` line above the cell is line 1."""
    return next(n for n, line in enumerate(cell.splitlines(), 2) if text in line)


def failed_record(ip, cell: str, name: str, capsys):
    ip.run_cell_magic("tilelang", "--arch sm_90 --no-show", cell)
    record = ip.user_ns[f"{name}_record"]
    assert record.status is Status.FAILED
    shown = capsys.readouterr().err
    return record, shown


@pytest.fixture(scope="module")
def earlier(ip):
    # No machine code: where nvcc is found, its build would replace the record (and its binding) when it lands.
    ip.run_cell_magic("tilelang", "--arch sm_90 --no-show --no-machine-code", GOOD)
    return ip.user_ns["good_record"]


def assert_short_and_clean(record, shown: str):
    assert len(shown.splitlines()) <= 4, shown
    for noise in ("Traceback", 'File "<unknown>"', "Fatal:", "__tb.", "source=def make_closure"):
        assert noise not in shown and noise not in record.error.message
    assert record.error.log, "the full original stays reachable"


def test_copy_shape_mismatch_points_at_the_copy_line(ip, earlier, capsys):
    record, shown = failed_record(ip, COPY_MISMATCH, "bad_copy", capsys)
    copy_line = line_of(COPY_MISMATCH, "T.copy(A[0:128, 0:32], S)")
    assert record.error.line == copy_line
    assert f"line {copy_line}:" in shown
    assert "T.copy from A to S" in record.error.message
    assert_short_and_clean(record, shown)


def test_misspelled_name_names_it_and_its_line(ip, earlier, capsys):
    record, shown = failed_record(ip, MISSPELLED, "bad_name", capsys)
    assert "A_typo" in record.error.message
    assert record.error.line == line_of(MISSPELLED, "A_typo")
    assert_short_and_clean(record, shown)


def test_mixed_dtype_gemm_points_at_the_gemm(ip, earlier, capsys):
    record, shown = failed_record(ip, MIXED_GEMM, "bad_gemm", capsys)
    assert "float16" in record.error.message and "float32" in record.error.message
    assert record.error.line == line_of(MIXED_GEMM, "T.gemm(As, Bs, Cl)")
    assert_short_and_clean(record, shown)


def test_float_where_an_int_is_needed_names_the_parameter(ip, earlier, capsys):
    record, shown = failed_record(ip, FLOAT_FOR_INT, "bad_extent", capsys)
    assert "block=64.5 is a float where an int is needed" in record.error.message
    assert record.error.line == line_of(FLOAT_FOR_INT, "T.alloc_shared((block")
    assert_short_and_clean(record, shown)


def test_python_error_in_the_cell_is_one_line_with_its_cell_line(ip, earlier):
    cell = "x = 1\ny = undefined_thing + 1\n"
    with pytest.raises(UsageError, match=r"line 3: NameError: name 'undefined_thing' is not defined"):
        ip.run_cell_magic("tilelang", "--arch sm_90", cell)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("--arch sm_99", "unknown arch 'sm_99'"),
        ("--bogus", "unrecognized arguments: --bogus"),
        ("--arch sm_90 --target c", "either arch or target"),
    ],
)
def test_bad_magic_arguments_are_one_line_usage_errors(ip, earlier, line, expected):
    with pytest.raises(UsageError, match=expected):
        ip.run_cell_magic("tilelang", line, GOOD)


def test_gpu_only_path_without_a_gpu_says_so(ip, earlier):
    from conftest import cuda_available

    if cuda_available():
        pytest.skip("a GPU is present")
    with pytest.raises(UsageError, match="needs a CUDA GPU and none is visible"):
        ip.run_cell_magic("tilelang", "--bench", GOOD)


def test_traceback_shows_the_full_original_log(ip, earlier, capsys):
    failed_record(ip, COPY_MISMATCH, "bad_copy", capsys)
    ip.run_line_magic("tilelang", "traceback")
    full = capsys.readouterr().out
    assert "Selected loop range is smaller" in full and "compiler output" in full


def test_earlier_records_survive_failures(ip, earlier, capsys):
    for cell, name in ((COPY_MISMATCH, "bad_copy"), (MISSPELLED, "bad_name")):
        failed_record(ip, cell, name, capsys)
    assert ip.user_ns["good_record"] == earlier
    assert earlier in default_registry().records()
    assert default_registry().latest("good") == earlier
