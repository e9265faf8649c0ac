"""kiln: a deep-learning framework whose heart is a compiler, with PyTorch's Python API.

    import kiln
    x = kiln.randn(4, 3, requires_grad=True)
    f = kiln.compile(lambda x: (x.sin() * x.cos()).sum())
    f(x).backward()
"""
import builtins as _builtins
import os as _os

from . import _C
from ._C import (  # noqa: F401
    KilnError,
    SymInt,
    Tensor,
    device,
    dtype,
    get_num_threads,
    is_grad_enabled,
    is_inference_mode_enabled,
    manual_seed,
    set_num_threads,
    tensor,
)

_C._set_package_dir(_os.path.dirname(_os.path.abspath(__file__)) + _os.sep)

# dtypes, with PyTorch's aliases
bool = _C.bool  # noqa: A001
uint8 = _C.uint8
int8 = _C.int8
int16 = _C.int16
int32 = _C.int32
int64 = _C.int64
float16 = _C.float16
bfloat16 = _C.bfloat16
float32 = _C.float32
float64 = _C.float64
short = int16
int = int32  # noqa: A001
long = int64
half = float16
float = float32  # noqa: A001
double = float64

from ._ops_namespace import *  # noqa: E402,F401,F403  every registered op, as kiln.<name>
from ._factories import *  # noqa: E402,F401,F403
from ._tensor import Size, max, min, std, var, var_mean  # noqa: E402,F401,A001
from ._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from ._numpy_interop import from_numpy  # noqa: E402,F401
from . import nn  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from ._serialize import load_safetensors, save_safetensors  # noqa: E402,F401
from . import models  # noqa: E402,F401
from ._compile import (  # noqa: E402,F401
    compile,
    explain,
    graph_break,
    list_backends,
    mark_dynamic,
    mark_static,
    register_backend,
    reset,
)

del _builtins
