# SPDX-License-Identifier: Apache-2.0
"""FerryServer: a real `ferry serve` process on free loopback ports, for the
black-box tests (tests/api, tests/cli). Its stderr goes to a file so that a
long run cannot fill a pipe; its job state directory is its own.

    server = FerryServer(ferry_binary, repo, "--grace-seconds", "1")
    server.url           # http://127.0.0.1:PORT
    server.grpc_target   # 127.0.0.1:PORT
    rc = server.stop()   # SIGTERM, wait; server.stderr() has the log
    server.stop_checked()  # the same, asserting exit status 0
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request


class FerryServer:
    def __init__(self, ferry, repo, *extra, state_dir=None, wait_ready=True):
        self._tmp = tempfile.mkdtemp(prefix="ferry-test-server-")
        # Not inside the repository, where it would read as a model.
        state = state_dir or os.path.join(self._tmp, "state")
        self.log_path = os.path.join(self._tmp, "serve.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [ferry, "serve", "--model-repository", repo, "--http-address", "127.0.0.1",
             "--http-port", "0", "--grpc-port", "0", "--state-dir", state, *extra],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()  # printed once the models are loaded
        m = re.search(r"http_port=(\d+)", line)
        if not m:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("no port line from ferry serve: %r, log: %s" %
                               (line, self.stderr()))
        self.startup_line = line
        self.url = "http://127.0.0.1:%s" % m.group(1)
        g = re.search(r"grpc_port=(\d+)", line)
        self.grpc_target = "127.0.0.1:%s" % g.group(1) if g else None
        if wait_ready:
            self._wait_ready()

    def _wait_ready(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/v2/health/ready", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.05)
        raise RuntimeError("ferry serve never became ready: " + self.stderr())

    def stderr(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def _close(self):
        self.proc.stdout.close()
        self.log.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def stop(self):
        """SIGTERM; returns the exit code (the log stays readable)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._keep_log()

    def stop_checked(self):
        """SIGTERM; raises AssertionError with the log unless it exits 0."""
        rc = self.stop()
        assert rc == 0, "ferry serve exited %s: %s" % (rc, self.stderr())

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._keep_log()

    def _keep_log(self):
        self._final_log = self.stderr()
        self.stderr = lambda: self._final_log
        self._close()
