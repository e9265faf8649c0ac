#!/usr/bin/env bash
# Installs what kiln needs on Debian 12 (run as root). Idempotent: installs only what is missing.
#   scripts/setup.sh          build and test dependencies (Debian packages)
#   scripts/setup.sh --torch  also a Python with PyTorch, numpy, torchvision, transformers,
#                             safetensors and pytest (the test oracle, the model references, the
#                             benchmark comparison and the Python module's tests; never a
#                             dependency of kiln itself)
set -euo pipefail

packages=(
  build-essential cmake ninja-build g++ clang libomp-dev
  libsleef-dev libfmt-dev nlohmann-json3-dev libopenblas-dev
  libdnnl-dev ocl-icd-opencl-dev libgloo-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  python3 python3-venv python3-pip python3-dev pybind11-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" == "--torch" ]]; then
  # shellcheck source=scripts/python_env.sh
  source "$(dirname "$0")/python_env.sh"
  kiln_python_with_torch >/dev/null
fi
