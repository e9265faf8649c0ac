#!/usr/bin/env bash
# The ThreadSanitizer build (clang) of the tests that run capture, compilation and the code cache
# from several threads or processes at once (docs/RELIABILITY.md, "Concurrency"). Not part of
# scripts/test.sh: a third full build of the library would double CI's time; run it after changes
# to capture, the compile lock, the code cache or parallel compilation.
#   bash scripts/tsan.sh [extra gtest filter patterns, ':'-separated]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_COMPILER=clang -DKILN_TSAN=ON -DKILN_WERROR=ON -DKILN_BUILD_BENCH=OFF \
  -DKILN_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-tsan --target kiln_tests
filter="CodeCache.*:ParallelCompile.*:KernelSource.*:MemoryPlan.*:Compile*:DebugDirTest.*:Logs.*"
filter+=":Autograd.*${1:+:$1}"
# OpenMP's runtime is not instrumented: its worker threads would be reported as races. One
# thread per parallel region leaves kiln's own threads (compile workers, the tests' callers).
# Generated kernels are compiled by clang, like the build.
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
OMP_NUM_THREADS=1 KILN_CXX=clang++ KILN_CACHE_DIR="$cache" \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan_suppressions.txt" \
  build-tsan/tests/kiln_tests --gtest_filter="$filter"
