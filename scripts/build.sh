#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds Ferry into build/ (override with BUILD_DIR). Warnings in Ferry's
# own code are errors. Assumes scripts/install-deps.sh has run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -G Ninja -S . -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -DFERRY_WERROR=ON
cmake --build "$BUILD_DIR" -j "$(nproc)"
