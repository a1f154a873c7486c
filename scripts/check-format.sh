#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a tracked C++ file is not clang-formatted (.clang-format, Google base).
# Fix with: git ls-files '*.cc' '*.h' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' 2>/dev/null || find src tests bench -name '*.cc' -o -name '*.h')
clang-format --dry-run -Werror "${files[@]}"
echo "check-format: ${#files[@]} files formatted"
