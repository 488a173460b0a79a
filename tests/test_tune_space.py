"""Spaces and the ``%tilelang tune`` line: no compiles, only what gets swept."""

from __future__ import annotations

import pytest

import tilelab.tune.api as api
from tilelab.tune.space import Space, choices, config_key


def test_choices_make_a_grid_filtered_by_where():
    space = Space.build(
        {"block_M": choices([64, 128, 256]), "block_N": choices([64, 128]), "M": 1024},
        where=lambda c: c["block_M"] * c["block_N"] <= 128 * 128,
    )

    assert space.swept == ("block_M", "block_N")
    assert space.fixed == {"M": 1024}
    assert space.configs == (
        {"block_M": 64, "block_N": 64},
        {"block_M": 64, "block_N": 128},
        {"block_M": 128, "block_N": 64},
        {"block_M": 128, "block_N": 128},
        {"block_M": 256, "block_N": 64},
    )


def test_a_generator_of_configs_is_a_space():
    space = Space.build({"M": 512}, configs=({"block_M": m, "block_N": n} for m in (64, 128) for n in (32, 64)))

    assert len(space) == 4 and space.swept == ("block_M", "block_N")


def test_bad_spaces_raise_one_line_errors():
    with pytest.raises(ValueError, match="at least one value"):
        choices([])
    with pytest.raises(ValueError, match="duplicate"):
        choices([64, 64])
    with pytest.raises(ValueError, match="empty"):
        Space.build({"block_M": choices([64])}, where=lambda c: False)
    with pytest.raises(ValueError, match="either configs= or choices"):
        Space.build({"block_M": choices([64])}, configs=[{"block_N": 64}])


def test_config_keys_ignore_argument_order():
    assert config_key({"a": 1, "b": 2}) == config_key({"b": 2, "a": 1})


def test_tilelab_tune_stays_callable_after_its_package_is_imported():
    import tilelab
    import tilelab.tune.result  # binds the package to the name tilelab.tune

    assert callable(tilelab.tune)
    assert tilelab.choices([1, 2]) == choices([1, 2])


@pytest.fixture
def captured(monkeypatch):
    calls = []
    monkeypatch.setattr(api, "tune", lambda kernel, *args, **kwargs: calls.append((kernel, args, kwargs)) or "result")
    return calls


def test_tune_line_sweeps_comma_lists_and_fixes_single_values(captured):
    user_ns = {"matmul": "KERNEL", "N": 2048}

    out = api.tune_from_line("matmul 1024 N block_M=64,128,256 block_N=(64) dtype='float16' timeout=30 target=c", user_ns)

    kernel, args, kwargs = captured[0]
    assert out == "result" and kernel == "KERNEL" and args == (1024, 2048)
    assert kwargs["block_M"] == choices([64, 128, 256])
    assert kwargs["block_N"] == 64 and kwargs["dtype"] == "float16"
    assert kwargs["timeout"] == 30 and kwargs["target"] == "c"


def test_tune_line_where_is_an_expression_over_the_parameters(captured):
    api.tune_from_line("tune k block_M=64,128 block_N=64,128 where='block_M * block_N <= 8192'", {"k": object()})

    where = captured[0][2]["where"]
    assert where({"block_M": 64, "block_N": 128}) and not where({"block_M": 128, "block_N": 128})


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("missing block_M=64", "'missing'"),
        ("k block_M=64,,128", "'block_M=64,,128'"),
        ("k block_M=sixty_four", "'block_M=sixty_four'"),
        ("k block_M=64 1024", "'1024'"),
        ("k 2x=1", "'2x=1'"),
        ("k block_M=[64,128", "unbalanced"),
        ("k block_M=64 timeout=10,20", "'timeout=10,20'"),
    ],
)
def test_tune_line_errors_name_the_bad_token(captured, line, named):
    with pytest.raises(ValueError, match=named.replace("[", r"\[")) as error:
        api.tune_from_line(line, {"k": object()})

    assert "\n" not in str(error.value)
    assert not captured


def test_tune_line_options_may_be_written_as_flags(captured):
    api.tune_from_line("k block_M=64,128 --arch 'sm_80' --timeout 30 --workers=2 --force", {"k": object()})

    kwargs = captured[0][2]
    assert kwargs["arch"] == "sm_80" and kwargs["timeout"] == 30 and kwargs["workers"] == 2 and kwargs["force"] is True
    assert kwargs["block_M"] == choices([64, 128])
