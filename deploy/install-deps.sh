#!/usr/bin/env bash
# Installs the Debian 12 packages spmvd builds and tests with. Idempotent; needs root.
# CUDA 13 (nvcc, cuSPARSE) is not a Debian package: where /usr/local/cuda is absent the build
# configures without the GPU backends and serves with the CPU backend.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then exec sudo "$0" "$@"; fi
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 libspdlog-dev libtbb-dev zlib1g-dev libxxhash-dev
  libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libmetis-dev libboost-graph-dev
  libpqxx-dev postgresql
  prometheus-cpp-dev libssl-dev openssl
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all ${#packages[@]} packages present"
