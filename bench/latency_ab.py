#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Before/after for a change on the request path (bench/run-latency-ab.sh builds and
calls this): two `ferry` binaries serve the same models in turn, and `ferry bench`
measures each at concurrency 1 (fraud_xgb and mlp with max_queue_delay 0, HTTP binary
and gRPC), alternating before/after for --rounds rounds so that drift of the shared
machine hits both alike. Reports p50/p99 and the after/before ratio of the medians.

  latency_ab.py --before OLD/ferry --after NEW/ferry --models DIR --results RESULTS.md
                --header "..."
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "test_util"))
from ferry_server import FerryServer  # noqa: E402
from bench_util import append_section, copy_model  # noqa: E402


def measure(bench, server, model, protocol, out):
    cmd = [bench, "bench", "-m", model, "--concurrency", "1", "--warmup-seconds", "1",
           "--window-seconds", "2", "--max-windows", "3", "--json", out]
    if protocol == "grpc":
        cmd += ["--protocol", "grpc", "-u", server.grpc_target]
    else:
        cmd += ["-u", server.url, "--binary"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 1):
        raise RuntimeError("ferry bench failed: %s" % r.stderr)
    with open(out) as f:
        return json.load(f)["results"][0]["latency_us"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--before", required=True, help="the ferry binary before the change")
    p.add_argument("--after", required=True, help="the ferry binary after the change")
    p.add_argument("--models", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--header", required=True)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="ferry-latency-ab-")
    out = os.path.join(tmp, "bench.json")
    models = [copy_model(a.models, m, m + "_nodelay",
                         lambda t: re.sub(r"max_queue_delay_microseconds: \d+",
                                          "max_queue_delay_microseconds: 0", t))
              for m in ("fraud_xgb", "mlp")]
    points = {}  # (model, protocol, side) -> [latency dicts]
    for rnd in range(a.rounds):
        for side, binary in (("before", a.before), ("after", a.after)):
            server = FerryServer(binary, a.models)
            try:
                for m in models:
                    for proto in ("http", "grpc"):
                        lat = measure(a.after, server, m, proto, out)
                        points.setdefault((m, proto, side), []).append(lat)
                        print("round %d %s %s %s: p50 %.0f µs, p99 %.0f µs"
                              % (rnd + 1, side, m, proto, lat["p50"], lat["p99"]),
                              file=sys.stderr)
            finally:
                server.stop()
    lines = []
    for m in models:
        for proto in ("http", "grpc"):
            b = points[(m, proto, "before")]
            f = points[(m, proto, "after")]
            med = lambda xs, k: statistics.median(x[k] for x in xs)
            lines.append(
                "- %s, %s, concurrency 1: p50 before %s → after %s µs (median %.0f → %.0f, "
                "after/before %.2f); p99 median %.0f → %.0f µs (%.2f)"
                % (m, "HTTP binary" if proto == "http" else "gRPC",
                   " ".join("%.0f" % x["p50"] for x in b), " ".join("%.0f" % x["p50"] for x in f),
                   med(b, "p50"), med(f, "p50"), med(f, "p50") / med(b, "p50"),
                   med(b, "p99"), med(f, "p99"), med(f, "p99") / med(b, "p99")))
    for line in lines:
        print(line)
    append_section(a.results, "latency before/after", a.header, lines)


if __name__ == "__main__":
    main()
