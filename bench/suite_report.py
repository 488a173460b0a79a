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
import shutil
import subprocess
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["GOALS", "environment", "evaluate_goals", "geomean", "to_markdown", "write_results"]

FORMAT = 1
ENV_KEYS = ("device", "driver", "cuda", "nvcc", "torch", "tilelang", "python", "cpus", "date")
GOALS = {
    "gemm": ("GEMM geomean vs torch.matmul", 1.0),
    "attention": ("FlashAttention geomean vs SDPA", 1.1),
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
    short = {"block_M": "M", "block_N": "N", "block_K": "K", "num_stages": "stages", "threads": "thr"}
    words = {"policy": "{}", "epilogue": "{} epilogue", "persistent": "persistent"}  # knobs that read as words
    return " ".join(
        words[k].format(v) if k in words else f"{short.get(k, k)}={v}"
        for k, v in config.items()
        if not (k == "persistent" and not v)
    )


def _tuned_table(rows: list[dict], section: str) -> list[str]:
    reference = "torch" if section == "gemm" else "SDPA"
    lines = [
        f"| problem | status | configs ok | best config | TileLab ms | {reference} ms | TileLab TFLOP/s | {reference} TFLOP/s | speedup | tune s |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        ok = f"{row.get('configs_ok', 0)}/{row.get('configs_total', 0)}"
        status = row["status"] + (f" ({row['note']})" if row.get("note") else "")
        lines.append(
            f"| {row['problem']} | {status} | {ok} | {_config(row.get('best_config'))} | {_num(row.get('tilelab_ms'), '.4f')} "
            f"| {_num(row.get('reference_ms'), '.4f')} | {_num(row.get('tilelab_tflops'), '.1f')} | {_num(row.get('reference_tflops'), '.1f')} "
            f"| {_num(row.get('speedup'), '.3f')}{'×' if row.get('speedup') else ''} | {_num(row.get('tune_s'), '.1f')} |"
        )
    mean = geomean([row["speedup"] for row in rows if row.get("speedup")])
    lines.append(f"| **geomean** | | | | | | | | **{_num(mean, '.3f')}{'×' if mean else ''}** | |")
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


def to_markdown(report: dict) -> str:
    """The suite's tables and goals as GitHub markdown."""
    env = report["env"]
    lines = [
        "# TileLab benchmark suite",
        "",
        f"Device **{env['device']}**, driver {env['driver'] or '—'}, CUDA {env['cuda'] or '—'}, nvcc {env['nvcc'] or '—'}; "
        f"torch {env['torch']}, tilelang {env['tilelang']}, Python {env['python']}, {env['cpus']} CPUs; {env['date']}; "
        f"mode: {report['mode']}; suite wall time {report['wall_s']:.0f} s.",
        "",
        "Speedup = reference latency / TileLab latency (above 1 means TileLab is faster). Both sides are timed with "
        "`tilelang.profiler.do_bench` (CUDA events, L2 flushed between calls, median). Regenerate with "
        "`python bench/run_suite.py --out bench/results`.",
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
        lines += _overhead_table(rows) if section == "overhead" else _tuned_table(rows, section)
    return "\n".join(lines) + "\n"


def write_results(out: Path, report: dict) -> tuple[Path, Path]:
    """Write ``results.json`` and ``results.md`` into ``out`` (created if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "results.json", out / "results.md"
    json_path.write_text(json.dumps({"format": FORMAT, **report}, indent=2, default=str) + "\n")
    md_path.write_text(to_markdown(report))
    return json_path, md_path
