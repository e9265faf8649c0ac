"""PyTorch's side of bench/bench_cuda.cpp: the same memory-bound workloads at the GPU shapes of
../shared/BENCHMARKS.md, float32 on cuda:0, in PyTorch eager and torch.compile (default mode),
timed with CUDA events per call, median of the repeats; GB/s counts one read of the input and one
write of the output, as bench_cuda.cpp does. Prints one line per measurement:
    <workload> <variant> <median us> <GB/s>
Run on the device machine (PyTorch 2.11 there): python3 bench/compare_torch_cuda.py
"""
import statistics

import torch

ROWS, COLUMNS, POINTWISE = 8192, 4096, 1 << 24
REPEATS = 50


def pointwise(x):
    return torch.sin(x) * torch.cos(x) + torch.exp(-x * x) * 0.5 + torch.tanh(x)


def softmax(x):
    return torch.softmax(x, -1)


def timed(fn, *args):
    for _ in range(5):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0)
    return statistics.median(times)


def report(workload, variant, us, nbytes):
    print(f"{workload} {variant} {us:.1f} {nbytes / us / 1e3:.1f}", flush=True)


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    x = torch.randn(POINTWISE, device=device)
    report("copy", "torch", timed(torch.clone, x), 2 * x.nbytes)
    report("pointwise", "eager", timed(pointwise, x), 2 * x.nbytes)
    report("pointwise", "compiled", timed(torch.compile(pointwise), x), 2 * x.nbytes)
    m = torch.randn(ROWS, COLUMNS, device=device)
    report("softmax", "eager", timed(softmax, m), 2 * m.nbytes)
    report("softmax", "compiled", timed(torch.compile(softmax), m), 2 * m.nbytes)
    w, b = torch.randn(COLUMNS, device=device), torch.randn(COLUMNS, device=device)

    def layernorm(t, wt, bt):
        return torch.nn.functional.layer_norm(t, (COLUMNS,), wt, bt, 1e-5)

    report("layernorm", "eager", timed(layernorm, m, w, b), 2 * m.nbytes)
    report("layernorm", "compiled", timed(torch.compile(layernorm), m, w, b), 2 * m.nbytes)


if __name__ == "__main__":
    main()
