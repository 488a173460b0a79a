"""Speed of the Explorer in the browser: the goals the browser tests only record.

Runs the browser tests that time what a user waits for (a pass diff after a click or ``j``,
a layout tile switch, a SASS line's click to its CUDA line), reads the timings they wrote to
``tests/ui/artifacts/``, and writes ``bench/results/ui.json`` with each goal and whether it was met.
The tests assert behaviour only: a loaded machine makes them slower, never red.

Run: ``python bench/bench_ui.py`` (a real JupyterLab and Debian's Chromium, as ``make test`` sets up).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
ARTIFACTS = ROOT / "tests" / "ui" / "artifacts"
TESTS = [
    "tests/ui/test_passes_ui.py::test_every_click_and_key_in_the_pass_list_shows_that_pass_diff_and_the_timings_are_recorded",
    "tests/ui/test_layouts_ui.py::test_the_sm90_grid_labels_absolute_threads_switches_tiles_and_reads_in_dark",
    "tests/ui/test_machine_ui.py",
]
# (section in the timings, key, goal in ms)
GOALS = [
    ("pass diff after click (ms)", "clicks on changed passes (diffs asked for ahead), median", 150),
    ("pass diff after click (ms)", "clicks against a chosen pass (asked for on click: kernel round trip + drawing), median", 300),
    ("machine_code", "sass_click_to_linked_ms", 200),
]
LAYOUT_SWITCH_GOAL_MS = 300


def main() -> int:
    for name in ("timings.json", "timings_layouts.json"):
        (ARTIFACTS / name).unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", *TESTS], cwd=ROOT)
    timings = json.loads((ARTIFACTS / "timings.json").read_text())
    layouts = json.loads((ARTIFACTS / "timings_layouts.json").read_text())
    results = [
        {"what": f"{section}: {key}", "ms": timings[section][key], "goal_ms": goal, "met": timings[section][key] <= goal}
        for section, key, goal in GOALS
    ]
    slowest = max(switch["ms"] for switch in layouts["switches"])
    results.append({"what": "layout tile switch, slowest", "ms": slowest, "goal_ms": LAYOUT_SWITCH_GOAL_MS,
                    "met": slowest <= LAYOUT_SWITCH_GOAL_MS})  # fmt: skip
    report = {"tests_passed": done.returncode == 0, "goals": results, "timings": timings, "layouts": layouts}
    out = ROOT / "bench" / "results" / "ui.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    for row in results:
        print(f"{'met ' if row['met'] else 'MISS'} {row['ms']:8.1f} ms (goal {row['goal_ms']}) {row['what']}")
    return 0 if done.returncode == 0 and all(row["met"] for row in results) else 1


if __name__ == "__main__":
    sys.exit(main())
