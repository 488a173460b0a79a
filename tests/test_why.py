"""Why did it recompile? Each component of TileLang's cache key that changed is named; an edit that changes
none of them (a comment) says so; a rerun of an unchanged cell is a cache hit that says which cache."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cells import cpu_cell, fill_cell
from htmlcheck import parse
from IPython.core.error import UsageError
from sample_records import EVIL

import tilelab
from tilelab.provenance import CacheSource
from tilelab.recompiled import KeyChange, WhyRecompiled, _changed_words
from tilelab.views.compare.changes import SinceLastRunView, WhyView


def run(ip, cell: str, line: str = "--target c"):
    """The line under the Explorer that a %%tilelang run returns."""
    return ip.run_cell_magic("tilelang", line, cell)


def test_a_rerun_of_an_unchanged_kernel_is_a_cache_hit_that_says_which_cache(ip):
    run(ip, cpu_cell("unchanged"))
    line = run(ip, cpu_cell("unchanged"))

    record = ip.user_ns["unchanged_record"]
    assert isinstance(line, WhyView) and line.why.text() == "cache hit: nothing that TileLang keys on changed"
    assert record.provenance.served_by is CacheSource.CELL
    assert record.provenance.text().startswith("TileLab cell cache")


def test_why_after_a_cache_hit_says_it_was_one(ip, capsys):
    run(ip, cpu_cell("rerun"))
    run(ip, cpu_cell("rerun"))
    capsys.readouterr()

    ip.run_line_magic("tilelang", "why rerun")

    assert capsys.readouterr().out.strip() == "cache hit: nothing that TileLang keys on changed"


def test_a_pass_config_change_names_the_pass_config(ip):
    run(ip, cpu_cell("configured"))
    line = run(ip, cpu_cell("configured", configs=', pass_configs={"tl.disable_warp_specialized": True}'))

    why = line.since.why
    assert [change.component for change in why.changes if change.in_key] == ["pass_configs"]
    assert why.text() == "recompiled: pass config tl.disable_warp_specialized unset → True"
    assert [change.component for change in why.changes if not change.in_key] == ["source"]  # the decorator's line


def test_a_tile_size_change_names_the_tir_and_the_argument_that_changed_it(ip):
    run(ip, cpu_cell("tiled"), "--target c --args 'dict(block=32)'")
    line = run(ip, cpu_cell("tiled"), "--target c --args 'dict(block=64)'")

    assert line.since.why.text() == "recompiled: TIR changed (arguments: block 32 → 64)"


def test_a_source_edit_names_the_tir_and_the_first_changed_cell_line(ip):
    run(ip, cpu_cell("edited"))
    line = run(ip, cpu_cell("edited", factor="3.0"))

    [change] = line.since.why.changes
    cell_line = 1 + next(n for n, text in enumerate(cpu_cell("edited").splitlines(), 1) if "* 2.0" in text)  # the magic line is line 1
    assert (change.component, change.line) == ("tir", cell_line)
    assert change.text == f"TIR changed (first difference at cell line {cell_line}: A[bx * block + i] * 2.0 → A[bx * block + i] * 3.0)"


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        ("B[i] = A[bx * block + i] * 2.0", "B[i] = A[bx * block + i] * 3.0", "A[bx * block + i] * 2.0 → A[bx * block + i] * 3.0"),
        ("T.Pipelined(T.ceildiv(K, block_K), num_stages=3)", "T.Pipelined(T.ceildiv(K, block_K), num_stages=4)", "num_stages=3 → num_stages=4"),
        ("T.alloc_shared((block_M, block_K), T.float16)", "T.alloc_shared((block_M, 64), T.float16)", "block_K → 64"),
        ("T.copy(A[by * block_M, k * block_K], A_shared)", "T.copy(A[bx * block_M, k * block_K], A_shared)", "A[by → A[bx"),
    ],
)
def test_a_changed_line_is_said_as_its_changed_words_after_the_operand_or_name_they_belong_to(before, after, said):
    assert _changed_words(before, after) == said


def test_a_target_change_names_the_target(ip):
    run(ip, fill_cell("retargeted"), "--arch sm_80 --no-machine-code")
    line = run(ip, fill_cell("retargeted"), "--arch sm_90 --no-machine-code")

    why = line.since.why
    assert "target cuda sm_80 → cuda sm_90" in why.text()
    assert "tir" not in [change.component for change in why.changes]


def test_a_comment_only_edit_says_nothing_tilelang_keys_on_changed(ip):
    run(ip, cpu_cell("commented"))
    forced = run(ip, cpu_cell("commented", comment="  # doubled below"), "--target c --force")
    hit = run(ip, cpu_cell("commented", comment="  # said otherwise"))

    assert forced.since.why.changes == () and forced.since.why.text() == "same key: nothing that TileLang keys on changed"
    assert hit.why.text() == "cache hit: nothing that TileLang keys on changed"


def test_why_names_the_components_as_data_and_the_line_magic_prints_it(ip, capsys):
    run(ip, cpu_cell("asked"))
    first = ip.user_ns["asked_record"]
    run(ip, cpu_cell("asked", configs=', compile_flags=["-O2"]', factor="4.0"))
    second = ip.user_ns["asked_record"]
    capsys.readouterr()

    found = tilelab.why(first, second)
    ip.run_line_magic("tilelang", "why asked")

    assert [change.component for change in found.changes if change.in_key] == ["tir", "compile_flags"]
    assert found.key_changed and capsys.readouterr().out.strip() == found.text()
    assert "compile flags none → -O2" in found.text()
    with pytest.raises(UsageError, match="usage: %tilelang why NAME"):
        ip.run_line_magic("tilelang", "why")


def test_why_of_records_without_provenance_says_it_is_not_known(ip):
    run(ip, cpu_cell("older"))
    record = ip.user_ns["older_record"]

    assert tilelab.why(replace(record, provenance=None), record).text().startswith("why: not known")


def test_the_why_line_is_escaped():
    evil = WhyRecompiled(EVIL, "fresh", (KeyChange("pass_configs", f"pass config {EVIL} False → True"),))

    for html in (WhyView(evil).to_html(), SinceLastRunView(_Since(evil)).to_html()):
        tree = parse(html)
        assert not tree.find_all("img") and EVIL in tree.all_text()


class _Since:
    """A first run's SinceLastRun, carrying a why line."""

    def __init__(self, why: WhyRecompiled) -> None:
        self.name, self.run, self.changes, self.why = EVIL, 1, None, why

    def text(self) -> str:
        return f"{self.name}: run 1"
