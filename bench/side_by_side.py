"""Shared machinery for timing kiln and PyTorch eager side by side.

kiln is measured by running one benchmark of a Google Benchmark binary (JSON output, median of
repetitions); PyTorch in this process, on the same shape and thread count. The scripts alternate
the two per case and per round so that machine drift hits both alike. PyTorch runs at its best
(ANCHORS.md): glibc keeps freed memory (GLIBC_TUNABLES, re-exec) and torch.set_num_threads(n).
"""
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

# Keep freed memory in the process: without these every large tensor is a fresh mmap and each
# first touch of a 4 KiB page costs ~11 us on the VMs, which would dominate PyTorch's timings.
TUNABLES = ("glibc.malloc.hugetlb=1", "glibc.malloc.mmap_max=0",
            "glibc.malloc.trim_threshold=68719476736")


def ensure_malloc_tunables():
    """Re-executes this script with the glibc malloc tunables when they are not all set."""
    current = os.environ.get("GLIBC_TUNABLES", "")
    missing = [t for t in TUNABLES if t not in current.split(":")]
    if not missing:
        return
    if os.environ.get("KILN_COMPARE_REEXECUTED"):
        print("warning: GLIBC_TUNABLES still lacks " + ", ".join(missing), file=sys.stderr)
        return
    env = dict(os.environ, KILN_COMPARE_REEXECUTED="1",
               GLIBC_TUNABLES=":".join(([current] if current else []) + missing))
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def import_torch():
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed. Install it with:\n"
              "    pip install torch numpy\n"
              "and run this script again.", file=sys.stderr)
        sys.exit(2)
    return torch


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def kiln_revision():
    # The bundle's commit on the device machine (run_cpu_suite.sh exports it): its checkout's
    # HEAD need not be what the binaries were built from.
    if os.environ.get("KILN_COMMIT"):
        return os.environ["KILN_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_line(torch):
    """What was measured on, in the format docs/PERF.md records after "machine: "."""
    return (f"{cpu_model()}, {os.cpu_count()} logical CPUs, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}, torch {torch.__version__}, "
            f"kiln {kiln_revision()}")


def print_torch_config(torch):
    print(f"torch {torch.__version__}")
    # The build settings line is long: keep only what says which BLAS and threading it uses.
    config = torch.__config__.show()
    keys = ("BLAS_INFO", "LAPACK_INFO", "USE_MKL", "USE_MKLDNN", "USE_OPENMP")
    found = [m.group(0) for m in re.finditer(r"\b(\w+)=([^,\s]*)", config) if m.group(1) in keys]
    print("  " + ", ".join(found))
    for line in torch.__config__.parallel_info().splitlines():
        if line.strip() and not line.startswith("-"):
            print("  " + line.strip())
    print(f"  GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')}")
    if "OPENBLAS_CORETYPE" in os.environ:
        print(f"  OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}")


# ---- kiln: one benchmark of the Google Benchmark binary per call ----

def kiln_measure(binary, name, repetitions, min_time):
    """Median wall time in ms of benchmark `name` over `repetitions` runs of the binary."""
    cmd = [binary, f"--benchmark_filter=^{name}(/real_time)?$", "--benchmark_format=json",
           f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    runs = json.loads(proc.stdout)["benchmarks"]
    if not runs:
        raise RuntimeError(f"{binary} has no benchmark named {name}")
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    times = [r["real_time"] * scale[r["time_unit"]] for r in runs
             if r.get("run_type", "iteration") == "iteration"]
    return statistics.median(times)


# ---- PyTorch: timed in this process ----

def torch_measure(fn, repetitions, min_time):
    """Median ms per call of fn() over `repetitions` batches, each at least min_time seconds."""
    for _ in range(3):  # warm-up: allocator, thread pool, caches
        fn()
    iters, elapsed = 1, 0.0
    while True:  # find a batch size that runs for min_time
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        iters = max(iters * 2, int(iters * min_time / max(elapsed, 1e-9) * 1.2))
    samples = [elapsed / iters]
    for _ in range(repetitions - 1):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - start) / iters)
    return statistics.median(samples) * 1e3
