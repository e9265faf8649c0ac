#!/usr/bin/env bash
# The main job: install dependencies, build Release, and run kiln's benchmark suite on the CPU
# (tools/kiln_bench.cpp; the workloads of BENCHMARKS.md): eager vs compiled kiln for every
# workload, a table, bench-results.json and a bar chart of speedups (bench-speedups.png) in build/.
# Then the same kiln beside PyTorch eager and torch.compile (bench/compare_torch.py, PyTorch from
# PyPI in ~/.cache/kiln/venv, the test command's; installed the first time) on the inference
# workloads that compile quickest, ending with the ratios kiln-compiled / PyTorch; KILN_RUN_TORCH=0
# skips that step.
# A short configuration: medians of 3 batches of at least 0.2 s (at least one iteration each),
# every workload at BENCHMARKS.md's shapes except BERT's training step (--skip bert:train: with its
# compile it takes about 5 minutes of the ~15 that the whole suite took on a loaded 2-core VM; run
# it with `--workload bert`). Arguments are passed to kiln_bench and override these, e.g.
#   bash scripts/run.sh --workload pointwise,mlp --mode default,max-autotune
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The chart is drawn by a small matplotlib script (tools/bench/plot_speedups.py).
if ! dpkg-query -W -f='${Status}' python3-matplotlib 2>/dev/null | grep -q "install ok installed"; then
  echo "[run] installing: python3-matplotlib"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF >/dev/null
cmake --build build --target kiln_bench
./build/tools/kiln_bench --threads 2 --repeats 3 --min-time 0.2 --skip bert:train \
  --json build/bench-results.json --plot build/bench-speedups.png "$@"
if [[ "${KILN_RUN_TORCH:-1}" != 0 ]]; then
  echo "[run] kiln beside PyTorch eager and torch.compile (KILN_RUN_TORCH=0 skips this)"
  # shellcheck source=scripts/python_env.sh
  source scripts/python_env.sh
  python="$(kiln_python_with_torch)"
  "$python" bench/compare_torch.py --threads 2 --workloads pointwise,softmax,layernorm,mlp,resnet18 \
    --phases inference --torch-modes default --no-torchscript --rounds 1 --repeats 3 \
    --min-time 0.2 --no-install --json build/compare-torch.json
  echo "[run] kiln alone: build/bench-results.json, chart build/bench-speedups.png;" \
    "beside PyTorch: build/compare-torch.json"
fi
