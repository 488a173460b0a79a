"""TileLab's benchmark suite: GEMM and FlashAttention searched with TileLab's tuner, against torch; call overhead.

    python bench/run_suite.py --section gemm --budget-s 480         # on a GPU: one section, one device call
    python bench/run_suite.py --section attention --budget-s 420 --out /tmp/results
    python bench/run_suite.py --merge /tmp/results/results-h100.json  # into bench/results/
    python bench/run_suite.py --smoke                                # tiny spaces; without a GPU: lowering only

Each tuned problem is a ``tilelab.tune(..., search="optuna", budget=N)`` over
a space of hundreds of configs (``suite_spaces``); ``N`` is set from the
section's seconds (``--budget-s``) by ``suite_budget``, before each problem,
from the time left. A problem that would start too late is skipped; a sweep
still running when the section's time ends is interrupted (its finished
configs are kept, the row is marked ``partial``). ``--check`` says whether the
tuner compares every config with torch (``every``) or only the winner is
checked (``winner``; it is checked in both modes, ``suite_tuned``).

Writes ``results-<device>.json`` and ``.md`` (``h100``, ``h200``, or the
device's name) to ``--out``, keeping the rows of sections already in that file
that this run did not measure, and prints the markdown.
"""

from __future__ import annotations

import argparse
import json
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

import suite_budget  # noqa: E402  (needs the path above)
import suite_overhead  # noqa: E402
import suite_report  # noqa: E402
import suite_tuned  # noqa: E402
import torch  # noqa: E402

SECTIONS = ("gemm", "attention", "overhead")
BUDGET_S = {"gemm": 480.0, "attention": 420.0, "overhead": 30.0}
SMOKE_BUDGET_S = {"gemm": 90.0, "attention": 60.0, "overhead": 30.0}
# Below this much time left, a problem is not started: the static prior, one round of compiles, the winner's re-time.
MIN_START_S = {"gemm": 20.0, "attention": 20.0, "overhead": 0.0}


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
            "space": len(problem.space), "configs_total": len(problem.space), "configs_ok": 0}  # fmt: skip


def _error(section: str, problem: str, exc: BaseException) -> dict:
    text = str(exc).strip().splitlines()
    note = f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
    print(f"[{section} {problem}] error: {note}", flush=True)
    return {"section": section, "problem": problem, "status": "error", "note": note}


def run_tuned(section: str, problems: list[suite_tuned.Problem], seconds: float, db: Path, arch: str | None, check: str) -> list[dict]:
    """Search each problem with the count of configs its share of the time left buys (``suite_budget``)."""
    model = suite_budget.cost_model(section, check=check == "every")
    rows = []
    with budget(seconds) as deadline:
        for position, problem in enumerate(problems):
            left = deadline - time.monotonic()
            if left < MIN_START_S[section]:
                rows.append(_skipped(problem, f"section budget of {seconds:g} s spent"))
                continue
            plan = model.plan([p.outputs for p in problems[position:]], left, len(problem.space))
            print(f"[{section} {problem.label}] {len(problem.space)} configs, budget {plan.budget} "
                  f"(~{plan.per_config_s:.2f} s a config, {left:.0f} s left)", flush=True)  # fmt: skip
            started = time.monotonic()
            try:
                row = suite_tuned.run_problem(problem, db, arch, plan.budget, check)
            except BudgetExceeded:
                row = _skipped(problem, f"section budget of {seconds:g} s ran out during this problem")
            except Exception as exc:  # one broken problem is a row; the suite goes on to the next
                row = _error(section, problem.label, exc)
            spent = time.monotonic() - started
            model.learn(problem.outputs, row.get("configs_tried", 0), spent)
            rows.append({**row, "plan": {**plan.as_dict(), "spent_s": round(spent, 1), "scale_after": round(model.scale, 3)}})
    return rows


def run_overhead_section(seconds: float, db: Path, smoke: bool) -> list[dict]:
    with budget(seconds):
        try:
            return [suite_overhead.run_overhead(db, smoke=smoke)]
        except BudgetExceeded as exc:
            return [{"section": "overhead", "problem": "call overhead", "status": "skipped", "note": str(exc)}]
        except Exception as exc:  # a failed measurement is a row, not a lost report
            return [_error("overhead", "call overhead", exc)]


def _arch() -> str | None:
    # On a GPU, its own arch; without one, lower for Hopper (sm_90a: wgmma and TMA, like the H100/H200 runs).
    return None if torch.cuda.is_available() else "sm_90a"


def _device(arch: str | None) -> str:
    return torch.cuda.get_device_name() if arch is None else f"none (lowered for {arch})"


def _sections(text: str, parser: argparse.ArgumentParser) -> list[str]:
    sections = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown or not sections:
        parser.error(f"--section takes {','.join(SECTIONS)} (comma-separated); got {text!r}")
    return sections


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--section", default=",".join(SECTIONS), help=f"comma-separated sections of {','.join(SECTIONS)}")
    parser.add_argument("--budget-s", type=float, help="seconds for each section (default: gemm 480, attention 420, overhead 30)")
    parser.add_argument("--check", choices=suite_tuned.CHECKS, default="every", help="compare every config with torch, or the winner only")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes and spaces (lowering only without a GPU)")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="directory for results-<device>.json and .md")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="JSON", help="merge these results files into --out; run nothing")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.merge:
        for path in args.merge:
            json_path, _ = suite_report.write_results(args.out, json.loads(path.read_text()))
            print(f"merged {path} into {json_path}", flush=True)
        return 0
    sections = _sections(args.section, parser)
    if args.budget_s is not None and args.budget_s <= 0:
        parser.error(f"--budget-s must be positive; got {args.budget_s:g}")
    started = time.perf_counter()
    arch = _arch()
    budgets = {s: args.budget_s or (SMOKE_BUDGET_S if args.smoke else BUDGET_S)[s] for s in sections}
    print(f"TileLab suite: {', '.join(sections)}{' (smoke)' if args.smoke else ''} on {_device(arch)} -> {args.out}", flush=True)
    rows: list[dict] = []
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="tilelab-suite-") as scratch:
        db = Path(scratch) / "history.db"  # a private history: every config is measured afresh
        for section in sections:
            section_started = time.perf_counter()
            if section == "overhead":
                rows += run_overhead_section(budgets[section], db, args.smoke)
            else:
                make = suite_tuned.gemm_problems if section == "gemm" else suite_tuned.attention_problems
                rows += run_tuned(section, make(args.smoke), budgets[section], db, arch, args.check)
            runs[section] = {"budget_s": budgets[section], "wall_s": round(time.perf_counter() - section_started, 1)}
    env = suite_report.environment(_device(arch))
    mode = ("smoke, " if args.smoke else "") + ("GPU" if arch is None else "lowering only (no GPU)")
    report = {
        "runs": {section: {**run, "mode": mode, "check": args.check, "date": env["date"]} for section, run in runs.items()},
        "env": env,
        "rows": [{**row, **env} for row in rows],
    }
    json_path, md_path = suite_report.write_results(args.out, report)
    print("\n" + md_path.read_text(), flush=True)
    print(f"wrote {json_path} and {md_path} in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
