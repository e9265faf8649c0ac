"""numpy interop: from_numpy / Tensor.numpy() share memory; numpy's dispatch protocols
(__array_ufunc__, __array_function__) run numpy functions called on kiln tensors as kiln ops."""
import numpy as np

from . import _C
from . import _numpy_ops

Tensor = _C.Tensor


def from_numpy(array):
    """A tensor sharing memory with a numpy array (which stays alive while the tensor does)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray, got {type(array).__name__}")
    if any(s < 0 for s in array.strides):
        raise ValueError("from_numpy: at least one stride of the array is negative; pass a copy "
                         "(array.copy())")
    if not array.dtype.isnative:
        raise TypeError("from_numpy: the array's byte order is not the machine's")
    return _C._from_buffer(array)


def from_array(obj):
    """A tensor of an array-like's values, sharing memory where the layout allows."""
    array = np.asarray(obj)
    if any(s < 0 for s in array.strides) or not array.dtype.isnative:
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    return _C._from_buffer(array)


def tensor_to_numpy(t, force=False):
    if t.requires_grad:
        if not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        t._materialize("Tensor.numpy()")
        t = t.detach()
    return np.asarray(memoryview(t))


def _array(self, dtype=None, copy=None):
    a = tensor_to_numpy(self)
    if dtype is not None and a.dtype != dtype:
        return a.astype(dtype)
    if copy:
        return a.copy()
    return a


def _unwrap(x):
    """numpy arrays among the arguments become tensors (sharing memory)."""
    if isinstance(x, np.ndarray):
        return from_array(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(e) for e in x)
    return x


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    impl = _numpy_ops.ufunc_impl(ufunc, method)
    if impl is None:
        return NotImplemented
    out = kwargs.pop("out", None)
    result = impl(*[_unwrap(i) for i in inputs], **kwargs)
    if out is not None:
        target = out[0] if isinstance(out, tuple) else out
        if isinstance(target, Tensor):
            target.copy_(result)
            return target
        np.copyto(target, tensor_to_numpy(result.detach()))
        return target
    return result


def _array_function(self, func, types, args, kwargs):
    impl = _numpy_ops.function_impl(func)
    if impl is None:
        return NotImplemented
    return impl(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})


Tensor.__array__ = _array
Tensor.__array_priority__ = 1000
Tensor.__array_ufunc__ = _array_ufunc
Tensor.__array_function__ = _array_function
