"""Tensor methods written in Python: indexing (basic and advanced, as PyTorch), dtype and device
conversions, and methods whose PyTorch signature differs from the registered schema."""
import builtins

from . import _C

Tensor = _C.Tensor
_ops = _C._ops


class Size(tuple):
    """A tensor's shape (PyTorch's torch.Size): a tuple of ints."""

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return "kiln.Size([" + ", ".join(str(s) for s in self) + "])"


_shape = Tensor.shape
_size = Tensor.size
Tensor.shape = property(lambda self: Size(_shape.fget(self)))


def _size_method(self, dim=None):
    return Size(_size(self)) if dim is None else _size(self, dim)


Tensor.size = _size_method


# ---- indexing ----

def _is_int(i):
    return isinstance(i, int) or (type(i).__module__ == "numpy" and hasattr(i, "__index__")
                                  and not isinstance(i, builtins.float))


def _index_tensor(i):
    if isinstance(i, Tensor):
        return i
    return _C.tensor(i)  # lists, tuples, numpy arrays


def _expand_index(self, index):
    """Splits an index into per-dim steps: ('none',), ('int', i), ('slice', s), ('adv', t)."""
    if not isinstance(index, tuple):
        index = (index,)
    consumed = 0
    for i in index:
        if i is None or i is Ellipsis:
            continue
        if isinstance(i, Tensor) and i.dtype == _C.bool:
            consumed += i.ndim
        else:
            consumed += 1
    if consumed > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    steps = []
    seen_ellipsis = False
    for i in index:
        if i is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            steps.extend([("slice", slice(None))] * (self.ndim - consumed))
        elif i is None:
            steps.append(("none",))
        elif isinstance(i, builtins.bool):
            steps.append(("adv", _C.tensor(i)))
        elif _is_int(i):
            steps.append(("int", int(i)))
        elif isinstance(i, slice):
            steps.append(("slice", i))
        elif isinstance(i, Tensor) and i.dtype == _C.bool:
            # A mask over i.ndim dims: the positions of its true elements (a graph break when
            # traced, as the count depends on the data).
            positions = i.nonzero()
            for d in range(i.ndim):
                steps.append(("adv", positions.select(1, d)))
        elif isinstance(i, (Tensor, list, tuple)) or hasattr(i, "__array_interface__"):
            t = _index_tensor(i)
            if t.dtype == _C.bool:
                positions = t.nonzero()
                for d in range(t.ndim):
                    steps.append(("adv", positions.select(1, d)))
            else:
                steps.append(("adv", t))
        else:
            raise TypeError(f"invalid index of type {type(i).__name__}; expected an int, slice, "
                            "None, Ellipsis, a tensor or a sequence of ints")
    return steps


def _apply_basic(self, steps):
    """Applies ints, slices and None as views; returns the view and the advanced indices by
    the view's dims."""
    result = self
    dim = 0
    advanced = []
    for step in steps:
        kind = step[0]
        if kind == "none":
            result = result.unsqueeze(dim)
            dim += 1
        elif kind == "int":
            size = result.shape[dim]
            i = step[1]
            if i < -size or i >= size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            result = result.select(dim, i)
        elif kind == "slice":
            s = step[1]
            if s.step is not None and s.step <= 0:
                raise ValueError("step must be greater than zero")
            if s != slice(None):
                result = _ops.slice(result, dim, s.start, s.stop, 1 if s.step is None else s.step)
            dim += 1
        else:
            advanced.append((dim, step[1]))
            dim += 1
    return result, advanced


def _getitem(self, index):
    steps = _expand_index(self, index)
    result, advanced = _apply_basic(self, steps)
    if advanced:
        indices = [None] * result.ndim
        for dim, t in advanced:
            indices[dim] = t
        result = _ops.index(result, indices)
    return result


def _setitem(self, index, value):
    steps = _expand_index(self, index)
    view, advanced = _apply_basic(self, steps)
    if not isinstance(value, Tensor):
        if advanced:
            value = _C.tensor(value, dtype=self.dtype)
        else:
            view.fill_(value)
            return
    if advanced:
        indices = [None] * view.ndim
        for dim, t in advanced:
            indices[dim] = t
        view.index_put_(indices, value.to(self.dtype))
    else:
        view.copy_(value)


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


Tensor.__iter__ = _iter


# ---- conversions ----

def parse_to_args(args, kwargs):
    """(dtype, device, copy) of a to() call: to(dtype), to(device), to(device, dtype), to(other),
    and the same as keywords (Tensor.to and Module.to)."""
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, (_C.device, str)):
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        else:
            raise TypeError(f"to() received an invalid argument of type {type(a).__name__}")
    if isinstance(device, str):
        device = _C.device(device)
    return dtype, device, copy


def _to(self, *args, **kwargs):
    dtype, device, copy = parse_to_args(args, kwargs)
    return self._to(dtype, device, copy)


Tensor.to = _to
Tensor.cpu = lambda self: self._to(None, _C.device("cpu"), False)
Tensor.type_as = lambda self, other: self._to(other.dtype, None, False)
for _name, _dtype in [("float", _C.float32), ("double", _C.float64), ("half", _C.float16),
                      ("bfloat16", _C.bfloat16), ("long", _C.int64), ("int", _C.int32),
                      ("short", _C.int16), ("char", _C.int8), ("byte", _C.uint8),
                      ("bool", _C.bool)]:
    setattr(Tensor, _name, (lambda d: lambda self: self._to(d, None, False))(_dtype))


def _type(self, dtype=None):
    if dtype is None:
        names = {_C.float32: "FloatTensor", _C.float64: "DoubleTensor", _C.float16: "HalfTensor",
                 _C.bfloat16: "BFloat16Tensor", _C.int64: "LongTensor", _C.int32: "IntTensor",
                 _C.int16: "ShortTensor", _C.int8: "CharTensor", _C.uint8: "ByteTensor",
                 _C.bool: "BoolTensor"}
        return "kiln." + names[self.dtype]
    return self._to(dtype, None, False)


Tensor.type = _type
Tensor.T = property(lambda self: self.permute(list(range(self.ndim - 1, -1, -1))))
Tensor.mT = property(lambda self: self.transpose(-2, -1))
Tensor.zero_ = lambda self: self.fill_(0)
Tensor.new_zeros = lambda self, *size, dtype=None, device=None, requires_grad=False: _new(
    self, 0, size, dtype, device, requires_grad)
Tensor.new_ones = lambda self, *size, dtype=None, device=None, requires_grad=False: _new(
    self, 1, size, dtype, device, requires_grad)
Tensor.new_empty = lambda self, *size, dtype=None, device=None, requires_grad=False: _new(
    self, 0, size, dtype, device, requires_grad)


def _new(self, value, size, dtype, device, requires_grad):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    t = _ops.full(list(size), value, dtype=dtype or self.dtype, device=device or self.device)
    return t.requires_grad_(requires_grad) if requires_grad else t


Tensor.new_full = lambda self, size, fill_value, dtype=None, device=None: _ops.full(
    list(size), fill_value, dtype=dtype or self.dtype, device=device or self.device)
Tensor.new_tensor = lambda self, data, dtype=None, device=None: _C.tensor(
    data, dtype=dtype or self.dtype, device=device)


# ---- PyTorch signatures the registered schemas spell differently ----

def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _reduce_dims(dim):
    if dim is None or isinstance(dim, (list, tuple)):
        return dim
    return [dim]


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, builtins.bool):  # std(input, unbiased)
        dim, unbiased = None, dim
    return _ops.std(input, _reduce_dims(dim), correction=_correction(unbiased, correction),
                    keepdim=keepdim)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    return _ops.var(input, _reduce_dims(dim), correction=_correction(unbiased, correction),
                    keepdim=keepdim)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _ops.var_mean(input, _reduce_dims(dim), correction=_correction(unbiased, correction),
                         keepdim=keepdim)


def max(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    if isinstance(dim, Tensor):
        return _ops.maximum(input, dim)
    return _ops.max(input) if dim is None else _ops.max(input, dim, keepdim)


def min(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    if isinstance(dim, Tensor):
        return _ops.minimum(input, dim)
    return _ops.min(input) if dim is None else _ops.min(input, dim, keepdim)


Tensor.std = std
Tensor.var = var
Tensor.max = max
Tensor.min = min
Tensor.numpy = lambda self, force=False: __import__(
    "kiln._numpy_interop", fromlist=["_"]).tensor_to_numpy(self, force)
