"""kiln.compile for Python functions and modules, over the C++ capture core.

Arguments and results are flattened into leaves (tensors and constants, with type tags so that a
container's shape is a leaf too, and guarded with the rest). A function called with numpy arrays
traces with numpy-array stand-ins (kiln._numpy_compat.ndarray) and returns numpy arrays."""
import functools

import numpy as np

from . import _C
from . import _numpy_compat
from ._numpy_interop import from_array, tensor_to_numpy

Tensor = _C.Tensor


class _Flattener:
    """Encodes Python values as leaves; objects of other types are guarded by identity (and kept
    alive, so that their identity is not reused)."""

    def __init__(self):
        self.objects = {}

    def flatten(self, obj, leaves, state):
        t = type(obj)
        if t is Tensor or isinstance(obj, Tensor):
            leaves += ("T", obj)
        elif t is bool:
            leaves += ("b", obj)
        elif t is int:
            leaves += ("i", obj)
        elif t is float:
            leaves += ("f", obj)
        elif t is str:
            leaves += ("s", obj)
        elif t is _C.SymInt:  # a traced size returned or passed on: its value, under a guard
            leaves += ("i", int(obj))
        elif obj is None:
            leaves.append("n")
        elif t is tuple or t is list:
            leaves += ("t" if t is tuple else "l", len(obj))
            for e in obj:
                self.flatten(e, leaves, state)
        elif t is dict:
            leaves += ("d", len(obj))
            for k, v in obj.items():
                self.flatten(k, leaves, state)
                self.flatten(v, leaves, state)
        elif t is np.ndarray:
            state["numpy"] = True
            leaves += ("A", from_array(obj))
        elif t is _numpy_compat.ndarray:
            leaves += ("A", obj.tensor)
        elif isinstance(obj, np.generic):
            state["numpy"] = True
            leaves += ("g", obj.dtype.str, obj.item())
        else:
            self.objects[id(obj)] = obj
            leaves += ("o", id(obj))

    def unflatten(self, leaves, pos, numpy_out, tracing):
        tag = leaves[pos]
        pos += 1
        if tag in ("T", "b", "i", "f", "s"):
            return leaves[pos], pos + 1
        if tag == "n":
            return None, pos
        if tag in ("t", "l"):
            n = leaves[pos]
            pos += 1
            items = []
            for _ in range(n):
                item, pos = self.unflatten(leaves, pos, numpy_out, tracing)
                items.append(item)
            return (tuple(items) if tag == "t" else items), pos
        if tag == "d":
            n = leaves[pos]
            pos += 1
            d = {}
            for _ in range(n):
                k, pos = self.unflatten(leaves, pos, numpy_out, tracing)
                v, pos = self.unflatten(leaves, pos, numpy_out, tracing)
                d[k] = v
            return d, pos
        if tag == "A":
            t = leaves[pos]
            if tracing:
                return _numpy_compat.ndarray(t), pos + 1
            return tensor_to_numpy(t, force=True), pos + 1
        if tag == "g":
            return np.dtype(leaves[pos]).type(leaves[pos + 1]), pos + 2
        if tag == "o":
            return self.objects[leaves[pos]], pos + 1
        raise AssertionError(f"kiln.compile: unknown leaf tag {tag!r}")


def _result_leaves(flattener, result):
    leaves = []
    flattener.flatten(result, leaves, {})
    return leaves


class CompiledFunction:
    """What kiln.compile(fn) returns: call it as fn."""

    def __init__(self, fn, module, mode, fullgraph, dynamic, backend, options, disable):
        self._fn = fn
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self._core = _C._CompiledFunctionCore(
            name, module, mode or "default", fullgraph, dynamic, backend, options or {}, disable)
        self._flattener = _Flattener()
        functools.update_wrapper(self, fn, updated=())

    def _leaves(self, args, kwargs):
        leaves = []
        state = {}
        self._flattener.flatten(args, leaves, state)
        self._flattener.flatten(kwargs, leaves, state)
        return leaves, state.get("numpy", False)

    def _run(self, numpy_mode):
        flattener = self._flattener
        fn = self._fn

        def run(leaves):
            args, pos = flattener.unflatten(leaves, 0, numpy_mode, True)
            kwargs, _ = flattener.unflatten(leaves, pos, numpy_mode, True)
            return _result_leaves(flattener, fn(*args, **kwargs))

        return run

    def __call__(self, *args, **kwargs):
        leaves, numpy_mode = self._leaves(args, kwargs)
        out = self._core.call(leaves, self._run(numpy_mode))
        result, _ = self._flattener.unflatten(out, 0, numpy_mode, False)
        return result

    def explain(self, *args, **kwargs):
        leaves, numpy_mode = self._leaves(args, kwargs)
        return self._core.explain(leaves, self._run(numpy_mode))

    @property
    def cache_entries(self):
        return self._core.cache_entries


def _optimized_module_class():
    """OptimizedModule, made on first use (kiln.nn imports after this file)."""
    global _OptimizedModule
    if _OptimizedModule is not None:
        return _OptimizedModule
    from .nn import Module

    class OptimizedModule(Module):
        """What kiln.compile(module) returns, as torch.compile's: a Module whose submodule
        `_orig_mod` is the original (so parameters(), state_dict() and optimizers see the same
        tensors, under "_orig_mod." names); calls run the compiled forward, and other attributes
        are the original's."""

        def __init__(self, module, compiled):
            super().__init__()
            self._orig_mod = module
            self.__dict__["_compiled"] = compiled

        def forward(self, *args, **kwargs):
            return self.__dict__["_compiled"](*args, **kwargs)

        def explain(self, *args, **kwargs):
            return self.__dict__["_compiled"].explain(*args, **kwargs)

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self._orig_mod, name)

    _OptimizedModule = OptimizedModule
    return OptimizedModule


_OptimizedModule = None


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """kiln.compile(fn or module, ...), or @kiln.compile(...) as a decorator: as torch.compile."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if not callable(model):
        raise TypeError(f"kiln.compile: expected a function or a module, got "
                        f"{type(model).__name__}")
    from .nn import Module
    if isinstance(model, Module):
        forward = CompiledFunction(model, model, mode, fullgraph, dynamic, backend, options,
                                   disable)
        return _optimized_module_class()(model, forward)
    return CompiledFunction(model, None, mode, fullgraph, dynamic, backend, options, disable)


def explain(fn, *args, **kwargs):
    """What compiling fn would do for these arguments: graphs, graph breaks with their reasons
    and Python lines, ops per graph, guards."""
    return compile(fn, backend="eager").explain(*args, **kwargs)


def register_backend(compiler_fn=None, name=None):
    """Registers compiler_fn(gm, example_inputs) -> callable under name (default: its __name__);
    usable as a decorator."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name)
    _C._register_backend(name or compiler_fn.__name__, compiler_fn)
    return compiler_fn


list_backends = _C.list_backends
reset = _C.reset
graph_break = _C.graph_break
mark_dynamic = _C.mark_dynamic
mark_static = _C.mark_static
