#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Online serving against the physical limit, in one run (bench/run-serving-bench.sh
builds and calls this): `ferry serve` driven by `ferry bench` on the same machine,
divided by bench/engine_bench (the model's engine instances in a tight loop).

Rows:
  - latency overhead: Ferry p50 at concurrency 1 minus the bare engine's p50 at
    batch 1, with the example config (max_queue_delay 500 us, which a lone request
    waits out) and with the delay at 0;
  - serving efficiency: Ferry rows/s at saturation ÷ the bare engine at the batch
    size Ferry reached (from /metrics), over HTTP binary and gRPC;
  - batching gain over the wire (HTTP binary and gRPC): dynamic batching on ÷ off
    (no dynamic_batching block: one request per batch) at 64 and 256 clients;
  - variable length: text_classifier with random lengths 8..128, length bucketing
    on (max_padding_waste 0.25) vs off (1.0): throughput and padding waste.

  serving_bench.py --ferry build-bench/ferry --engine-bench build-bench/bench/engine_bench
                   --models DIR --results bench/RESULTS.md --command "..."
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "test_util"))
from ferry_server import FerryServer  # noqa: E402
from bench_util import append_section, copy_model  # noqa: E402


def variant(repo, model, suffix, edit):
    """Copies repo/model to repo/model_suffix with its config edited."""
    return copy_model(repo, model, model + "_" + suffix, edit)


def no_delay(text):
    return re.sub(r"max_queue_delay_microseconds: \d+", "max_queue_delay_microseconds: 0", text)


def no_batching(text):
    return re.sub(r"dynamic_batching \{[^}]*\}\n", "", text)


class Bench:
    def __init__(self, args, server):
        self.args = args
        self.server = server
        self.commands = []

    def ferry_bench(self, model, protocol, concurrency, window=2.0, windows=3, extra=()):
        out = os.path.join(self.args.tmp, "bench.json")
        cmd = [self.args.ferry, "bench", "-m", model, "--concurrency", str(concurrency),
               "--warmup-seconds", "1", "--window-seconds", str(window),
               "--max-windows", str(windows), "--json", out,
               "--metrics-url", self.server.url + "/metrics", *extra]
        if protocol == "grpc":
            cmd += ["--protocol", "grpc", "-u", self.server.grpc_target]
        else:
            cmd += ["-u", self.server.url, "--binary"]
        self.commands.append(cmd)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode not in (0, 1):
            raise RuntimeError("ferry bench failed: %s" % r.stderr)
        with open(out) as f:
            point = json.load(f)["results"][0]
        print("  %s %s c=%d: %.0f rows/s, p50 %.0f us, avg batch %.1f, generator %.2f cores"
              % (model, protocol, concurrency, point["rows_per_s"], point["latency_us"]["p50"],
                 point.get("server", {}).get("avg_batch_rows", 0), point["client_cpu_cores"]),
              file=sys.stderr)
        return point

    def engine(self, model, batch, seconds=2.0):
        cmd = [self.args.engine_bench, "--model-repository", self.args.models, "--model", model,
               "--batch-sizes", str(batch), "--seconds", str(seconds)]
        self.commands.append(cmd)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        for line in r.stdout.splitlines():
            if line.startswith("ENGINE_JSON "):
                e = json.loads(line[len("ENGINE_JSON "):])
                print("  bare %s batch %d: %.0f rows/s, p50 %.0f us"
                      % (model, batch, e["rows_per_s"], e["p50_us"]), file=sys.stderr)
                return e
        raise RuntimeError("engine_bench failed: %s %s" % (r.stdout, r.stderr))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ferry", required=True)
    p.add_argument("--engine-bench", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--header", required=True, help="markdown lines for the section head")
    p.add_argument("--efficiency-models", default="fraud_xgb,mlp,resnet18")
    a = p.parse_args()
    a.tmp = tempfile.mkdtemp(prefix="ferry-serving-bench-")
    variants = {}
    for m in ("fraud_xgb", "mlp"):
        variants[m] = (variant(a.models, m, "nodelay", no_delay),
                       variant(a.models, m, "nobatch", no_batching))
    no_bucketing = variant(
        a.models, "text_classifier", "nobucket",
        lambda t: t + '\nparameters { key: "max_padding_waste" value: { string_value: "1" } }\n')
    server = FerryServer(a.ferry, a.models)
    b = Bench(a, server)
    lines = []
    try:
        # 1. Latency overhead at concurrency 1.
        print("latency overhead...", file=sys.stderr)
        for m in ("fraud_xgb", "mlp"):
            bare = b.engine(m, 1)
            for name, label in ((m, "example config"), (variants[m][0], "delay 0")):
                for proto in ("http", "grpc"):
                    pt = b.ferry_bench(name, proto, 1)
                    over = pt["latency_us"]["p50"] - bare["p50_us"]
                    lines.append(
                        "- latency overhead, %s (%s), %s: Ferry p50 %.0f µs − bare engine p50 "
                        "at batch 1 %.0f µs = **%.0f µs** (target ≤ 100: %s); Ferry p99 %.0f µs"
                        % (m, label, "HTTP binary" if proto == "http" else "gRPC",
                           pt["latency_us"]["p50"], bare["p50_us"], over,
                           "met" if over <= 100 else "MISSED", pt["latency_us"]["p99"]))
        # 2. Serving efficiency at saturation.
        print("serving efficiency...", file=sys.stderr)
        for m in a.efficiency_models.split(","):
            clients = 16 if m == "resnet18" else 256
            for proto in ("http", "grpc"):
                pt = b.ferry_bench(m, proto, clients, window=3.0 if m == "resnet18" else 2.0)
                batch = max(1, round(pt.get("server", {}).get("avg_batch_rows", 1)))
                bare = b.engine(m, batch, seconds=3.0 if m == "resnet18" else 2.0)
                eff = pt["rows_per_s"] / bare["rows_per_s"] if bare["rows_per_s"] else 0
                lines.append(
                    "- serving efficiency, %s, %s, %d clients: Ferry %.0f rows/s at avg batch "
                    "%.1f ÷ bare engine %.0f rows/s at batch %d = **%.2f** (target ≥ 0.95: %s); "
                    "p99 %.1f ms; the generator used %.2f cores of the same 2"
                    % (m, "HTTP binary" if proto == "http" else "gRPC", clients, pt["rows_per_s"],
                       pt.get("server", {}).get("avg_batch_rows", 0), bare["rows_per_s"], batch,
                       eff, "met" if eff >= 0.95 else "MISSED", pt["latency_us"]["p99"] / 1e3,
                       pt["client_cpu_cores"]))
        # 3. Batching gain over the wire.
        print("batching gain...", file=sys.stderr)
        for m in ("fraud_xgb", "mlp"):
            for proto in ("http", "grpc"):
                for clients in (64, 256):
                    on = b.ferry_bench(m, proto, clients)
                    off = b.ferry_bench(variants[m][1], proto, clients)
                    gain = on["rows_per_s"] / off["rows_per_s"] if off["rows_per_s"] else 0
                    lines.append(
                        "- batching gain over %s, %s, %d clients: on %.0f rows/s (avg batch "
                        "%.1f, p99 %.1f ms) ÷ off %.0f rows/s (p99 %.1f ms) = **%.1fx**"
                        % ("HTTP binary" if proto == "http" else "gRPC", m, clients,
                           on["rows_per_s"], on.get("server", {}).get("avg_batch_rows", 0),
                           on["latency_us"]["p99"] / 1e3, off["rows_per_s"],
                           off["latency_us"]["p99"] / 1e3, gain))
        # 4. Variable length: bucketing on vs off.
        print("variable length...", file=sys.stderr)
        varlen = ["--shape", "input_ids:8-128", "--shape", "attention_mask:8-128",
                  "--int-max", "1000"]
        on = b.ferry_bench("text_classifier", "grpc", 64, extra=varlen)
        off = b.ferry_bench(no_bucketing, "grpc", 64, extra=varlen)
        lines.append(
            "- variable length, text_classifier, lengths 8..128, gRPC, 64 clients: bucketing on "
            "%.0f rows/s, padding waste %.0f %%, avg batch %.1f, p99 %.1f ms; off %.0f rows/s, "
            "padding waste %.0f %%, avg batch %.1f, p99 %.1f ms; on ÷ off **%.2fx**"
            % (on["rows_per_s"], 100 * on["server"]["padding_waste"],
               on["server"]["avg_batch_rows"], on["latency_us"]["p99"] / 1e3,
               off["rows_per_s"], 100 * off["server"]["padding_waste"],
               off["server"]["avg_batch_rows"], off["latency_us"]["p99"] / 1e3,
               on["rows_per_s"] / off["rows_per_s"] if off["rows_per_s"] else 0))
    finally:
        rc = server.stop()
        shutil.rmtree(a.tmp, ignore_errors=True)
        if rc != 0:
            print("ferry serve exited %s" % rc, file=sys.stderr)
    for line in lines:
        print(line)
    example = ("- each point: `ferry bench` 1 s warm-up, then 2 s windows (3 s for resnet18) "
               "until 3 agree or 3 ran; server and generator share the machine's cores. "
               "Commands, e.g. `%s` and `%s`"
               % (" ".join(b.commands[1]).replace(a.models, "$MODELS"),
                  " ".join(b.commands[0]).replace(a.models, "$MODELS")))
    append_section(a.results, "serving: ferry serve + ferry bench vs the bare engine",
                   a.header, [example] + lines)

if __name__ == "__main__":
    main()
