#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs dependencies, builds, and runs every test (unit tests, engine cross-checks
# against Debian's python3-torch/python3-xgboost, black-box CLI tests, format check).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
echo "test.sh: finished in $(( $(date +%s) - start )) s"
