#!/usr/bin/env bash
# kiln's CUDA tests (kiln_tests --gtest_filter='Cuda*') on the lent GPU machine, then the same
# tests under compute-sanitizer memcheck. That machine has the CUDA 13 toolkit (cuBLAS included)
# and compute-sanitizer, but not Debian's runtime libraries kiln links (oneDNN, OpenBLAS, SLEEF,
# fmt, gloo), and no network. So it runs in two steps, as run_cpu_suite.sh does:
#
#   here (Debian 12 with the CUDA toolkit, where kiln builds):
#     bash bench/device/run_cuda_tests.sh pack
#       builds kiln_tests (Release, CUDA on) and packs it with libkiln.so and every non-glibc
#       shared library it loads (ldd) into build-cuda-device/kiln-cuda-tests.tar.gz. cuBLAS and
#       cuBLASLt (600 MB) stay behind: the machine's toolkit has the same major version. So does
#       cuDNN (about 1 GB with the sub-libraries its shim loads): the machine has no cuDNN in its
#       toolkit but PyTorch's wheel nvidia-cudnn-cu13, of the same major version 9.
#   on the device machine (the device tool's run, carrying build-cuda-device):
#     bash bench/device/run_cuda_tests.sh bench
#       the GPU benchmarks: bench_cuda (kiln's op micro-benchmarks), kiln_bench --device cuda (the
#       suite of BENCHMARKS.md at its GPU shapes, a short configuration), then
#       bench/compare_torch_cuda.py (PyTorch eager and torch.compile on the same workloads and
#       shapes, merged with kiln_bench's JSON into one table); logs and JSON to $OUT.
#       KILN_BENCH_WORKLOADS (comma-separated) runs part of the suite, to split it over calls.
#       KILN_BENCH_AUTOCAST=bfloat16 runs the model workloads under autocast on both sides;
#       KILN_BENCH_MODE=reduce-overhead compiles both sides in that mode (both with CUDA graphs).
#     bash bench/device/run_cuda_tests.sh ddp [N] [--autocast bfloat16]
#       data-parallel training throughput: kiln_ddp_bench and bench/ddp_torch.py on one GPU,
#       one GPU under DDP, and N GPUs (every visible one by default); JSON lines to $OUT.
#     bash bench/device/run_cuda_tests.sh run
#       unpacks the bundle, finds the machine's cuBLAS and cuDNN, runs the CUDA tests, then memcheck on
#       them where compute-sanitizer can attach (not on gVisor machines). Logs and the gtest XML
#       go to $OUT (or build-cuda-device/out). Extra arguments go to kiln_tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
bundle_dir=build-cuda-device
bundle="$bundle_dir/kiln-cuda-tests.tar.gz"

pack() {
  local lock=()
  command -v flock >/dev/null && lock=(flock /tmp/kiln_build.lock)
  [[ -f build/CMakeCache.txt ]] || "${lock[@]}" cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  grep -q '^KILN_CUDA:BOOL=ON' build/CMakeCache.txt || {
    echo "build/ is configured without CUDA (KILN_CUDA=OFF): nothing to test on the GPU" >&2
    exit 2
  }
  "${lock[@]}" nice -n 5 cmake --build build --target kiln kiln_tests kiln_dist_worker kiln_bench \
    kiln_cli kiln_ddp_bench kiln_dynamic_lengths
  # The GPU benchmarks, where the build has them (KILN_BUILD_BENCH).
  local binaries=(build/tests/kiln_tests build/tests/kiln_dist_worker build/tools/kiln_bench
                  build/tools/kiln build/tools/kiln_ddp_bench build/tools/kiln_dynamic_lengths)
  if "${lock[@]}" nice -n 5 cmake --build build --target bench_cuda >/dev/null 2>&1; then
    binaries+=(build/bench/bench_cuda)
  fi
  # A staging folder of its own, and the bundle replaced in one rename: two packs at once (other
  # sessions share the tree) must not delete each other's files.
  mkdir -p "$bundle_dir"
  local staging
  staging="$(mktemp -d "$bundle_dir/staging.XXXXXX")"
  # Nothing left behind on failure (the device tool carries the whole folder, 64 MiB at most).
  trap 'rm -rf "$staging" "$staging.tar.gz"' EXIT
  mkdir -p "$staging/lib" "$staging/lib-fallback"
  # compare_torch_cuda.py imports the CPU comparison's models and helpers.
  cp "${binaries[@]}" bench/compare_torch_cuda.py bench/compare_torch.py \
    bench/compare_torch_models.py bench/side_by_side.py bench/ddp_torch.py "$staging/"
  # glibc's own libraries must be the machine's (they go with its loader). The C++ runtime is
  # the machine's too unless it is older than Debian 12's (lib-fallback, used only then). cuBLAS
  # and NVRTC (which loads its builtins library beside it) are the toolkit's there, cuDNN the
  # machine's (find_library_dir: libcudnn.so.9 is a shim that loads libcudnn_cnn and the rest from its
  # own folder, so it must not travel without them). Everything else travels, the CUDA runtime
  # included (it is small).
  ldd "${binaries[@]}" | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux*) ;;
      libcublas.so* | libcublasLt.so* | libcuda.so* | libnvrtc* | libcudnn* | libnccl*) ;;
      libstdc++.so* | libgcc_s.so*) cp -L "$lib" "$staging/lib-fallback/" ;;
      *) cp -L "$lib" "$staging/lib/" ;;
    esac
  done
  # The inductor's generated CPU kernels link SLEEF's vector-ABI library (-lsleefgnuabi).
  cp -L /usr/lib/x86_64-linux-gnu/libsleefgnuabi.so.3 "$staging/lib/"
  ln -sf libsleefgnuabi.so.3 "$staging/lib/libsleefgnuabi.so"
  strip --strip-unneeded "$staging"/lib*/*.so* "$staging/kiln_tests" "$staging/kiln_bench" \
    "$staging/bench_cuda" "$staging/kiln_dist_worker" "$staging/kiln_ddp_bench" "$staging/kiln" \
    "$staging/kiln_dynamic_lengths" 2>/dev/null || true
  git rev-parse --short HEAD >"$staging/KILN_COMMIT"
  tar -C "$staging" -czf "$staging.tar.gz" .
  mv -f "$staging.tar.gz" "$bundle"
  rm -rf "$staging"
  trap - EXIT
  echo "packed $bundle ($(du -h "$bundle" | cut -f1)); on the device machine: carry $bundle_dir and run"
  echo "  bash bench/device/run_cuda_tests.sh run     # the CUDA tests"
  echo "  bash bench/device/run_cuda_tests.sh bench   # the GPU benchmarks beside PyTorch"
}

# The directory holding the machine's library $1 (a soname): the toolkit's, else the pip wheel
# whose Python package is $2 (nvidia.cudnn, nvidia.nccl: PyTorch's wheels' libraries live in
# nvidia/<name>/lib), else wherever a search of the disk finds it. cuBLAS (libcublas.so.13) is the
# toolkit's; cuDNN (libcudnn.so.9, a shim that loads its sub-libraries from its own folder) and
# NCCL (libnccl.so.2, 218 MB, loaded by kiln at run time) are PyTorch's wheels' where the toolkit
# has none. None of them travels in the bundle.
find_library_dir() {
  local name="$1" module="${2:-}" dir found
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64; do
    [[ -e "$dir/$name" ]] && { echo "$dir"; return; }
  done
  if [[ -n "$module" ]]; then
    # A namespace package (no __file__): its __path__ names the folder.
    dir="$(python3 -c "import $module as m; print(list(m.__path__)[0] + '/lib')" 2>/dev/null)" || true
    [[ -n "$dir" && -e "$dir/$name" ]] && { echo "$dir"; return; }
  fi
  found="$(find /usr/local/lib /usr/lib /opt /root -path '*/nvidia/*' -name "$name" 2>/dev/null | head -1)"
  [[ -z "$found" ]] && found="$(find / -name "$name" -not -path '/proc/*' 2>/dev/null | head -1)"
  [[ -n "$found" ]] && dirname "$found"
}

# Unpacks the bundle into a new folder: sets root (the folder), out ($OUT or the bundle's out/),
# cublas, cudnn and nccl (the machine's cuBLAS, cuDNN and NCCL folders) and libs (LD_LIBRARY_PATH for the
# bundle's binaries, with the fallback C++ runtime when the machine's is too old for `probe`, a
# binary of the bundle).
unpack() {
  local probe="$1"
  [[ -f "$bundle" ]] || { echo "no $bundle: run 'bash bench/device/run_cuda_tests.sh pack' first" >&2; exit 2; }
  root="$(mktemp -d /tmp/kiln-cuda-XXXXXX)"
  out="${OUT:-$bundle_dir/out}"
  mkdir -p "$out"
  tar -C "$root" -xzf "$bundle"
  [[ -x "$root/$probe" ]] || { echo "the bundle has no $probe" >&2; exit 2; }
  cublas="$(find_library_dir libcublas.so.13)" || true
  [[ -n "$cublas" ]] || { echo "no libcublas.so.13 on this machine" >&2; exit 1; }
  cudnn="$(find_library_dir libcudnn.so.9 nvidia.cudnn)" || true
  [[ -n "$cudnn" ]] || { echo "no libcudnn.so.9 on this machine (pip install nvidia-cudnn-cu13)" >&2; exit 1; }
  libs="$root/lib:$cublas:$cudnn"
  # NCCL only for the nccl process group (kiln loads it when one is made).
  nccl="$(find_library_dir libnccl.so.2 nvidia.nccl)" || true
  if [[ -n "$nccl" ]]; then
    libs="$libs:$nccl"
  else
    echo "no libnccl.so.2 on this machine (pip install nvidia-nccl-cu13): nccl groups will fail" >&2
  fi
  # The distributed tests start this worker once per rank.
  export KILN_DIST_WORKER="$root/kiln_dist_worker"
  # Generated CPU kernels (the inductor's CPU tests, the CPU suite) link the shipped SLEEF; the
  # machine has none.
  export KILN_CXXFLAGS="-L$root/lib${KILN_CXXFLAGS:+ $KILN_CXXFLAGS}"
  LD_LIBRARY_PATH="$libs" "$root/$probe" --help >/dev/null 2>&1 || libs="$libs:$root/lib-fallback"
}

run() {
  local root out cublas cudnn nccl libs
  unpack kiln_tests
  if ! LD_LIBRARY_PATH="$libs" "$root/kiln_tests" --gtest_list_tests >/dev/null; then
    echo "kiln_tests does not start here (missing libraries, or glibc older than 2.36):" >&2
    LD_LIBRARY_PATH="$libs" ldd "$root/kiln_tests" >&2 || true
    exit 1
  fi
  echo "kiln $(cat "$root/KILN_COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); cuBLAS from $cublas; cuDNN from $cudnn"
  export KILN_CACHE_DIR="$root/cache"
  local status=0
  echo "== kiln_tests --gtest_filter='Cuda*' =="
  LD_LIBRARY_PATH="$libs" "$root/kiln_tests" --gtest_filter='Cuda*' --gtest_output="xml:$out/cuda_tests.xml" "$@" \
    2>&1 | tee "$out/cuda_tests.log" || status=1
  # KILN_MEMCHECK_FILTER: the tests memcheck runs (default: the CUDA tests but the NVRTC-only
  # codegen sweep and the op-info sweep, minutes under the checker); "none" skips it.
  local memcheck_filter="${KILN_MEMCHECK_FILTER:-Cuda*-CudaCodegen.*:*OpInfo*}"
  if [[ "$memcheck_filter" == none ]]; then
    echo "memcheck skipped (KILN_MEMCHECK_FILTER=none)"
  elif command -v compute-sanitizer >/dev/null; then
    echo "== compute-sanitizer --tool memcheck ($memcheck_filter) =="
    # API errors are expected by some tests (the out-of-memory one asks for a petabyte): only
    # memory errors in kernels count.
    LD_LIBRARY_PATH="$libs" compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 \
      "$root/kiln_tests" "$@" --gtest_filter="$memcheck_filter" 2>&1 | tee "$out/memcheck.log" | tail -40 || status=1
    grep -E "ERROR SUMMARY|Device not supported" "$out/memcheck.log" || true
  else
    echo "compute-sanitizer not found: memcheck skipped"
  fi
  rm -rf "$root"
  return "$status"
}

# The GPU benchmarks side by side: bench_cuda (kiln eager and compiled, a device copy), the suite
# (kiln_bench --device cuda), then PyTorch eager and torch.compile on the same workloads and shapes
# (the machine's python3 has PyTorch, torchvision and transformers), one merged table.
bench() {
  local root out cublas cudnn nccl libs status=0
  unpack kiln_bench
  echo "kiln $(cat "$root/KILN_COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  # KILN_COMMIT: kiln_bench's JSON names the packed commit (there is no source tree here).
  export KILN_CACHE_DIR="$root/cache" KILN_COMMIT="$(cat "$root/KILN_COMMIT")"
  # KILN_BENCH_AUTOCAST=bfloat16 (or float16): the model workloads under autocast on both sides,
  # without the float32 op micro-benchmarks.
  local autocast="${KILN_BENCH_AUTOCAST:-none}"
  # KILN_BENCH_MODE=reduce-overhead (or another compile mode): both sides compile in that mode,
  # without the op micro-benchmarks.
  local mode="${KILN_BENCH_MODE:-default}"
  if [[ -x "$root/bench_cuda" && "$autocast" == none && "$mode" == default ]]; then
    echo "== kiln (bench_cuda) =="
    LD_LIBRARY_PATH="$libs" "$root/bench_cuda" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
      --benchmark_min_time=0.2 "$@" 2>&1 | tee "$out/bench_cuda.log" || status=1
  fi
  # Every workload with a GPU shape (numpy has none), briefly: 3 batches of 0.1 s per side.
  local workloads="${KILN_BENCH_WORKLOADS:-pointwise,softmax,layernorm,matmul,mlp,resnet18,bert,gpt2,bert-dynamic,overhead}"
  [[ "$autocast" == none ]] || workloads="${KILN_BENCH_WORKLOADS:-mlp,resnet18,bert,gpt2}"
  local timing=(--repeats 3 --min-time 0.1)
  echo "== kiln_bench --device cuda ($workloads) =="
  LD_LIBRARY_PATH="$libs" "$root/kiln_bench" --device cuda --workload "$workloads" --threads "$(nproc)" \
    --autocast "$autocast" --mode "$mode" "${timing[@]}" --json "$out/kiln_bench_cuda.json" 2>&1 | tee "$out/kiln_bench_cuda.log" || status=1
  local merge=()
  [[ -f "$out/kiln_bench_cuda.json" ]] && merge=(--kiln-json "$out/kiln_bench_cuda.json")
  echo "== PyTorch $(python3 -c 'import torch; print(torch.__version__)') (compare_torch_cuda.py) =="
  python3 "$root/compare_torch_cuda.py" --workloads "$workloads" --autocast "$autocast" \
    --kiln-mode "$mode" --torch-modes "$mode" "${timing[@]}" "${merge[@]}" \
    --json "$out/compare_torch_cuda.json" 2>&1 | tee "$out/compare_torch_cuda.log" || status=1
  rm -rf "$root"
  return "$status"
}

# Where the GPU time of one workload goes, kiln beside PyTorch: Nsight Compute's per-kernel
# summary (device time of every kernel, by name, with counts) of one eager and one compiled
# iteration of
# `kiln_bench --device cuda --workload $1 --phase $2`, each side on its own (kiln_bench marks its
# batches with the NVTX ranges kiln_eager and kiln_compiled); to
# $OUT/profile_<workload>_<phase>_<side>.log, and printed largest first by
# bench/device/ncu_kernel_summary.py; then PyTorch's eager and torch.compile iterations of the
# same case (compare_torch_cuda.py --profile, to $OUT/profile_<workload>_<phase>_torch.log).
# Extra arguments go to kiln_bench (--mode, --autocast).
profile() {
  local root out cublas cudnn nccl libs workload="${1:?usage: profile WORKLOAD PHASE}" phase="${2:-inference}"
  shift 2 || shift $#
  unpack kiln_bench
  export KILN_COMMIT="$(cat "$root/KILN_COMMIT")"
  local side log
  for side in kiln_eager kiln_compiled; do
    log="$out/profile_${workload}_${phase}_${side}.log"
    LD_LIBRARY_PATH="$libs" ncu --clock-control none --metrics gpu__time_duration.sum \
      --nvtx --nvtx-include "$side/" --print-summary per-kernel "$root/kiln_bench" --device cuda \
      --workload "$workload" --phase "$phase" --iters 1 --repeats 1 --quiet "$@" >"$log" 2>&1 || true
    python3 bench/device/ncu_kernel_summary.py "$log" --top 30 || tail -c 4000 "$log"
  done
  # PyTorch's side: its eager and torch.compile iterations' kernels (torch.profiler), with the
  # same autocast as kiln's (--autocast among the extra arguments).
  local autocast=none previous=""
  for arg in "$@"; do
    [[ "$previous" == --autocast ]] && autocast="$arg"
    previous="$arg"
  done
  python3 "$root/compare_torch_cuda.py" --workloads "$workload" --phases "$phase" \
    --autocast "$autocast" --profile 30 2>&1 | grep -v '^\[compare_torch_cuda\]' |
    tee "$out/profile_${workload}_${phase}_torch.log" || true
  rm -rf "$root"
}

# Data-parallel training throughput (issue 13): resnet18 and bert training steps at their GPU
# batch per rank, kiln (kiln_ddp_bench through `kiln run`) and PyTorch (bench/ddp_torch.py through
# torchrun), eager and compiled: one GPU without DDP, one GPU with DDP (its overhead), and N GPUs
# (N = $1, default every visible GPU; skipped with fewer than 2). One JSON line per run to
# $OUT/ddp.jsonl. Extra arguments (after N) go to both sides (e.g. --autocast bfloat16).
ddp() {
  local root out cublas cudnn nccl libs status=0
  local gpus
  gpus="$(nvidia-smi --list-gpus | wc -l)"
  local n="${1:-$gpus}"
  shift || true
  unpack kiln_ddp_bench
  echo "kiln $(cat "$root/KILN_COMMIT"); $gpus GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  export KILN_CACHE_DIR="$root/cache"
  local json="$out/ddp.jsonl" workload compiled
  local worlds=(1)
  (( n >= 2 && n <= gpus )) && worlds+=("$n")
  for workload in ${KILN_DDP_WORKLOADS:-resnet18 bert}; do
    for compiled in "" --compiled; do
      local args=(--workload "$workload" $compiled --json "$json" "$@")
      LD_LIBRARY_PATH="$libs" "$root/kiln_ddp_bench" "${args[@]}" || status=1
      python3 "$root/ddp_torch.py" "${args[@]}" || status=1
      LD_LIBRARY_PATH="$libs" "$root/kiln" run --nproc-per-node 1 "$root/kiln_ddp_bench" --ddp-alone "${args[@]}" || status=1
      python3 -m torch.distributed.run --nproc-per-node 1 "$root/ddp_torch.py" --ddp-alone "${args[@]}" || status=1
      if (( ${#worlds[@]} > 1 )); then
        LD_LIBRARY_PATH="$libs" "$root/kiln" run --nproc-per-node "$n" "$root/kiln_ddp_bench" "${args[@]}" || status=1
        python3 -m torch.distributed.run --nproc-per-node "$n" "$root/ddp_torch.py" "${args[@]}" || status=1
      fi
    done
  done
  (( ${#worlds[@]} > 1 )) || echo "fewer than 2 GPUs here: the multi-GPU runs were skipped"
  rm -rf "$root"
  return "$status"
}

# The CPU suite (run_cpu_suite.sh run: kiln beside PyTorch on this machine's CPU, 2 pinned
# threads and all cores; KILN_SUITE_THREADS, KILN_SUITE_LENGTHS as there) from this bundle's
# kiln_bench: a CUDA build links cuBLAS, which run_cpu_suite.sh's own bundle cannot carry.
cpu() {
  local root out cublas cudnn nccl libs status=0
  unpack kiln_bench
  KILN_CPU_SUITE_ROOT="$root" KILN_CPU_SUITE_LIBS="$libs" bash bench/device/run_cpu_suite.sh run "$@" ||
    status=$?
  rm -rf "$root"
  return "$status"
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  bench) shift; bench "$@" ;;
  profile) shift; profile "$@" ;;
  ddp) shift; ddp "$@" ;;
  cpu) shift; cpu "$@" ;;
  *) echo "usage: bash bench/device/run_cuda_tests.sh pack|run|bench|profile|ddp|cpu [arguments for kiln_tests/bench_cuda]" >&2; exit 2 ;;
esac
