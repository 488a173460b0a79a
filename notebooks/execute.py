"""Execute the notebooks top to bottom and save them with their outputs.

    python notebooks/execute.py [--out DIR] [NAME.ipynb ...]

Used to produce the committed, GPU-executed notebooks. Widget state is not
stored: the outputs keep each view's static HTML snapshot, which GitHub and
nbconvert show, and the files stay small.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def execute(path: Path, out_dir: Path, timeout_s: int) -> Path:
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=timeout_s, kernel_name="python3", store_widget_state=False, resources={"metadata": {"path": str(HERE)}}
    )
    client.execute()
    target = out_dir / path.name
    nbformat.write(notebook, target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    paths = [HERE / name for name in options.names] or sorted(HERE.glob("*.ipynb"))
    for path in paths:
        started = time.perf_counter()
        target = execute(path, options.out, options.timeout)
        print(f"{path.name}: {time.perf_counter() - started:.0f} s, {target.stat().st_size / 1e6:.2f} MB", flush=True)


if __name__ == "__main__":
    main()
