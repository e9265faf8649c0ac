"""numpy functions and ufuncs written in kiln ops, on kiln tensors, with numpy's argument names
(axis, keepdims, ddof) and defaults. Used by the numpy protocols of kiln.Tensor and by compiled
numpy code (kiln._numpy_compat). A function missing here is not an error: the caller falls back
to numpy itself (a graph break when compiled)."""
import math

import numpy as np

from . import _C

Tensor = _C.Tensor
_ops = _C._ops


def _t(x):
    """A tensor for a tensor, number or array-like argument."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, _C.SymInt):
        x = int(x)  # a traced size as a number: specialized
    if isinstance(x, (bool, int, float)) or np.isscalar(x):
        return _C._wrapped_scalar(x.item() if hasattr(x, "item") else x)
    return _C.tensor(np.asarray(x))


def _dims(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return [a + ndim if a < 0 else a for a in axis]
    return [axis + ndim if axis < 0 else axis]


def _float(t):
    return t if t.is_floating_point() else t.to(_C.float32)


# kiln's dtypes and numpy's, both ways (numpy has no bfloat16).
NUMPY_DTYPES = {
    _C.bool: np.dtype("bool"), _C.uint8: np.dtype("uint8"), _C.int8: np.dtype("int8"),
    _C.int16: np.dtype("int16"), _C.int32: np.dtype("int32"), _C.int64: np.dtype("int64"),
    _C.float16: np.dtype("float16"), _C.float32: np.dtype("float32"),
    _C.float64: np.dtype("float64"),
}
KILN_DTYPES = {v: k for k, v in NUMPY_DTYPES.items()}


def _kiln_dtype(dtype):
    return None if dtype is None else KILN_DTYPES[np.dtype(dtype)]


def _reduction(op, promote_float=False):
    def impl(a, axis=None, dtype=None, out=None, keepdims=False, **unused):
        a = _t(a)
        if promote_float:
            a = _float(a)
        if dtype is not None:
            a = a.to(_kiln_dtype(dtype))
        return op(a, _dims(axis, a.ndim), keepdims)

    return impl


def _sum(a, dims, keepdims):
    return _ops.sum(a, dims, keepdims)


def _mean(a, dims, keepdims):
    return _ops.mean(a, dims, keepdims)


def _amax(a, dims, keepdims):
    return _ops.amax(a, dims if dims is not None else list(range(a.ndim)), keepdims)


def _amin(a, dims, keepdims):
    return _ops.amin(a, dims if dims is not None else list(range(a.ndim)), keepdims)


def _over_dims(op):
    """A reduction the registry takes one dim at a time (prod, all, any): dims in turn."""
    def impl(a, dims, keepdims):
        if dims is None:
            r = op(a.reshape([-1]), 0, False)
            return r.reshape([1] * a.ndim) if keepdims else r
        for d in sorted(dims, reverse=True):
            a = op(a, d, keepdims)
        return a

    return impl


def _std_var(op):
    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **unused):
        a = _float(_t(a))
        return op(a, _dims(axis, a.ndim), correction=ddof, keepdim=keepdims)

    return impl


def _arg(op):
    def impl(a, axis=None, out=None, keepdims=False):
        a = _t(a)
        if axis is None:
            return op(a.reshape([-1]), 0, False)
        return op(a, axis, keepdims)

    return impl


def _cumulative(op):
    def impl(a, axis=None, dtype=None, out=None):
        a = _t(a)
        if axis is None:
            a, axis = a.reshape([-1]), 0
        return op(a, axis, dtype=_kiln_dtype(dtype))

    return impl


def _concatenate(arrays, axis=0, out=None, **unused):
    ts = [_t(a) for a in arrays]
    if axis is None:
        return _ops.cat([t.reshape([-1]) for t in ts], 0)
    return _ops.cat(ts, axis)


def _reshape(a, newshape=None, order="C", shape=None):
    newshape = shape if newshape is None else newshape
    if isinstance(newshape, int):
        newshape = [newshape]
    a = _t(a)
    if order == "A":  # Fortran order for an array laid out column-major, else C order
        order = "F" if a.ndim > 1 and not a.is_contiguous() and _transpose(a).is_contiguous() \
            else "C"
    if order == "F":  # column-major: reshape the reversed dims, and reverse them back
        return _transpose(_transpose(a).reshape(list(newshape)[::-1]))
    if order != "C":
        raise ValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")
    return a.reshape(list(newshape))


def _transpose(a, axes=None):
    a = _t(a)
    return a.permute(list(axes) if axes is not None else list(range(a.ndim - 1, -1, -1)))


def _expand_dims(a, axis):
    a = _t(a)
    axes = axis if isinstance(axis, (tuple, list)) else [axis]
    nd = a.ndim + len(axes)
    for ax in sorted(x + nd if x < 0 else x for x in axes):
        a = a.unsqueeze(ax)
    return a


def _squeeze(a, axis=None):
    a = _t(a)
    if axis is None:
        return _ops.squeeze(a)
    return _ops.squeeze(a, list(axis) if isinstance(axis, (tuple, list)) else [axis])


def _where(condition, x=None, y=None):
    if x is None and y is None:
        return tuple(_t(condition).nonzero().unbind(1))
    return _ops.where(_t(condition).to(_C.bool), _t(x), _t(y))


def _clip(a, a_min=None, a_max=None, out=None, **kwargs):
    a_min = kwargs.get("min", a_min)
    a_max = kwargs.get("max", a_max)
    a = _t(a)
    if isinstance(a_min, Tensor) or isinstance(a_max, Tensor):
        return _ops.clamp(a, None if a_min is None else _t(a_min),
                          None if a_max is None else _t(a_max))
    return _ops.clamp(a, a_min, a_max)


def _dot(a, b, out=None):
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim == 1 and b.ndim == 1:
        return _ops.dot(a, b)
    return _ops.matmul(a, b)


def _norm(x, ord=None, axis=None, keepdims=False):
    x = _float(_t(x))
    if ord not in (None, 2, "fro") and not isinstance(ord, (int, float)):
        return NotImplemented
    if ord == "fro":
        ord = 2
    return _ops.linalg_vector_norm(x, 2 if ord is None else ord, _dims(axis, x.ndim), keepdims)


def _like(op):
    def impl(a, dtype=None, order="K", subok=True, shape=None, **unused):
        a = _t(a)
        return op(a, dtype=_kiln_dtype(dtype))

    return impl


def _full_like(a, fill_value, dtype=None, **unused):
    return _ops.full_like(_t(a), fill_value, dtype=_kiln_dtype(dtype))


def _flip(m, axis=None):
    m = _t(m)
    return _ops.flip(m, _dims(axis, m.ndim) if axis is not None else list(range(m.ndim)))


def _roll(a, shift, axis=None):
    a = _t(a)
    if axis is None:
        return _ops.roll(a.reshape([-1]), [shift], [0]).reshape(list(a.shape))
    shifts = list(shift) if isinstance(shift, (tuple, list)) else [shift]
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    return _ops.roll(a, shifts, axes)


def _sort(a, axis=-1, kind=None, order=None, stable=None):
    a = _t(a)
    if axis is None:
        a, axis = a.reshape([-1]), 0
    return _ops.sort(a, axis).values


def _argsort(a, axis=-1, kind=None, order=None, stable=None):
    a = _t(a)
    if axis is None:
        a, axis = a.reshape([-1]), 0
    return _ops.argsort(a, axis)


def _round(a, decimals=0, out=None):
    a = _t(a)
    return _ops.round(a) if decimals == 0 else _ops.round(a, decimals=decimals)


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _float(_t(a)), _float(_t(b))
    close = (a - b).abs() <= atol + rtol * b.abs()
    if equal_nan:
        close = close | (a.isnan() & b.isnan())
    return close


FUNCTIONS = {
    np.sum: _reduction(_sum),
    np.mean: _reduction(_mean, promote_float=True),
    np.max: _reduction(_amax),
    np.amax: _reduction(_amax),
    np.min: _reduction(_amin),
    np.amin: _reduction(_amin),
    np.prod: _reduction(_over_dims(lambda a, d, k: _ops.prod(a, d, k))),
    np.all: _reduction(_over_dims(lambda a, d, k: _ops.all(a, d, k))),
    np.any: _reduction(_over_dims(lambda a, d, k: _ops.any(a, d, k))),
    np.std: _std_var(_ops.std),
    np.var: _std_var(_ops.var),
    np.argmax: _arg(_ops.argmax),
    np.argmin: _arg(_ops.argmin),
    np.cumsum: _cumulative(_ops.cumsum),
    np.cumprod: _cumulative(_ops.cumprod),
    np.concatenate: _concatenate,
    np.stack: lambda arrays, axis=0, out=None, **u: _ops.stack([_t(a) for a in arrays], axis),
    np.vstack: lambda tup, **u: _ops.cat([_t(a) if _t(a).ndim > 1 else _t(a).unsqueeze(0)
                                          for a in tup], 0),
    np.hstack: lambda tup, **u: _ops.cat([_t(a) for a in tup], 0 if _t(tup[0]).ndim == 1 else 1),
    np.reshape: _reshape,
    np.ravel: lambda a, order="C": _t(a).reshape([-1]),
    np.transpose: _transpose,
    np.swapaxes: lambda a, axis1, axis2: _t(a).transpose(axis1, axis2),
    np.moveaxis: lambda a, source, destination: _t(a).movedim(source, destination),
    np.expand_dims: _expand_dims,
    np.squeeze: _squeeze,
    np.where: _where,
    np.clip: _clip,
    np.dot: _dot,
    np.outer: lambda a, b, out=None: _ops.outer(_t(a).reshape([-1]), _t(b).reshape([-1])),
    np.einsum: lambda subscripts, *operands, **u: _ops.einsum(subscripts,
                                                             [_t(o) for o in operands]),
    np.zeros_like: _like(_ops.zeros_like),
    np.ones_like: _like(_ops.ones_like),
    np.empty_like: _like(_ops.empty_like),
    np.full_like: _full_like,
    np.copy: lambda a, order="K", subok=False: _t(a).clone(),
    np.flip: _flip,
    np.roll: _roll,
    np.tile: lambda A, reps: _ops.tile(_t(A), list(reps) if isinstance(reps, (tuple, list))
                                       else [reps]),
    np.sort: _sort,
    np.argsort: _argsort,
    np.round: _round,
    np.around: _round,
    np.broadcast_to: lambda array, shape, subok=False: _t(array).broadcast_to(
        list(shape) if isinstance(shape, (tuple, list)) else [shape]),
    np.tril: lambda m, k=0: _ops.tril(_t(m), k),
    np.triu: lambda m, k=0: _ops.triu(_t(m), k),
    np.isclose: _isclose,
    np.linalg.norm: _norm,
    np.shape: lambda a: tuple(_t(a).shape),
    np.ndim: lambda a: _t(a).ndim,
    np.size: lambda a, axis=None: _t(a).numel() if axis is None else _t(a).shape[axis],
}


def function_impl(func):
    return FUNCTIONS.get(func)


def _unary(op):
    return lambda x, **kwargs: op(_t(x))


def _binary(op):
    return lambda x, y, **kwargs: op(_t(x), _t(y))


def _divide(x, y, **kwargs):
    x, y = _t(x), _t(y)
    return _ops.div(x, y)


UFUNCS = {
    np.add: _binary(_ops.add),
    np.subtract: _binary(_ops.sub),
    np.multiply: _binary(_ops.mul),
    np.divide: _divide,
    np.true_divide: _divide,
    np.floor_divide: _binary(_ops.floor_divide),
    np.remainder: _binary(_ops.remainder),
    np.fmod: _binary(_ops.fmod),
    np.power: _binary(_ops.pow),
    np.arctan2: _binary(_ops.atan2),
    np.maximum: _binary(_ops.maximum),
    np.minimum: _binary(_ops.minimum),
    np.fmax: _binary(_ops.maximum),
    np.fmin: _binary(_ops.minimum),
    np.equal: _binary(_ops.eq),
    np.not_equal: _binary(_ops.ne),
    np.less: _binary(_ops.lt),
    np.less_equal: _binary(_ops.le),
    np.greater: _binary(_ops.gt),
    np.greater_equal: _binary(_ops.ge),
    np.logical_and: _binary(_ops.logical_and),
    np.logical_or: _binary(_ops.logical_or),
    np.logical_xor: _binary(_ops.logical_xor),
    np.bitwise_and: _binary(_ops.bitwise_and),
    np.bitwise_or: _binary(_ops.bitwise_or),
    np.bitwise_xor: _binary(_ops.bitwise_xor),
    np.left_shift: _binary(_ops.bitwise_left_shift),
    np.right_shift: _binary(_ops.bitwise_right_shift),
    np.matmul: _binary(_ops.matmul),
    np.hypot: lambda x, y, **k: (_t(x) * _t(x) + _t(y) * _t(y)).sqrt(),
    np.logaddexp: lambda x, y, **k: _ops.logsumexp(_ops.stack(_ops.broadcast_tensors(
        [_float(_t(x)), _float(_t(y))]), 0), [0]),
    np.negative: _unary(_ops.neg),
    np.positive: _unary(lambda t: t),
    np.absolute: _unary(_ops.abs),
    np.fabs: _unary(_ops.abs),
    np.sign: _unary(_ops.sign),
    np.sqrt: _unary(_ops.sqrt),
    np.square: _unary(_ops.square),
    np.reciprocal: _unary(_ops.reciprocal),
    np.exp: _unary(_ops.exp),
    np.exp2: _unary(_ops.exp2),
    np.expm1: _unary(_ops.expm1),
    np.log: _unary(_ops.log),
    np.log2: _unary(_ops.log2),
    np.log10: _unary(_ops.log10),
    np.log1p: _unary(_ops.log1p),
    np.sin: _unary(_ops.sin),
    np.cos: _unary(_ops.cos),
    np.tan: _unary(_ops.tan),
    np.arcsin: _unary(_ops.asin),
    np.arccos: _unary(_ops.acos),
    np.arctan: _unary(_ops.atan),
    np.sinh: _unary(_ops.sinh),
    np.cosh: _unary(_ops.cosh),
    np.tanh: _unary(_ops.tanh),
    np.arcsinh: _unary(_ops.asinh),
    np.arccosh: _unary(_ops.acosh),
    np.arctanh: _unary(_ops.atanh),
    np.floor: _unary(_ops.floor),
    np.ceil: _unary(_ops.ceil),
    np.trunc: _unary(_ops.trunc),
    np.rint: _unary(_ops.round),
    np.logical_not: _unary(_ops.logical_not),
    np.invert: _unary(_ops.bitwise_not),
    np.isnan: _unary(_ops.isnan),
    np.isinf: _unary(_ops.isinf),
    np.isfinite: _unary(_ops.isfinite),
    np.deg2rad: _unary(lambda t: _float(t) * (math.pi / 180)),
    np.rad2deg: _unary(lambda t: _float(t) * (180 / math.pi)),
}

REDUCERS = {
    np.add: _reduction(_sum),
    np.multiply: _reduction(_over_dims(lambda a, d, k: _ops.prod(a, d, k))),
    np.maximum: _reduction(_amax),
    np.minimum: _reduction(_amin),
    np.logical_and: _reduction(_over_dims(lambda a, d, k: _ops.all(a, d, k))),
    np.logical_or: _reduction(_over_dims(lambda a, d, k: _ops.any(a, d, k))),
}


def ufunc_impl(ufunc, method):
    if method == "__call__":
        return UFUNCS.get(ufunc)
    if method == "reduce" and ufunc in REDUCERS:
        reducer = REDUCERS[ufunc]
        return lambda a, axis=0, dtype=None, out=None, keepdims=False, **u: reducer(
            a, axis=axis, dtype=dtype, keepdims=keepdims)
    return None
