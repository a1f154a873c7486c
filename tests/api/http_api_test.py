# SPDX-License-Identifier: Apache-2.0
"""Black-box tests of Ferry's HTTP API: the real `ferry serve` binary over real
sockets, driven with Debian's python3-requests. Covers every endpoint of
docs/api.md, JSON and binary inference, the error mapping, batching under 64
concurrent clients, and the drain on SIGTERM.

Run by CTest as: /usr/bin/python3 http_api_test.py FERRY_BINARY SOURCE_DIR
"""

import concurrent.futures
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np
import requests

FERRY = None
SOURCE_DIR = None
REPO = None
SERVER = None  # the shared server, started once for the module
URL = None

IDENT_CONFIG = """
platform: "identity"
max_batch_size: 8
input [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] },
        { name: "b" data_type: TYPE_INT64 dims: [ 1 ] } ]
output [ { name: "A" data_type: TYPE_FP32 dims: [ 2 ] },
         { name: "B" data_type: TYPE_INT64 dims: [ 1 ] } ]
dynamic_batching {
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 2
}
parameters { key: "fail_on_first_value" value { string_value: "13" } }
"""

# 200 ms per batch of at most 4: requests queue, so timeouts and the drain show.
SLOW_CONFIG = """
platform: "identity"
max_batch_size: 4
input [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "A" data_type: TYPE_FP32 dims: [ 2 ] } ]
dynamic_batching {
  max_queue_delay_microseconds: 1000
  default_queue_policy {
    default_timeout_microseconds: 30000000
    allow_timeout_override: true
  }
}
parameters { key: "execute_delay_us" value { string_value: "200000" } }
"""

# 10 ms per batch of up to 64 rows: while a batch runs the next one fills up, as
# long as waiting requests hold no I/O thread.
BATCHY_CONFIG = """
platform: "identity"
max_batch_size: 64
input [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "A" data_type: TYPE_FP32 dims: [ 2 ] } ]
dynamic_batching { max_queue_delay_microseconds: 2000 }
parameters { key: "execute_delay_us" value { string_value: "10000" } }
"""
MODELS = {"fraud_xgb", "mlp", "ident", "slow", "batchy"}


def write_identity_model(repo, name, config):
    os.makedirs(os.path.join(repo, name, "1"), exist_ok=True)
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(config)


class Server:
    """A `ferry serve` process on a free loopback port."""

    def __init__(self, repo, *extra):
        self.proc = subprocess.Popen(
            [FERRY, "serve", "--model-repository", repo, "--http-address", "127.0.0.1",
             "--http-port", "0", "--grpc-port", "0", "--http-threads", "2", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # printed once LoadAll finished
        m = re.search(r"http_port=(\d+)", line)
        if not m:
            self.proc.kill()
            raise RuntimeError("no port line from ferry serve: %r, stderr: %s" %
                               (line, self.proc.stderr.read()))
        self.startup_line = line
        g = re.search(r"grpc_port=(\d+)", line)
        self.grpc_target = "127.0.0.1:%s" % g.group(1) if g else None
        self.url = "http://127.0.0.1:%s" % m.group(1)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if requests.get(self.url + "/v2/health/ready", timeout=5).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.05)
        raise RuntimeError("ferry serve never became ready")

    def stop(self):
        """SIGTERM; returns (exit code, stderr)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=60)
            return self.proc.returncode, err
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def example(name):
    with open(os.path.join(SOURCE_DIR, "tools", "examples", name + ".json")) as f:
        return json.load(f)


def post(path, body=None, **kw):
    return requests.post(URL + path, json=body, timeout=60, **kw)


def get(path, **kw):
    return requests.get(URL + path, timeout=60, **kw)


def ident_request(a=(1.5, -2.0), b=7, **extra):
    req = {"inputs": [
        {"name": "a", "shape": [1, 2], "datatype": "FP32", "data": list(a)},
        {"name": "b", "shape": [1, 1], "datatype": "INT64", "data": [b]}]}
    req.update(extra)
    return req


def binary_body(header, *blobs):
    """A binary-extension request: the JSON header, then the raw tensors."""
    head = json.dumps(header).encode()
    return head + b"".join(blobs), {"Inference-Header-Content-Length": str(len(head)),
                                    "Content-Type": "application/octet-stream"}


def split_binary_response(r):
    n = int(r.headers["Inference-Header-Content-Length"])
    return json.loads(r.content[:n]), r.content[n:]


def stats(model):
    r = get("/v2/models/%s/stats" % model)
    assert r.status_code == 200, r.text
    (s,) = r.json()["model_stats"]
    return s


class HealthAndMetadataTest(unittest.TestCase):
    def test_live_and_ready_answer_200_with_empty_body(self):
        for path in ("/v2/health/live", "/v2/health/ready"):
            r = get(path)
            self.assertEqual(r.status_code, 200, path)
            self.assertEqual(r.content, b"", path)

    def test_server_metadata_names_ferry_and_its_extensions(self):
        r = get("/v2")
        self.assertEqual(r.status_code, 200)
        m = r.json()
        self.assertEqual(m["name"], "ferry")
        self.assertEqual(m["version"], "0.1.0")
        for e in ("binary_tensor_data", "model_repository", "statistics"):
            self.assertIn(e, m["extensions"])

    def test_model_metadata_has_batch_dimension_and_ready_versions(self):
        for path in ("/v2/models/fraud_xgb", "/v2/models/fraud_xgb/versions/1"):
            r = get(path)
            self.assertEqual(r.status_code, 200, r.text)
            m = r.json()
            self.assertEqual(m["name"], "fraud_xgb")
            self.assertEqual(m["versions"], ["1"])
            self.assertEqual(m["platform"], "xgboost")
            self.assertEqual(m["inputs"], [{"name": "input__0", "datatype": "FP32",
                                            "shape": [-1, 32]}])
            self.assertEqual(m["outputs"], [{"name": "output__0", "datatype": "FP32",
                                             "shape": [-1, 1]}])
        m = get("/v2/models/mlp").json()
        self.assertEqual(m["inputs"][0]["shape"], [-1, 64])

    def test_model_ready(self):
        self.assertEqual(get("/v2/models/mlp/ready").status_code, 200)
        self.assertEqual(get("/v2/models/mlp/versions/1/ready").status_code, 200)
        self.assertEqual(get("/v2/models/mlp/versions/2/ready").status_code, 404)
        r = get("/v2/models/nope/ready")
        self.assertEqual(r.status_code, 404)
        self.assertIn("nope", r.json()["error"])

    def test_unknown_model_and_version_are_404_naming_them(self):
        r = get("/v2/models/no_such_model")
        self.assertEqual(r.status_code, 404)
        self.assertIn("no_such_model", r.json()["error"])
        r = post("/v2/models/fraud_xgb/versions/9/infer", example("fraud_xgb"))
        self.assertEqual(r.status_code, 404)
        self.assertIn("9", r.json()["error"])
        r = post("/v2/models/no_such_model/infer", example("fraud_xgb"))
        self.assertEqual(r.status_code, 404)

    def test_non_numeric_version_is_400(self):
        r = get("/v2/models/fraud_xgb/versions/abc")
        self.assertEqual(r.status_code, 400)
        self.assertIn("abc", r.json()["error"])

    def test_config_is_triton_model_config_json(self):
        r = get("/v2/models/fraud_xgb/config")
        self.assertEqual(r.status_code, 200, r.text)
        c = r.json()
        self.assertEqual(c["name"], "fraud_xgb")
        self.assertEqual(c["max_batch_size"], 4096)
        self.assertEqual(c["input"][0]["name"], "input__0")
        self.assertEqual(c["input"][0]["data_type"], "TYPE_FP32")
        self.assertIn("dynamic_batching", c)
        self.assertEqual(get("/v2/models/nope/config").status_code, 404)


class InferTest(unittest.TestCase):
    def expected_fraud(self, request):
        import xgboost as xgb
        booster = xgb.Booster(model_file=os.path.join(REPO, "fraud_xgb", "1", "model.json"))
        x = np.array(request["inputs"][0]["data"], dtype=np.float32).reshape(
            request["inputs"][0]["shape"])
        return booster.predict(xgb.DMatrix(x))

    def test_json_infer_matches_xgboost_and_echoes_id(self):
        req = example("fraud_xgb")
        req["id"] = "my-request-42"
        r = post("/v2/models/fraud_xgb/infer", req)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertTrue(r.headers["Content-Type"].startswith("application/json"))
        out = r.json()
        self.assertEqual(out["id"], "my-request-42")
        self.assertEqual(out["model_name"], "fraud_xgb")
        self.assertEqual(out["model_version"], "1")
        (o,) = out["outputs"]
        self.assertEqual((o["name"], o["datatype"], o["shape"]), ("output__0", "FP32", [1, 1]))
        np.testing.assert_allclose(o["data"], self.expected_fraud(req), rtol=1e-5)

    def test_mlp_json_infer_via_version_path(self):
        r = post("/v2/models/mlp/versions/1/infer", example("mlp"))
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["outputs"][0]["shape"], [1, 1])

    def test_binary_inputs_give_the_same_result_as_json(self):
        req = example("fraud_xgb")
        x = np.array(req["inputs"][0]["data"], dtype=np.float32)
        header = {"inputs": [{"name": "input__0", "shape": [1, 32], "datatype": "FP32",
                              "parameters": {"binary_data_size": x.nbytes}}]}
        body, headers = binary_body(header, x.tobytes())
        r = requests.post(URL + "/v2/models/fraud_xgb/infer", data=body, headers=headers,
                          timeout=60)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertNotIn("Inference-Header-Content-Length", r.headers)
        json_out = post("/v2/models/fraud_xgb/infer", req).json()
        self.assertEqual(r.json()["outputs"][0]["data"], json_out["outputs"][0]["data"])

    def test_binary_data_output_returns_raw_tensors_after_the_json(self):
        req = ident_request(a=(0.25, -8.5), b=-3, parameters={"binary_data_output": True})
        r = post("/v2/models/ident/infer", req)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.headers["Content-Type"], "application/octet-stream")
        head, tail = split_binary_response(r)
        a, b = head["outputs"]
        self.assertEqual(a["parameters"]["binary_data_size"], 8)
        self.assertEqual(b["parameters"]["binary_data_size"], 8)
        self.assertNotIn("data", a)
        self.assertEqual(len(tail), 16)
        self.assertEqual(struct.unpack("<2f", tail[:8]), (0.25, -8.5))
        self.assertEqual(struct.unpack("<q", tail[8:]), (-3,))

    def test_per_output_binary_data_and_output_selection(self):
        req = ident_request(a=(3.0, 4.0), b=5,
                            outputs=[{"name": "B", "parameters": {"binary_data": True}}])
        r = post("/v2/models/ident/infer", req)
        self.assertEqual(r.status_code, 200, r.text)
        head, tail = split_binary_response(r)
        self.assertEqual([o["name"] for o in head["outputs"]], ["B"])
        self.assertEqual(struct.unpack("<q", tail), (5,))
        # Request default binary, but A asks for JSON.
        req = ident_request(a=(3.0, 4.0), b=5, parameters={"binary_data_output": True},
                            outputs=[{"name": "A", "parameters": {"binary_data": False}},
                                     {"name": "B"}])
        head, tail = split_binary_response(post("/v2/models/ident/infer", req))
        self.assertEqual(head["outputs"][0]["data"], [3.0, 4.0])
        self.assertEqual(struct.unpack("<q", tail), (5,))

    def test_priority_and_timeout_parameters_are_accepted(self):
        for params in ({"priority": 1}, {"priority": 2}, {"timeout": 5000000},
                       {"priority": 1, "timeout": 1000000}):
            r = post("/v2/models/ident/infer", ident_request(parameters=params))
            self.assertEqual(r.status_code, 200, (params, r.text))
        r = post("/v2/models/ident/infer", ident_request(parameters={"priority": -1}))
        self.assertEqual(r.status_code, 400)
        self.assertIn("parameters.priority", r.json()["error"])
        r = post("/v2/models/ident/infer", ident_request(parameters={"timeout": "soon"}))
        self.assertEqual(r.status_code, 400)
        self.assertIn("parameters.timeout", r.json()["error"])

    def test_queue_timeout_is_504(self):
        req = {"inputs": [{"name": "a", "shape": [1, 2], "datatype": "FP32",
                           "data": [1, 2]}], "parameters": {"timeout": 50000}}
        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            codes = list(pool.map(lambda _: post("/v2/models/slow/infer", req).status_code,
                                  range(12)))
        self.assertIn(200, codes)
        self.assertIn(504, codes)
        self.assertEqual(set(codes) - {200, 504}, set(), codes)

    def test_engine_error_is_500(self):
        r = post("/v2/models/ident/infer", ident_request(a=(13.0, 0.0)))
        self.assertEqual(r.status_code, 500)
        self.assertIn("error", r.json())


class ErrorTest(unittest.TestCase):
    def assert_error(self, r, code, *fragments):
        self.assertEqual(r.status_code, code, r.text)
        self.assertTrue(r.headers["Content-Type"].startswith("application/json"))
        message = r.json()["error"]
        for f in fragments:
            self.assertIn(f, message)

    def test_malformed_json_is_400(self):
        r = requests.post(URL + "/v2/models/fraud_xgb/infer", data=b'{"inputs": [',
                          timeout=60)
        self.assert_error(r, 400, "not valid JSON")
        r = requests.post(URL + "/v2/models/fraud_xgb/infer", data=b"[1, 2]", timeout=60)
        self.assert_error(r, 400, "JSON object")
        self.assert_error(post("/v2/models/fraud_xgb/infer", {"id": "x"}), 400, "'inputs'")

    def test_wrong_datatype_is_400_naming_the_input(self):
        req = example("fraud_xgb")
        req["inputs"][0]["datatype"] = "INT64"
        req["inputs"][0]["data"] = [int(v) for v in req["inputs"][0]["data"]]
        self.assert_error(post("/v2/models/fraud_xgb/infer", req), 400, "input__0")
        req["inputs"][0]["datatype"] = "FP128"
        self.assert_error(post("/v2/models/fraud_xgb/infer", req), 400, "inputs[0]", "FP128")

    def test_shape_and_data_mismatch_is_400_naming_the_input(self):
        req = example("fraud_xgb")
        req["inputs"][0]["shape"] = [1, 31]
        self.assert_error(post("/v2/models/fraud_xgb/infer", req), 400, "inputs[0]",
                          "input__0")
        req = example("fraud_xgb")
        req["inputs"][0]["shape"] = [2, 16]
        self.assert_error(post("/v2/models/fraud_xgb/infer", req), 400, "input__0")
        req = ident_request()
        req["inputs"][0]["data"] = ["x", "y"]
        self.assert_error(post("/v2/models/ident/infer", req), 400, "inputs[0] 'a'")

    def test_unknown_output_is_400(self):
        req = ident_request(outputs=[{"name": "Z"}])
        self.assert_error(post("/v2/models/ident/infer", req), 400, "Z")

    def test_truncated_binary_section_is_400(self):
        header = {"inputs": [{"name": "input__0", "shape": [1, 32], "datatype": "FP32",
                              "parameters": {"binary_data_size": 128}}]}
        body, headers = binary_body(header, b"\0" * 100)
        r = requests.post(URL + "/v2/models/fraud_xgb/infer", data=body, headers=headers,
                          timeout=60)
        self.assert_error(r, 400, "input__0", "binary_data_size")
        headers["Inference-Header-Content-Length"] = str(len(body) + 1)
        r = requests.post(URL + "/v2/models/fraud_xgb/infer", data=body, headers=headers,
                          timeout=60)
        self.assert_error(r, 400, "Inference-Header-Content-Length")
        headers["Inference-Header-Content-Length"] = "lots"
        r = requests.post(URL + "/v2/models/fraud_xgb/infer", data=body, headers=headers,
                          timeout=60)
        self.assert_error(r, 400, "Inference-Header-Content-Length")

    def test_oversized_body_is_413(self):
        big = b"[" + b"0," * (1 << 20) + b"0]"  # > the 1 MiB limit this server runs with
        r = requests.post(URL + "/v2/models/fraud_xgb/infer", data=big, timeout=60)
        self.assert_error(r, 413, "limit")
        # The server still serves new connections.
        self.assertEqual(get("/v2/health/live").status_code, 200)

    def test_wrong_method_is_405(self):
        r = get("/v2/models/fraud_xgb/infer")
        self.assert_error(r, 405, "GET")
        self.assertEqual(r.headers["Allow"], "POST")
        self.assert_error(post("/v2/health/ready"), 405)
        self.assert_error(get("/v2/repository/index"), 405)

    def test_unknown_path_is_404(self):
        for path in ("/v3", "/v2/nothing", "/v2/models/fraud_xgb/explain", "/"):
            self.assert_error(get(path), 404, "unknown path")

    def test_garbage_on_the_socket_does_not_hurt_the_server(self):
        host, port = URL[len("http://"):].split(":")
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"\x00\x01garbage that is not HTTP\r\n\r\n")
            data = s.recv(4096)
        self.assertTrue(data == b"" or data.startswith(b"HTTP/1.1 400"), data)
        self.assertEqual(get("/v2/health/live").status_code, 200)


class RepositoryAndStatsTest(unittest.TestCase):
    def test_index_lists_every_model_version_with_state(self):
        r = post("/v2/repository/index")
        self.assertEqual(r.status_code, 200, r.text)
        entries = {e["name"]: e for e in r.json()}
        self.assertEqual(set(entries), MODELS)
        self.assertEqual(entries["fraud_xgb"]["version"], "1")
        self.assertEqual(entries["fraud_xgb"]["state"], "READY")
        r = post("/v2/repository/index", {"ready": True})
        self.assertEqual(len(r.json()), len(MODELS))
        self.assertEqual(post("/v2/repository/index", {"ready": "yes"}).status_code, 400)
        r = requests.post(URL + "/v2/repository/index", data=b"{", timeout=60)
        self.assertEqual(r.status_code, 400)

    def test_unload_and_load_round_trip(self):
        self.assertEqual(post("/v2/repository/models/ident/unload").status_code, 200)
        try:
            self.assertNotEqual(get("/v2/models/ident/ready").status_code, 200)
            self.assertEqual(get("/v2/health/ready").status_code, 503)
            r = post("/v2/models/ident/infer", ident_request())
            self.assertIn(r.status_code, (404, 503), r.text)
            index = {e["name"]: e for e in post("/v2/repository/index").json()}
            self.assertNotEqual(index["ident"]["state"], "READY")
            self.assertNotIn("ident", {e["name"] for e in
                                       post("/v2/repository/index", {"ready": True}).json()})
        finally:
            self.assertEqual(post("/v2/repository/models/ident/load").status_code, 200)
        self.assertEqual(get("/v2/models/ident/ready").status_code, 200)
        self.assertEqual(post("/v2/models/ident/infer", ident_request()).status_code, 200)
        self.assertEqual(post("/v2/repository/models/nope/load").status_code, 404)
        r = post("/v2/repository/models/ident/load",
                 {"parameters": {"config": "{}"}})
        self.assertEqual(r.status_code, 501)

    def test_stats_follow_triton_shape(self):
        before = stats("ident")
        for _ in range(3):
            self.assertEqual(post("/v2/models/ident/infer", ident_request()).status_code, 200)
        s = stats("ident")
        self.assertEqual(s["name"], "ident")
        self.assertEqual(s["version"], "1")
        self.assertGreater(s["last_inference"], 1.5e12)  # ms since the epoch
        self.assertGreaterEqual(s["inference_count"] - before["inference_count"], 3)
        success = s["inference_stats"]["success"]
        self.assertGreaterEqual(success["count"] - before["inference_stats"]["success"]["count"],
                                3)
        self.assertGreater(success["ns"], 0)
        for k in ("fail", "queue", "compute_infer"):
            self.assertEqual(set(s["inference_stats"][k]), {"count", "ns"})
        self.assertEqual(get("/v2/models/ident/versions/1/stats").status_code, 200)
        self.assertEqual(get("/v2/models/ident/versions/5/stats").status_code, 404)
        self.assertEqual(get("/v2/models/nope/stats").status_code, 404)
        all_stats = get("/v2/models/stats").json()["model_stats"]
        self.assertEqual({m["name"] for m in all_stats}, MODELS)

    def test_metrics_endpoint_serves_prometheus_text(self):
        self.assertEqual(post("/v2/models/ident/infer", ident_request()).status_code, 200)
        r = get("/metrics")
        self.assertEqual(r.status_code, 200, r.text)
        self.assertTrue(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"))
        self.assertRegex(r.text, r'ferry_\w+\{[^}]*model="ident"')
        self.assertEqual(post("/metrics").status_code, 405)

    def test_metrics_pass_promtool(self):
        self.assertEqual(post("/v2/models/ident/infer", ident_request()).status_code, 200)
        r = get("/metrics")
        self.assertEqual(r.status_code, 200)
        check = subprocess.run(["promtool", "check", "metrics"], input=r.text,
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertEqual(check.stdout.strip() + check.stderr.strip(), "")


class GrpcBinaryTest(unittest.TestCase):
    """The real binary's gRPC port, with Debian's python3-grpcio and hand-encoded
    protobuf (the full method set is covered by tests/api/grpc against the same server
    class)."""

    def call(self, method, request=b""):
        import grpc
        with grpc.insecure_channel(SERVER.grpc_target) as channel:
            rpc = channel.unary_unary("/inference.GRPCInferenceService/" + method)
            return rpc(request, timeout=30)

    def test_health_and_metadata_over_grpc(self):
        self.assertIsNotNone(SERVER.grpc_target)
        self.assertEqual(self.call("ServerLive"), b"\x08\x01")   # live: true
        self.assertEqual(self.call("ServerReady"), b"\x08\x01")  # ready: true
        name = b"ident"
        self.assertEqual(self.call("ModelReady", b"\x0a" + bytes([len(name)]) + name),
                         b"\x08\x01")
        self.assertIn(b"ferry", self.call("ServerMetadata"))

    def test_unknown_model_metadata_is_not_found(self):
        import grpc
        name = b"nope"
        with self.assertRaises(grpc.RpcError) as e:
            self.call("ModelMetadata", b"\x0a" + bytes([len(name)]) + name)
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)


class ConcurrencyTest(unittest.TestCase):
    def run_clients(self, model, request, clients, per_client):
        """Each client thread sends per_client requests on its own keep-alive
        connection; returns every client's [(status, echoed id)]."""
        def client(i):
            codes = []
            with requests.Session() as s:
                for j in range(per_client):
                    body = dict(request, id="c%d-%d" % (i, j))
                    r = s.post(URL + "/v2/models/%s/infer" % model, json=body, timeout=60)
                    codes.append((r.status_code, r.json().get("id")))
            return codes

        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            results = list(pool.map(client, range(clients)))
        for i, codes in enumerate(results):
            self.assertEqual(codes, [(200, "c%d-%d" % (i, j)) for j in range(per_client)])

    def test_64_concurrent_clients_get_their_own_answers(self):
        before = stats("fraud_xgb")
        self.run_clients("fraud_xgb", example("fraud_xgb"), 64, 25)
        after = stats("fraud_xgb")
        self.assertEqual(after["inference_count"] - before["inference_count"], 64 * 25)
        self.assertLess(after["execution_count"] - before["execution_count"], 64 * 25)
        # The batch-size histogram in /metrics shows batches larger than the 2 I/O
        # threads: requests waiting in the batcher hold no thread.
        text = get("/metrics").text
        def sample(name, le=None):
            label = 'model="fraud_xgb",version="1"' + (',le="%s"' % le if le else "")
            m = re.search(r"^%s\{%s\} (\S+)$" % (name, re.escape(label)), text, re.M)
            self.assertIsNotNone(m, name)
            return float(m.group(1))
        at_most_two = sample("ferry_batch_size_rows_bucket", "2")
        batches = sample("ferry_batch_size_rows_count")
        self.assertGreater(batches - at_most_two, 0, "no batch larger than 2 rows")

    def test_64_concurrent_clients_are_batched_beyond_the_io_thread_count(self):
        # A model whose batches take 10 ms, so that batch sizes measure how many
        # requests wait at once rather than how fast Python clients can send
        # (fraud_xgb answers faster than 64 Python threads can ask). If a waiting
        # request held one of the 2 I/O threads, batches would hold at most 2.
        before = stats("batchy")
        request = {"inputs": [{"name": "a", "shape": [1, 2], "datatype": "FP32",
                               "data": [1, 2]}]}
        self.run_clients("batchy", request, 64, 10)
        after = stats("batchy")
        inferences = after["inference_count"] - before["inference_count"]
        executions = after["execution_count"] - before["execution_count"]
        self.assertEqual(inferences, 640)
        self.assertLess(executions, inferences / 2, (executions, inferences))


class DrainTest(unittest.TestCase):
    def test_sigterm_answers_every_accepted_request_and_exits_0(self):
        server = Server(REPO, "--grace-seconds", "1")
        req = {"inputs": [{"name": "a", "shape": [1, 2], "datatype": "FP32",
                           "data": [1, 2]}]}
        records = []  # (sent before the signal?, status or exception)
        lock = threading.Lock()
        signalled = threading.Event()
        stop = threading.Event()

        def client():
            with requests.Session() as s:
                while not stop.is_set():
                    before = not signalled.is_set()
                    try:
                        r = s.post(server.url + "/v2/models/slow/infer", json=req, timeout=60)
                        outcome = r.status_code
                    except requests.RequestException as e:
                        outcome = e
                    with lock:
                        records.append((before, outcome))
                    if not isinstance(outcome, int) and not before:
                        return  # the server is gone
        threads = [threading.Thread(target=client) for _ in range(16)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        signalled.set()
        rc, err = server.stop()
        stop.set()
        for t in threads:
            t.join(timeout=60)
        self.assertEqual(rc, 0, err)
        before = [o for b, o in records if b]
        self.assertTrue(before)
        bad = [o for o in before if o not in (200, 503)]
        self.assertEqual(bad, [], "requests sent before SIGTERM must get 200 or 503")
        self.assertIn(200, before)
        # Some requests were still queued at the signal, beyond the 1 s grace.
        self.assertIn(503, [o for _, o in records])


def setUpModule():
    global REPO, SERVER, URL
    REPO = tempfile.mkdtemp(prefix="ferry-http-test-")
    subprocess.run([os.path.join(SOURCE_DIR, "tools", "make-example-models"), REPO,
                    "--only", "fraud_xgb", "--only", "mlp"], check=True,
                   stdout=subprocess.DEVNULL)
    write_identity_model(REPO, "ident", IDENT_CONFIG)
    write_identity_model(REPO, "slow", SLOW_CONFIG)
    write_identity_model(REPO, "batchy", BATCHY_CONFIG)
    SERVER = Server(REPO, "--max-body-bytes", str(1 << 20))
    URL = SERVER.url


def tearDownModule():
    try:
        if SERVER is not None:
            rc, err = SERVER.stop()
            assert rc == 0, "ferry serve exited %s: %s" % (rc, err)
    finally:
        shutil.rmtree(REPO, ignore_errors=True)


if __name__ == "__main__":
    FERRY, SOURCE_DIR = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
