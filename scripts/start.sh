#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs dependencies, builds Ferry, writes the example models into example-models/
# and serves them: KServe v2 over HTTP on :8000 (metrics at /metrics) and gRPC on :8001.
# Ctrl-C (or SIGTERM) drains in-flight requests and exits.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
REPO=${FERRY_MODEL_REPOSITORY:-example-models}
tools/make-example-models "$REPO"
echo
build/ferry models --model-repository "$REPO" 2>/dev/null
echo
cat <<MSG
Serving on http://localhost:${FERRY_HTTP_PORT:-8000} (gRPC :${FERRY_GRPC_PORT:-8001}). In another terminal, try:
  curl -s -X POST localhost:${FERRY_HTTP_PORT:-8000}/v2/models/fraud_xgb/infer -d @tools/examples/fraud_xgb.json
  curl -s localhost:${FERRY_HTTP_PORT:-8000}/v2/models/fraud_xgb
  curl -s localhost:${FERRY_HTTP_PORT:-8000}/metrics | grep ferry_batch_size_rows
MSG
exec build/ferry serve --model-repository "$REPO" \
  --http-port "${FERRY_HTTP_PORT:-8000}" --grpc-port "${FERRY_GRPC_PORT:-8001}"
