#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a CSV of N rows x F float features (columns id, f0..f{F-1}) for the
offline benchmarks and crash tests, deterministic for a given --seed.

  bench/make_tabular_csv.py --rows 1000000 --features 32 out.csv
  --malformed 0.01   makes that fraction of rows unparseable (a word in a
                     numeric column); their ids are listed on stderr.
"""
import argparse
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--malformed", type=float, default=0.0)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    bad = set()
    if a.malformed > 0:
        bad = set(rng.choice(a.rows, size=int(a.rows * a.malformed),
                             replace=False).tolist())
    header = "id," + ",".join(f"f{i}" for i in range(a.features)) + "\n"
    block = 100_000
    with open(a.out, "w") as f:
        f.write(header)
        for start in range(0, a.rows, block):
            n = min(block, a.rows - start)
            x = rng.normal(size=(n, a.features)).astype(np.float32)
            lines = []
            for k in range(n):
                row = start + k
                vals = [f"{v:.5g}" for v in x[k]]
                if row in bad:
                    vals[k % a.features] = "n/a"
                lines.append(f"{row}," + ",".join(vals) + "\n")
            f.write("".join(lines))
    if bad:
        sys.stderr.write(" ".join(str(r) for r in sorted(bad)) + "\n")


if __name__ == "__main__":
    main()
