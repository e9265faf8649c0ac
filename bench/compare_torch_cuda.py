#!/usr/bin/env python3
"""PyTorch's side of kiln's GPU benchmarks, float32 on cuda:0 at the GPU shapes of
../shared/BENCHMARKS.md, in two parts:

bandwidth: bench/bench_cuda.cpp's memory-bound ops (a copy, pointwise, softmax, layernorm) in
PyTorch eager and torch.compile, timed with CUDA events per call, median of the repeats; GB/s
counts one read of the input and one write of the output, as bench_cuda.cpp does. One line each:
    <workload> <variant> <median us> <GB/s>

suite: kiln_bench --device cuda's workloads (pointwise, softmax, layernorm, matmul, mlp, resnet18,
bert, gpt2, bert-dynamic, overhead; numpy has no GPU shape) and phases, in PyTorch eager and
torch.compile (default mode; --torch-modes), timed as kiln_bench times the GPU: batches of
back-to-back iterations ended by torch.cuda.synchronize(), sized to --min-time (or --iters),
eager and compiled interleaved, median of --repeats batches. The models are bench/
compare_torch_models.py's (torchvision's resnet18, Hugging Face's BertForSequenceClassification
and GPT2LMHeadModel from configs, random weights, nothing downloaded) with the inputs at the GPU
shapes; a training step is zero_grad, forward and loss (compiled together, the span kiln_bench
compiles), backward, optimizer step (mlp SGD; resnet18 SGD with momentum; bert AdamW, dropout 0.1).
With --kiln-json (the JSON of kiln_bench --device cuda) the table is merged with kiln's rows.

PyTorch runs at its best (ANCHORS.md) and like for like: TF32 off for matmuls and cuDNN
convolutions (kiln keeps TF32 off: full float32 on both sides), cudnn.benchmark on (fixed shapes:
cuDNN picks its fastest algorithms), glibc keeping freed host memory (as compare_torch.py).

On the device machine (PyTorch, torchvision and transformers installed there):
    python3 bench/compare_torch_cuda.py                                   # PyTorch only
    python3 bench/compare_torch_cuda.py --kiln-json kiln.json --json merged.json
Here, a check of the script itself on the CPU at tiny shapes:
    python3 bench/compare_torch_cuda.py --device cpu --shapes tiny --no-bandwidth
"""
import argparse
import atexit
import contextlib
import datetime
import gc
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import (LengthsPass, first_line, fmt_ms, fmt_ratio,  # noqa: E402
                           function_module)
from compare_torch_models import BUILDERS, TorchModel  # noqa: E402
from side_by_side import cpu_model, ensure_malloc_tunables, kiln_revision  # noqa: E402

ROWS, COLUMNS, POINTWISE = 8192, 4096, 1 << 24
EVENT_REPEATS = 50  # calls timed one by one in the bandwidth part

WORKLOADS = ["pointwise", "softmax", "layernorm", "matmul", "mlp", "resnet18", "bert", "gpt2",
             "bert-dynamic", "overhead"]
TRAINED = {"mlp", "resnet18", "bert"}  # the workloads with a training phase
# BENCHMARKS.md's GPU batch sizes of the model workloads (and bert-dynamic's).
GPU_BATCH = {"mlp": 256, "resnet18": 32, "bert": 16, "gpt2": 8, "bert-dynamic": 8}


def pointwise(x):
    return x.sin() * x.cos() + (-x * x).exp() * 0.5 + x.tanh()


# ---- PyTorch's settings ----

def configure_torch(torch):
    """Like-for-like float32 (TF32 off, as kiln) and PyTorch at its best; returns the settings as
    read back, for the output. The legacy switches: PyTorch 2.9+ warns about them, but mixing
    them with the new fp32_precision ones makes its inductor raise when it reads the old ones."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
        return {"matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
                "cudnn_benchmark": torch.backends.cudnn.benchmark,
                "float32_matmul_precision": torch.get_float32_matmul_precision()}


def kiln_commit(kiln_machine):
    """The commit kiln was measured at: its JSON's, else the bundle's (KILN_COMMIT), else git's."""
    return kiln_machine.get("kiln_commit") or os.environ.get("KILN_COMMIT") or kiln_revision()


def describe_gpu(torch, device):
    if device.type != "cuda":
        return None
    return torch.cuda.get_device_name(device)


# ---- part 1: bandwidth of the memory-bound ops (bench_cuda's counterpart) ----

def event_us(torch, fn, *args):
    """Median microseconds of one call, each timed with CUDA events."""
    for _ in range(5):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(EVENT_REPEATS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0)
    return statistics.median(times)


def report_bandwidth(workload, variant, us, nbytes):
    print(f"{workload} {variant} {us:.1f} {nbytes / us / 1e3:.1f}", flush=True)


def bandwidth(torch, workloads):
    torch.manual_seed(0)
    device = torch.device("cuda")
    if "pointwise" in workloads:
        x = torch.randn(POINTWISE, device=device)
        report_bandwidth("copy", "torch", event_us(torch, torch.clone, x), 2 * x.nbytes)
        report_bandwidth("pointwise", "eager", event_us(torch, pointwise, x), 2 * x.nbytes)
        report_bandwidth("pointwise", "compiled", event_us(torch, torch.compile(pointwise), x),
                         2 * x.nbytes)
    if not {"softmax", "layernorm"} & set(workloads):
        return
    m = torch.randn(ROWS, COLUMNS, device=device)
    if "softmax" in workloads:
        softmax = lambda t: torch.softmax(t, -1)  # noqa: E731
        report_bandwidth("softmax", "eager", event_us(torch, softmax, m), 2 * m.nbytes)
        report_bandwidth("softmax", "compiled", event_us(torch, torch.compile(softmax), m),
                         2 * m.nbytes)
    if "layernorm" in workloads:
        w, b = torch.randn(COLUMNS, device=device), torch.randn(COLUMNS, device=device)

        def layernorm(t, wt, bt):
            return torch.nn.functional.layer_norm(t, (COLUMNS,), wt, bt, 1e-5)

        report_bandwidth("layernorm", "eager", event_us(torch, layernorm, m, w, b), 2 * m.nbytes)
        report_bandwidth("layernorm", "compiled",
                         event_us(torch, torch.compile(layernorm), m, w, b), 2 * m.nbytes)


# ---- part 2: the suite's workloads at kiln_bench --device cuda's shapes ----

def op_workload(torch, workload, tiny):
    """A TorchModel (inference only) for an op workload; inputs on the CPU."""
    F = torch.nn.functional
    if workload == "pointwise":
        fn, inputs = pointwise, (torch.randn(64 if tiny else POINTWISE),)
    elif workload == "softmax":
        fn = lambda x: x.softmax(-1)  # noqa: E731
        inputs = (torch.randn(4, 16) if tiny else torch.randn(ROWS, COLUMNS),)
    elif workload == "layernorm":
        rows, cols = (4, 16) if tiny else (ROWS, COLUMNS)
        fn = lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)  # noqa: E731
        inputs = (torch.randn(rows, cols), torch.randn(cols), torch.randn(cols))
    elif workload == "matmul":  # the workload's own shape, 1024^3, on both devices
        n = 16 if tiny else 1024
        fn = lambda a, b: a @ b  # noqa: E731
        inputs = (torch.randn(n, n), torch.randn(n, n))
    elif workload == "overhead":
        fn, inputs = (lambda x: torch.sin(x)), (torch.randn(16),)
    else:
        raise ValueError(workload)
    return TorchModel(function_module(torch, fn), inputs)


def model_workload(torch, workload, tiny):
    """compare_torch_models.py's model, loss and optimizer, with inputs at the GPU batch sizes
    (tiny: its tiny shapes); on the CPU."""
    m = BUILDERS[workload](torch, tiny)
    if tiny:
        return m
    batch = GPU_BATCH[workload]
    if workload == "mlp":
        m.inputs, m.target = (torch.randn(batch, 1024),), torch.randn(batch, 1024)
    elif workload == "resnet18":
        m.inputs = (torch.randn(batch, 3, 224, 224),)
        m.target = torch.randint(0, 1000, (batch,))
    elif workload == "bert":
        vocab = m.model.inner.config.vocab_size
        m.inputs = (torch.randint(0, vocab, (batch, 128)),)
        m.target = torch.randint(0, 2, (batch,))
    elif workload == "gpt2":
        m.inputs = (torch.randint(0, m.model.inner.config.vocab_size, (batch, 256)),)
    return m


def to_device(m, device):
    m.model.to(device)
    m.inputs = tuple(t.to(device) for t in m.inputs)
    if m.target is not None:
        m.target = m.target.to(device)
    return m


def autocast_region(torch, device, dtype):
    """torch.autocast(device, dtype) for the forward pass, or a no-op without a dtype."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=getattr(torch, dtype))


def train_step(torch, m, mode, autocast=lambda: contextlib.nullcontext()):
    """One training step: zero_grad, forward and loss (torch.compile'd together unless mode is
    None) under `autocast`, backward, optimizer step."""
    opt = m.optimizer(m.model.parameters())

    def forward_and_loss(inputs, target):
        return m.loss(m.model(*inputs), target)

    run = forward_and_loss if mode is None else torch.compile(forward_and_loss, mode=mode)

    def step():
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = run(m.inputs, m.target)
        loss.backward()
        opt.step()
        return loss
    return step


def inference(torch, fn, grad_context, autocast=lambda: contextlib.nullcontext()):
    def run():
        with grad_context(), autocast():
            return fn()
    return run


class GpuCase:
    """PyTorch's variants of one workload and phase on the device: name -> a no-argument
    callable running one iteration; the first call of each compiled variant is timed (it
    compiles there) and a variant that fails is recorded, not fatal."""

    def __init__(self, torch, device, workload, phase, tiny, torch_modes, autocast=None):
        self.torch, self.device = torch, device
        self.variants, self.errors, self.compile_s = {}, {}, {}
        torch.manual_seed(0)
        if workload == "bert-dynamic":
            lengths = LengthsPass(torch, tiny)  # compare_torch.py's model and lengths
            lengths.model.to(device).eval()
            vocab = lengths.model.inner.config.vocab_size
            batch = 1 if tiny else GPU_BATCH[workload]
            lengths.inputs = [torch.randint(0, vocab, (batch, ids.shape[1]), device=device)
                              for ids in lengths.inputs]
            self.variants["eager"] = inference(torch, lengths.fn(lengths.model),
                                               torch.inference_mode)
            for mode in torch_modes:
                self.add_compiled(mode, lambda mode=mode: inference(
                    torch, lengths.fn(torch.compile(lengths.model, mode=mode)), torch.no_grad))
            return
        m = model_workload(torch, workload, tiny) if workload in BUILDERS else op_workload(
            torch, workload, tiny)
        to_device(m, device)
        # The model workloads' forward passes under autocast, as kiln_bench --autocast.
        region = (lambda: autocast_region(torch, device, autocast)) if workload in BUILDERS \
            else (lambda: contextlib.nullcontext())
        if phase == "train":
            m.model.train()
            self.variants["eager"] = train_step(torch, m, None, region)
            for mode in torch_modes:
                self.add_compiled(mode, lambda mode=mode: train_step(torch, m, mode, region))
            return
        m.model.eval()
        self.variants["eager"] = inference(torch, m.infer_fn(m.model), torch.inference_mode,
                                           region)
        for mode in torch_modes:
            self.add_compiled(mode, lambda mode=mode: inference(
                torch, m.infer_fn(torch.compile(m.model, mode=mode)), torch.no_grad, region))

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize()

    def add_compiled(self, mode, make):
        name = f"compile:{mode}"
        try:
            self.synchronize()
            start = time.perf_counter()
            fn = make()
            fn()
            self.synchronize()
            self.compile_s[mode] = time.perf_counter() - start
            self.variants[name] = fn
        except Exception as error:  # any failure of a PyTorch variant is reported, not fatal
            self.errors[name] = first_line(error)
            print(f"[compare_torch_cuda] {name} failed: {self.errors[name]}", file=sys.stderr)

    def batch_s(self, fn, iters):
        """Seconds of `iters` back-to-back calls, the device's work included."""
        self.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        self.synchronize()
        return time.perf_counter() - start

    def measure(self, repeats, min_time, iters):
        """Median ms per iteration of every variant, batches interleaved, and each variant's peak
        device memory over its first batch above what was allocated before (MB)."""
        sizes = {}
        for name, fn in self.variants.items():
            fn()  # warm (a compiled variant's first call was its compilation)
            sizes[name] = iters or max(1, math.ceil(min_time / max(self.batch_s(fn, 1), 1e-9)))
        samples, peak_mb = {name: [] for name in self.variants}, {}
        cuda = self.device.type == "cuda"
        for r in range(repeats):
            for name, fn in self.variants.items():
                if r == 0 and cuda:
                    before = self.torch.cuda.memory_allocated()
                    self.torch.cuda.reset_peak_memory_stats()
                samples[name].append(self.batch_s(fn, sizes[name]) / sizes[name] * 1e3)
                if r == 0 and cuda:
                    peak_mb[name] = (self.torch.cuda.max_memory_allocated() - before) / 2**20
        return {name: statistics.median(v) for name, v in samples.items()}, peak_mb


def kernel_times(torch, device, fn):
    """[(kernel name, launches, total us)] of one call of `fn` under torch.profiler, largest
    first: the device's kernels (CPU ops, where the device is the CPU)."""
    from torch.profiler import ProfilerActivity, profile
    activity = ProfilerActivity.CUDA if device.type == "cuda" else ProfilerActivity.CPU
    with profile(activities=[activity]) as prof:
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        # Recent PyTorch names it self_device_time_total, older releases self_cuda_time_total.
        us = (getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
              if device.type == "cuda" else e.self_cpu_time_total)
        if us > 0:
            rows.append((e.key, e.count, us))
    return sorted(rows, key=lambda r: -r[2])


def profile_case(torch, device, workload, phase, args, torch_modes, top):
    """Prints the largest kernels of one iteration of each PyTorch variant (after two warm
    calls), the counterpart of run_cuda_tests.sh profile's per-side summaries of kiln."""
    case = GpuCase(torch, device, workload, phase, args.shapes == "tiny", torch_modes,
                   None if args.autocast == "none" else args.autocast)
    for name, fn in case.variants.items():
        fn()
        fn()
        rows = kernel_times(torch, device, fn)
        total = sum(r[2] for r in rows)
        print(f"== torch {name} {workload} {phase}"
              f"{'' if args.autocast == 'none' else ' ' + args.autocast}: "
              f"{sum(r[1] for r in rows)} launches, {total / 1e3:.3f} ms of kernels")
        for key, count, us in rows[:top]:
            print(f"  {us:9.1f} us {count:5d} x {us / count:9.1f} us  {key[:110]}")
    for name, error in case.errors.items():
        print(f"== torch {name} failed: {error}")


def measure_case(torch, device, workload, phase, args, torch_modes):
    """Builds and times one case: (ms per variant, peak MB per variant, compile seconds per
    mode, errors per variant). A case that fails as a whole (out of memory, say) is reported
    as the eager variant's error."""
    try:
        case = GpuCase(torch, device, workload, phase, args.shapes == "tiny", torch_modes,
                       None if args.autocast == "none" else args.autocast)
        ms, peak_mb = case.measure(args.repeats, args.min_time, args.iters)
        result = ms, peak_mb, case.compile_s, case.errors
    except Exception as error:  # reported in the table; the other cases go on
        result = {}, {}, {}, {"eager": first_line(error)}
        print(f"[compare_torch_cuda] {workload} {phase} failed: {first_line(error)}",
              file=sys.stderr)
    # Free the model, its optimizer state and compiled code before the next case, which starts
    # from empty compile caches: the op workloads share one forward (and the Hugging Face ones
    # another), whose cache entries would otherwise pile up towards dynamo's recompile limit.
    case = None
    torch._dynamo.reset()
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


# ---- merging with kiln_bench's JSON ----

def kiln_row(kiln_rows, workload, phase, mode, autocast):
    want = None if autocast == "none" else autocast
    return next((r for r in kiln_rows if r.get("workload") == workload
                 and r.get("phase") == phase and r.get("mode") == mode
                 and r.get("autocast") == want), None)


def print_table(results, torch_modes):
    header = (f"{'workload':<13} {'phase':<18} {'kiln eager':>10} {'kiln comp':>10} "
              f"{'torch eager':>11}" + "".join(f" {'tc ' + m[:12]:>15}" for m in torch_modes)
              + f" {'kc/te':>6} {'kc/tc':>6} {'kiln cold s':>11} {'tc cold s':>9}  note")
    print(header)
    print("-" * len(header))
    for row in results:
        notes = []
        if row["kiln_error"]:
            notes.append("kiln: " + row["kiln_error"].splitlines()[0][:60])
        elif row["kiln_matches"] is False:
            notes.append(f"kiln compiled != eager (max_rel_err {row['kiln_max_rel_err']})")
        notes += [f"{n} failed: {e[:60]}" for n, e in row["torch_errors"].items()]
        first_mode = torch_modes[0] if torch_modes else None
        tc_cold = row["torch_compile_s"].get(first_mode)
        phase = row["phase"] + (" " + row["autocast"] if row.get("autocast") else "")
        print(f"{row['workload']:<13} {phase:<18} {fmt_ms(row['kiln_eager_ms']):>10} "
              f"{fmt_ms(row['kiln_compiled_ms']):>10} {fmt_ms(row['torch_eager_ms']):>11}"
              + "".join(f" {fmt_ms(row['torch_compile_ms'].get(m)):>15}" for m in torch_modes)
              + f" {fmt_ratio(row['kiln_over_torch_eager']):>6}"
              f" {fmt_ratio(row['kiln_over_torch_compile']):>6}"
              f" {fmt_ratio(row['kiln_compile_s_cold']):>11} {fmt_ratio(tc_cold):>9}"
              f"  {'; '.join(notes)}")


def main():
    ensure_malloc_tunables()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated")
    parser.add_argument("--phases", default="inference,train")
    parser.add_argument("--torch-modes", default="default",
                        help="torch.compile modes (comma-separated; empty for none)")
    parser.add_argument("--kiln-json", help="kiln_bench --device cuda --json's file, to merge")
    parser.add_argument("--kiln-mode", default="default", help="kiln's rows of this mode")
    parser.add_argument("--repeats", type=int, default=5, help="timed batches (median taken)")
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per timed batch")
    parser.add_argument("--iters", type=int, help="iterations per batch (default: --min-time)")
    parser.add_argument("--shapes", choices=["full", "tiny"], default="full")
    parser.add_argument("--device", default="cuda",
                        help="cuda; cpu only to check this script where no GPU is")
    parser.add_argument("--no-bandwidth", action="store_true", help="skip the bandwidth part")
    parser.add_argument("--autocast", choices=["none", "bfloat16", "float16"], default="none",
                        help="the model workloads' forward passes under torch.autocast; the "
                        "others are skipped (as kiln_bench --autocast)")
    parser.add_argument("--json", help="write the (merged) results to this file")
    parser.add_argument("--profile", type=int, metavar="TOP",
                        help="instead of timing: the TOP largest kernels of one iteration of "
                        "each variant (torch.profiler)")
    args = parser.parse_args()

    workloads = [w for w in args.workloads.split(",") if w]
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workloads {unknown}; valid (GPU shapes): {', '.join(WORKLOADS)}")
    phases = [p for p in args.phases.split(",") if p]
    torch_modes = [m for m in args.torch_modes.split(",") if m]
    kiln_rows, kiln_machine = [], {}
    if args.kiln_json:
        with open(args.kiln_json) as f:
            kiln_doc = json.load(f)
        kiln_rows, kiln_machine = kiln_doc["results"], kiln_doc.get("machine", {})
    # torch.compile's caches in a new folder: its first calls are cold compiles, as kiln_bench's
    # "cold s" (an empty code cache).
    cache = tempfile.mkdtemp(prefix="compare-torch-cuda-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    import torch
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("compare_torch_cuda: torch sees no CUDA device (--device cpu checks the script)")
    settings = configure_torch(torch)
    gpu = describe_gpu(torch, device)
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}, cuDNN "
          f"{torch.backends.cudnn.version()}) on {gpu or cpu_model()}; "
          + ", ".join(f"{k}={v}" for k, v in settings.items()))
    if args.kiln_json:
        print(f"kiln {kiln_machine.get('kiln_commit')} from {args.kiln_json} "
              f"(measured on {kiln_machine.get('gpu')}, {kiln_machine.get('date')})")
    print(flush=True)

    cases = [(w, p) for w in workloads for p in phases
             if (p == "inference" or (p == "train" and w in TRAINED))
             and (args.autocast == "none" or w in BUILDERS)]
    if args.profile:
        for workload, phase in cases:
            profile_case(torch, device, workload, phase, args, torch_modes, args.profile)
        return

    if not args.no_bandwidth and args.autocast == "none" and device.type == "cuda":
        print("== bandwidth: <workload> <variant> <median us> <GB/s> ==")
        bandwidth(torch, workloads)
        print(flush=True)

    results = []
    for workload, phase in cases:
        print(f"[compare_torch_cuda] {workload} {phase}: building and compiling",
              file=sys.stderr, flush=True)
        ms, peak_mb, compile_s, errors = measure_case(torch, device, workload, phase, args,
                                                      torch_modes)
        k = kiln_row(kiln_rows, workload, phase, args.kiln_mode, args.autocast) or {}
        tc = {n.split(":", 1)[1]: v for n, v in ms.items() if n.startswith("compile:")}
        best_tc, te, kc = min(tc.values(), default=None), ms.get("eager"), k.get("compiled_ms")
        results.append({
            "workload": workload, "phase": phase, "device": device.type,
            "autocast": None if args.autocast == "none" else args.autocast,
            "kiln_mode": args.kiln_mode, "kiln_eager_ms": k.get("eager_ms"),
            "kiln_compiled_ms": kc, "kiln_compile_s_cold": k.get("compile_s_cold"),
            "kiln_max_rel_err": k.get("max_rel_err"), "kiln_matches": k.get("matches"),
            "kiln_error": k.get("error"),
            "torch_eager_ms": te, "torch_compile_ms": tc, "torch_compile_s": compile_s,
            "torch_peak_mb": peak_mb, "torch_errors": errors,
            "kiln_over_torch_eager": kc / te if kc and te else None,
            "kiln_over_torch_compile": kc / best_tc if kc and best_tc else None})
        print(f"[compare_torch_cuda] {workload} {phase}: torch eager {fmt_ms(te)} ms, compiled "
              + ", ".join(f"{m} {fmt_ms(v)} ms" for m, v in tc.items()), file=sys.stderr,
              flush=True)

    print_table(results, torch_modes)
    batches = f"{args.iters} iterations" if args.iters else f"at least {args.min_time} s"
    print(f"ms per iteration, medians of {args.repeats} batches of {batches} ended by a device "
          "synchronize; kc/te = kiln compiled / torch eager, kc/tc = kiln compiled / fastest "
          "torch.compile mode (below 1: kiln faster); cold s = first compiled call")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "gpu": gpu,
                                   "date": datetime.datetime.now(datetime.timezone.utc)
                                   .isoformat(timespec="seconds"),
                                   "kiln_commit": kiln_commit(kiln_machine),
                                   "torch": torch.__version__,
                                   "cuda": torch.version.cuda,
                                   "cudnn": torch.backends.cudnn.version()},
                       "torch_settings": settings, "config": vars(args),
                       "kiln_machine": kiln_machine or None,
                       "results": results}, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
