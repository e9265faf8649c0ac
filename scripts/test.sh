#!/usr/bin/env bash
# Every test: install dependencies (and PyTorch as the test oracle), then
#   1. a Release build with g++ (warnings are errors) and all tests, including PyTorch as oracle;
#   2. an ASan+UBSan build with clang (warnings are errors) and all tests under the sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --torch
source scripts/python_env.sh
export KILN_PYTHON="$(kiln_python_with_torch)"
jobs=$(nproc)

echo "== Release build (g++) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ \
  -DKILN_WERROR=ON -DKILN_PYTHON="$KILN_PYTHON" >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

echo "== ASan+UBSan build (clang) =="
# -O1 and line tables only (what the sanitizers' reports need): a quarter less compile time than
# RelWithDebInfo's -O2 -g, measured on a sample of the library's sources.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang -DKILN_SANITIZE=ON -DKILN_WERROR=ON -DKILN_BUILD_BENCH=OFF \
  -DKILN_PYTHON="$KILN_PYTHON" >/dev/null
cmake --build build-asan -j "$jobs"
# The oracle runs in the Release build: under ASan it would load an uninstrumented Python.
# Generated kernels are compiled by clang too, so that they use the OpenMP runtime the clang
# build links (libomp), not a second one (g++'s libgomp).
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 KILN_CXX=clang++ \
  ctest --output-on-failure -j "$jobs" -E torch_oracle)
