#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Soak test of `ferry serve` on loopback: wrk holds CONNECTIONS (default 1000)
# connections for DURATION seconds (default 60) against the fraud_xgb example model.
# Passes when no answer is an error other than an explicit 429/503 and the server's RSS
# after the soak is within ±10 % of its RSS after warm-up. Appends the numbers and the
# command to bench/RESULTS.md. Loopback only; bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNECTIONS=${CONNECTIONS:-1000}
DURATION=${DURATION:-60}
BUILD_DIR=${BUILD_DIR:-build}
[ -x "$BUILD_DIR/ferry" ] || scripts/build.sh
command -v wrk >/dev/null || { echo "soak: wrk missing (scripts/install-deps.sh installs it)"; exit 1; }
# 1000 connections need more descriptors than the usual soft limit of 1024.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

tmp=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
tools/make-example-models "$tmp/models" --only fraud_xgb >/dev/null

"$BUILD_DIR/ferry" serve --model-repository "$tmp/models" --http-address 127.0.0.1 \
  --http-port 0 --grpc-port 0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
server=$!
for _ in $(seq 1 600); do
  grep -q "http_port=" "$tmp/serve.out" 2>/dev/null && break
  sleep 0.1
done
port=$(sed -n 's/.*http_port=\([0-9]*\).*/\1/p' "$tmp/serve.out")
[ -n "$port" ] || { cat "$tmp/serve.err"; echo "soak: server did not start"; exit 1; }
url="http://127.0.0.1:$port/v2/models/fraud_xgb/infer"
export SOAK_BODY=tools/examples/fraud_xgb.json
rss() { awk '/^VmRSS/{print $2}' "/proc/$server/status"; }

wrk -t2 -c"$CONNECTIONS" -d10s -s bench/soak_post.lua "$url" >"$tmp/warmup.txt"
sleep 2
rss_before=$(rss)
cmd="wrk -t2 -c$CONNECTIONS -d${DURATION}s -s bench/soak_post.lua $url"
$cmd >"$tmp/soak.txt"
sleep 2
rss_after=$(rss)
kill -TERM "$server"
wait "$server"; rc=$?
server=""

line=$(grep '^SOAK ' "$tmp/soak.txt")
get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
other=$(( $(get status_other) + $(get socket_read) + $(get socket_write) + $(get socket_timeout) + $(get socket_connect) ))
ratio=$(awk -v a="$rss_after" -v b="$rss_before" 'BEGIN{printf "%.3f", a/b}')
ok_rss=$(awk -v r="$ratio" 'BEGIN{print (r >= 0.9 && r <= 1.1) ? "yes" : "no"}')
verdict="PASS"
[ "$other" -eq 0 ] && [ "$ok_rss" = yes ] && [ "$rc" -eq 0 ] || verdict="FAIL"

section=$(cat <<MD

## soak, $(date -u '+%Y-%m-%d %H:%M') UTC

- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src bench || echo ' + local changes')
- command: \`CONNECTIONS=$CONNECTIONS DURATION=$DURATION bench/soak.sh\` (server: \`ferry serve\` on the fraud_xgb example; load: \`$cmd\` after a 10 s warm-up)
- soak ($verdict): $(get requests) requests in $(get duration_s) s = $(get rps) req/s, latency p50 $(get p50_ms) ms, p99 $(get p99_ms) ms, max $(get max_ms) ms; answers 200: $(get status_200), 429: $(get status_429), 503: $(get status_503), other: $(get status_other); socket errors connect/read/write/timeout: $(get socket_connect)/$(get socket_read)/$(get socket_write)/$(get socket_timeout)
- server RSS after warm-up $((rss_before / 1024)) MiB, after the soak $((rss_after / 1024)) MiB (ratio $ratio, target 0.9–1.1); exit status after SIGTERM: $rc
MD
)
echo "$section"
echo "$section" >> bench/RESULTS.md
[ "$verdict" = PASS ]
