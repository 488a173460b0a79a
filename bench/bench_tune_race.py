"""TileLab's tuner against TileLang's ``@autotune``, cold, on three spaces; and where TileLab's sweep time goes.

Spaces (the same config list for both tools, as an ``@tilelang.autotune`` kernel that
TileLang calls and TileLab sweeps with ``tilelab.tune(kernel, *args)``, as users would):

1. ``gemm-fp16-36``: the 36-config fp16 GEMM of ``bench_tune_gemm.py`` (4096^3).
2. ``flash-attention-16``: the FlashAttention forward of ``bench_tune_attention.py`` (16 configs).
3. ``gqa-example-16``: the ``@autotune`` kernel ``flashattn`` of TileLang's own
   ``examples/flash_attention/example_gqa_fwd_bshd.py``, loaded from the checkout given
   with ``--tilelang`` (never copied here), its configs widened to 16 (block_M, block_N
   in {64, 128}, num_stages in {1, 2}, threads in {128, 256}); batch 1, 64 heads, seq
   4096, dim 128, groups 16, as its ``main()``.

Each tool runs in its own subprocess with its own empty ``TILELANG_CACHE_DIR`` and as many
compile workers as CPUs; its wall time is measured around the tuning call only. A third
subprocess builds both tools' best configs (from TileLab's cache) and times them with one
``do_bench`` each, interleaved (A B A B ..., five rounds, median): ``retime_ratio`` (TileLab /
TileLang). That is ``best_ratio``, but where both tools found the same config (``same_best_config``),
which is one kernel: ``best_ratio`` is then 1 and ``retime_ratio`` the re-time's own noise.
TileLab's child then runs a second sweep (two configs, ``force=True``) in the same process:
how long after that call its first compile starts is the warm pool's figure.

    python bench/bench_tune_race.py --tilelang ~/tilelang            # GPU: all three spaces
    python bench/bench_tune_race.py --space gemm-fp16-36              # one space (merged into the JSON)
    python bench/bench_tune_race.py --smoke --out /tmp/race.json      # CPU, a minute: the same code paths
    python bench/bench_tune_race.py --merge a.json b.json             # one report of separate runs

Goals: wall ratio <= 0.10 on every space; best within 1 %; second sweep's first compile within 0.5 s.
Writes bench/results/tune_race.json: ``device``, ``spaces: [{name, configs, wall_ratio, best_ratio,
statuses, timeline_summary, tilelab: {worker_start: {forked, spawned, why_spawned, zygote_import_s}, ...},
...}]``, ``second_sweep_first_compile_s``, ``goals``.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GQA_EXAMPLE = Path("examples") / "flash_attention" / "example_gqa_fwd_bshd.py"
WIDE = {"block_M": [64, 128], "block_N": [64, 128], "num_stages": [1, 2], "threads": [128, 256]}
CHILD_TIMEOUT_S = {"gpu": 420, "cpu": 240}
GOALS = {"wall_ratio": 0.10, "best_ratio": 1.01, "second_sweep_first_compile_s": 0.5}


@dataclass
class Race:
    """One space: the ``@jit`` kernel, its call, the config list, and (smoke) the target."""

    name: str
    jit: Any  # a @tilelang.jit kernel (JITImpl)
    args: tuple
    fixed: dict
    configs: list[dict]
    warmup_rep: tuple[int, int] = (25, 100)  # @autotune's warmup and rep (ms)
    target: str | None = None  # "c" on the CPU (smoke)

    def autotuned(self) -> Any:
        import tilelang

        warmup, rep = self.warmup_rep
        return tilelang.autotune(configs=self.configs, warmup=warmup, rep=rep)(self.jit)


def _grid(space: dict, **fixed: Any) -> list[dict]:
    return [dict(zip(space, values, strict=True), **fixed) for values in itertools.product(*space.values())]


def race(name: str, tilelang_path: str | None) -> Race:
    """The space ``name`` (imports its kernel; the GQA example from ``tilelang_path``)."""
    import tilelang

    sys.path[:0] = [p for p in (str(HERE), str(HERE.parent / "tests")) if p not in sys.path]
    if name == "gemm-fp16-36":
        import bench_tune_gemm as gemm

        return Race(name, tilelang.jit(out_idx=[-1])(gemm.matmul), (gemm.M, gemm.N, gemm.K), {}, gemm.configs())
    if name == "flash-attention-16":
        import bench_tune_attention as attention
        from suite_kernels import flash_attention

        return Race(name, flash_attention, attention.SHAPE, {}, attention.configs())
    if name == "gqa-example-16":
        if not tilelang_path:
            raise SystemExit("gqa-example-16 needs --tilelang PATH (a checkout of tile-ai/tilelang)")
        example = _example(Path(tilelang_path).expanduser())
        sys.path.insert(0, str(example.parent))  # compile workers import it by name, as this process does
        module = importlib.import_module(example.stem)
        return Race(name, module.flashattn.jit_impl, (1, 64, 4096, 128, False), {"groups": 16}, _grid(WIDE), (10, 10))
    if name == "cpu-scale-add":  # --smoke
        from tune_kernels import scale_add

        return Race(name, scale_add, (4096,), {}, _grid({"block": [16, 32, 64, 128]}), (5, 20), target="c")
    raise SystemExit(f"unknown space {name!r}")


def _example(path: Path) -> Path:
    """The GQA example under ``path``: a checkout of tile-ai/tilelang, its ``examples`` folder, or the file itself."""
    for candidate in (path, path / GQA_EXAMPLE, path / GQA_EXAMPLE.relative_to("examples")):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"--tilelang {path}: no {GQA_EXAMPLE} there (pass a checkout of tile-ai/tilelang)")


# -- the children ------------------------------------------------------------------------------------------------
def run_tilelab(space: Race) -> dict:
    import tilelab

    options = {"workers": os.cpu_count(), "db": Path(tempfile.mkdtemp()) / "history.db"}
    if space.target:
        options["target"] = space.target
    started = time.perf_counter()
    result = tilelab.tune(space.autotuned(), *space.args, **space.fixed, **options,
                          on_row=lambda row: print(f"[tilelab {time.perf_counter() - started:6.1f}s] {row.status.value} {row.label()}", file=sys.stderr))  # fmt: skip
    wall = time.perf_counter() - started
    frame = result.to_pandas()
    summary = result.timeline_record.summary()
    started = result.timeline_record.worker_start()
    print(f"[tilelab] workers started: {json.dumps(started)}", file=sys.stderr, flush=True)
    second = tilelab.tune(space.autotuned(), *space.args, **space.fixed, **{**options, "db": ":memory:"},
                          configs=space.configs[:2], force=True, rebench=0)  # fmt: skip
    return {
        "wall_s": wall,
        "best_config": result.best_config,
        "self_reported_best_ms": result.best.latency_ms if result.best else None,
        "statuses": frame["status"].value_counts().loc[lambda counts: counts > 0].to_dict(),
        "verdict": result.verdict_text(),
        "timeline_summary": result.timeline_summary(),
        "compile_busy": summary.compile_busy,
        "bench_busy": summary.bench_busy,
        "critical_path": summary.critical_path,
        "first_compile_s": summary.first_compile_s,
        "cold_start_s": summary.cold_start_s,
        "worker_start": started,  # forked by the zygote or spawned, why, and the zygote's import time
        "compile_s_median": float(frame["compile_s"].median()),
        "bench_s_median": float(frame["bench_s"].median()),
        "gpu_state": result.gpu_state,
        "second_sweep_first_compile_s": second.timeline_record.summary().first_compile_s,
        "second_sweep_summary": second.timeline_summary(),
    }


def run_tilelang(space: Race) -> dict:
    os.environ.setdefault("TILELANG_AUTO_TUNING_CPU_COUNTS", str(os.cpu_count()))
    if space.target == "c":  # @autotune times with CUDA events: on the CPU its AutoTuner times by the wall clock
        return _run_tilelang_cpu(space)
    tuned = space.autotuned()
    started = time.perf_counter()
    kernel = tuned(*space.args, **space.fixed)
    wall = time.perf_counter() - started
    found = kernel.get_tuner_result()
    return {"wall_s": wall, "best_config": found["config"], "self_reported_best_ms": found["latency"],
            "statuses": {"best found": 1}, "note": "@autotune reports its best config only"}  # fmt: skip


def _run_tilelang_cpu(space: Race) -> dict:
    import torch
    from tilelang.autotuner import AutoTuner

    def elaborated(_jit=space.jit, _args=space.args, _fixed=space.fixed, **config):  # AutoTuner refuses closures
        return _jit.get_tir(*_args, **_fixed, **config)

    # AutoTuner matches config keys against the function's parameters: name them.
    elaborated.__signature__ = inspect.Signature([inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY) for k in space.configs[0]])

    supply = lambda params: [torch.randn(*[int(s) for s in p.shape]) for p in params]  # noqa: E731  (the inputs)
    tuner = AutoTuner.from_kernel(elaborated, configs=space.configs).set_compile_args(out_idx=[-1], target="c")
    tuner.set_profile_args(backend="wall", skip_check=True, supply_prog=supply)
    started = time.perf_counter()
    found = tuner.run(*space.warmup_rep)
    wall = time.perf_counter() - started
    return {"wall_s": wall, "best_config": found.config, "self_reported_best_ms": found.latency,
            "statuses": {"best found": 1}, "note": "AutoTuner (wall clock) reports its best config only"}  # fmt: skip


def run_retime(space: Race, configs: list[dict]) -> dict:
    """Both bests built here and timed by one do_bench each, interleaved, five rounds: their median latency (ms)."""
    import tilelang

    kernels = [space.jit.compile(*space.args, **space.fixed, **config) for config in configs]
    profilers = [kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Normal) for kernel in kernels]
    backend = "wall" if space.target == "c" else "event"
    times: list[list[float]] = [[] for _ in kernels]
    for _ in range(5):
        for position, profiler in enumerate(profilers):
            times[position].append(profiler.do_bench(warmup=50, rep=300, backend=backend))
    return {"best_ms": [statistics.median(t) for t in times]}


def _child(tool: str, space: str, options: argparse.Namespace, cache: str, extra: tuple = ()) -> dict:
    """``--child TOOL --space SPACE`` in its own process, with TileLang's cache in ``cache``; its last stdout line is
    its JSON."""
    env = dict(os.environ)
    env["TILELANG_CACHE_DIR"] = cache
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE.parent), env.get("PYTHONPATH")) if p)
    command = [sys.executable, __file__, "--child", tool, "--space", space, *extra]
    if options.tilelang:
        command += ["--tilelang", options.tilelang]
    timeout = CHILD_TIMEOUT_S["cpu" if options.smoke else "gpu"]
    print(f"== {space}: {tool}, cache {env['TILELANG_CACHE_DIR']}", file=sys.stderr, flush=True)
    try:
        # In the cache's folder: TileLang's autotuner writes autotuner.log where it runs.
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, timeout=timeout, cwd=env["TILELANG_CACHE_DIR"])
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s", "cache": env["TILELANG_CACHE_DIR"]}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": f"exit code {done.returncode}", "stdout_tail": lines[-5:], "cache": env["TILELANG_CACHE_DIR"]}
    return {**json.loads(lines[-1]), "cache": env["TILELANG_CACHE_DIR"]}


# -- the parent -----------------------------------------------------------------------------------------------------
def race_space(name: str, options: argparse.Namespace) -> dict:
    """Both tools on one space, each from a cold cache of its own, then their bests re-timed together: the space's
    entry in the JSON. The caches are removed once it is done."""
    with (
        tempfile.TemporaryDirectory(prefix="tilelang-cache-tilelab-") as mine_cache,
        tempfile.TemporaryDirectory(prefix="tilelang-cache-tilelang-") as theirs_cache,
    ):
        return _race_space(name, options, mine_cache, theirs_cache)


def _race_space(name: str, options: argparse.Namespace, mine_cache: str, theirs_cache: str) -> dict:
    mine, theirs = _child("tilelab", name, options, mine_cache), _child("tilelang", name, options, theirs_cache)
    entry = {"name": name, "configs": len(race(name, options.tilelang).configs), "tilelab": mine, "tilelang": theirs,
             "statuses": {"tilelab": mine.get("statuses"), "tilelang": theirs.get("statuses")},
             "timeline_summary": mine.get("timeline_summary")}  # fmt: skip
    if "error" in mine or "error" in theirs:
        return entry
    entry["wall_ratio"] = mine["wall_s"] / theirs["wall_s"]
    bests = json.dumps([mine["best_config"], theirs["best_config"]])
    retimed = _child("retime", name, options, cache=mine["cache"], extra=("--configs", bests))
    entry["retime"] = retimed
    entry["same_best_config"] = mine["best_config"] == theirs["best_config"]
    if "best_ms" in retimed:
        entry["retime_ratio"] = retimed["best_ms"][0] / retimed["best_ms"][1]
        # One config is one kernel: its two timings then differ by the re-time's own noise, not by the tuners.
        entry["best_ratio"] = 1.0 if entry["same_best_config"] else entry["retime_ratio"]
    return entry


def _goals(spaces: list[dict]) -> dict:
    seconds = [s["tilelab"].get("second_sweep_first_compile_s") for s in spaces]
    second = max((s for s in seconds if s is not None), default=None)
    met = {
        "wall_ratio": all(s.get("wall_ratio", 1e9) <= GOALS["wall_ratio"] for s in spaces),
        "best_ratio": all(s.get("best_ratio", 1e9) <= GOALS["best_ratio"] for s in spaces),
        "second_sweep_first_compile_s": second is not None and second <= GOALS["second_sweep_first_compile_s"],
    }
    return {"targets": GOALS, "met": met, "second_sweep_first_compile_s": second}


def _merged(reports: list[dict]) -> dict:
    """One report of the spaces of ``reports`` (a later run of a space replaces an earlier one), goals recomputed."""
    devices = sorted({report["device"] for report in reports})
    spaces = {space["name"]: space for report in reports for space in report["spaces"]}
    merged = {"device": " + ".join(devices), "cpus": reports[-1].get("cpus"), "spaces": list(spaces.values())}
    return {**merged, **_goals(merged["spaces"])}


def _write(path: Path, report: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str))


def _device(smoke: bool) -> str:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return "cpu (smoke)" if smoke else "no GPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=["tilelab", "tilelang", "retime"], help=argparse.SUPPRESS)
    parser.add_argument("--configs", help=argparse.SUPPRESS)
    parser.add_argument("--space", action="append", help="a space to race (default: all three; --smoke: cpu-scale-add)")
    parser.add_argument("--tilelang", help="a checkout of tile-ai/tilelang (for gqa-example-16)")
    parser.add_argument("--smoke", action="store_true", help="a CPU space, both tools, in a minute (tests run this)")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="JSON", help="combine reports of separate runs into --out")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "tune_race.json")
    options = parser.parse_args()
    if options.tilelang:  # the children run elsewhere: a relative path would not find the checkout
        options.tilelang = str(Path(options.tilelang).resolve())
    if options.merge:
        _write(options.out, _merged([json.loads(path.read_text()) for path in options.merge]))
        return
    if options.child:
        space = race(options.space[0], options.tilelang)
        runs = {"tilelab": run_tilelab, "tilelang": run_tilelang}
        report = run_retime(space, json.loads(options.configs)) if options.child == "retime" else runs[options.child](space)
        print(json.dumps(report, default=str))
        return
    names = options.space or (["cpu-scale-add"] if options.smoke else ["gemm-fp16-36", "flash-attention-16", "gqa-example-16"])
    earlier = [json.loads(options.out.read_text())] if options.out.is_file() and options.space else []
    spaces = [race_space(name, options) for name in names]
    report = _merged([*earlier, {"device": _device(options.smoke), "cpus": os.cpu_count(), "spaces": spaces}])
    _write(options.out, report)
    for entry in report["spaces"]:
        same = " (the same config)" if entry.get("same_best_config") else ""
        print(f"{entry['name']}: wall ratio {entry.get('wall_ratio', float('nan')):.3f}, best ratio "
              f"{entry.get('best_ratio', float('nan')):.4f}{same}, re-timed {entry.get('retime_ratio', float('nan')):.4f}; "
              f"{entry.get('timeline_summary')}")  # fmt: skip
        print(f"{entry['name']}: workers started: {json.dumps(entry.get('tilelab', {}).get('worker_start'))}")
    print(f"second sweep's first compile after {report['second_sweep_first_compile_s']} s; goals met: {report['met']}")


if __name__ == "__main__":
    main()
