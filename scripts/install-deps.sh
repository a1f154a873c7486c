#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian 12 package that Ferry's build, tests and examples need.
# Idempotent: packages already present are skipped; when nothing is missing, apt is not
# touched at all. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config ccache clang clang-format git
  # core libraries
  libabsl-dev libprotobuf-dev protobuf-compiler libcli11-dev libsimdjson-dev
  libgtest-dev libgmock-dev
  # offline jobs: embedded job store, webhook signatures (HMAC-SHA256)
  libsqlite3-dev libssl-dev
  # online API: HTTP (Boost.Beast/Asio 1.74) and gRPC
  libboost-dev libgrpc++-dev protobuf-compiler-grpc
  # engines. libopenblas0-openmp is named explicitly: libtorch only Recommends a BLAS and
  # the reference BLAS (libblas3) is 25-40x slower on Linear layers; the pthread flavour
  # fights libtorch's OpenMP pool (see docs/engines.md).
  libxgboost-dev libtorch-dev libopenblas0-openmp libtcmalloc-minimal4
  # example models and cross-checks (Debian's Python, /usr/bin/python3)
  python3 python3-torch python3-torchvision python3-xgboost python3-numpy
  # black-box API tests: HTTP client, metrics checker
  python3-requests python3-grpcio python3-protobuf prometheus
  # benchmarks: HTTP load generator; the pandas + xgboost baseline users write instead
  wrk python3-pandas
)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${#missing[@]} package(s): ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#PACKAGES[@]} packages present"
fi

# libblas.so.3 and liblapack.so.3 must resolve to OpenBLAS's OpenMP build. If another BLAS
# (reference or the pthread flavour) is installed too, its alternative may win.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3; do
  want="/usr/lib/${arch}/openblas-openmp/${lib}"
  if [ -e "$want" ]; then
    current=$(update-alternatives --query "${lib}-${arch}" 2>/dev/null | awk '/^Value:/{print $2}')
    if [ "$current" != "$want" ]; then
      echo "install-deps: pointing ${lib} at ${want} (was ${current:-unset})"
      $SUDO update-alternatives --set "${lib}-${arch}" "$want"
    fi
  fi
done
echo "install-deps: libblas.so.3 -> $(readlink -f /usr/lib/${arch}/libblas.so.3)"
