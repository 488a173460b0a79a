"""``tilelab cache`` and ``%tilelang cache``: TileLang's cache directory listed (entries, size, the largest,
duplicates), and pruned only when asked: a dry run by default, ``--yes`` to delete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tilelab.cache_dir import list_cache, parse_age, parse_size
from tilelab.cli.main import main

TESTS = Path(__file__).parent

# The #2662 pattern: the same CPU kernel filed twice, under keys that differ only in a pass config it ignores.
TWO_KEYS = """
import json, sys
sys.path.insert(0, {tests!r})
from tilelab import _tilelang as tl
from tilelab.targets import resolve_target
from tune_kernels import scale_add

choice = resolve_target(None, "c")
for block, configs in ((64, {{}}), (64, {{"tl.disable_warp_specialized": True}}), (32, {{}})):
    func, options = tl.elaborate(scale_add, (), {{"block": block}}, choice.tvm_target())
    options.pass_configs.update(configs)
    _, outcome = tl.compile_traced(func, options, choice)
    print(json.dumps({{"block": block, "configs": configs, "key": outcome.key.key}}))
"""


@pytest.fixture(scope="module")
def made_cache(tmp_path_factory):
    """A TileLang cache made by TileLang itself: three entries, two of them the same kernel under different keys."""
    cache = tmp_path_factory.mktemp("tilelang") / "cache"
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", TWO_KEYS.format(tests=str(TESTS))], env=env, capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    return cache, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["cache", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_listing_names_the_directory_entries_size_largest_and_the_duplicate(made_cache, capsys, monkeypatch):
    cache, compiles = made_cache
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(cache))  # as TileLang reads it

    code, out, _ = cli(capsys)

    same = sorted(c["key"][:16] for c in compiles if c["block"] == 64)
    assert code == 0 and out.startswith(f"TileLang cache: {cache}\n")
    assert "  3 entries," in out and "largest:" in out
    assert "duplicates (the same generated code under different keys): 1 group(s), 1 removable entry" in out
    [group] = [line for line in out.splitlines() if line.startswith("    ") and "," in line and "(0." in line]
    assert sorted(key.strip() for key in group.split("(")[0].split(",")) == same


def test_prune_duplicates_is_a_dry_run_until_yes_and_keeps_the_newest(made_cache, capsys):
    cache, _ = made_cache
    listing = list_cache(cache)
    [group] = listing.duplicates()
    newest, spare = group

    code, out, _ = cli(capsys, "prune", "--dir", str(cache), "--duplicates")
    assert code == 0 and "would remove 1 of 3 entries" in out and spare.key[:16] in out and "dry run" in out
    assert spare.path.is_dir()  # nothing deleted

    code, out, _ = cli(capsys, "prune", "--dir", str(cache), "--duplicates", "--yes")
    assert code == 0 and out.startswith("removed 1 of 3 entries")
    assert not spare.path.exists() and newest.path.is_dir()
    assert len(list_cache(cache).entries) == 2 and not list_cache(cache).duplicates()


def fake_entry(kernels: Path, key: str, size: int, age_days: float, code: str = "") -> Path:
    entry = kernels / key
    entry.mkdir(parents=True)
    (entry / "kernel_lib.so").write_bytes(b"x" * size)
    for name in ("device_kernel.cu", "host_kernel.cu", "params.json"):
        (entry / name).write_text(code or key)
    then = time.time() - age_days * 86400
    for file in entry.iterdir():
        os.utime(file, (then, then))
    return entry


def test_prune_older_than_and_max_size_remove_the_least_recently_used(tmp_path, capsys):
    kernels = tmp_path / "0.1.15" / "linux-x86_64" / "kernels"
    old = fake_entry(kernels, "a" * 64, 1000, age_days=40)
    middle = fake_entry(kernels, "b" * 64, 3000, age_days=10)
    new = fake_entry(kernels, "c" * 64, 2000, age_days=0)

    code, out, _ = cli(capsys, "prune", "--dir", str(tmp_path), "--older-than", "30d", "--max-size", "3K", "--yes")

    assert code == 0 and "unused for 40 d" in out and "least recently used" in out
    assert not old.exists() and not middle.exists() and new.is_dir()


def test_prune_asks_for_a_criterion_and_bad_values_are_one_line(tmp_path, capsys):
    code, _, err = cli(capsys, "prune", "--dir", str(tmp_path))
    assert code == 2 and err.strip() == "tilelab cache: prune needs --older-than AGE, --max-size SIZE or --duplicates (it removes nothing by default)"

    with pytest.raises(SystemExit) as exited:
        main(["cache", "prune", "--older-than", "soon"])
    assert exited.value.code == 2 and "'soon': expected an age like 30d" in capsys.readouterr().err

    code, _, err = cli(capsys, "--dir", str(tmp_path / "missing"))
    assert code == 2 and "no such directory" in err


def test_ages_and_sizes_read_as_people_write_them():
    assert parse_age("30d") == 30 * 86400 and parse_age("12h") == 12 * 3600 and parse_age("2w") == 14 * 86400
    assert parse_size("5G") == 5 * 1024**3 and parse_size("500M") == 500 * 1024**2 and parse_size("1.5GB") == int(1.5 * 1024**3)
    assert parse_size("100") == 100


def test_the_line_magic_lists_and_prunes_the_same_way(ip, tmp_path, capsys):
    kernels = tmp_path / "0.1.15" / "linux-x86_64" / "kernels"
    fake_entry(kernels, "d" * 64, 10, age_days=1, code="same")
    duplicate = fake_entry(kernels, "e" * 64, 10, age_days=2, code="same")

    ip.run_line_magic("tilelang", f"cache --dir {tmp_path}")
    listed = capsys.readouterr().out
    ip.run_line_magic("tilelang", f"cache prune --dir {tmp_path} --duplicates")

    assert "2 entries" in listed and "1 removable entry" in listed
    assert "would remove 1 of 2 entries" in capsys.readouterr().out and duplicate.is_dir()
