#!/usr/bin/env python3
"""PyTorch as the oracle for every op-info sample in kiln's registry.

Runs kiln_opinfo_dump, then calls torch.ops.aten.<op> with the same arguments (tensors rebuilt
from the dumped values, wrapped numbers passed as Python scalars, keyword-only arguments by name)
and compares dtype, shape and values with the op's tolerances. A sample where kiln raised must
also raise in PyTorch. Ops that aten does not have are listed as skipped.

Exit status: 0 all matched, 1 mismatches, 77 PyTorch unavailable (ctest reports a skip).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    print("PyTorch is not installed: skipping the oracle comparison")
    sys.exit(77)

DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
}
# Ops whose output values are unspecified (uninitialized memory): only dtype and shape count.
UNSPECIFIED = {"empty", "empty_like", "empty_strided"}
# Tolerances for 16-bit floats, whose rounding differs between libraries.
HALF_TOL = {torch.float16: (2e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}


def num(v):
    return float(v) if isinstance(v, str) else v


def build(a):
    kind = a["kind"]
    if kind == "none":
        return None
    if kind == "tensor":
        dtype = DTYPES[a["dtype"]]
        values = [num(v) for v in a["data"]]
        if a.get("wrapped"):
            v = values[0]
            return bool(v) if dtype == torch.bool else int(v) if not dtype.is_floating_point else float(v)
        t = torch.tensor(values, dtype=torch.float64 if dtype.is_floating_point else torch.int64)
        return t.to(dtype).reshape(a["shape"])
    if kind == "tensor_list":
        return [build(x) for x in a["items"]]
    if kind == "dtype":
        return DTYPES[a["value"]]
    if kind == "device":
        return torch.device(a["value"])
    if kind == "float":
        return num(a["value"])
    return a["value"]


def has_number(dumped_args, positional):
    return any(a.get("wrapped") for a in dumped_args) and any(
        isinstance(p, (bool, int, float)) for p in positional)


def as_tensors(positional):
    first = next((p for p in positional if isinstance(p, torch.Tensor)), None)
    out = []
    for p in positional:
        if isinstance(p, (bool, int, float)) and first is not None:
            out.append(torch.tensor(p, dtype=torch.result_type(first, p)))
        else:
            out.append(p)
    return out


def upcast(value):
    """A 16-bit float tensor (or list of them) as float64; anything else unchanged."""
    if isinstance(value, torch.Tensor) and value.dtype in HALF_TOL:
        return value.to(torch.float64)
    if isinstance(value, list):
        return [upcast(v) for v in value]
    return value


def compare(kiln_out, torch_out, rtol, atol, values=True):
    dtype = DTYPES[kiln_out["dtype"]]
    if torch_out.dtype != dtype:
        return f"dtype: kiln {dtype}, torch {torch_out.dtype}"
    if list(torch_out.shape) != kiln_out["shape"]:
        return f"shape: kiln {kiln_out['shape']}, torch {list(torch_out.shape)}"
    if not values:
        return None
    if dtype in HALF_TOL:
        rtol, atol = max(rtol, HALF_TOL[dtype][0]), max(atol, HALF_TOL[dtype][1])
    expected = torch_out.detach().to(torch.float64).flatten().tolist() if dtype.is_floating_point \
        else torch_out.detach().to(torch.int64).flatten().tolist()
    for i, (k, t) in enumerate(zip(kiln_out["data"], expected)):
        k = num(k)
        if isinstance(k, float) and math.isnan(k):
            if not (isinstance(t, float) and math.isnan(t)):
                return f"element {i}: kiln nan, torch {t}"
            continue
        if isinstance(t, float) and (math.isnan(t) or math.isinf(t)) or isinstance(k, float) and math.isinf(k):
            if k != t:
                return f"element {i}: kiln {k}, torch {t}"
            continue
        if abs(k - t) > atol + rtol * abs(t):
            return f"element {i}: kiln {k}, torch {t} (rtol {rtol}, atol {atol})"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dump", required=True, help="path of the kiln_opinfo_dump executable")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "samples.json")
        subprocess.run([args.dump, path], check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            records = json.load(f)

    failures, skipped, compared, rounded_differently = [], set(), 0, set()
    ops_seen = set()
    for r in records:
        name = r["op"]
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            skipped.add(name)
            continue
        ops_seen.add(name)
        positional, kwargs = [], {}
        for a in r["args"]:
            value = build(a)
            if a["kwarg_only"]:
                kwargs[a["name"]] = value
            else:
                positional.append(value)
        where = f"{name}{'.' + r['overload'] if r['overload'] else ''} [{r['sample']}]"
        try:
            try:
                out = packet(*positional, **kwargs)
            except RuntimeError as e:
                # aten has no Scalar overload (maximum, atan2, logical_and, ...): pass each Python
                # number as a 0-dim tensor of the dtype PyTorch's wrapped-number rules give it.
                if "failed to match any schema" not in str(e) or not has_number(r["args"], positional):
                    raise
                out = packet(*as_tensors(positional), **kwargs)
        except Exception as e:  # noqa: BLE001 - any torch error counts as "torch raised"
            if "error" in r:
                compared += 1
                continue
            failures.append(f"{where}: torch raised {type(e).__name__}: {str(e).splitlines()[0]}; kiln did not")
            continue
        if "error" in r:
            failures.append(f"{where}: kiln raised '{r['error']}', torch did not")
            continue
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(outs) != len(r["outputs"]):
            failures.append(f"{where}: {len(r['outputs'])} outputs, torch gave {len(outs)}")
            continue
        exact = None  # the op on the 16-bit inputs in float64, rounded back (computed when needed)
        for i, (k, t) in enumerate(zip(r["outputs"], outs)):
            # Backward ops return None for the outputs their output_mask leaves out.
            if k.get("kind") == "none" or t is None:
                if not (k.get("kind") == "none" and t is None):
                    failures.append(f"{where} output {i}: kiln {k.get('kind')}, torch {type(t).__name__}")
                continue
            problem = compare(k, t, r["rtol"], r["atol"], values=name not in UNSPECIFIED)
            if problem and isinstance(t, torch.Tensor) and t.dtype in HALF_TOL:
                # 16-bit kernels round intermediates differently between libraries and versions
                # (PyTorch 2.15's bfloat16 convolution_backward is 0.1 off a float64 computation
                # where kiln is within one rounding): the float64 computation rounded to the
                # output dtype is the reference then.
                if exact is None:
                    try:
                        exact = packet(*upcast(positional), **{n: upcast(v) for n, v in kwargs.items()})
                        exact = list(exact) if isinstance(exact, (tuple, list)) else [exact]
                    except Exception:  # noqa: BLE001 - no float64 version: torch's stands
                        exact = []
                if i < len(exact) and isinstance(exact[i], torch.Tensor):
                    if compare(k, exact[i].to(t.dtype), r["rtol"], r["atol"]) is None:
                        problem = None
                        rounded_differently.add(name)
            if problem:
                failures.append(f"{where} output {i}: {problem}")
        compared += 1

    print(f"PyTorch {torch.__version__} as oracle: {compared} samples of {len(ops_seen)} ops compared")
    if skipped:
        print(f"not in aten, skipped: {', '.join(sorted(skipped))}")
    if rounded_differently:
        print("16-bit results within tolerance of the float64 computation, not of torch's own "
              f"16-bit kernels: {', '.join(sorted(rounded_differently))}")
    for f in failures:
        print("MISMATCH", f)
    print(f"{compared - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
