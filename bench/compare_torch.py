#!/usr/bin/env python3
"""kiln beside PyTorch on the workloads of BENCHMARKS.md: kiln eager and kiln compiled (from
build/tools/kiln_bench) against PyTorch eager, TorchScript (trace + freeze, inference) and
torch.compile (each mode in --torch-modes), on the same workloads, shapes and seeds.

kiln and PyTorch alternate per workload and per round (odd rounds PyTorch first), so that machine
drift hits both alike; the table shows medians over rounds, with the ratios kiln-compiled /
PyTorch-eager and kiln-compiled / torch.compile (its fastest mode that worked): below 1, kiln is
faster. A PyTorch variant that fails (a torch.compile mode on this CPU, a model TorchScript cannot
trace) is reported as such and the rest goes on.

PyTorch runs at its best (ANCHORS.md): glibc keeps freed memory (the script re-executes itself
with GLIBC_TUNABLES), torch.set_num_threads(threads); kiln runs as its users run it (kiln_bench
without the tunables, which its own caching allocator does not need). PyTorch, torchvision and
transformers are installed from PyPI with pip when missing (unless --no-install: then the workloads
needing a missing one are skipped).

    python3 bench/compare_torch.py --threads 2 --json compare.json
    python3 bench/compare_torch.py --workloads pointwise,mlp --shapes tiny --rounds 1  # a quick check
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch_models import BUILDERS, TorchModel, bert_config, hf_logits  # noqa: E402
from side_by_side import (cpu_model, ensure_malloc_tunables, kiln_revision,  # noqa: E402
                          machine_line, print_torch_config, torch_measure)

WORKLOADS = ["pointwise", "softmax", "layernorm", "matmul", "mlp", "resnet18", "bert", "gpt2",
             "bert-dynamic", "resnet18-dynamic", "numpy", "overhead"]
TRAINED = {"mlp", "resnet18", "bert"}  # the workloads with a training phase


# Workloads whose PyTorch side needs more than torch.
NEEDS = {"resnet18": "torchvision", "bert": "transformers", "gpt2": "transformers",
         "bert-dynamic": "transformers", "resnet18-dynamic": "torchvision", "numpy": "numpy"}


def missing_modules():
    missing = []
    for name in ("torch", "torchvision", "transformers", "numpy"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    return missing


def ensure_torch(install):
    """Imports torch; installs torch, torchvision, transformers and numpy from PyPI when one is
    missing and `install` is set. Returns (torch, the modules still missing)."""
    missing = missing_modules()
    if missing and install and not os.environ.get("KILN_COMPARE_INSTALLED"):
        print("[compare_torch] pip install torch torchvision transformers numpy", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "torch", "torchvision",
                        "transformers", "numpy"], check=True)
        os.execve(sys.executable, [sys.executable] + sys.argv,
                  dict(os.environ, KILN_COMPARE_INSTALLED="1"))
    if "torch" in missing:
        sys.exit("compare_torch: torch cannot be imported (pip install torch)")
    import torch
    return torch, missing


# ---- PyTorch's side of the op workloads, as modules (TorchScript freezes modules) ----

def function_module(torch, fn):
    class Function(torch.nn.Module):
        def forward(self, *inputs):
            return fn(*inputs)
    return Function()


def torch_op_workload(torch, workload, tiny):
    """A TorchModel (inference only) for an op workload, at kiln_bench's shapes."""
    F = torch.nn.functional
    if workload == "pointwise":
        fn = lambda x: torch.sin(x) * torch.cos(x) + torch.exp(-x * x) * 0.5 + torch.tanh(x)  # noqa
        inputs = (torch.randn(64 if tiny else 1 << 22),)
    elif workload == "softmax":
        fn = lambda x: x.softmax(-1)  # noqa: E731
        inputs = (torch.randn(4, 16) if tiny else torch.randn(2048, 4096),)
    elif workload == "layernorm":
        rows, cols = (4, 16) if tiny else (2048, 4096)
        fn = lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)  # noqa: E731
        inputs = (torch.randn(rows, cols), torch.randn(cols), torch.randn(cols))
    elif workload == "matmul":
        n = 16 if tiny else 1024
        fn = lambda a, b: a @ b  # noqa: E731
        inputs = (torch.randn(n, n), torch.randn(n, n))
    elif workload == "numpy":
        rows, cols = (8, 16) if tiny else (4096, 4096)
        fn = lambda a, b: torch.sum(torch.sin(a) * torch.cos(b) + torch.exp(-a * a), 1)  # noqa
        inputs = (torch.randn(rows, cols), torch.randn(rows, cols))
    elif workload == "overhead":
        fn = lambda x: torch.sin(x)  # noqa: E731
        inputs = (torch.randn(16),)
    else:
        raise ValueError(workload)
    return TorchModel(function_module(torch, fn), inputs)


class LengthsPass:
    """bert-dynamic: BERT inference over the sequence lengths in turn, as one call."""

    def __init__(self, torch, tiny):
        import transformers
        config = bert_config(transformers, tiny)
        self.model = hf_logits(torch, transformers.BertForSequenceClassification(config))
        lengths = [4, 8, 12] if tiny else [16, 40, 64, 100, 128, 200, 256, 384, 512]
        batch = 1 if tiny else 2
        self.inputs = [torch.randint(0, config.vocab_size, (batch, n)) for n in lengths]

    def fn(self, module):
        return lambda: [module(ids) for ids in self.inputs]


class ImageSizesPass:
    """resnet18-dynamic (kiln's workload beside BENCHMARKS.md's): ResNet-18 inference over the
    image sizes in turn, as one call (tools/bench/resnet_dynamic_case.cpp)."""

    def __init__(self, torch, tiny):
        import torchvision
        self.model = torchvision.models.resnet18(num_classes=10 if tiny else 1000)
        sides = [40, 48, 64] if tiny else [128, 160, 192, 224, 256]
        batch = 1 if tiny else 4
        self.inputs = [torch.randn(batch, 3, side, side) for side in sides]

    def fn(self, module):
        return lambda: [module(x) for x in self.inputs]


def numpy_function_fn(tiny):
    import numpy as np
    rng = np.random.default_rng(0)
    shape = (8, 16) if tiny else (4096, 4096)
    a = rng.standard_normal(shape, dtype=np.float32)
    b = rng.standard_normal(shape, dtype=np.float32)
    return lambda: np.sum(np.sin(a) * np.cos(b) + np.exp(-a * a), axis=1)


def first_line(error):
    text = f"{type(error).__name__}: {error}"
    return text.splitlines()[0][:200] if text else type(error).__name__


class TorchCase:
    """PyTorch's variants of one workload and phase, built once (compiled once) for all rounds:
    name -> a no-argument callable running one iteration, or the error that prevented it."""

    def __init__(self, torch, workload, phase, tiny, torch_modes, torchscript):
        self.torch, self.variants, self.errors, self.compile_s = torch, {}, {}, {}
        torch.manual_seed(0)
        if workload in ("bert-dynamic", "resnet18-dynamic"):
            m = (LengthsPass if workload == "bert-dynamic" else ImageSizesPass)(torch, tiny)
            m.model.eval()
            self.variants["eager"] = self.inference(m.fn(m.model), torch.inference_mode)
            for mode in torch_modes:
                self.add_compiled(f"compile:{mode}", lambda mode=mode: self.inference(
                    m.fn(torch.compile(m.model, mode=mode)), torch.no_grad))
            return
        if workload == "numpy":
            self.variants["numpy"] = numpy_function_fn(tiny)
        m = (BUILDERS[workload](torch, tiny) if workload in BUILDERS
             else torch_op_workload(torch, workload, tiny))
        if phase == "train":
            m.model.train()
            self.variants["eager"] = m.train_fn(m.model)
            for mode in torch_modes:
                self.add_compiled(f"compile:{mode}", lambda mode=mode: m.train_fn(
                    torch.compile(m.model, mode=mode)))
            return
        m.model.eval()
        self.variants["eager"] = self.inference(m.infer_fn(m.model), torch.inference_mode)
        if torchscript:
            self.add_compiled("torchscript", lambda: self.inference(m.infer_fn(
                torch.jit.freeze(torch.jit.trace(m.model, m.inputs, strict=False))),
                torch.inference_mode))
        for mode in torch_modes:
            self.add_compiled(f"compile:{mode}", lambda mode=mode: self.inference(
                m.infer_fn(torch.compile(m.model, mode=mode)), torch.no_grad))

    @staticmethod
    def inference(fn, grad_context):
        def run():
            with grad_context():
                return fn()
        return run

    def add_compiled(self, name, make):
        """Builds a variant and runs its first call (torch.compile compiles there), timed."""
        try:
            start = time.perf_counter()
            fn = make()
            fn()  # each variant sets its own grad mode
            self.compile_s[name] = time.perf_counter() - start
            self.variants[name] = fn
        except Exception as error:  # any failure of a PyTorch variant is reported, not fatal
            self.errors[name] = first_line(error)
            print(f"[compare_torch] {name} failed: {self.errors[name]}", file=sys.stderr)


# ---- kiln: one kiln_bench process per workload and round ----

def kiln_rows(args, workload, phases):
    """kiln_bench's JSON rows for one workload (every phase asked for)."""
    with tempfile.TemporaryDirectory(prefix="kiln-compare-") as tmp:
        out = os.path.join(tmp, "kiln.json")
        cmd = [args.kiln_bench, "--workload", workload, "--phase", ",".join(phases),
               "--mode", args.kiln_mode, "--threads", str(args.threads),
               "--repeats", str(args.repeats), "--min-time", str(args.min_time),
               "--shapes", args.shapes, "--quiet", "--json", out]
        env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if not os.path.exists(out):
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
        with open(out) as f:
            return json.load(f)["results"]


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_ms(value):
    return "-" if value is None else f"{value:.4g}"


def fmt_ratio(value):
    return "-" if value is None else f"{value:.3g}"


def main():
    ensure_malloc_tunables()
    # TorchScript's deprecation notices, once per traced model, would bury the progress lines.
    warnings.filterwarnings("ignore", category=FutureWarning)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiln-bench", default="build/tools/kiln_bench",
                        help="path of kiln_bench (ninja -C build kiln_bench)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated")
    parser.add_argument("--phases", default="inference,train")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--kiln-mode", default="default", help="kiln's compile mode")
    parser.add_argument("--torch-modes", default="default,reduce-overhead,max-autotune",
                        help="torch.compile modes (comma-separated; empty for none)")
    parser.add_argument("--no-torchscript", action="store_true")
    parser.add_argument("--shapes", choices=["full", "tiny"], default="full")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of kiln and torch")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed batches per measurement (median taken)")
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per timed batch")
    parser.add_argument("--json", help="write the merged results to this file")
    parser.add_argument("--no-install", action="store_true",
                        help="never pip install (offline machines): skip what cannot run")
    args = parser.parse_args()

    workloads = [w for w in args.workloads.split(",") if w]
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workloads {unknown}; valid: {', '.join(WORKLOADS)}")
    phases = [p for p in args.phases.split(",") if p]
    torch_modes = [m for m in args.torch_modes.split(",") if m]
    if not os.access(args.kiln_bench, os.X_OK):
        parser.error(f"{args.kiln_bench} is not an executable; build it with "
                     "ninja -C build kiln_bench")
    torch, missing = ensure_torch(not args.no_install)
    for w in [w for w in workloads if NEEDS.get(w) in missing]:
        print(f"[compare_torch] skipping {w}: {NEEDS[w]} is not installed", file=sys.stderr)
        workloads.remove(w)
    torch.set_num_threads(args.threads)
    tiny = args.shapes == "tiny"
    load = os.getloadavg()[0]
    print(f"machine: {machine_line(torch)}")
    print(f"load average at start: {load:.2f}")
    print_torch_config(torch)
    print()

    cases = [(w, p) for w in workloads for p in phases
             if p == "inference" or (p == "train" and w in TRAINED)]
    kiln = {c: [] for c in cases}    # per round: kiln_bench's row
    timed = {c: {} for c in cases}   # variant -> ms per round
    torch_cases = {}
    for r in range(args.rounds):
        for w in workloads:
            mine = [c for c in cases if c[0] == w]
            if not mine:
                continue

            def run_kiln():
                rows = kiln_rows(args, w, [p for _, p in mine])
                for c in mine:
                    row = next((x for x in rows if x["phase"] == c[1]), None)
                    kiln[c].append(row)

            def run_torch():
                for c in mine:
                    if c not in torch_cases:
                        print(f"[compare_torch] building PyTorch {c[0]} {c[1]}", file=sys.stderr)
                        torch_cases[c] = TorchCase(torch, c[0], c[1], tiny, torch_modes,
                                                   not args.no_torchscript)
                    for name, fn in torch_cases[c].variants.items():
                        ms = torch_measure(fn, args.repeats, args.min_time)
                        timed[c].setdefault(name, []).append(ms)

            for run in ((run_kiln, run_torch) if r % 2 == 0 else (run_torch, run_kiln)):
                run()
            for c in mine:
                k = kiln[c][-1] or {}
                te = timed[c].get("eager", [None])[-1]
                print(f"round {r + 1}/{args.rounds} {c[0]} {c[1]}: kiln eager "
                      f"{fmt_ms(k.get('eager_ms'))} ms, compiled {fmt_ms(k.get('compiled_ms'))}"
                      f" ms; torch eager {fmt_ms(te)} ms", file=sys.stderr, flush=True)

    results = []
    for c in cases:
        rows = [x for x in kiln[c] if x]
        kc = median_or_none([x.get("compiled_ms") for x in rows])
        ke = median_or_none([x.get("eager_ms") for x in rows])
        med = {name: statistics.median(v) for name, v in timed[c].items()}
        tc = {n.split(":", 1)[1]: v for n, v in med.items() if n.startswith("compile:")}
        best_tc = min(tc.values()) if tc else None
        te = med.get("eager")
        tcase = torch_cases.get(c)
        results.append({
            "workload": c[0], "phase": c[1], "device": "cpu", "threads": args.threads,
            "kiln_mode": args.kiln_mode, "kiln_eager_ms": ke, "kiln_compiled_ms": kc,
            "kiln_compile_s_cold": median_or_none([x.get("compile_s_cold") for x in rows]),
            "kiln_max_rel_err": max((x["max_rel_err"] for x in rows
                                     if x.get("max_rel_err") is not None), default=None),
            "kiln_error": next((x["error"] for x in rows if x.get("error")), None),
            "torch_eager_ms": te, "torchscript_ms": med.get("torchscript"),
            "torch_compile_ms": tc, "numpy_ms": med.get("numpy"),
            "torch_compile_s": {n.split(":", 1)[1]: s for n, s in
                                (tcase.compile_s.items() if tcase else []) if ":" in n},
            "torch_errors": tcase.errors if tcase else {},
            "kiln_over_torch_eager": kc / te if kc and te else None,
            "kiln_over_torch_compile": kc / best_tc if kc and best_tc else None,
            "kiln_rows": kiln[c], "torch_ms_rounds": timed[c]})

    header = (f"{'workload':<13} {'phase':<9} {'kiln eager':>10} {'kiln comp':>10} "
              f"{'torch eager':>11} {'torchscript':>11}"
              + "".join(f" {'tc ' + m[:12]:>15}" for m in torch_modes)
              + f" {'kc/te':>6} {'kc/tc':>6}  note")
    print(header)
    print("-" * len(header))
    for row in results:
        notes = []
        if row["numpy_ms"] is not None:
            notes.append(f"numpy {row['numpy_ms']:.4g} ms")
        if row["kiln_error"]:
            notes.append("kiln: " + row["kiln_error"].splitlines()[0][:60])
        notes += [f"{n} failed" for n in row["torch_errors"]]
        print(f"{row['workload']:<13} {row['phase']:<9} {fmt_ms(row['kiln_eager_ms']):>10} "
              f"{fmt_ms(row['kiln_compiled_ms']):>10} {fmt_ms(row['torch_eager_ms']):>11} "
              f"{fmt_ms(row['torchscript_ms']):>11}"
              + "".join(f" {fmt_ms(row['torch_compile_ms'].get(m)):>15}" for m in torch_modes)
              + f" {fmt_ratio(row['kiln_over_torch_eager']):>6}"
              f" {fmt_ratio(row['kiln_over_torch_compile']):>6}  {'; '.join(notes)}")
    load_end = os.getloadavg()[0]
    print(f"ms per iteration, medians over {args.rounds} rounds, {args.threads} threads; kc/te = "
          f"kiln compiled / torch eager, kc/tc = kiln compiled / fastest torch.compile mode "
          f"(below 1: kiln faster); load average {load:.2f} at start, {load_end:.2f} at end")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"cpu": cpu_model(), "cores": os.cpu_count(),
                                   "threads": args.threads, "gpu": None,
                                   "date": datetime.datetime.now(datetime.timezone.utc)
                                   .isoformat(timespec="seconds"),
                                   "kiln_commit": kiln_revision(), "torch": torch.__version__,
                                   "load_average": [load, load_end]},
                       "config": vars(args), "results": results}, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
