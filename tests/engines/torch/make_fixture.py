# SPDX-License-Identifier: Apache-2.0
"""Writes the TorchScript fixtures for torch_engine_test.cc into a directory.

Run by the test as `/usr/bin/python3 make_fixture.py OUT_DIR`. Each model goes to
OUT_DIR/<name>/model.pt; the MLP also gets reference data computed by Python:
  mlp_inputs.bin   float32 [N, 64], row-major
  mlp_outputs.bin  float32 [N, 1], what the scripted module returns for those rows
"""
import os
import sys
from typing import Dict, Tuple

import torch

MLP_ROWS = 8


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class TwoInputs(torch.nn.Module):
    """x: FP32 [B, 4], ids: INT64 [B, L] -> (x * 2 + sum(ids), ids + 1)."""

    def forward(self, x: torch.Tensor,
                ids: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        offset = ids.sum(dim=1, keepdim=True).to(torch.float32)
        return x * 2.0 + offset, ids + 1


class DictOutputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        logits = self.proj(x)
        return {"logits": logits, "probs": torch.softmax(logits, dim=1)}


class IntOutput(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x > 0).to(torch.int64)


class Identity(torch.nn.Module):
    """Returns its input itself, so the output aliases the caller's input bytes."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class SumRows(torch.nn.Module):
    """Collapses the batch: dimension 0 of the output is 1 whatever the input's is."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=0, keepdim=True)


def save(module: torch.nn.Module, out_dir: str, name: str) -> torch.jit.ScriptModule:
    scripted = torch.jit.script(module.eval())
    os.makedirs(os.path.join(out_dir, name), exist_ok=True)
    scripted.save(os.path.join(out_dir, name, "model.pt"))
    return scripted


def main() -> None:
    out_dir = sys.argv[1]
    torch.manual_seed(1234)

    mlp = save(Mlp(), out_dir, "mlp")
    rows = torch.randn(MLP_ROWS, 64, dtype=torch.float32)
    with torch.no_grad():
        expected = mlp(rows)
    rows.numpy().tofile(os.path.join(out_dir, "mlp_inputs.bin"))
    expected.numpy().astype("float32").tofile(
        os.path.join(out_dir, "mlp_outputs.bin"))

    save(TwoInputs(), out_dir, "two_inputs")
    save(DictOutputs(), out_dir, "dict_outputs")
    save(IntOutput(), out_dir, "int_output")
    save(Identity(), out_dir, "identity")
    save(SumRows(), out_dir, "sum_rows")


if __name__ == "__main__":
    main()
