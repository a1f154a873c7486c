#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Black-box tests of `ferry bench` against a real `ferry serve`: HTTP JSON and
binary, gRPC, closed and open loop, the server-side split from /metrics, the
JSON and CSV outputs, errors counted by code, and the clear failures before
the first request (unknown model, no server, bad flags, a variable dimension
without --shape).

    /usr/bin/python3 tests/cli/ferry_bench_test.py build/ferry .
"""
import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test_util"))
from ferry_server import FerryServer  # noqa: E402

FERRY = None
SOURCE_DIR = None
TMP = None
SERVER = None

# Variable-length rows: the bench needs --shape for them.
VARLEN_CONFIG = """
platform: "identity"
max_batch_size: 16
input [ { name: "x" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ -1 ] } ]
dynamic_batching { max_queue_delay_microseconds: 2000 }
"""

# A row whose first value is 13 fails in the engine (INTERNAL → HTTP 500).
POISON_CONFIG = """
platform: "identity"
max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 1 ] } ]
parameters { key: "fail_on_first_value" value { string_value: "13" } }
"""

# Short points: a 0.5 s warm-up and up to three 0.5 s windows.
QUICK = ["--warmup-seconds", "0.5", "--window-seconds", "0.5", "--max-windows", "3",
         "--stability-percent", "50"]


def bench(*args, timeout=120):
    return subprocess.run([FERRY, "bench", *args], capture_output=True, text=True,
                          timeout=timeout)


def bench_json(*args):
    out = os.path.join(TMP, "out-%d.json" % os.getpid())
    r = bench(*args, "--json", out)
    data = None
    if os.path.exists(out):
        with open(out) as f:
            data = json.load(f)
        os.remove(out)
    return r, data


class BenchTest(unittest.TestCase):
    def check_point(self, p):
        self.assertGreater(p["requests"], 0, p)
        self.assertEqual(p["failed"], 0, p)
        self.assertEqual(p["abandoned"], 0, p)
        lat = p["latency_us"]
        self.assertLessEqual(lat["p50"], lat["p90"])
        self.assertLessEqual(lat["p90"], lat["p99"])
        self.assertLessEqual(lat["p99"], lat["p99.9"])
        self.assertLessEqual(lat["p99.9"], lat["max"])
        self.assertGreater(lat["p50"], 0)
        self.assertAlmostEqual(p["requests_per_s"] * p["seconds"], p["requests"], delta=1)
        # The server saw at least what the client measured (plus warm-up).
        self.assertGreaterEqual(p["server"]["requests"], p["requests"])
        self.assertGreaterEqual(p["server"]["avg_batch_rows"], 1)
        self.assertGreater(p["server"]["avg_compute_us"], 0)

    def test_http_json_closed_loop_sweep(self):
        csv_path = os.path.join(TMP, "sweep.csv")
        r, data = bench_json("-m", "fraud_xgb", "-u", SERVER.url, "--concurrency", "1,4",
                             "--csv", csv_path, *QUICK)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("c=1", r.stdout)
        self.assertIn("c=4", r.stdout)
        self.assertEqual(data["protocol"], "http")
        self.assertEqual([p["concurrency"] for p in data["results"]], [1, 4])
        for p in data["results"]:
            self.check_point(p)
            self.assertEqual(p["rows"], p["requests"])
        # Four clients in flight make batches of more than one row.
        self.assertGreater(data["results"][1]["server"]["avg_batch_rows"], 1.0)
        with open(csv_path) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["concurrency"] for r in rows], ["1", "4"])
        self.assertEqual(float(rows[0]["requests_per_s"]),
                         round(data["results"][0]["requests_per_s"], 1))

    def test_http_binary_rows_per_request(self):
        r, data = bench_json("-m", "fraud_xgb", "-u", SERVER.url, "--binary",
                             "--batch-size", "8", "--concurrency", "2", *QUICK)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(data["protocol"], "http-binary")
        self.assertEqual(data["rows_per_request"], 8)
        p = data["results"][0]
        self.check_point(p)
        self.assertEqual(p["rows"], 8 * p["requests"])
        self.assertGreaterEqual(p["server"]["avg_batch_rows"], 8)

    def test_grpc_open_loop_keeps_its_rate(self):
        r, data = bench_json("-m", "fraud_xgb", "--protocol", "grpc", "-u", SERVER.grpc_target,
                             "--metrics-url", SERVER.url + "/metrics",
                             "--request-rate", "200", "--arrivals", "constant", *QUICK)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(data["protocol"], "grpc")
        p = data["results"][0]
        self.assertEqual(p["request_rate"], 200)
        self.check_point(p)
        self.assertAlmostEqual(p["requests_per_s"], 200, delta=200 * 0.2)

    def test_grpc_closed_loop_without_metrics(self):
        r, data = bench_json("-m", "fraud_xgb", "--protocol", "grpc", "-u", SERVER.grpc_target,
                             "--concurrency", "8", *QUICK)
        self.assertEqual(r.returncode, 0, r.stderr)
        p = data["results"][0]
        self.assertGreater(p["requests"], 0)
        self.assertNotIn("server", p)  # gRPC has no /metrics unless told

    def test_bursty_open_loop(self):
        r, data = bench_json("-m", "fraud_xgb", "-u", SERVER.url, "--request-rate", "300",
                             "--arrivals", "bursty:50/50", *QUICK)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_point(data["results"][0])

    def test_variable_dimension_needs_a_shape(self):
        r = bench("-m", "varlen", "-u", SERVER.url, *QUICK)
        self.assertEqual(r.returncode, 2)
        self.assertIn("input 'x' has a variable dimension", r.stderr)
        self.assertIn("--shape x:64", r.stderr)
        r, data = bench_json("-m", "varlen", "-u", SERVER.url, "--shape", "x:5",
                             "--batch-size", "2", *QUICK)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_point(data["results"][0])
        self.assertEqual(data["results"][0]["server"]["padding_waste"], 0)

    def test_ranged_shapes_send_requests_of_different_lengths(self):
        for proto in (["-u", SERVER.url], ["--protocol", "grpc", "-u", SERVER.grpc_target,
                                           "--metrics-url", SERVER.url + "/metrics"]):
            r, data = bench_json("-m", "varlen", *proto, "--shape", "x:2-40",
                                 "--concurrency", "8", *QUICK)
            self.assertEqual(r.returncode, 0, r.stderr)
            p = data["results"][0]
            self.check_point(p)
            # Batches mixed lengths, so some elements were padding.
            self.assertGreater(p["server"]["padding_waste"], 0, p)
            self.assertLess(p["server"]["padding_waste"], 1, p)

    def test_server_errors_are_counted_by_code(self):
        request = os.path.join(TMP, "poison.json")
        with open(request, "w") as f:
            json.dump({"inputs": [{"name": "x", "shape": [1, 1], "datatype": "FP32",
                                   "data": [13]}]}, f)
        r, data = bench_json("-m", "poison", "-u", SERVER.url, "--input-data", request,
                             "--concurrency", "2", *QUICK)
        self.assertEqual(r.returncode, 1, r.stderr)
        p = data["results"][0]
        self.assertEqual(p["requests"], 0)
        self.assertGreater(p["errors"]["http 500"], 0)
        self.assertIn("http 500", r.stdout)

    def test_failures_before_the_first_request_are_clear(self):
        r = bench("-m", "no_such_model", "-u", SERVER.url)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no_such_model", r.stderr)
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            closed = s.getsockname()[1]
        r = bench("-m", "fraud_xgb", "-u", "http://127.0.0.1:%d" % closed)
        self.assertEqual(r.returncode, 2)
        self.assertIn("127.0.0.1:%d" % closed, r.stderr)
        r = bench("-m", "fraud_xgb", "-u", SERVER.url, "--arrivals", "gauss",
                  "--request-rate", "10")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--arrivals 'gauss'", r.stderr)
        r = bench("-m", "fraud_xgb", "-u", SERVER.url, "--concurrency", "1,x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--concurrency '1,x'", r.stderr)
        r = bench("-m", "fraud_xgb", "--protocol", "grpc", "--binary")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--binary", r.stderr)
        r = bench("-m", "fraud_xgb", "-u", SERVER.url, "--input-data",
                  os.path.join(TMP, "missing.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.json", r.stderr)


def setUpModule():
    global TMP, SERVER
    TMP = tempfile.mkdtemp(prefix="ferry-bench-test-")
    repo = os.path.join(TMP, "models")
    subprocess.run([os.path.join(SOURCE_DIR, "tools", "make-example-models"), repo,
                    "--only", "fraud_xgb"], check=True, stdout=subprocess.DEVNULL)
    for name, config in (("varlen", VARLEN_CONFIG), ("poison", POISON_CONFIG)):
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(config)
    SERVER = FerryServer(FERRY, repo)


def tearDownModule():
    try:
        if SERVER is not None:
            SERVER.stop_checked()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    FERRY, SOURCE_DIR = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
