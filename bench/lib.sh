# SPDX-License-Identifier: Apache-2.0
# Shared by the bench/run-*.sh scripts (source it; bash only): the Release build
# they run, and the facts each RESULTS.md section records (machine, commit,
# load). Sets `root`, `build_dir`, `python` and `results`.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${FERRY_BENCH_BUILD_DIR:-${root}/build-bench}"
python="${FERRY_PYTHON:-/usr/bin/python3}"
results="${root}/bench/RESULTS.md"

# bench_build TARGET...: configures the Release bench build once, then builds
# the targets.
bench_build() {
  if [ ! -f "${build_dir}/CMakeCache.txt" ]; then
    local generator=()
    if command -v ninja >/dev/null; then generator=(-G Ninja); fi
    cmake "${generator[@]}" -S "${root}" -B "${build_dir}" -DCMAKE_BUILD_TYPE=Release \
      -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_BENCH=ON >/dev/null
  fi
  cmake --build "${build_dir}" --target "$@"
}

# bench_machine: "N cores, CPU model, libblas.so.3 → file".
bench_machine() {
  local arch cpu blas
  arch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
  cpu="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  blas="$(readlink -f "/usr/lib/${arch}/libblas.so.3" 2>/dev/null || echo none)"
  echo "$(nproc) cores, ${cpu}, libblas.so.3 → ${blas}"
}

# bench_commit: the short commit, plus the folders with uncommitted changes.
bench_commit() {
  local commit changed
  commit="$(git -C "${root}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  changed="$(git -C "${root}" status --porcelain 2>/dev/null |
    awk '{ n = split($2, p, "/"); print (n > 1 && p[2] != "") ? p[1] "/" p[2] : p[1] }' |
    sort -u | paste -sd, - | sed 's/,/, /g')"
  if [ -n "${changed}" ]; then commit="${commit} + uncommitted changes in ${changed}"; fi
  echo "${commit}"
}

# bench_load NAME: prints the 1/5/15-minute load average, warning on stderr
# when other work is running (it skews every number).
bench_load() {
  local load
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  if awk -v l="${load%% *}" 'BEGIN { exit !(l > 0.5) }'; then
    echo "$1: warning: load average ${load}; other work on the machine skews the numbers" >&2
  fi
  echo "${load}"
}

# bench_results_init: creates bench/RESULTS.md with its preamble if missing.
bench_results_init() {
  [ -f "${results}" ] && return
  cat >"${results}" <<'PREAMBLE'
# Benchmark results

Appended by the scripts in bench/, newest last; never edited by hand. Each section
says when, on which machine, at which commit and with which exact command its
numbers were taken. Numbers from different machines or under other load are not
comparable, and on the 2-core development VM repeated runs differ by ±15–25%
(see /work/shared/reference/engine-measurements.md), so treat smaller differences
as noise.
PREAMBLE
}

# bench_wall VAR CMD...: runs CMD and stores its wall time (seconds) in VAR.
bench_wall() {
  local var="$1"; shift
  local t0 t1
  t0="$(date +%s.%N)"
  "$@"
  t1="$(date +%s.%N)"
  printf -v "${var}" '%s' "$(awk -v a="${t0}" -v b="${t1}" 'BEGIN { printf "%.3f", b - a }')"
}

# bench_min X...: the smallest number.
bench_min() { printf '%s\n' "$@" | sort -g | head -1; }
