"""Tensor factories with PyTorch's signatures (sizes as varargs or one sequence, dtype, device,
requires_grad), over the registered factory ops."""
from . import _C

_ops = _C._ops

__all__ = [
    "zeros", "ones", "empty", "full", "randn", "rand", "randint", "arange", "linspace", "eye",
    "zeros_like", "ones_like", "empty_like", "full_like", "randn_like", "rand_like", "randperm",
    "as_tensor", "scalar_tensor",
]


def _sizes(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return list(size[0])
    return list(size)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_ops.full(_sizes(size), 0, dtype=dtype or _C.float32, device=device),
                   requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_ops.full(_sizes(size), 1, dtype=dtype or _C.float32, device=device),
                   requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_ops.empty(_sizes(size), dtype=dtype, device=device), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _finish(_ops.full(list(size), fill_value, dtype=dtype, device=device), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_ops.randn(_sizes(size), dtype=dtype, device=device), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_ops.rand(_sizes(size), dtype=dtype, device=device), requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None):
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    return _ops.randint(low, high, list(size), dtype=dtype, device=device)


def randperm(n, *, dtype=None, device=None):
    return _ops.randperm(n, dtype=dtype, device=device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        t = _ops.arange(start, dtype=dtype, device=device)
    else:
        t = _ops.arange(start, end, step, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    return _finish(_ops.linspace(start, end, steps, dtype=dtype, device=device), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    t = _ops.eye(n, dtype=dtype, device=device) if m is None else _ops.eye(
        n, m, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def _like(op):
    def make(input, *, dtype=None, device=None, requires_grad=False):
        return _finish(op(input, dtype=dtype, device=device), requires_grad)

    make.__name__ = op.__name__
    return make


zeros_like = _like(_ops.zeros_like)
ones_like = _like(_ops.ones_like)
empty_like = _like(_ops.empty_like)
randn_like = _like(_ops.randn_like)
rand_like = _like(_ops.rand_like)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _finish(_ops.full_like(input, fill_value, dtype=dtype, device=device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Shares memory with a tensor or a numpy array where dtype and device allow; copies lists."""
    if isinstance(data, _C.Tensor):
        return data._to(dtype, device, False)
    if hasattr(data, "__array_interface__"):
        from ._numpy_interop import from_array
        return from_array(data)._to(dtype, device, False)
    return _C.tensor(data, dtype=dtype, device=device)


def scalar_tensor(value, *, dtype=None, device=None):
    return _C.tensor(value, dtype=dtype, device=device)
