"""How many configs each problem's search may measure, so that a section ends inside its wall-clock budget.

``tilelab.tune(..., search="optuna", budget=N)`` takes a count. The suite turns
the section's seconds into counts with a cost model of one sweep:

- a fixed cost per problem: the static prior elaborating a sample of the space,
  the last wave of compiles, the re-benchmark of the top three, then the
  suite's own check and re-time of the winner beside torch;
- per config, the slower of two pipelines that overlap on a GPU: the compile
  workers (``compile_s`` a config on one of ``workers`` processes) and the one
  bench slot (build from the cache, run once, compare with the reference, time).
  The comparison copies the kernel's output and the reference's to the host
  and runs ``allclose`` there (``tilelab.tune``'s check, once per config), so
  it grows with the output: ``check_ns`` per output element.

The first problem also starts the compile workers (``startup_s``: each imports
TileLang). Every problem of what is left gets the same count (the big GEMMs take longer
per config, so they get more of the seconds), recomputed before each problem
from the time left. After each problem the model learns the ratio of measured
to modelled seconds (``scale``), so a wrong guess of the constants costs one
problem, not the section. The section's hard stop (``run_suite.budget``)
stays as the safety net.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["MAX_SCALE", "MIN_BUDGET", "MIN_SCALE", "CostModel", "Plan", "cost_model"]

MIN_BUDGET = 8  # configs: below this a search is a guess (the first batch is the static prior's)
MIN_SCALE, MAX_SCALE = 0.3, 5.0  # what one problem may teach the model


@dataclass(frozen=True)
class Plan:
    """One problem's share: its count of configs and the seconds the model expects it to take."""

    budget: int
    expected_s: float
    per_config_s: float
    seconds_left: float
    problems_left: int

    def as_dict(self) -> dict[str, float | int]:
        return {"budget": self.budget, "expected_s": round(self.expected_s, 1), "per_config_s": round(self.per_config_s, 3),
                "seconds_left": round(self.seconds_left, 1), "problems_left": self.problems_left}  # fmt: skip


@dataclass
class CostModel:
    """Seconds of a sweep, as the module docstring says; ``scale`` is learnt from the problems run."""

    compile_s: float
    workers: int
    bench_s: float
    check_ns: float
    fixed_s: float
    startup_s: float = 0.0
    scale: float = 1.0
    measured_s: float = field(default=0.0, repr=False)
    modelled_s: float = field(default=0.0, repr=False)

    def per_config_s(self, outputs: int) -> float:
        """Seconds one config adds to a sweep whose kernel writes ``outputs`` elements."""
        bench = self.bench_s + self.check_ns * 1e-9 * outputs
        return self.scale * max(self.compile_s / max(self.workers, 1), bench)

    def plan(self, outputs: list[int], seconds_left: float, space: int) -> Plan:
        """The next problem's count: ``outputs`` lists its output size first, then the other problems left."""
        per_config = [self.per_config_s(size) for size in outputs]
        first = self.fixed_s + (0.0 if self.modelled_s else self.startup_s)
        spare = seconds_left - first - self.fixed_s * (len(outputs) - 1)
        count = int(spare / sum(per_config)) if spare > 0 else 0
        budget = min(space, max(MIN_BUDGET, count))
        return Plan(budget, first + budget * per_config[0], per_config[0], seconds_left, len(outputs))

    def learn(self, outputs: int, configs: int, seconds: float) -> None:
        """Fold in one problem that measured ``configs`` configs in ``seconds`` (fixed cost included)."""
        if configs <= 0:
            return
        unscaled = self.per_config_s(outputs) / self.scale
        self.measured_s += max(seconds - self.fixed_s - (0.0 if self.modelled_s else self.startup_s), 0.0)
        self.modelled_s += configs * unscaled
        self.scale = min(MAX_SCALE, max(MIN_SCALE, self.measured_s / self.modelled_s))


def cost_model(section: str, check: bool = True, workers: int | None = None) -> CostModel:
    """The starting model of a section (``check=False``: the tuner does not compare each config with torch).

    Constants: H100 and H200 runs (``notes_vendor_speed.md``, ``results/tune_gemm.json``): a GEMM compiles in
    ~4.5 s on one of 16 workers, an attention kernel in 7-9 s; a benchmark takes ~0.15 s plus building and
    the first call; the host-side comparison is a guess of 8 ns per output element (fp32 copies of both
    outputs and ``allclose`` on 16 cores), which the first problem corrects. Starting 16 workers: ~15 s.
    """
    workers = workers or len(os.sched_getaffinity(0))
    compile_s = {"gemm": 4.5, "attention": 8.0}[section]
    check_ns = 8.0 if check else 0.0
    return CostModel(compile_s=compile_s, workers=workers, bench_s=0.3, check_ns=check_ns, fixed_s=15.0, startup_s=15.0)
