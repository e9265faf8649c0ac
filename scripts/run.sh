#!/usr/bin/env bash
# The main job: install dependencies, build Release, and run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF >/dev/null
cmake --build build --target kiln_demo
./build/examples/kiln_demo "$@"
