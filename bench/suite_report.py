"""The benchmark suite's report: the environment, the goals, ``results.json`` and ``results.md``.

Rows are plain dicts (JSON-ready) made by ``suite_tuned`` and ``suite_overhead``;
every row carries the environment (device, driver, CUDA, torch, tilelang, date)
so that a row copied out of its file still says where it was measured.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import subprocess
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["GOALS", "device_slug", "environment", "evaluate_goals", "geomean", "merged", "to_markdown", "write_results"]

FORMAT = 2
SECTION_ORDER = ("gemm", "attention", "overhead")
ENV_KEYS = ("device", "driver", "cuda", "nvcc", "torch", "tilelang", "python", "cpus", "date")
GOALS = {
    "gemm": ("GEMM geomean vs torch.matmul", 1.0),
    "attention": ("FlashAttention geomean vs SDPA", 1.05),  # issue 25's goal
    "overhead": ("TileLab call overhead vs direct JITKernel", 1.0),  # µs allowed above direct
}
_TITLES = {
    "gemm": "GEMM: fp16 in, fp32 accumulate, fp16 out (vs `torch.matmul`)",
    "attention": "FlashAttention forward: batch 1, 32 heads, head_dim 128, fp16 (vs `F.scaled_dot_product_attention`)",
}


def _command_line(command: list[str]) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20, check=True)
    except (subprocess.SubprocessError, OSError):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1].strip() if lines else None


def _package(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def environment(device: str) -> dict[str, Any]:
    """Where the suite runs; ``device`` is the tuner's device name (or the lowering-only note)."""
    import torch

    return {
        "device": device,
        "driver": _command_line(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
        "cuda": torch.version.cuda,
        "nvcc": _command_line(["nvcc", "--version"]),
        "torch": torch.__version__,
        "tilelang": _package("tilelang"),
        "python": platform.python_version(),
        "cpus": len(os.sched_getaffinity(0)),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def evaluate_goals(rows: list[dict], sections: list[str]) -> list[dict]:
    """One entry per section that ran: the measured value, the target, and whether it is met."""
    goals = []
    for section in sections:
        name, target = GOALS[section]
        section_rows = [row for row in rows if row["section"] == section]
        if section == "overhead":
            row = next((r for r in section_rows if r.get("status") == "ok"), None)
            measured = None if row is None else row["tilelab_us"] - row["direct_us"]
            text = f"≤ direct + {target:g} µs"
            met = None if measured is None else measured <= target
            shown = "not measured" if measured is None else f"{measured:+.2f} µs"
        else:
            timed = [row["speedup"] for row in section_rows if row.get("speedup")]
            measured = geomean(timed)
            text = f"≥ {target:.2f}×"
            met = None if measured is None else measured >= target
            shown = "not measured" if measured is None else f"{measured:.3f}× ({len(timed)}/{len(section_rows)} problems)"
        goals.append({"section": section, "goal": name, "target": text, "measured": measured, "shown": shown, "met": met})
    return goals


def _mark(met: bool | None) -> str:
    return "—" if met is None else ("✅ met" if met else "❌ not met")


def _num(value: Any, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def _config(config: dict | None) -> str:
    if not config:
        return "—"
    short = {"block_M": "M", "block_N": "N", "block_K": "K", "num_stages": "stages", "threads": "thr", "swizzle": "swz"}
    words = {"policy": "{}", "epilogue": "{} epilogue", "persistent": "persistent", "split_k": "split-K {}",
             "fast_math": "fast math", "heavy_first": "heavy first"}  # knobs that read as words  # fmt: skip
    left_out = {("persistent", False), ("split_k", 1), ("ws", "auto"), ("fast_math", False), ("heavy_first", False)}
    return " ".join(
        words[k].format(v) if k in words else f"{short.get(k, k)}={v}" for k, v in config.items() if (k, v) not in left_out
    )


def _checked(row: dict) -> str:
    checked = row.get("checked")
    if not checked:
        return "—"
    mark = "✅" if checked["passed"] else "❌"
    return f"{mark} max diff {checked['max_abs_diff']:.3g}"


def _tuned_table(rows: list[dict], section: str) -> list[str]:
    reference = "torch" if section == "gemm" else "SDPA"
    lines = [
        f"| problem | status | space | budget | tried | timed | best config (trial, chosen by) | TileLab ms | {reference} ms "
        f"| TileLab TFLOP/s | {reference} TFLOP/s | speedup | checked vs {reference} | s |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for row in rows:
        status = row["status"] + (f" ({row['note']})" if row.get("note") else "")
        found = f" (#{row['best_trial']}, {row['best_chosen_by']})" if row.get("best_config") else ""
        lines.append(
            f"| {row['problem']} | {status} | {row.get('space', row.get('configs_total', '—'))} | {row.get('budget', '—')} "
            f"| {row.get('configs_tried', '—')} | {row.get('benchmarked', '—')} | {_config(row.get('best_config'))}{found} "
            f"| {_num(row.get('tilelab_ms'), '.4f')} | {_num(row.get('reference_ms'), '.4f')} | {_num(row.get('tilelab_tflops'), '.1f')} "
            f"| {_num(row.get('reference_tflops'), '.1f')} | {_num(row.get('speedup'), '.3f')}{'×' if row.get('speedup') else ''} "
            f"| {_checked(row)} | {_num(row.get('tune_s'), '.0f')} |"
        )
    mean = geomean([row["speedup"] for row in rows if row.get("speedup")])
    lines.append(f"| **geomean** | | | | | | | | | | | **{_num(mean, '.3f')}{'×' if mean else ''}** | | |")
    return lines


def _overhead_table(rows: list[dict]) -> list[str]:
    lines = []
    for row in rows:
        if row.get("status") != "ok":
            lines.append(f"Not measured: {row.get('note', row.get('status'))}.")
            continue
        lines += [
            f"{row['problem']}, {row['calls']} calls per repeat, median of {row['repeats']} repeats, "
            "one synchronize at the end, `time.perf_counter`.",
            "",
            "| path | µs / call |",
            "|---|---:|",
            f"| `result.best_kernel(a, b)` (through TileLab) | {row['tilelab_us']:.2f} |",
            f"| the same config's `JITKernel`, called directly | {row['direct_us']:.2f} |",
            f"| `torch.matmul(a, b)` | {row['torch_us']:.2f} |",
        ]
    return lines


def _run_line(section: str, run: dict, rows: list[dict]) -> str:
    searches = sorted({row["search"] for row in rows if row.get("search")})
    search = f"search {', '.join(searches)}; " if searches else ""
    check = f"each config checked: {run['check']}; " if run.get("check") and section != "overhead" else ""
    return f"{run.get('mode', '—')}, {run.get('date', '—')}; {search}{check}section budget {run['budget_s']:g} s, wall {run['wall_s']:.0f} s."


def to_markdown(report: dict) -> str:
    """The suite's tables and goals as GitHub markdown."""
    env = report["env"]
    lines = [
        "# TileLab benchmark suite",
        "",
        f"Device **{env['device']}**, driver {env['driver'] or '—'}, CUDA {env['cuda'] or '—'}, nvcc {env['nvcc'] or '—'}; "
        f"torch {env['torch']}, tilelang {env['tilelang']}, Python {env['python']}, {env['cpus']} CPUs.",
        "",
        "Speedup = reference latency / TileLab latency (above 1 means TileLab is faster). Both sides are timed with "
        "`tilelang.profiler.do_bench` (CUDA events, L2 flushed between calls, median) on the same fresh inputs, after "
        "the winner is checked against the reference on them. *tried*: configs the search compiled; *timed*: configs "
        "benchmarked (stopped early included). Regenerate with `python bench/run_suite.py --section SECTION --budget-s SECONDS`.",
        "",
        "## Goals",
        "",
        "| goal | target | measured | |",
        "|---|---|---|---|",
    ]
    lines += [f"| {g['goal']} | {g['target']} | {g['shown']} | {_mark(g['met'])} |" for g in report["goals"]]
    for section in report["sections"]:
        rows = [row for row in report["rows"] if row["section"] == section]
        lines += ["", f"## {_TITLES.get(section, 'Call overhead: a tuned 64×64×64 GEMM')}", ""]
        lines += [_run_line(section, report["runs"].get(section, {}), rows), ""]
        lines += _overhead_table(rows) if section == "overhead" else _tuned_table(rows, section)
    return "\n".join(lines) + "\n"


def device_slug(device: str) -> str:
    """``h100``, ``h200``, ``cpu`` (lowering only), or the device's name in lower case with dashes."""
    for model in ("H100", "H200"):
        if model in device:
            return model.lower()
    if device.startswith("none"):
        return "cpu"
    return re.sub(r"[^a-z0-9]+", "-", device.lower().removeprefix("nvidia ")).strip("-") or "device"


def merged(old: dict | None, new: dict) -> dict:
    """``new``'s sections with ``old``'s other sections kept (rows, runs), goals evaluated over all of them."""
    runs = dict(new["runs"])
    rows = list(new["rows"])
    if old is not None and old.get("format") == FORMAT:
        runs = {**{s: run for s, run in old["runs"].items() if s not in new["runs"]}, **runs}
        rows = [row for row in old["rows"] if row["section"] not in new["runs"]] + rows
    sections = [s for s in SECTION_ORDER if s in runs]
    rows.sort(key=lambda row: SECTION_ORDER.index(row["section"]))  # stable: problems keep their order
    return {"format": FORMAT, "env": new["env"], "runs": runs, "sections": sections, "goals": evaluate_goals(rows, sections), "rows": rows}


def write_results(out: Path, report: dict) -> tuple[Path, Path]:
    """Write ``results-<device>.json`` and ``.md`` into ``out`` (created if missing), merged with the file there."""
    out.mkdir(parents=True, exist_ok=True)
    stem = f"results-{device_slug(report['env']['device'])}"
    json_path, md_path = out / f"{stem}.json", out / f"{stem}.md"
    old = json.loads(json_path.read_text()) if json_path.is_file() else None
    report = merged(old, report)
    json_path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    md_path.write_text(to_markdown(report))
    return json_path, md_path
