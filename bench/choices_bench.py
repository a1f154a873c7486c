#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Two engine-level choices measured side by side with bench/engine_bench
(bench/run-choices-bench.sh builds and calls this):

  - allocator: glibc malloc vs Debian's libtcmalloc-minimal4 preloaded, per model
    at batch 1 and a large batch;
  - layout: 1 instance x N intra-op threads vs N instances x 1 thread (N = cores),
    all instances busy at once, per model at batch 1 and a large batch.

Each pair runs alternately, ROUNDS times; the best of each is compared.
"""
import argparse
import json
import os
import re
import subprocess
import sys

from bench_util import append_section, copy_model

TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"

# model -> (batch sizes, extra engine_bench flags)
MODELS = {
    "fraud_xgb": ("1,256", []),
    "mlp": ("1,256", []),
    "resnet18": ("1,8", []),
    "text_classifier": ("1,16", ["--shape", "input_ids:64", "--shape", "attention_mask:64",
                                 "--int-max", "1000"]),
}


def engine(engine_bench, repo, model, seconds, env=None):
    batches, extra = MODELS[model]
    cmd = [engine_bench, "--model-repository", repo, "--model", model,
           "--batch-sizes", batches, "--seconds", str(seconds), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                       env={**os.environ, **(env or {})})
    out = {}
    for line in r.stdout.splitlines():
        if line.startswith("ENGINE_JSON "):
            e = json.loads(line[len("ENGINE_JSON "):])
            out[e["batch"]] = e["rows_per_s"]
    if not out:
        raise RuntimeError("engine_bench failed: %s" % r.stderr[-2000:])
    return cmd, out


def layout(repo, model, instances, threads):
    """A copy of `model` as `instances` instances x `threads` intra-op threads."""
    def edit(text):
        text = re.sub(r"count: \d+\n", "", text)
        text = text.replace("kind: KIND_CPU", "count: %d\n    kind: KIND_CPU" % instances)
        return text + ('\nparameters { key: "intra_op_threads" value: { string_value: "%d" } }\n'
                       % threads)
    name = copy_model(repo, model, "%s_%dx%d" % (model, instances, threads), edit)
    MODELS[name] = MODELS[model]
    return name


def best(runs):
    return {b: max(r[b] for r in runs) for b in runs[0]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--engine-bench", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--header", required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seconds", type=float, default=2.0)
    a = p.parse_args()
    cores = os.cpu_count()
    lines = []
    example_cmd = None
    for model in MODELS.copy():
        # Allocator.
        glibc, tc = [], []
        for _ in range(a.rounds):
            example_cmd, r = engine(a.engine_bench, a.models, model, a.seconds)
            glibc.append(r)
            _, r = engine(a.engine_bench, a.models, model, a.seconds, {"LD_PRELOAD": TCMALLOC})
            tc.append(r)
        g, t = best(glibc), best(tc)
        parts = ["batch %d: glibc %.0f, tcmalloc %.0f rows/s (%.2fx)" % (b, g[b], t[b], t[b] / g[b])
                 for b in sorted(g)]
        lines.append("- allocator, %s: %s" % (model, "; ".join(parts)))
        print(lines[-1], file=sys.stderr)
        # Layout.
        wide = layout(a.models, model, 1, cores)
        split = layout(a.models, model, cores, 1)
        one, many = [], []
        for _ in range(a.rounds):
            one.append(engine(a.engine_bench, a.models, wide, a.seconds)[1])
            many.append(engine(a.engine_bench, a.models, split, a.seconds)[1])
        o, m = best(one), best(many)
        parts = ["batch %d: 1x%d %.0f, %dx1 %.0f rows/s (%.2fx)"
                 % (b, cores, o[b], cores, m[b], m[b] / o[b]) for b in sorted(o)]
        lines.append("- layout, %s (all instances busy): %s" % (model, "; ".join(parts)))
        print(lines[-1], file=sys.stderr)
    example = ("- each pair alternately, best of %d rounds of %g s; e.g. `%s` "
               "(allocator: the example configs, Ferry's default layout; tcmalloc: `LD_PRELOAD=%s`; "
               "layout: copies of the config with `count` and `intra_op_threads` set)"
               % (a.rounds, a.seconds, " ".join(example_cmd).replace(a.models, "$MODELS"),
                  TCMALLOC))
    append_section(a.results, "engine choices: allocator and instance layout", a.header,
                   [example] + lines)
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
