"""What a compiled numpy function sees instead of numpy arrays: `ndarray`, a numpy-array stand-in
over a kiln tensor. Its operators, methods and numpy's dispatch protocols run kiln ops (so the
whole function traces into kiln graphs and fuses); a numpy function kiln does not implement runs
in numpy itself on the materialized values (a graph break, never a wrong answer)."""
import numpy as np

from . import _C
from . import _numpy_ops as nops
from ._numpy_interop import from_array, tensor_to_numpy

Tensor = _C.Tensor

def wrap(x):
    if isinstance(x, Tensor):
        return ndarray(x)
    if isinstance(x, tuple):
        return tuple(wrap(e) for e in x)
    if isinstance(x, list):
        return [wrap(e) for e in x]
    return x


def unwrap(x):
    if isinstance(x, ndarray):
        return x.tensor
    if isinstance(x, tuple):
        return tuple(unwrap(e) for e in x)
    if isinstance(x, list):
        return [unwrap(e) for e in x]
    if isinstance(x, dict):
        return {k: unwrap(v) for k, v in x.items()}
    return x


def materialize(x, why="a numpy function kiln does not implement"):
    """Real numpy values for a fallback to numpy itself (a graph break while tracing)."""
    if isinstance(x, ndarray):
        x.tensor._materialize(why)
        return tensor_to_numpy(x.tensor, force=True)
    if isinstance(x, tuple):
        return tuple(materialize(e, why) for e in x)
    if isinstance(x, list):
        return [materialize(e, why) for e in x]
    if isinstance(x, dict):
        return {k: materialize(v, why) for k, v in x.items()}
    return x


def rewrap(x):
    """numpy results of a fallback, back as stand-ins (arrays of a dtype kiln has no tensors of,
    complex numbers say, stay numpy arrays: numpy keeps computing on them)."""
    if isinstance(x, np.ndarray):
        if x.dtype not in nops.KILN_DTYPES:
            return x
        return ndarray(from_array(x))
    if isinstance(x, tuple):
        return tuple(rewrap(e) for e in x)
    if isinstance(x, list):
        return [rewrap(e) for e in x]
    return x


def _ufunc(u):
    impl = nops.ufunc_impl(u, "__call__")
    return lambda *args: wrap(impl(*unwrap(args)))


def _reflected(u):
    impl = nops.ufunc_impl(u, "__call__")
    return lambda self, other: wrap(impl(unwrap(other), self.tensor))


class ndarray:  # noqa: N801  numpy's name, as what the user's code believes it holds
    __array_priority__ = 1000

    def __init__(self, tensor):
        self.tensor = tensor

    # ---- attributes ----
    shape = property(lambda self: tuple(self.tensor.shape))
    ndim = property(lambda self: self.tensor.ndim)
    size = property(lambda self: self.tensor.numel())
    dtype = property(lambda self: nops.NUMPY_DTYPES[self.tensor.dtype])
    itemsize = property(lambda self: self.tensor.element_size())
    nbytes = property(lambda self: self.tensor.numel() * self.tensor.element_size())
    T = property(lambda self: ndarray(nops._transpose(self.tensor)))

    def __len__(self):
        return len(self.tensor)

    def __repr__(self):
        return repr(materialize(self))

    def __array__(self, dtype=None, copy=None):
        a = materialize(self)
        return a if dtype is None else a.astype(dtype)

    # ---- numpy's protocols ----
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        impl = nops.ufunc_impl(ufunc, method)
        out = kwargs.pop("out", None)
        if impl is None or out is not None:
            if out is not None:
                kwargs["out"] = materialize(out)
            why = f"numpy.{ufunc.__name__}.{method}"
            return rewrap(getattr(ufunc, method)(*materialize(inputs, why),
                                                 **materialize(kwargs, why)))
        return wrap(impl(*unwrap(inputs), **unwrap(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        impl = nops.function_impl(func)
        if impl is not None:
            result = impl(*unwrap(args), **unwrap(kwargs))
            if result is not NotImplemented:
                return wrap(result)
        why = f"numpy function {func.__module__}.{func.__name__} (no kiln implementation)"
        return rewrap(func(*materialize(args, why), **materialize(kwargs, why)))

    # ---- operators ----
    __add__ = _ufunc(np.add)
    __radd__ = _reflected(np.add)
    __sub__ = _ufunc(np.subtract)
    __rsub__ = _reflected(np.subtract)
    __mul__ = _ufunc(np.multiply)
    __rmul__ = _reflected(np.multiply)
    __truediv__ = _ufunc(np.true_divide)
    __rtruediv__ = _reflected(np.true_divide)
    __floordiv__ = _ufunc(np.floor_divide)
    __rfloordiv__ = _reflected(np.floor_divide)
    __mod__ = _ufunc(np.remainder)
    __rmod__ = _reflected(np.remainder)
    __pow__ = _ufunc(np.power)
    __rpow__ = _reflected(np.power)
    __matmul__ = _ufunc(np.matmul)
    __rmatmul__ = _reflected(np.matmul)
    __and__ = _ufunc(np.bitwise_and)
    __or__ = _ufunc(np.bitwise_or)
    __xor__ = _ufunc(np.bitwise_xor)
    __eq__ = _ufunc(np.equal)
    __ne__ = _ufunc(np.not_equal)
    __lt__ = _ufunc(np.less)
    __le__ = _ufunc(np.less_equal)
    __gt__ = _ufunc(np.greater)
    __ge__ = _ufunc(np.greater_equal)
    __hash__ = None

    def __neg__(self):
        return ndarray(-self.tensor)

    def __pos__(self):
        return self

    def __abs__(self):
        return ndarray(self.tensor.abs())

    def __invert__(self):
        return ndarray(~self.tensor)

    def _inplace(self, u, other):
        result = nops.ufunc_impl(u, "__call__")(self.tensor, unwrap(other))
        self.tensor.copy_(result)
        return self

    def __iadd__(self, other):
        return self._inplace(np.add, other)

    def __isub__(self, other):
        return self._inplace(np.subtract, other)

    def __imul__(self, other):
        return self._inplace(np.multiply, other)

    def __itruediv__(self, other):
        return self._inplace(np.true_divide, other)

    def __getitem__(self, index):
        return wrap(self.tensor[unwrap(index)])

    def __setitem__(self, index, value):
        self.tensor[unwrap(index)] = unwrap(value)

    def __iter__(self):
        return (ndarray(t) for t in self.tensor.unbind(0))

    def __bool__(self):
        return bool(self.tensor)

    def __float__(self):
        return float(self.tensor)

    def __int__(self):
        return int(self.tensor)

    def __index__(self):
        return self.tensor.__index__()

    # ---- methods ----
    def _method(func):  # noqa: N805
        return lambda self, *args, **kwargs: self.__array_function__(
            func, (ndarray,), (self,) + args, kwargs)

    sum = _method(np.sum)
    mean = _method(np.mean)
    std = _method(np.std)
    var = _method(np.var)
    max = _method(np.max)
    min = _method(np.min)
    prod = _method(np.prod)
    all = _method(np.all)
    any = _method(np.any)
    argmax = _method(np.argmax)
    argmin = _method(np.argmin)
    cumsum = _method(np.cumsum)
    cumprod = _method(np.cumprod)
    swapaxes = _method(np.swapaxes)
    squeeze = _method(np.squeeze)
    ravel = _method(np.ravel)
    clip = _method(np.clip)
    dot = _method(np.dot)
    round = _method(np.round)
    argsort = _method(np.argsort)
    del _method

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return ndarray(nops._transpose(self.tensor, list(axes) if axes else None))

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return ndarray(nops._reshape(self.tensor, list(shape), order))

    def flatten(self, order="C"):
        return ndarray(self.tensor.reshape([-1]).clone())

    def copy(self, order="C"):
        return ndarray(self.tensor.clone())

    def astype(self, dtype, copy=True):
        t = self.tensor.to(nops._kiln_dtype(dtype))
        return ndarray(t.clone() if copy and t._is_same(self.tensor) else t)

    def item(self, *args):
        return (self.tensor[args] if args else self.tensor).item()

    def tolist(self):
        return self.tensor.tolist()

    def fill(self, value):
        self.tensor.fill_(value)

    def sort(self, axis=-1, kind=None, order=None):
        self.tensor.copy_(nops._sort(self.tensor, axis))
