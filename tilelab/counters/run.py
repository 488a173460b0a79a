"""The child process of :func:`tilelab.counters.ncu.profile`: ``python -m tilelab.counters.run FOLDER [PID]``.

Reads ``kernel.json`` (the PrimFunc as TVM JSON and its compile options) and
``inputs.pt`` (optional) from FOLDER, compiles the kernel, runs it once and
waits for the GPU. It ends with process ``PID`` (the notebook's kernel that
asked for the profile): ncu runs in a session of its own, which the signal of a
restarted kernel does not reach, and a kernel that hangs would hold the GPU on.
"""

from __future__ import annotations

import json
import os
import select
import sys
import threading
import time
from pathlib import Path

from tilelab.scratch import process_alive


def _exit_with(asker: int) -> None:
    """End this process, whatever it is waiting for, once process ``asker`` has ended."""
    try:
        ended = os.pidfd_open(asker)
    except ProcessLookupError:
        os._exit(1)
    except OSError:  # no pidfd here: ask every second
        while process_alive(asker):
            time.sleep(1.0)
        os._exit(1)
    select.select([ended], [], [])
    os._exit(1)


def _random_inputs(kernel) -> list:
    from tilelang.utils.tensor import TensorSupplyType, get_tensor_supply

    supply = get_tensor_supply(TensorSupplyType.Auto)
    outputs = set(kernel.out_idx or [])
    return [supply(param) for index, param in enumerate(kernel.params) if index not in outputs]


def main(folder: Path) -> None:
    spec = json.loads((folder / "kernel.json").read_text())
    import tilelang  # before tvm: it bundles its own
    import torch
    import tvm

    kernel = tilelang.compile(
        tvm.ir.load_json(spec["func"]),
        out_idx=spec["out_idx"],
        target=spec["target"],
        execution_backend=spec["execution_backend"],
        pass_configs=spec["pass_configs"],
        compile_flags=spec["compile_flags"],
    )
    saved = folder / "inputs.pt"
    if saved.exists():
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in torch.load(saved, weights_only=False)]
    else:
        inputs = _random_inputs(kernel)
    kernel(*inputs)
    torch.cuda.synchronize()


if __name__ == "__main__":
    if len(sys.argv) > 2:
        threading.Thread(target=_exit_with, args=(int(sys.argv[2]),), daemon=True).start()
    main(Path(sys.argv[1]))
