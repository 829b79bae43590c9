#!/usr/bin/env bash
# Fetches the Debian packages coopgnn builds against, and the RMM wheels of the CUDA build, into
# .devdeps/ (git-ignored), for a GPU machine that cannot reach a package registry: carry .devdeps
# there and tools/device_check.sh unpacks them into a private prefix (never into /) before
# configuring.
#
# Usage (here, on the development machine, from the repository root):
#   tools/device_deps.sh            download into .devdeps/ (about 15 MB)
#   tools/device_deps.sh --help
# Then, with the device tool: run `tools/device_check.sh` with carry [".devdeps"].
set -euo pipefail

if [[ "${1:-}" == "--help" || "${1:-}" == "-h" ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

# Headers, CMake configs, static and shared libraries of every build dependency that a CUDA
# image may lack (tools/setup.sh installs the same by name here), plus libzip's tools, which its
# CMake config requires.
PACKAGES=(
  libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libcli11-dev
  libzip-dev libzip4 zipcmp zipmerge ziptool zlib1g-dev librandom123-dev
  libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian
  libblis-pthread-dev libblis4-pthread  # host GEMM (COOPGNN_BLAS=ON, the default)
)

# RMM (each PE's device memory; CMakeLists.txt requires it in CUDA builds): the same wheels
# tools/setup.sh installs, with their one dependency (rapids-logger). Platform-independent of
# the Python version (py3-none), so any python3 may download them.
WHEELS=("librmm-cu13==26.10.*")

mkdir -p .devdeps
cd .devdeps
rm -f ./*.deb ./*.whl
apt-get download "${PACKAGES[@]}"
python3 -m pip download --quiet --disable-pip-version-check --dest . "${WHEELS[@]}"
echo "device_deps: $(ls ./*.deb | wc -l) packages and $(ls ./*.whl | wc -l) wheels," \
  "$(du -sh . | cut -f1) in .devdeps/"
