#!/usr/bin/env bash
# The GPU check: every check that needs a GPU in one run of at most 8 minutes, the build
# included (tools/device_check.py holds the steps; `tools/device_check.sh --help` explains them,
# `--plan` lists them with their time caps, `--dry-run` exercises the script without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
py=python3
command -v "$py" >/dev/null || { echo "device_check.sh: python3 is required" >&2; exit 2; }
exec "$py" tools/device_check.py "$@"
