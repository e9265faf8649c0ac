#!/usr/bin/env python3
"""Writes python_written.safetensors with the Python `safetensors` package (the reference
writer), for tests/serialize/test_safetensors.cpp. Run from this folder:
    pip install safetensors torch && python3 make_python_fixture.py
The values are simple formulas (restated in the test) so that the test needs no Python."""
import torch
from safetensors.torch import save_file

ramp = torch.arange(6, dtype=torch.float64).reshape(2, 3)  # [[0, 1, 2], [3, 4, 5]]
tensors = {
    "f64": ramp * 0.25 - 1,
    "f32": (ramp * 0.5 - 1).float(),
    "f16": (ramp * 0.75 - 2).half(),
    "bf16": (ramp * 2 - 3).bfloat16(),
    "i64": (ramp.long() * 1000000007 - 3),
    "i32": (ramp.int() * -7 + 1),
    "i16": (ramp.short() * 300 - 700),
    "i8": (ramp.to(torch.int8) * -20 + 50),
    "u8": (ramp.to(torch.uint8) * 50),
    "bool": ramp.long() % 2 == 1,
    "u16": (ramp.long() * 13000).to(torch.uint16),       # up to 65000: needs int32
    "u32": (ramp.long() * 800000000).to(torch.uint32),   # up to 4e9: needs int64
    "f8_e4m3": torch.tensor([0.5, -1.75, 448.0, 2.0**-9, -0.0, 3.0]).to(torch.float8_e4m3fn),
    "f8_e5m2": torch.tensor([1.5, -0.25, 57344.0, float("inf"), 2.0**-16, -3.0]).to(
        torch.float8_e5m2),
    "scalar": torch.tensor(2.5),
    "empty": torch.zeros(0, 4),
    "odd_u8": torch.tensor([1, 2, 3], dtype=torch.uint8),  # 3 bytes: later tensors shift
}
save_file(tensors, "python_written.safetensors", metadata={"format": "pt", "source": "kiln test"})
