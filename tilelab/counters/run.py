"""The child process of :func:`tilelab.counters.ncu.profile`: ``python -m tilelab.counters.run FOLDER``.

Reads ``kernel.json`` (the PrimFunc as TVM JSON and its compile options) and
``inputs.pt`` (optional) from FOLDER, compiles the kernel, runs it once and
waits for the GPU.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


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
    main(Path(sys.argv[1]))
