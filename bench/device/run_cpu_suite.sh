#!/usr/bin/env bash
# kiln vs PyTorch on the CPU of the lent GPU machine (16 cores): bench/compare_torch.py with
# 2 threads and with all cores. That machine has PyTorch (torch.compile) as plain python3 and a
# C++ compiler, but not Debian's runtime libraries kiln links (oneDNN, OpenBLAS, SLEEF, fmt), and
# no network. So it runs in two steps:
#
#   here (Debian 12, where kiln builds):
#     bash bench/device/run_cpu_suite.sh pack
#       builds kiln_bench (Release) and packs it with libkiln.so and every non-glibc shared
#       library it loads (ldd) into build-device/kiln-cpu-bundle.tar.gz
#   on the device machine (the device tool's run, carrying build-device):
#     bash bench/device/run_cpu_suite.sh run
#       unpacks the bundle, checks that kiln_bench starts with the shipped libraries, and runs
#       the comparison twice (2 threads, all cores); tables and JSON go to $OUT (or
#       build-device/out). Extra arguments go to compare_torch.py (e.g. --workloads mlp,bert).
#       KILN_SUITE_LENGTHS=1 runs bert-dynamic per sequence length instead (kiln_dynamic_lengths
#       beside bench/bert_dynamic_torch.py).
#   With a CUDA build (KILN_CUDA=ON), whose libraries include cuBLAS, ship the CUDA bundle instead
#   (`bash bench/device/run_cuda_tests.sh pack`) and run this suite from it there with
#   `bash bench/device/run_cuda_tests.sh cpu [compare_torch.py arguments]`.
#
# The GPU suite joins once the CUDA issue lands.
set -euo pipefail
cd "$(dirname "$0")/../.."
bundle_dir=build-device
bundle="$bundle_dir/kiln-cpu-bundle.tar.gz"

pack() {
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build --target kiln_bench kiln_dynamic_lengths
  local staging="$bundle_dir/staging"
  rm -rf "$staging" && mkdir -p "$staging/lib" "$staging/lib-fallback"
  cp build/tools/kiln_bench build/tools/kiln_dynamic_lengths "$staging/"
  # glibc's own libraries must be the machine's (they go with its loader). The C++ runtime is
  # the machine's too unless it is older than Debian 12's (lib-fallback, used only then: a
  # newer one is what the machine's own programs need). Everything else travels.
  ldd build/tools/kiln_bench | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux*) ;;
      libstdc++.so* | libgcc_s.so*) cp -L "$lib" "$staging/lib-fallback/" ;;
      *) cp -L "$lib" "$staging/lib/" ;;
    esac
  done
  # The inductor's generated kernels link SLEEF's vector-ABI library (-lsleefgnuabi).
  cp -L /usr/lib/x86_64-linux-gnu/libsleefgnuabi.so.3 "$staging/lib/"
  ln -sf libsleefgnuabi.so.3 "$staging/lib/libsleefgnuabi.so"
  strip --strip-unneeded "$staging"/lib*/*.so* "$staging/kiln_bench" "$staging/kiln_dynamic_lengths" \
    2>/dev/null || true
  git rev-parse --short HEAD >"$staging/KILN_COMMIT"
  tar -C "$staging" -czf "$bundle" .
  rm -rf "$staging"
  echo "packed $bundle ($(du -h "$bundle" | cut -f1)); on the device machine: carry $bundle_dir and run"
  echo "  bash bench/device/run_cpu_suite.sh run"
}

run() {
  local root out libs owned=1
  out="${OUT:-$bundle_dir/out}"
  mkdir -p "$out"
  if [[ -n "${KILN_CPU_SUITE_ROOT:-}" ]]; then
    # An unpacked CUDA bundle (run_cuda_tests.sh cpu): its binaries and library path.
    root="$KILN_CPU_SUITE_ROOT" libs="$KILN_CPU_SUITE_LIBS" owned=0
  else
    [[ -f "$bundle" ]] || { echo "no $bundle: run 'bash bench/device/run_cpu_suite.sh pack' first" >&2; exit 2; }
    root="$(mktemp -d /tmp/kiln-cpu-suite-XXXXXX)"
    tar -C "$root" -xzf "$bundle"
    libs="$root/lib"
  fi
  # Only kiln_bench (and what it starts) sees the shipped libraries, through a wrapper: Python
  # and PyTorch keep the machine's.
  LD_LIBRARY_PATH="$libs" "$root/kiln_bench" --help >/dev/null 2>&1 || libs="$libs:$root/lib-fallback"
  if ! LD_LIBRARY_PATH="$libs" "$root/kiln_bench" --help >/dev/null; then
    echo "kiln_bench does not start here (missing libraries, or glibc older than 2.36):" >&2
    LD_LIBRARY_PATH="$libs" ldd "$root/kiln_bench" >&2 || true
    exit 1
  fi
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' \
    "$libs" "$root/kiln_bench" >"$root/kiln_bench.sh"
  chmod +x "$root/kiln_bench.sh"
  # The inductor compiles generated C++ with the machine's compiler (KILN_CXX, CXX or g++).
  command -v "${KILN_CXX:-${CXX:-g++}}" >/dev/null || echo "warning: no C++ compiler: kiln's inductor rows will fail" >&2
  export KILN_CACHE_DIR="$root/cache"
  # The commit the bundle was packed at, for the reports' machine line (no git checkout here).
  KILN_COMMIT="$(cat "$root/KILN_COMMIT")"
  export KILN_COMMIT
  # Generated kernels link against the shipped SLEEF.
  # (run_cuda_tests.sh's unpack has set it for its bundle.)
  [[ "$owned" == 1 ]] && export KILN_CXXFLAGS="-L$root/lib${KILN_CXXFLAGS:+ $KILN_CXXFLAGS}"
  local cores
  cores="$(nproc)"
  echo "kiln $(cat "$root/KILN_COMMIT") on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $cores cores"
  for threads in ${KILN_SUITE_THREADS:-$(printf '%s\n' 2 "$cores" | sort -un)}; do
    # 2 threads on 2 dedicated cores (BENCHMARKS.md's CPU shape: a 2-core machine).
    local pin=()
    [[ "$threads" == 2 ]] && command -v taskset >/dev/null && pin=(taskset -c 0,1)
    if [[ -n "${KILN_SUITE_LENGTHS:-}" ]]; then
      # bert-dynamic per sequence length, kiln then PyTorch (kiln_dynamic_lengths and
      # bench/bert_dynamic_torch.py), instead of the suite.
      echo "== bert-dynamic per length, $threads threads =="
      LD_LIBRARY_PATH="$libs" "${pin[@]}" "$root/kiln_dynamic_lengths" --threads "$threads" \
        --json "$out/lengths_kiln_t$threads.json" 2>"$out/lengths_kiln_t$threads.log" |
        tee "$out/lengths_kiln_t$threads.txt" || true
      "${pin[@]}" python3 bench/bert_dynamic_torch.py --threads "$threads" \
        --json "$out/lengths_torch_t$threads.json" 2>"$out/lengths_torch_t$threads.log" |
        tee "$out/lengths_torch_t$threads.txt"
      continue
    fi
    echo "== CPU suite, $threads threads =="
    "${pin[@]}" python3 bench/compare_torch.py --kiln-bench "$root/kiln_bench.sh" --threads "$threads" \
      --no-install --json "$out/compare_cpu_t$threads.json" "$@" 2>"$out/compare_cpu_t$threads.log" |
      tee "$out/compare_cpu_t$threads.txt"
  done
  [[ "$owned" == 1 ]] && rm -rf "$root"
  return 0
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: bash bench/device/run_cpu_suite.sh pack|run [compare_torch.py arguments]" >&2; exit 2 ;;
esac
