"""TileLab's benchmark suite: tuned GEMM and FlashAttention against torch, and per-call overhead.

    python bench/run_suite.py                      # on a GPU: ~8 minutes, results in bench/results/
    python bench/run_suite.py --out /tmp/results --only gemm,overhead
    python bench/run_suite.py --smoke              # tiny shapes; without a GPU: lowering only

Each section has a wall-time budget (GEMM 240 s, attention 180 s, overhead 30 s,
so the whole suite fits in one 10-minute device call with room for start-up).
A problem that would start too late is skipped; a sweep still running when the
budget ends is interrupted (its finished configs are kept, the row is marked
``partial``). Writes ``results.json`` and ``results.md`` to ``--out`` and prints
the markdown. Section details: ``suite_tuned.py`` (spaces and their reasons),
``suite_overhead.py``; tilelang's own ``@autotune`` is compared in
``bench_tune_gemm.py``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import tilelang  # noqa: F401  (before torch and tvm: it bundles its own TVM)

HERE = Path(__file__).resolve().parent
sys.path[:0] = [p for p in (str(HERE), str(HERE.parent)) if p not in sys.path]

import suite_report  # noqa: E402  (needs the path above)
import suite_tuned  # noqa: E402

SECTIONS = ("gemm", "attention", "overhead")
BUDGET_S = {"gemm": 240.0, "attention": 180.0, "overhead": 30.0}
SMOKE_BUDGET_S = {"gemm": 60.0, "attention": 60.0, "overhead": 30.0}
# Below this much budget left, a problem is not started: one cold sweep (worker start, one compile round, benches).
MIN_START_S = {"gemm": 12.0, "attention": 10.0, "overhead": 0.0}


class BudgetExceeded(KeyboardInterrupt):
    """Raised by the section's alarm; a sweep treats it as Ctrl-C (stops, keeps finished rows)."""


@contextmanager
def budget(seconds: float) -> Iterator[float]:
    """Interrupt the block after ``seconds`` of wall time; yields the deadline (``time.monotonic``)."""

    def fire(signum, frame):
        raise BudgetExceeded(f"section budget of {seconds:g} s ran out")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield time.monotonic() + seconds
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _skipped(problem: suite_tuned.Problem, note: str) -> dict:
    print(f"[{problem.section} {problem.label}] skipped: {note}", flush=True)
    return {"section": problem.section, "problem": problem.label, "shape": problem.shape, "status": "skipped", "note": note,
            "configs_total": len(problem.space), "configs_ok": 0}  # fmt: skip


def _error(section: str, problem: str, exc: BaseException) -> dict:
    text = str(exc).strip().splitlines()
    note = f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
    print(f"[{section} {problem}] error: {note}", flush=True)
    return {"section": section, "problem": problem, "status": "error", "note": note}


def run_tuned(section: str, problems: list[suite_tuned.Problem], seconds: float, db: Path, arch: str | None) -> list[dict]:
    rows = []
    with budget(seconds) as deadline:
        for problem in problems:
            left = deadline - time.monotonic()
            if left < MIN_START_S[section]:
                rows.append(_skipped(problem, f"section budget of {seconds:g} s spent"))
                continue
            try:
                rows.append(suite_tuned.run_problem(problem, db, arch))
            except BudgetExceeded:
                rows.append(_skipped(problem, f"section budget of {seconds:g} s ran out during this problem"))
            except Exception as exc:  # one broken problem is a row; the suite goes on to the next
                rows.append(_error(section, problem.label, exc))
    return rows


def run_overhead_section(seconds: float, db: Path, smoke: bool) -> list[dict]:
    import suite_overhead

    with budget(seconds):
        try:
            return [suite_overhead.run_overhead(db, smoke=smoke)]
        except BudgetExceeded as exc:
            return [{"section": "overhead", "problem": "call overhead", "status": "skipped", "note": str(exc)}]
        except Exception as exc:  # a failed measurement is a row, not a lost report
            return [_error("overhead", "call overhead", exc)]


def _arch() -> str | None:
    import torch

    # On a GPU, its own arch; without one, lower for Hopper (sm_90a: wgmma and TMA, like the H100/H200 runs).
    return None if torch.cuda.is_available() else "sm_90a"


def _device(arch: str | None) -> str:
    import torch

    return torch.cuda.get_device_name() if arch is None else f"none (lowered for {arch})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny shapes and spaces (lowering only without a GPU)")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="directory for results.json and results.md")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {','.join(SECTIONS)}")
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown or not sections:
        parser.error(f"--only takes {','.join(SECTIONS)}; got {args.only!r}")
    started = time.perf_counter()
    arch = _arch()
    budgets = SMOKE_BUDGET_S if args.smoke else BUDGET_S
    print(f"TileLab suite: {', '.join(sections)}{' (smoke)' if args.smoke else ''} on {_device(arch)} -> {args.out}", flush=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="tilelab-suite-") as scratch:
        db = Path(scratch) / "history.db"  # a private history: every config is measured afresh
        for section in sections:
            if section == "overhead":
                rows += run_overhead_section(budgets[section], db, args.smoke)
                continue
            make = suite_tuned.gemm_problems if section == "gemm" else suite_tuned.attention_problems
            rows += run_tuned(section, make(args.smoke), budgets[section], db, arch)
    env = suite_report.environment(_device(arch))
    rows = [{**row, **env} for row in rows]
    report = {
        "mode": ("smoke, " if args.smoke else "") + ("GPU" if arch is None else "lowering only (no GPU)"),
        "sections": sections,
        "env": env,
        "goals": suite_report.evaluate_goals(rows, sections),
        "budgets_s": {s: budgets[s] for s in sections},
        "wall_s": time.perf_counter() - started,
        "rows": rows,
    }
    json_path, md_path = suite_report.write_results(args.out, report)
    print("\n" + md_path.read_text(), flush=True)
    print(f"wrote {json_path} and {md_path} in {report['wall_s']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
