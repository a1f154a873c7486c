# SPDX-License-Identifier: Apache-2.0
"""Black-box tests of the job API of `ferry serve` (/v1/files, /v1/batches,
/v1/jobs): the real binary over real sockets, driven with Debian's
python3-requests. Covers the OpenAI Batch flow end to end (upload, create, poll,
download, every custom_id once, values equal to online inference and `ferry
infer`), native CSV jobs under a data root (output byte-identical to `ferry run`),
path confinement, cancel, pagination, error bodies, signed webhooks checked with
hmac in Python, dead-letter replay, upload limits, the state directory lock, and
a server SIGKILLed mid-job whose job finishes on restart with exactly the output
of an uninterrupted `ferry run`.

Run by CTest as: /usr/bin/python3 jobs_api_test.py FERRY_BINARY SOURCE_DIR
"""

import concurrent.futures
import hashlib
import hmac
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np
import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test_util"))
from ferry_server import FerryServer  # noqa: E402

FERRY = None
SOURCE_DIR = None
TMP = None
REPO = None
DATA = None  # the main server's data root
SERVER = None
URL = None
FILES = None
FILES_URL = None
SECRET = b"whsec_jobs_api_test"
MAX_UPLOAD = 4 << 20
MAX_BODY = 1 << 20
TERMINAL = {"completed", "failed", "expired", "cancelled"}
BATCH_FIELDS = {
    "id", "object", "endpoint", "errors", "input_file_id", "completion_window",
    "status", "output_file_id", "error_file_id", "created_at", "in_progress_at",
    "expires_at", "finalizing_at", "completed_at", "failed_at", "expired_at",
    "cancelling_at", "cancelled_at", "request_counts", "metadata"}

# 200 ms per batch of at most 4 rows: a job on it runs long enough to cancel.
SLOW_CONFIG = """
platform: "identity"
max_batch_size: 4
input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]
dynamic_batching { max_queue_delay_microseconds: 1000 }
parameters { key: "execute_delay_us" value { string_value: "200000" } }
"""

# One row per batch; a row whose value is 13 fails (INTERNAL, transient), so with
# max_attempts 1 it becomes a dead letter.
POISON_CONFIG = """
platform: "identity"
max_batch_size: 1
input [ { name: "x" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 1 ] } ]
parameters { key: "fail_on_first_value" value { string_value: "13" } }
"""


def Server(state_dir, *extra):
    # Normal CPU priority for jobs: CTest runs CPU-heavy tests beside this one,
    # and idle-priority jobs would wait for them.
    return FerryServer(FERRY, REPO, "--job-cpu-priority", "normal", *extra,
                       state_dir=state_dir, wait_ready=False)


def post(path, body=None, url=None, **kw):
    return requests.post((url or URL) + path, json=body, timeout=120, **kw)


def get(path, url=None, **kw):
    return requests.get((url or URL) + path, timeout=60, **kw)


def upload(content, filename="input.jsonl", purpose="batch", url=None):
    return requests.post((url or URL) + "/v1/files", data={"purpose": purpose},
                         files={"file": (filename, content)}, timeout=120)


def wait_validated(kind, job_id, timeout=60, url=None):
    """Polls until the job has left `validating` (the server validates its input
    after answering the create); returns it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = get("/v1/%s/%s" % (kind, job_id), url=url)
        assert r.status_code == 200, r.text
        if r.json()["status"] != "validating":
            return r.json()
        time.sleep(0.02)
    raise AssertionError("%s %s still validating after %d s" % (kind, job_id, timeout))


def wait_terminal(kind, job_id, timeout=120, url=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = get("/v1/%s/%s" % (kind, job_id), url=url)
        assert r.status_code == 200, r.text
        if r.json()["status"] in TERMINAL:
            return r.json()
        time.sleep(0.05)
    raise AssertionError("%s %s did not finish in %d s: %s" % (kind, job_id, timeout, r.text))


def features(rng, n):
    """n rows of 32 float32 features with 5 significant digits (exact in JSON)."""
    x = rng.normal(size=(n, 32)).astype(np.float32)
    return [[float("%.5g" % v) for v in row] for row in x]


def fraud_line(custom_id, feats, model="fraud_xgb"):
    return {"custom_id": custom_id, "method": "POST",
            "url": "/v2/models/%s/infer" % model,
            "body": {"id": custom_id, "inputs": [{"name": "input__0", "shape": [1, 32],
                                                   "datatype": "FP32", "data": feats}]}}


def jsonl(lines):
    return "".join(json.dumps(l) + "\n" for l in lines)


def write_csv(path, rows, seed=5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, 32)).astype(np.float32)
    with open(path, "w") as f:
        f.write("id," + ",".join("f%d" % i for i in range(32)) + "\n")
        for i in range(rows):
            f.write("%d,%s\n" % (i, ",".join("%.5g" % v for v in x[i])))


def ferry_run(inp, out, *extra):
    p = subprocess.run([FERRY, "run", "--model-repository", REPO, "--model", "fraud_xgb",
                        "--input", inp, "--output", out, "--id-column", "id",
                        "--progress", "none", "--state-dir", out + ".state", *extra],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with open(out, "rb") as f:
        return f.read()


def error_of(r):
    return r.json()["error"]


class WebhookReceiver:
    """A Python http.server that records every POST and answers 200."""

    def __init__(self, status=200):
        self.requests = []
        self.cv = threading.Condition()
        self.status = status  # what every POST is answered with
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.cv:
                    receiver.requests.append((self.path, dict(self.headers), body))
                    receiver.cv.notify_all()
                    status = receiver.status
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path="/hook"):
        return "http://127.0.0.1:%d%s" % (self.httpd.server_address[1], path)

    def wait(self, n, timeout=30):
        with self.cv:
            self.cv.wait_for(lambda: len(self.requests) >= n, timeout=timeout)
            return list(self.requests)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class FileServer:
    """Serves a directory over http on loopback (inputs given by URL)."""

    def __init__(self, directory):
        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kw):
                super().__init__(*args, directory=directory, **kw)

            def log_message(self, *args):
                pass

            def do_GET(self):
                # /slow/...: a CSV that trickles for up to 30 s (a download
                # still running when the job is cancelled).
                if not self.path.startswith("/slow/"):
                    return super().do_GET()
                self.send_response(200)
                self.send_header("Content-Length", str(10 << 20))
                self.end_headers()
                try:
                    self.wfile.write(b"id,a\n")
                    for i in range(600):
                        self.wfile.write(b"%d,%d\n" % (i, i))
                        self.wfile.flush()
                        time.sleep(0.05)
                except OSError:
                    pass  # the client went away

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def verify_signature(header, body, secret=SECRET, tolerance=300):
    """Ferry-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>."""
    items = [p.split("=", 1) for p in header.split(",")]
    t = [v for k, v in items if k == "t"]
    macs = [v for k, v in items if k == "v1"]
    if len(t) != 1 or not macs:
        return False
    want = hmac.new(secret, t[0].encode() + b"." + body, hashlib.sha256).hexdigest()
    fresh = abs(time.time() - int(t[0])) <= tolerance
    return fresh and any(hmac.compare_digest(want, m) for m in macs)


class FilesTest(unittest.TestCase):
    def test_upload_get_list_content_delete(self):
        content = jsonl([fraud_line("a", [0.0] * 32)])
        r = upload(content, "mine.jsonl")
        self.assertEqual(r.status_code, 200, r.text)
        f = r.json()
        self.assertRegex(f["id"], r"^file-[0-9a-f]{24}$")
        self.assertEqual(f["object"], "file")
        self.assertEqual(f["bytes"], len(content.encode()))
        self.assertEqual(f["filename"], "mine.jsonl")
        self.assertEqual(f["purpose"], "batch")
        self.assertLessEqual(abs(f["created_at"] - time.time()), 60)
        self.assertEqual(get("/v1/files/" + f["id"]).json(), f)
        listed = get("/v1/files").json()
        self.assertEqual(listed["object"], "list")
        self.assertIn(f, listed["data"])
        self.assertIn(f["id"], [x["id"] for x in get("/v1/files?purpose=batch").json()["data"]])
        self.assertNotIn(f["id"],
                         [x["id"] for x in get("/v1/files?purpose=batch_output").json()["data"]])
        r = get("/v1/files/%s/content" % f["id"])
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.content, content.encode())
        r = requests.delete(URL + "/v1/files/" + f["id"], timeout=60)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json(), {"id": f["id"], "object": "file", "deleted": True})
        for path in ("/v1/files/" + f["id"], "/v1/files/%s/content" % f["id"]):
            r = get(path)
            self.assertEqual(r.status_code, 404, path)
            self.assertIn(f["id"], error_of(r))
        self.assertEqual(requests.delete(URL + "/v1/files/" + f["id"]).status_code, 404)

    def test_malformed_ids_are_404_and_never_paths(self):
        for bad in ("file-..%2F..%2Fjobs.db", "..%2Fjobs.db", "file-XYZ"):
            self.assertEqual(get("/v1/files/" + bad).status_code, 404, bad)

    def test_upload_errors_name_the_field(self):
        r = requests.post(URL + "/v1/files", files={"file": ("x.jsonl", "{}\n")}, timeout=60)
        self.assertEqual(r.status_code, 400)
        self.assertIn("'purpose'", error_of(r))
        r = upload("{}\n", purpose="fine-tune")
        self.assertEqual(r.status_code, 400)
        self.assertIn("'purpose'", error_of(r))
        self.assertIn("fine-tune", error_of(r))
        r = requests.post(URL + "/v1/files", data={"purpose": "batch"},
                          files={"other": ("x", "y")}, timeout=60)
        self.assertEqual(r.status_code, 400)
        self.assertIn("'other'", error_of(r))
        r = requests.post(URL + "/v1/files", data={"purpose": "batch"}, timeout=60)
        self.assertEqual(r.status_code, 400)
        self.assertIn("multipart/form-data", error_of(r))
        r = upload("", "empty.jsonl")
        self.assertEqual(r.status_code, 400)
        self.assertIn("'file'", error_of(r))
        truncated = b"--XX\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc"
        r = requests.post(URL + "/v1/files", data=truncated, timeout=60,
                          headers={"Content-Type": "multipart/form-data; boundary=XX"})
        self.assertEqual(r.status_code, 400)
        self.assertIn("('file') does not end with the boundary", error_of(r))
        r = requests.post(URL + "/v1/files", data=b"x", timeout=60,
                          headers={"Content-Type": "multipart/form-data"})
        self.assertEqual(r.status_code, 400)
        self.assertIn("boundary", error_of(r))

    def test_uploads_have_their_own_body_limit(self):
        # Above --max-body-bytes, below --max-upload-bytes: accepted.
        content = "x" * (MAX_BODY + 1000)
        r = upload(content, "big.jsonl")
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["bytes"], len(content))
        # Its content streams back from disk in chunks: whole, with its length,
        # and the keep-alive connection serves the next request.
        with requests.Session() as s:
            for _ in range(2):
                got = s.get(URL + "/v1/files/%s/content" % r.json()["id"], timeout=60)
                self.assertEqual(got.status_code, 200)
                self.assertEqual(got.headers["Content-Length"], str(len(content)))
                self.assertEqual(got.headers["Content-Type"], "application/octet-stream")
                self.assertEqual(got.content, content.encode())
            self.assertEqual(s.get(URL + "/v1/files/" + r.json()["id"], timeout=60).json()["id"],
                             r.json()["id"])
        requests.delete(URL + "/v1/files/" + r.json()["id"], timeout=60)
        # Above --max-upload-bytes: 413 naming the flag.
        r = upload("x" * (MAX_UPLOAD + 1), "huge.jsonl")
        self.assertEqual(r.status_code, 413)
        self.assertIn("--max-upload-bytes", error_of(r))
        # Other paths keep --max-body-bytes.
        r = requests.post(URL + "/v1/batches", data=b"x" * (MAX_BODY + 1), timeout=60,
                          headers={"Content-Type": "application/json"})
        self.assertEqual(r.status_code, 413)
        self.assertIn("--max-body-bytes", error_of(r))

    def test_upload_bodies_stream_to_disk_and_leave_nothing_behind(self):
        files_dir = os.path.join(TMP, "state-main", "files")

        def leftovers():
            return [n for n in os.listdir(files_dir) if n.startswith(".upload-")]

        def chunked(content):
            body = (b"--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n"
                    b"batch\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; "
                    b"filename=\"c.jsonl\"\r\n\r\n" + content + b"\r\n--B--\r\n")
            # A generator: requests sends it chunked, with no Content-Length,
            # so the limit can only be found while the body streams in.
            return (body[i:i + 65536] for i in range(0, len(body), 65536))

        headers = {"Content-Type": "multipart/form-data; boundary=B"}
        content = os.urandom(MAX_UPLOAD // 2)
        r = requests.post(URL + "/v1/files", data=chunked(content), headers=headers,
                          timeout=60)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["bytes"], len(content))
        got = requests.get(URL + "/v1/files/%s/content" % r.json()["id"], timeout=60)
        self.assertEqual(got.content, content)
        requests.delete(URL + "/v1/files/" + r.json()["id"], timeout=60)
        r = requests.post(URL + "/v1/files", data=chunked(b"x" * (MAX_UPLOAD + 1)),
                          headers=headers, timeout=60)
        self.assertEqual(r.status_code, 413)
        self.assertIn("--max-upload-bytes", error_of(r))
        r = requests.post(URL + "/v1/files", data=b"--B\r\nbad",
                          headers=headers, timeout=60)
        self.assertEqual(r.status_code, 400)
        self.assertEqual(leftovers(), [])

    def test_progress_of_a_running_job_has_rate_and_eta(self):
        f = upload("id,x_0,x_1\n" + "".join("%d,1,2\n" % i for i in range(400)),
                   "slow-progress.csv").json()
        job = post("/v1/jobs", {"model": "slow", "input_file_id": f["id"], "id_column": "id",
                                "chunk_size": 8}).json()
        self.assertIsNone(job["progress"]["records_per_second"])  # not watched yet
        seen = None
        deadline = time.time() + 60
        while time.time() < deadline:
            p = get("/v1/jobs/" + job["id"]).json()["progress"]
            if p["records_per_second"]:
                seen = p
                break
            time.sleep(0.3)
        self.assertIsNotNone(seen, "no rate while the job ran")
        # The slow model does at most 4 rows per 200 ms per instance.
        self.assertGreater(seen["records_per_second"], 0)
        self.assertLess(seen["records_per_second"], 1000)
        left = 400 - seen["records_done"]
        self.assertAlmostEqual(seen["eta_seconds"], left / seen["records_per_second"],
                               delta=0.01 * max(1.0, seen["eta_seconds"]))
        # `ferry jobs status` prints them while the job runs (about 10 s in all).
        r = subprocess.run([FERRY, "jobs", "--server", URL, "status", job["id"]],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"in_progress .* rec/s  ETA \d\d:\d\d")
        post("/v1/jobs/%s/cancel" % job["id"])
        done = wait_terminal("jobs", job["id"])
        self.assertIsNone(done["progress"]["records_per_second"])
        self.assertIsNone(done["progress"]["eta_seconds"])

    def test_the_input_of_a_running_job_cannot_be_deleted(self):
        f = upload("id,x_0,x_1\n" + "".join("%d,1,2\n" % i for i in range(40)),
                   "slow.csv").json()
        job = post("/v1/jobs", {"model": "slow", "input_file_id": f["id"], "id_column": "id",
                                "chunk_size": 4}).json()
        r = requests.delete(URL + "/v1/files/" + f["id"], timeout=60)
        self.assertEqual(r.status_code, 409, r.text)
        self.assertIn(job["id"], error_of(r))
        post("/v1/jobs/%s/cancel" % job["id"])
        wait_terminal("jobs", job["id"])
        self.assertEqual(requests.delete(URL + "/v1/files/" + f["id"]).status_code, 200)


class BusyTest(unittest.TestCase):
    def test_a_flood_beyond_the_bound_gets_503_and_nothing_else_breaks(self):
        server = Server(os.path.join(TMP, "state-busy"), "--job-api-max-pending", "1")
        try:
            # Uploads: each holds its slot while the server parses and stores
            # it (downloads stream from disk after a short handler, so they
            # rarely overlap). Floods until one is refused, at most 5 times.
            big = b"x" * (8 << 20)
            barrier = threading.Barrier(12)

            def upload_one(i):
                barrier.wait()
                r = requests.post(server.url + "/v1/files", data={"purpose": "batch"},
                                  files={"file": ("big%d.jsonl" % i, big)}, timeout=120)
                return r.status_code, r.headers.get("Retry-After"), r.content

            codes = []
            for _ in range(5):
                with concurrent.futures.ThreadPoolExecutor(12) as pool:
                    results = list(pool.map(upload_one, range(12)))
                for code, retry, body in results:
                    codes.append(code)
                    if code == 503:
                        self.assertEqual(retry, "1")
                        self.assertIn("the job API is busy", json.loads(body)["error"])
                    else:
                        self.assertEqual(code, 200, body)
                        self.assertEqual(json.loads(body)["bytes"], len(big))
                if 503 in codes:
                    break
            self.assertIn(503, codes)
            self.assertIn(200, codes)
            # Still serving: the bound frees as requests finish.
            r = requests.post(server.url + "/v1/files", data={"purpose": "batch"},
                              files={"file": ("after.jsonl", b"{}\n")}, timeout=120)
            self.assertEqual(r.status_code, 200, r.text)
            content = "%s/v1/files/%s/content" % (server.url, r.json()["id"])
            self.assertEqual(requests.get(content, timeout=120).content, b"{}\n")
        finally:
            self.assertEqual(server.stop(), 0, server.stderr())


class BatchTest(unittest.TestCase):
    def test_batch_end_to_end_matches_online_inference_and_ferry_infer(self):
        rng = np.random.default_rng(1)
        n = 300
        ids = ["req-%d" % i for i in rng.permutation(n)]
        lines = [fraud_line(cid, feats) for cid, feats in zip(ids, features(rng, n))]
        f = upload(jsonl(lines), "fraud.jsonl").json()
        r = post("/v1/batches", {"input_file_id": f["id"],
                                 "endpoint": "/v2/models/fraud_xgb/infer",
                                 "completion_window": "24h",
                                 "metadata": {"team": "risk", "run": "7"}})
        self.assertEqual(r.status_code, 200, r.text)
        b = r.json()
        self.assertEqual(set(b), BATCH_FIELDS)
        self.assertRegex(b["id"], r"^batch_[0-9a-f]{24}$")
        self.assertEqual(b["object"], "batch")
        self.assertEqual(b["endpoint"], "/v2/models/fraud_xgb/infer")
        self.assertEqual(b["input_file_id"], f["id"])
        self.assertEqual(b["completion_window"], "24h")
        self.assertEqual(b["metadata"], {"team": "risk", "run": "7"})
        self.assertIn(b["status"], ("validating", "in_progress", "finalizing", "completed"))
        self.assertIsNone(b["errors"])
        self.assertEqual(b["expires_at"] - b["created_at"], 24 * 3600)
        self.assertEqual(wait_validated("batches", b["id"])["request_counts"]["total"], n)

        done = wait_terminal("batches", b["id"])
        self.assertEqual(set(done), BATCH_FIELDS)
        self.assertEqual(done["status"], "completed", done)
        self.assertEqual(done["request_counts"], {"total": n, "completed": n, "failed": 0})
        for key in ("in_progress_at", "finalizing_at", "completed_at"):
            self.assertIsInstance(done[key], int, key)
        for key in ("failed_at", "expired_at", "cancelling_at", "cancelled_at",
                    "error_file_id"):
            self.assertIsNone(done[key], key)
        out_meta = get("/v1/files/" + done["output_file_id"]).json()
        self.assertEqual(out_meta["purpose"], "batch_output")
        self.assertEqual(out_meta["filename"], b["id"] + "-output.jsonl")
        content = get("/v1/files/%s/content" % done["output_file_id"]).content
        self.assertEqual(len(content), out_meta["bytes"])
        out = [json.loads(l) for l in content.decode().splitlines()]
        self.assertEqual(sorted(o["custom_id"] for o in out), sorted(ids))  # each once
        by_id = {o["custom_id"]: o for o in out}
        for line in lines:
            o = by_id[line["custom_id"]]
            self.assertIsNone(o["error"])
            self.assertEqual(o["response"]["status_code"], 200)
            online = post("/v2/models/fraud_xgb/infer", line["body"])
            self.assertEqual(online.status_code, 200, online.text)
            self.assertEqual(o["response"]["body"], online.json(), line["custom_id"])
        for line in lines[:2]:
            p = subprocess.run([FERRY, "infer", "--model-repository", REPO, "--model",
                                "fraud_xgb", "--request", "-"], input=json.dumps(line["body"]),
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(by_id[line["custom_id"]]["response"]["body"]["outputs"],
                             json.loads(p.stdout)["outputs"])

    def test_bad_lines_go_to_the_error_file(self):
        rng = np.random.default_rng(2)
        good = [fraud_line("ok-%d" % i, feats) for i, feats in enumerate(features(rng, 3))]
        short = fraud_line("short", [1.0] * 31)
        text = jsonl(good[:2]) + "{not json\n" + json.dumps(short) + "\n" + jsonl(good[2:])
        f = upload(text).json()
        b = post("/v1/batches", {"input_file_id": f["id"],
                                 "endpoint": "/v2/models/fraud_xgb/infer"}).json()
        done = wait_terminal("batches", b["id"])
        self.assertEqual(done["status"], "completed")
        self.assertEqual(done["request_counts"], {"total": 5, "completed": 3, "failed": 2})
        errors = [json.loads(l) for l in
                  get("/v1/files/%s/content" % done["error_file_id"]).text.splitlines()]
        self.assertEqual(sorted(e["line"] for e in errors), [3, 4])
        short_err = [e for e in errors if e["line"] == 4][0]
        self.assertEqual(short_err["custom_id"], "short")
        self.assertEqual(short_err["response"]["status_code"], 400)
        outputs = get("/v1/files/%s/content" % done["output_file_id"]).text.splitlines()
        self.assertEqual([json.loads(l)["custom_id"] for l in outputs],
                         ["ok-0", "ok-1", "ok-2"])

    def test_create_errors_name_the_field(self):
        f = upload(jsonl([fraud_line("a", [0.0] * 32)])).json()
        ok = {"input_file_id": f["id"], "endpoint": "/v2/models/fraud_xgb/infer"}
        cases = [
            ({"endpoint": ok["endpoint"]}, 400, "input_file_id"),
            ({"input_file_id": f["id"]}, 400, "endpoint"),
            (dict(ok, endpoint="/v1/chat/completions"), 400, "endpoint '/v1/chat/completions'"),
            (dict(ok, endpoint="/v2/models/nope/infer"), 404, "'nope'"),
            (dict(ok, endpoint="/v2/models/fraud_xgb/versions/9/infer"), 404, "fraud_xgb"),
            (dict(ok, input_file_id="file-000000000000000000000000"), 404, "input_file_id"),
            (dict(ok, input_file_id=7), 400, "input_file_id"),
            (dict(ok, completion_window="soon"), 400, "completion_window"),
            (dict(ok, metadata={"k%d" % i: "v" for i in range(17)}), 400, "metadata"),
            (dict(ok, metadata={"k": 1}), 400, "metadata.k"),
            (dict(ok, metadata={"k" * 65: "v"}), 400, "metadata." + "k" * 65),
            (dict(ok, colour="red"), 400, "'colour'"),
        ]
        for body, code, needle in cases:
            r = post("/v1/batches", body)
            self.assertEqual(r.status_code, code, (body, r.text))
            self.assertIn(needle, error_of(r), body)
        r = requests.post(URL + "/v1/batches", data=b"{nope", timeout=60)
        self.assertEqual(r.status_code, 400)
        self.assertIn("not valid JSON", error_of(r))
        r = get("/v1/batches/batch_000000000000000000000000")
        self.assertEqual(r.status_code, 404)
        self.assertIn("batch_000000000000000000000000", error_of(r))
        self.assertEqual(requests.put(URL + "/v1/batches", timeout=60).status_code, 405)
        self.assertEqual(get("/v1/nothing").status_code, 404)

    def test_an_input_of_another_model_fails_its_lines(self):
        f = upload(jsonl([fraud_line("x", [0.0] * 32, model="slow")])).json()
        b = post("/v1/batches", {"input_file_id": f["id"],
                                 "endpoint": "/v2/models/fraud_xgb/infer"}).json()
        done = wait_terminal("batches", b["id"])
        self.assertEqual(done["request_counts"]["failed"], 1)
        self.assertIsNone(done["output_file_id"])  # nothing succeeded, as OpenAI
        self.assertIsNotNone(done["error_file_id"])

    def test_list_pages_newest_first(self):
        f = upload(jsonl([fraud_line("a", [0.0] * 32)])).json()
        made = [post("/v1/batches", {"input_file_id": f["id"],
                                     "endpoint": "/v2/models/fraud_xgb/infer"}).json()["id"]
                for _ in range(3)]
        native = post("/v1/jobs", {"model": "fraud_xgb", "input_file_id": f["id"]}).json()
        for bid in made:
            wait_terminal("batches", bid)
        page = get("/v1/batches?limit=2").json()
        self.assertEqual(page["object"], "list")
        self.assertEqual([b["id"] for b in page["data"]], made[::-1][:2])
        self.assertTrue(page["has_more"])
        self.assertEqual(page["first_id"], made[2])
        self.assertEqual(page["last_id"], made[1])
        rest = get("/v1/batches?limit=100&after=" + page["last_id"]).json()
        self.assertEqual(rest["data"][0]["id"], made[0])
        ids = [b["id"] for b in page["data"] + rest["data"]]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertNotIn(native["id"], ids)  # a native job is no batch
        self.assertEqual(get("/v1/batches/" + native["id"]).status_code, 404)
        self.assertFalse(rest["has_more"])
        self.assertIn(native["id"], [j["id"] for j in get("/v1/jobs?limit=100").json()["data"]])
        for q in ("limit=0", "limit=101", "limit=x"):
            r = get("/v1/batches?" + q)
            self.assertEqual(r.status_code, 400, q)
            self.assertIn("limit", error_of(r))
        r = get("/v1/batches?after=batch_000000000000000000000000")
        self.assertEqual(r.status_code, 400)
        self.assertIn("after", error_of(r))

    def test_cancel_a_batch(self):
        rows = [{"custom_id": "s%d" % i, "url": "/v2/models/slow/infer",
                 "body": {"inputs": [{"name": "x", "shape": [1, 2], "datatype": "FP32",
                                      "data": [1, 2]}]}} for i in range(60)]
        f = upload(jsonl(rows)).json()
        b = post("/v1/batches", {"input_file_id": f["id"],
                                 "endpoint": "/v2/models/slow/infer"}).json()
        r = post("/v1/batches/%s/cancel" % b["id"])
        self.assertEqual(r.status_code, 200, r.text)
        self.assertIn(r.json()["status"], ("cancelling", "cancelled"))
        self.assertIsInstance(r.json()["cancelling_at"], int)
        done = wait_terminal("batches", b["id"])
        self.assertEqual(done["status"], "cancelled")
        self.assertIsInstance(done["cancelled_at"], int)
        # Cancelled while its input was still being validated, the batch read
        # no record and counts none; after that, records already in flight may
        # finish and the rest are error lines. Either way every counted record
        # is accounted for.
        counts = done["request_counts"]
        self.assertIn(counts["total"], (0, 60))
        self.assertEqual(counts["completed"] + counts["failed"], counts["total"])
        if counts["failed"]:
            errors = get("/v1/files/%s/content" % done["error_file_id"]).text.splitlines()
            self.assertEqual(len(errors), counts["failed"])
        r = post("/v1/batches/%s/cancel" % b["id"])
        self.assertEqual(r.status_code, 409)
        self.assertIn("cancelled", error_of(r))
        self.assertEqual(post("/v1/batches/batch_000000000000000000000000/cancel").status_code,
                         404)


class NativeJobTest(unittest.TestCase):
    def test_csv_job_under_a_data_root_equals_ferry_run(self):
        inp = os.path.join(DATA, "native.csv")
        write_csv(inp, 5000)
        out = os.path.join(DATA, "out", "native.out.csv")
        r = post("/v1/jobs", {"model": "fraud_xgb", "input": "file://" + inp, "output": out,
                              "id_column": "id", "chunk_size": 700,
                              "metadata": {"owner": "me"}})
        self.assertEqual(r.status_code, 200, r.text)
        job = r.json()
        self.assertTrue(BATCH_FIELDS <= set(job))
        self.assertEqual(job["object"], "job")
        self.assertEqual(job["model"], "fraud_xgb")
        self.assertEqual(job["format"], "csv")
        self.assertEqual(job["input"], inp)
        self.assertEqual(job["output"], out)
        self.assertEqual(job["error_file"], out + ".errors.jsonl")
        self.assertEqual(job["dead_letter_file"], out + ".dead_letters.jsonl")
        self.assertIsNone(job["endpoint"])
        self.assertIsNone(job["input_file_id"])
        self.assertEqual(wait_validated("jobs", job["id"])["request_counts"]["total"], 5000)
        done = wait_terminal("jobs", job["id"])
        self.assertEqual(done["status"], "completed", done)
        self.assertEqual(done["progress"], {"records_done": 5000, "percent": 100,
                                            "records_per_second": None, "eta_seconds": None})
        self.assertEqual(done["metadata"], {"owner": "me"})
        self.assertGreater(done["compute_seconds"], 0)
        self.assertIsNone(done["output_file_id"])  # the output is where it was asked
        with open(out, "rb") as f:
            got = f.read()
        self.assertEqual(got, ferry_run(inp, os.path.join(TMP, "native.ref.csv")))

    def test_an_input_url_is_downloaded_then_scored_like_the_local_file(self):
        inp = os.path.join(DATA, "remote.csv")
        write_csv(inp, 3000)
        url = "%s/remote.csv?sig=s3cr3t" % FILES_URL
        r = post("/v1/jobs", {"model": "fraud_xgb", "input": url, "id_column": "id",
                              "chunk_size": 700})
        self.assertEqual(r.status_code, 200, r.text)
        job = r.json()
        self.assertEqual(job["input_url"], FILES_URL + "/remote.csv?...")  # query hidden
        self.assertEqual(job["format"], "csv")
        self.assertEqual(wait_validated("jobs", job["id"])["request_counts"]["total"], 3000)
        done = wait_terminal("jobs", job["id"])
        self.assertEqual(done["status"], "completed", done)
        got = requests.get("%s/v1/files/%s/content" % (URL, done["output_file_id"]),
                           timeout=60).content
        self.assertEqual(got, ferry_run(inp, os.path.join(TMP, "remote.ref.csv")))
        # The downloaded copy is a file of the API now: listed, deletable.
        files = get("/v1/files?purpose=batch").json()["data"]
        copies = [f for f in files if f["filename"] == job["id"] + "-input.csv"]
        self.assertEqual(len(copies), 1, files)
        self.assertEqual(copies[0]["bytes"], os.path.getsize(inp))
        self.assertEqual(requests.delete(URL + "/v1/files/" + copies[0]["id"],
                                         timeout=60).status_code, 200)

    def test_input_urls_are_confined_and_failures_named(self):
        base = {"model": "fraud_xgb", "id_column": "id"}
        # Outside the allowed prefix, a prefix that only shares characters,
        # dot segments, another scheme.
        port = FILES_URL.rsplit(":", 1)[1]
        for url, code, words in [
                ("http://127.0.0.2:%s/remote.csv" % port, 403, "allowed URL prefixes"),
                ("https://example.com/x.csv", 403, "allowed URL prefixes"),
                # The prefix http://127.0.0.3:1/data allows /data/..., not /database.
                ("http://127.0.0.3:1/database.csv", 403, "allowed URL prefixes"),
                (FILES_URL + "/a/../remote.csv", 400, "'..' segment"),
                (FILES_URL + "/a/%2E%2e/remote.csv", 400, "'..' segment"),
                ("ftp://127.0.0.1/x.csv", 400, "file:// URLs")]:
            r = post("/v1/jobs", dict(base, input=url))
            self.assertEqual(r.status_code, code, (url, r.text))
            self.assertIn(words, error_of(r), url)
        # A missing file: the job fails with the server's answer.
        r = post("/v1/jobs", dict(base, input=FILES_URL + "/missing.csv"))
        self.assertEqual(r.status_code, 200, r.text)
        done = wait_terminal("jobs", r.json()["id"])
        self.assertEqual(done["status"], "failed", done)
        self.assertIn("HTTP 404", json.dumps(done["errors"]))
        # `ferry jobs status` says why.
        p = subprocess.run([FERRY, "jobs", "--server", URL, "status", done["id"]],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("error: input_url: GET %s/missing.csv: HTTP 404" % FILES_URL, p.stdout)

    def test_input_downloads_hold_no_job_worker_and_stop_when_cancelled(self):
        # As many trickling downloads as the server has job workers (2).
        slow = []
        for name in ("trickle-a.csv", "trickle-b.csv"):
            r = post("/v1/jobs", {"model": "fraud_xgb", "id_column": "id",
                                  "input": FILES_URL + "/slow/" + name})
            self.assertEqual(r.status_code, 200, r.text)
            slow.append(r.json()["id"])
        time.sleep(1)  # both downloads are under way
        # A job on a local file runs meanwhile: downloads have threads of
        # their own (the files take 30 s to arrive).
        inp = os.path.join(DATA, "beside-downloads.csv")
        write_csv(inp, 200)
        r = post("/v1/jobs", {"model": "fraud_xgb", "input": inp, "id_column": "id",
                              "output": os.path.join(DATA, "beside-downloads.out.csv")})
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(wait_terminal("jobs", r.json()["id"], timeout=20)["status"],
                         "completed")
        started = time.time()
        for job_id in slow:
            self.assertEqual(get("/v1/jobs/" + job_id).json()["status"], "validating")
            self.assertEqual(post("/v1/jobs/%s/cancel" % job_id).status_code, 200)
        for job_id in slow:
            done = wait_terminal("jobs", job_id, timeout=20)
            self.assertEqual(done["status"], "cancelled", done)
            self.assertEqual(done["request_counts"]["total"], 0)
        self.assertLess(time.time() - started, 15)  # not the 30 s the files take
        # The downloads notice between two reads and remove their partial files.
        files = os.path.join(TMP, "state-main", "files")
        left = lambda: [n for n in os.listdir(files) if any(j in n for j in slow)]
        deadline = time.time() + 5
        while left() and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(left(), [])

    def test_uploaded_csv_without_output_becomes_a_file(self):
        text = "id,x_0,x_1\n" + "".join("r%d,%d,0.5\n" % (i, i) for i in range(10))
        f = upload(text, "rows.csv").json()
        job = post("/v1/jobs", {"model": "slow", "input_file_id": f["id"],
                                "id_column": "id"}).json()
        self.assertEqual(job["input_file_id"], f["id"])
        done = wait_terminal("jobs", job["id"])
        self.assertEqual(done["status"], "completed")
        out = get("/v1/files/%s/content" % done["output_file_id"]).text.splitlines()
        self.assertEqual(out[0], "id,y_0,y_1")
        self.assertEqual(out[1:], ["r%d,%d,0.5" % (i, i) for i in range(10)])

    def test_paths_outside_the_data_roots_are_refused(self):
        outside = os.path.join(TMP, "outside")
        os.makedirs(outside, exist_ok=True)
        secret = os.path.join(outside, "secret.csv")
        write_csv(secret, 3)
        link = os.path.join(DATA, "sneaky")
        if not os.path.islink(link):
            os.symlink(outside, link)
        inside = os.path.join(DATA, "small.csv")
        write_csv(inside, 3)
        state = os.path.join(TMP, "state-main")
        cases = [
            ({"input": os.path.join(DATA, "..", "outside", "secret.csv")}, "input"),
            ({"input": "file://" + DATA + "/../outside/secret.csv"}, "input"),
            ({"input": os.path.join(link, "secret.csv")}, "input"),
            ({"input": inside, "output": os.path.join(outside, "o.csv")}, "output"),
            ({"input": inside, "output": os.path.join(link, "o.csv")}, "output"),
            ({"input": inside, "output": os.path.join(state, "jobs.db")}, "output"),
        ]
        for extra, field in cases:
            body = dict({"model": "fraud_xgb", "id_column": "id",
                         "output": os.path.join(DATA, "o.csv")}, **extra)
            r = post("/v1/jobs", body)
            self.assertEqual(r.status_code, 403, (body, r.text))
            self.assertIn("%s '%s'" % (field, body[field]), error_of(r))
        self.assertFalse(os.path.exists(os.path.join(outside, "o.csv")))
        for location, needle in (("s3://bucket/x.csv",
                                  "only local paths and file:// URLs are supported"),
                                 ("relative.csv", "absolute path")):
            r = post("/v1/jobs", {"model": "fraud_xgb", "input": location})
            self.assertEqual(r.status_code, 400, r.text)
            self.assertIn(needle, error_of(r))

    def test_create_errors_name_the_field(self):
        inside = os.path.join(DATA, "small.csv")
        write_csv(inside, 3)
        base = {"model": "fraud_xgb", "input": inside, "id_column": "id"}
        cases = [
            ({"input": inside}, 400, "model"),
            ({"model": "fraud_xgb"}, 400, "input"),
            (dict(base, model="nope"), 404, "'nope'"),
            (dict(base, version=0), 400, "version"),
            (dict(base, chunk_size="big"), 400, "chunk_size"),
            (dict(base, chunk_size=0), 400, "chunk_size"),
            (dict(base, max_attempts=1000), 400, "max_attempts"),
            (dict(base, columns="f0"), 400, "columns"),
            (dict(base, format="xml"), 400, "format"),
            (dict(base, run_window="later"), 400, "run_window"),
            (dict(base, time_zone="Mars/Olympus"), 400, "time_zone"),
            (dict(base, webhook_url="ftp://x/"), 400, "webhook_url"),
            (dict(base, output=inside), 400, "output"),
            (dict(base, speed="fast"), 400, "'speed'"),
        ]
        for body, code, needle in cases:
            r = post("/v1/jobs", body)
            self.assertEqual(r.status_code, code, (body, r.text))
            self.assertIn(needle, error_of(r), body)
        # A file the model cannot map is a failed job (as the Batch API reports
        # validation), with the reason.
        r = post("/v1/jobs", dict(base, columns=["f0", "f1"]))
        self.assertEqual(r.status_code, 200, r.text)
        failed = wait_validated("jobs", r.json()["id"])
        self.assertEqual(failed["status"], "failed")
        self.assertEqual(failed["errors"]["data"][0]["code"], "invalid_input")
        self.assertIn("columns lists 2", failed["errors"]["data"][0]["message"])
        self.assertEqual(get("/v1/jobs/batch_000000000000000000000000").status_code, 404)

    def test_cancel_keeps_partial_output_and_accounts_for_every_record(self):
        inp = os.path.join(DATA, "slow.csv")
        with open(inp, "w") as f:
            f.write("id,x_0,x_1\n" + "".join("%d,%d,1\n" % (i, i) for i in range(200)))
        out = os.path.join(DATA, "slow.out.csv")
        job = post("/v1/jobs", {"model": "slow", "input": inp, "output": out,
                                "id_column": "id", "chunk_size": 8}).json()
        deadline = time.time() + 30
        while get("/v1/jobs/" + job["id"]).json()["request_counts"]["completed"] == 0:
            self.assertLess(time.time(), deadline)
            time.sleep(0.05)
        r = post("/v1/jobs/%s/cancel" % job["id"])
        self.assertEqual(r.status_code, 200, r.text)
        self.assertIn(r.json()["status"], ("cancelling", "cancelled"))
        done = wait_terminal("jobs", job["id"])
        self.assertEqual(done["status"], "cancelled")
        self.assertIsInstance(done["cancelled_at"], int)
        c = done["request_counts"]
        self.assertEqual(c["total"], 200)
        self.assertEqual(c["completed"] + c["failed"], 200)
        self.assertGreater(c["completed"], 0)
        self.assertGreater(c["failed"], 0)
        with open(out) as f:
            ids = [int(l.split(",")[0]) for l in f.read().splitlines()[1:]]
        with open(done["error_file"]) as f:
            failed = [json.loads(l) for l in f.read().splitlines()]
        self.assertEqual(len(ids), c["completed"])
        self.assertTrue(all(e["error"]["code"] == "cancelled" for e in failed))
        self.assertEqual(sorted(ids + [int(e["id"]) for e in failed]), list(range(200)))
        r = post("/v1/jobs/%s/cancel" % job["id"])
        self.assertEqual(r.status_code, 409)

    def test_replay_dead_letters(self):
        inp = os.path.join(DATA, "poison.csv")
        with open(inp, "w") as f:
            f.write("id,x\n" + "".join("%d,%d\n" % (i, i) for i in range(20)))
        out = os.path.join(DATA, "poison.out.csv")
        job = post("/v1/jobs", {"model": "poison", "input": inp, "output": out,
                                "id_column": "id", "max_attempts": 1}).json()
        done = wait_terminal("jobs", job["id"])
        self.assertEqual(done["request_counts"], {"total": 20, "completed": 19, "failed": 1})
        replay_out = os.path.join(DATA, "poison.replay.csv")
        r = post("/v1/jobs/%s/replay-dead-letters" % job["id"], {"output": replay_out})
        self.assertEqual(r.status_code, 200, r.text)
        replay = r.json()
        self.assertEqual(replay["replay_of"], job["id"])
        self.assertEqual(wait_validated("jobs", replay["id"])["request_counts"]["total"], 1)
        self.assertEqual(replay["output"], replay_out)
        self.assertEqual(wait_terminal("jobs", replay["id"])["request_counts"]["failed"], 1)
        r = post("/v1/jobs/%s/replay-dead-letters" % job["id"],
                 {"output": os.path.join(TMP, "x.csv")})
        self.assertEqual(r.status_code, 403)
        r = post("/v1/jobs/%s/replay-dead-letters" % replay["id"], {"colour": 1})
        self.assertEqual(r.status_code, 400)
        self.assertIn("'colour'", error_of(r))


class JobsCliTest(unittest.TestCase):
    """`ferry jobs`, the command-line client, against the same server."""

    def cli(self, *args):
        return subprocess.run([FERRY, "jobs", "--server", URL, *args],
                              capture_output=True, text=True, timeout=300)

    def test_submit_wait_status_list_download(self):
        inp = os.path.join(DATA, "cli.csv")
        write_csv(inp, 3000)
        out = os.path.join(DATA, "out", "cli.out.csv")
        p = self.cli("submit", "--model", "fraud_xgb", "--input", inp, "--output", out,
                     "--id-column", "id", "--chunk-size", "500", "--metadata", "team=risk",
                     "--wait")
        self.assertEqual(p.returncode, 0, p.stderr)
        job_id = p.stdout.split()[0]
        self.assertIn("completed", p.stdout)
        self.assertIn("3000/3000", p.stdout)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), ferry_run(inp, os.path.join(TMP, "cli.ref.csv")))
        status = self.cli("status", job_id, "--json")
        self.assertEqual(status.returncode, 0, status.stderr)
        self.assertEqual(json.loads(status.stdout)["metadata"], {"team": "risk"})
        listed = self.cli("list", "--limit", "100")
        self.assertIn(job_id, listed.stdout)
        self.assertEqual(self.cli("wait", job_id).returncode, 0)
        # Its output stays where it was asked: nothing to download by id.
        d = self.cli("download", job_id)
        self.assertEqual(d.returncode, 1)
        self.assertIn("output", d.stderr)

    def test_upload_and_download_through_files(self):
        local = os.path.join(TMP, "cli-upload.jsonl")
        rng = np.random.default_rng(4)
        with open(local, "w") as f:
            f.write(jsonl([fraud_line("c%d" % i, features(rng, 1)[0]) for i in range(20)]))
        p = self.cli("submit", "--model", "fraud_xgb", "--file", local, "--wait")
        self.assertEqual(p.returncode, 0, p.stderr)
        job_id = p.stdout.split()[0]
        got = os.path.join(TMP, "cli-download.jsonl")
        d = self.cli("download", job_id, "--output-file", got)
        self.assertEqual(d.returncode, 0, d.stderr)
        with open(got) as f:
            ids = sorted(json.loads(l)["custom_id"] for l in f)
        self.assertEqual(ids, sorted("c%d" % i for i in range(20)))
        # Without --output-file it goes to stdout; no partial file is left.
        d = self.cli("download", job_id)
        self.assertEqual(d.returncode, 0, d.stderr)
        with open(got) as f:
            self.assertEqual(d.stdout, f.read())
        self.assertEqual([n for n in os.listdir(TMP) if ".part-" in n], [])
        # The client streams the file from disk; a server that refuses it
        # (above --max-upload-bytes, before the whole body is sent) is heard.
        huge = os.path.join(TMP, "cli-huge.jsonl")
        with open(huge, "w") as f:
            f.write("x" * (4 * MAX_UPLOAD))
        p = self.cli("submit", "--model", "fraud_xgb", "--file", huge)
        self.assertEqual(p.returncode, 1)
        self.assertIn("HTTP 413", p.stderr)
        self.assertIn("--max-upload-bytes", p.stderr)

    def test_errors_are_clear(self):
        p = self.cli("status", "batch_nope")
        self.assertEqual(p.returncode, 1)
        self.assertIn("HTTP 404", p.stderr)
        p = self.cli("submit", "--model", "fraud_xgb", "--input", "/etc/passwd",
                     "--output", os.path.join(DATA, "x.csv"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("HTTP 403", p.stderr)
        p = subprocess.run([FERRY, "jobs", "--server", "http://127.0.0.1:1", "list"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("connecting", p.stderr)


class WebhookTest(unittest.TestCase):
    def test_a_finished_job_posts_a_signed_event(self):
        receiver = WebhookReceiver()
        try:
            inp = os.path.join(DATA, "hook.csv")
            write_csv(inp, 50)
            job = post("/v1/jobs", {"model": "fraud_xgb", "input": inp, "id_column": "id",
                                    "output": os.path.join(DATA, "hook.out.csv"),
                                    "webhook_url": receiver.url("/hook?token=abc")}).json()
            self.assertEqual(job.get("webhook_url"), receiver.url("/hook?..."), job)
            wait_terminal("jobs", job["id"])
            got = receiver.wait(1)
            self.assertEqual(len(got), 1)
            path, headers, body = got[0]
            self.assertEqual(path, "/hook?token=abc")
            self.assertTrue(verify_signature(headers["Ferry-Signature"], body),
                            headers["Ferry-Signature"])
            self.assertFalse(verify_signature(headers["Ferry-Signature"], body + b" "))
            self.assertFalse(verify_signature(headers["Ferry-Signature"], body, b"wrong"))
            event = json.loads(body)
            self.assertEqual(event["type"], "batch.completed")
            self.assertRegex(event["id"], r"^evt_[0-9a-f]{32}$")
            self.assertEqual(event["data"]["id"], job["id"])
            self.assertEqual(event["data"]["status"], "completed")
            self.assertEqual(event["data"]["request_counts"],
                             {"total": 50, "completed": 50, "failed": 0})
            self.assertEqual(event["data"]["output_file"], os.path.join(DATA, "hook.out.csv"))
        finally:
            receiver.close()

    def test_a_batch_event_names_its_output_file_id(self):
        receiver = WebhookReceiver()
        try:
            f = upload("id,x\n1,2\n", "p.csv").json()
            job = post("/v1/jobs", {"model": "poison", "input_file_id": f["id"],
                                    "id_column": "id", "webhook_url": receiver.url()}).json()
            done = wait_terminal("jobs", job["id"])
            (_, headers, body), = receiver.wait(1)
            self.assertTrue(verify_signature(headers["Ferry-Signature"], body))
            self.assertEqual(json.loads(body)["data"]["output_file"], done["output_file_id"])
        finally:
            receiver.close()


    def test_a_webhook_owed_by_a_killed_server_is_sent_after_its_restart(self):
        receiver = WebhookReceiver(status=503)  # down
        state = os.path.join(TMP, "hook-state")
        secret = os.path.join(TMP, "webhook-secret")
        args = ("--data-root", DATA, "--webhook-secret-file", secret)
        server = Server(state, *args)
        try:
            inp = os.path.join(DATA, "hook-kill.csv")
            write_csv(inp, 20)
            job = post("/v1/jobs", {"model": "fraud_xgb", "input": inp, "id_column": "id",
                                    "output": os.path.join(DATA, "hook-kill.out.csv"),
                                    "webhook_url": receiver.url()}, url=server.url).json()
            wait_terminal("jobs", job["id"], url=server.url)
            first = receiver.wait(1)  # the first attempt failed: retry in ~1 s
            self.assertEqual(len(first), 1)
        finally:
            server.kill()
        receiver.status = 200  # back up while no server runs
        time.sleep(2)  # past the retry time
        server = Server(state, *args)
        try:
            got = receiver.wait(2)
        finally:
            self.assertEqual(server.stop(), 0, server.stderr())
            receiver.close()
        self.assertEqual(len(got), 2, "the restarted server did not send the webhook")
        (_, _, body1), (_, headers, body2) = got
        self.assertEqual(body2, body1)  # the same event (and event id)
        self.assertTrue(verify_signature(headers["Ferry-Signature"], body2))
        self.assertEqual(json.loads(body2)["data"]["id"], job["id"])


class CrashTest(unittest.TestCase):
    """A job of 300 000 rows; the server is SIGKILLed mid-way and restarted on the
    same state directory; the job finishes on its own, and its output is byte for
    byte the output of an uninterrupted `ferry run`."""

    ROWS = 300_000

    def test_sigkill_mid_job_then_restart_finishes_with_identical_output(self):
        data = os.path.join(TMP, "crash-data")
        state = os.path.join(TMP, "crash-state")
        os.makedirs(data)
        inp = os.path.join(data, "big.csv")
        subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "bench", "make_tabular_csv.py"),
                        "--rows", str(self.ROWS), "--features", "32", inp], check=True)
        out = os.path.join(data, "big.out.csv")
        args = ("--data-root", data, "--job-workers", "2")
        server = Server(state, *args)
        try:
            # No webhook secret on this server: a webhook is refused at submit.
            r = post("/v1/jobs", {"model": "fraud_xgb", "input": inp, "output": out,
                                  "webhook_url": "http://127.0.0.1:9/h"}, url=server.url)
            self.assertEqual(r.status_code, 400)
            self.assertIn("--webhook-secret-file", error_of(r))
            r = post("/v1/jobs", {"model": "fraud_xgb", "input": inp, "output": out,
                                  "id_column": "id", "chunk_size": 5000}, url=server.url)
            self.assertEqual(r.status_code, 200, r.text)
            job = r.json()
            self.assertEqual(wait_validated("jobs", job["id"], url=server.url)
                             ["request_counts"]["total"], self.ROWS)
            deadline = time.time() + 120
            while True:
                j = get("/v1/jobs/" + job["id"], url=server.url).json()
                self.assertNotIn(j["status"], TERMINAL,
                                 "the job finished before the kill; make it bigger")
                if j["request_counts"]["completed"] >= self.ROWS // 5:
                    break
                self.assertLess(time.time(), deadline)
                time.sleep(0.01)
        finally:
            server.kill()
        self.assertLess(j["request_counts"]["completed"], self.ROWS)
        self.assertFalse(os.path.exists(out))

        server = Server(state, *args)
        try:
            # A second server cannot share the state directory.
            p = subprocess.run([FERRY, "serve", "--model-repository", REPO,
                                "--http-address", "127.0.0.1", "--http-port", "0",
                                "--grpc-port", "0", "--state-dir", state],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 1)
            self.assertIn("in use", p.stderr)
            done = wait_terminal("jobs", job["id"], timeout=300, url=server.url)
        finally:
            self.assertEqual(server.stop(), 0, server.stderr())
        self.assertEqual(done["status"], "completed", done)
        self.assertEqual(done["request_counts"],
                         {"total": self.ROWS, "completed": self.ROWS, "failed": 0})
        with open(out, "rb") as f:
            got = f.read()
        ref = ferry_run(inp, os.path.join(TMP, "big.ref.csv"))
        self.assertEqual(len(got), len(ref))
        self.assertTrue(got == ref, "output differs from an uninterrupted ferry run")


def write_identity_model(name, config):
    os.makedirs(os.path.join(REPO, name, "1"), exist_ok=True)
    with open(os.path.join(REPO, name, "config.pbtxt"), "w") as f:
        f.write(config)


def setUpModule():
    global TMP, REPO, DATA, SERVER, URL, FILES, FILES_URL
    TMP = tempfile.mkdtemp(prefix="ferry-jobs-api-test-")
    REPO = os.path.join(TMP, "repo")
    subprocess.run([os.path.join(SOURCE_DIR, "tools", "make-example-models"), REPO,
                    "--only", "fraud_xgb"], check=True, stdout=subprocess.DEVNULL)
    write_identity_model("slow", SLOW_CONFIG)
    write_identity_model("poison", POISON_CONFIG)
    DATA = os.path.join(TMP, "data")
    os.makedirs(DATA)
    secret = os.path.join(TMP, "webhook-secret")
    with open(secret, "wb") as f:
        f.write(SECRET + b"\n")
    FILES = FileServer(DATA)
    FILES_URL = FILES.url
    SERVER = Server(os.path.join(TMP, "state-main"), "--data-root", DATA,
                    "--input-url-prefix", FILES_URL,
                    "--input-url-prefix", "http://127.0.0.3:1/data",
                    "--webhook-secret-file", secret, "--job-workers", "2",
                    "--max-body-bytes", str(MAX_BODY), "--max-upload-bytes", str(MAX_UPLOAD),
                    "--price-per-instance-hour", "3.6")
    URL = SERVER.url


def tearDownModule():
    try:
        if FILES is not None:
            FILES.close()
        if SERVER is not None:
            SERVER.stop_checked()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    FERRY, SOURCE_DIR = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
