#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libraries that hold locked state with clang's -Wthread-safety as errors, so
# every ABSL_GUARDED_BY annotation is checked. Uses its own build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${THREAD_SAFETY_BUILD_DIR:-build-thread-safety}
CC=clang CXX=clang++ cmake -G Ninja -S . -B "$dir" -DFERRY_BUILD_TESTS=OFF \
  -DFERRY_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-Wthread-safety -Werror=thread-safety" >/dev/null
cmake --build "$dir" --target ferry_core ferry_batching ferry_repository ferry_storage \
  ferry_jobs ferry_jobs_webhook ferry_loadgen -j "$(nproc)"
echo "check-thread-safety: clean"
