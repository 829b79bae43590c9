#!/usr/bin/env bash
# Installs every build and run dependency of coopgnn by package name: Debian packages, and where a
# CUDA toolkit is present the RMM wheel from PyPI. Idempotent: packages that are already present
# are skipped, so a second run costs a few seconds.
#
# Usage: tools/setup.sh [--fuzz]   (Debian/Ubuntu; needs root or sudo for apt-get)
#   --fuzz  also clang and its libFuzzer runtime (libclang-rt-dev), for the `fuzz` preset and
#           tools/fuzz.sh only; the default build and CI need neither.
set -euo pipefail

DEBIAN_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libfmt-dev libgtest-dev libgmock-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev
  zlib1g-dev libzip-dev zipcmp zipmerge ziptool librandom123-dev libbenchmark-dev libmetis-dev
  libblis-pthread-dev  # host GEMM (kernels/dense/gemm.hpp); -DCOOPGNN_BLAS=OFF builds without
  libopenmpi-dev openmpi-bin
  python3-numpy python3-matplotlib
)
if [[ ${1:-} == --fuzz ]]; then
  DEBIAN_PACKAGES+=(clang libclang-rt-dev)
elif [[ -n ${1:-} ]]; then
  echo "setup: unknown option $1 (usage: tools/setup.sh [--fuzz])" >&2
  exit 2
fi

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: CUDA toolkit found ($(/usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -1 || nvcc --version | tail -1))"
  # RMM for the CUDA build: the librmm-cu13 wheel (headers, librmm.so, CMake export files; about
  # 5 MB with its one dependency, rapids-logger) in the python3 that CMakeLists.txt asks where it
  # is, the first one on PATH. The host-only build needs none of it.
  RMM_WHEEL="librmm-cu13==26.10.*"
  if python3 -c "import librmm, rapids_logger, sys; sys.exit(not librmm.__version__.startswith('26.10.'))" \
      2>/dev/null; then
    echo "setup: $RMM_WHEEL present ($(python3 -c 'import librmm; print(librmm.__path__[0])'))"
  else
    echo "setup: installing $RMM_WHEEL into $(command -v python3)"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "$RMM_WHEEL"
  fi
else
  echo "setup: no CUDA toolkit; building the host backend only"
fi
