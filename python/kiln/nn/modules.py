"""kiln.nn.Module and the layers.

kiln.nn.Module is the native class kiln._C.nn.Module (kiln::nn::Module); this file attaches the
rest of torch.nn.Module's Python protocol to it. One class serves Python subclasses and the C++
layers alike, so `isinstance(kiln.nn.Linear(2, 3), kiln.nn.Module)` holds as in PyTorch.

    class Net(kiln.nn.Module):
        def __init__(self):
            super().__init__()               # the C++ module, named after the class ("Net")
            self.fc = kiln.nn.Linear(4, 2)   # registered as a submodule
            self.scale = kiln.nn.Parameter(kiln.ones(2))

        def forward(self, x):                # also what C++ callers (Sequential, compile) run
            return self.fc(x) * self.scale

Parameters, buffers and submodules live in the C++ registries (so C++ code, state dicts and
kiln.compile see them, in PyTorch's order); attribute access falls back to those registries.
"""
import collections
import collections.abc

from .. import _C
from .._C import Tensor
from .._tensor import parse_to_args
from .parameter import Parameter

Module = _C.nn.Module


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys",
                                               ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _typename(value):
    return type(value).__name__


def _refs(module):
    """Python objects registered from Python, kept with the module so that their identity and
    Python attributes survive while it lives."""
    return module.__dict__.setdefault("_kiln_refs", {})


def _native_setter(cls, name):
    """The setter of a C++ layer's property `name` (its member and registry entry), if any."""
    for klass in cls.__mro__:
        attr = klass.__dict__.get(name)
        if attr is not None:
            return attr.fset if isinstance(attr, property) else None
    return None


def _entry_kind(module, name):
    return Module._entry_kind(module, name) if Module._initialized(module) else None


def _check_initialized(module, what):
    if not Module._initialized(module):
        raise AttributeError(f"cannot assign {what} before Module.__init__() call")


def _join(prefix, name):
    return prefix + "." + name if prefix else name


# ---- attributes ----

def _module__setattr__(self, name, value):
    if isinstance(value, Parameter):
        self.__dict__.pop(name, None)
        self.register_parameter(name, value)
        return
    if isinstance(value, Module):
        self.__dict__.pop(name, None)
        self.add_module(name, value)
        return
    kind = _entry_kind(self, name)
    if kind == "parameter":
        if value is not None:
            raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                            "(kiln.nn.Parameter or None expected)")
        self.register_parameter(name, None)
    elif kind == "module":
        raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(kiln.nn.Module expected)")
    elif kind == "buffer":
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(kiln.Tensor or None expected)")
        # Keeps the buffer's persistence (known from state_dict while it holds a tensor).
        current = Module._lookup(self, name)[1]
        persistent = current is None or name in dict(self._state_dict())
        self.register_buffer(name, value, persistent=persistent)
    else:
        object.__setattr__(self, name, value)


def _module__getattr__(self, name):
    # Only reached when normal lookup fails: the registries.
    kind, value = Module._lookup(self, name) if Module._initialized(self) else (None, None)
    if kind is None:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
    if kind == "buffer" and value is not None:
        ref = self.__dict__.get("_kiln_refs", {}).get(name)
        if ref is not None and _C.nn._tensor_key(ref) == _C.nn._tensor_key(value):
            return ref
    return value


def _module__delattr__(self, name):
    kind = _entry_kind(self, name)
    if kind is not None:
        raise AttributeError(f"{type(self).__name__}: cannot delete the {kind} '{name}' (kiln "
                             "modules can't unregister entries; assign None to a parameter or "
                             "buffer instead)")
    object.__delattr__(self, name)


def _module__dir__(self):
    names = set(object.__dir__(self))
    for kind in ("parameter", "buffer", "module"):
        names.update(name for name, _ in self._own_entries(kind))
    return sorted(names)


def _module__call__(self, *args, **kwargs):
    return self.forward(*args, **kwargs)


# ---- registration ----

def register_parameter(self, name, param):
    """Adds (or replaces) the parameter `name`; param is a kiln.nn.Parameter or None."""
    _check_initialized(self, "parameters")
    if not isinstance(name, str):
        raise TypeError(f"parameter name should be a string, got {_typename(name)}")
    if param is not None and not isinstance(param, Parameter):
        raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                        "(kiln.nn.Parameter or None required)")
    if name in self.__dict__:
        raise KeyError(f"attribute '{name}' already exists")
    setter = _native_setter(type(self), name)
    if setter is not None:
        setter(self, param)
    else:
        self._register_parameter(name, param)
    _refs(self)[name] = param


def register_buffer(self, name, tensor, persistent=True):
    """Adds (or replaces) the buffer `name`: module state that is not trained; non-persistent
    buffers stay out of state_dict()."""
    _check_initialized(self, "buffers")
    if not isinstance(name, str):
        raise TypeError(f"buffer name should be a string, got {_typename(name)}")
    if tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                        "(kiln.Tensor or None required)")
    if name in self.__dict__:
        raise KeyError(f"attribute '{name}' already exists")
    setter = _native_setter(type(self), name)
    if setter is not None:
        setter(self, tensor)
    else:
        self._register_buffer(name, tensor, persistent)
    _refs(self)[name] = tensor


def add_module(self, name, module):
    """Adds (or replaces) the submodule `name`."""
    _check_initialized(self, "module")
    if not isinstance(name, str):
        raise TypeError(f"module name should be a string, got {_typename(name)}")
    if not isinstance(module, Module):
        raise TypeError(f"{_typename(module)} is not a Module subclass")
    if name in self.__dict__:
        raise KeyError(f"attribute '{name}' already exists")
    setter = _native_setter(type(self), name)
    if setter is not None:
        setter(self, module)
    else:
        self._register_module(name, module)


def get_submodule(self, target):
    module = self
    for part in target.split(".") if target else []:
        kind, child = Module._lookup(module, part)
        if kind != "module":
            raise AttributeError(f"{module._get_name()} has no attribute `{part}`")
        module = child
    return module


def _get_tensor(self, target, kind):
    module_path, _, name = target.rpartition(".")
    module = self.get_submodule(module_path)
    found, value = Module._lookup(module, name)
    if found != kind:
        raise AttributeError(f"`{name}` is not a {kind} of {module._get_name()}")
    return value


def get_parameter(self, target):
    return _get_tensor(self, target, "parameter")


def get_buffer(self, target):
    return _get_tensor(self, target, "buffer")


# ---- traversal ----

def _walk(module, kind, prefix, recurse):
    modules = module.named_modules(prefix=prefix, remove_duplicate=False) if recurse \
        else [(prefix, module)]
    for module_prefix, m in modules:
        for name, value in m._own_entries(kind):
            if value is not None:
                yield _join(module_prefix, name), value


def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
    if remove_duplicate:
        return iter(self._named_parameters(prefix, recurse))
    return _walk(self, "parameter", prefix, recurse)


def parameters(self, recurse=True):
    for _, p in self.named_parameters(recurse=recurse):
        yield p


def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
    if remove_duplicate:
        return iter(self._named_buffers(prefix, recurse))
    return _walk(self, "buffer", prefix, recurse)


def buffers(self, recurse=True):
    for _, b in self.named_buffers(recurse=recurse):
        yield b


def named_children(self):
    seen = set()
    for name, m in self._own_entries("module"):
        if m is not None and m._module_key() not in seen:
            seen.add(m._module_key())
            yield name, m


def children(self):
    for _, m in self.named_children():
        yield m


def named_modules(self, memo=None, prefix="", remove_duplicate=True):
    if memo is None:
        memo = set()
    key = self._module_key()
    if key in memo:
        return
    if remove_duplicate:
        memo.add(key)
    yield prefix, self
    for name, m in self._own_entries("module"):
        if m is not None:
            yield from m.named_modules(memo, _join(prefix, name), remove_duplicate)


def modules(self):
    for _, m in self.named_modules():
        yield m


def apply(self, fn):
    for m in self.children():
        m.apply(fn)
    fn(self)
    return self


# ---- modes, dtypes ----

def eval(self):  # noqa: A001
    return self.train(False)


def requires_grad_(self, requires_grad=True):
    for p in self.parameters():
        p.requires_grad_(requires_grad)
    return self


def to(self, *args, **kwargs):
    """to(dtype), to(device), to(tensor), to(device, dtype): floating-point parameters and
    buffers are converted in place (optimizers holding them keep working)."""
    dtype, device, _ = parse_to_args(args, kwargs)
    if device is not None and device.type != "cpu":
        raise NotImplementedError(f"{self._get_name()}.to: kiln's Python modules live on the "
                                  f"CPU, got device {device}")
    if dtype is not None:
        if not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point dtypes, but got desired "
                            f"dtype={dtype}")
        self._to_dtype(dtype)
    return self


def _dtype_method(dtype_name):
    def convert(self):
        return self.to(getattr(_C, dtype_name))
    convert.__name__ = {"float32": "float", "float64": "double", "float16": "half"}.get(
        dtype_name, dtype_name)
    return convert


def cpu(self):
    return self


def _get_name(self):
    return type(self).__name__


# ---- state ----

def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
    """Parameters and persistent buffers under dotted names, in PyTorch's order; detached
    (sharing storage) unless keep_vars."""
    if args:
        raise TypeError("state_dict() takes its arguments by keyword (destination, prefix, "
                        "keep_vars)")
    if destination is None:
        destination = collections.OrderedDict()
    items = self._state_dict()
    if keep_vars:
        live = dict(self.named_parameters(remove_duplicate=False))
        live.update(self.named_buffers(remove_duplicate=False))
        items = [(name, live.get(name, value)) for name, value in items]
    for name, value in items:
        destination[prefix + name] = value
    return destination


def load_state_dict(self, state_dict, strict=True, assign=False):
    """Copies the dict's tensors into the registered ones (in place, converting dtypes); a shape
    mismatch always raises, missing or unexpected keys only when strict."""
    if assign:
        raise NotImplementedError("load_state_dict(assign=True) is not supported: kiln copies "
                                  "values into the registered tensors")
    if not isinstance(state_dict, collections.abc.Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing, unexpected = self._load_state_dict(list(state_dict.items()), strict)
    return _IncompatibleKeys(missing, unexpected)


def _entries_property(kind):
    return property(lambda self: collections.OrderedDict(self._own_entries(kind)),
                    doc=f"The own {kind}s by name (a snapshot, as PyTorch's _{kind}s dict)")


# Python's protocol methods are defined under other names here, because a module-level
# __getattr__ or __dir__ would become this file's own (PEP 562).
for _name in ("__setattr__", "__getattr__", "__delattr__", "__dir__", "__call__"):
    setattr(Module, _name, globals()["_module" + _name])
for _fn in (register_parameter,
            register_buffer, add_module, get_submodule, get_parameter, get_buffer,
            named_parameters, parameters, named_buffers, buffers, named_children, children,
            named_modules, modules, apply, eval, requires_grad_, to, cpu, _get_name, state_dict,
            load_state_dict):
    setattr(Module, _fn.__name__, _fn)
for _dtype_name in ("float32", "float64", "float16", "bfloat16"):
    _fn = _dtype_method(_dtype_name)
    setattr(Module, _fn.__name__, _fn)
Module.register_module = add_module
Module._parameters = _entries_property("parameter")
Module._buffers = _entries_property("buffer")
Module._modules = _entries_property("module")
Module.dump_patches = False
del _name, _fn, _dtype_name

# ---- the C++ layers ----

Identity = _C.nn.Identity
Linear = _C.nn.Linear
Bilinear = _C.nn.Bilinear
Conv1d = _C.nn.Conv1d
Conv2d = _C.nn.Conv2d
ConvTranspose1d = _C.nn.ConvTranspose1d
ConvTranspose2d = _C.nn.ConvTranspose2d
BatchNorm1d = _C.nn.BatchNorm1d
BatchNorm2d = _C.nn.BatchNorm2d
LayerNorm = _C.nn.LayerNorm
GroupNorm = _C.nn.GroupNorm
RMSNorm = _C.nn.RMSNorm
Embedding = _C.nn.Embedding
Dropout = _C.nn.Dropout
Dropout2d = _C.nn.Dropout2d
ReLU = _C.nn.ReLU
ReLU6 = _C.nn.ReLU6
Hardtanh = _C.nn.Hardtanh
LeakyReLU = _C.nn.LeakyReLU
ELU = _C.nn.ELU
GELU = _C.nn.GELU
SiLU = _C.nn.SiLU
Mish = _C.nn.Mish
Hardswish = _C.nn.Hardswish
Hardsigmoid = _C.nn.Hardsigmoid
Tanh = _C.nn.Tanh
Sigmoid = _C.nn.Sigmoid
Softplus = _C.nn.Softplus
Softmax = _C.nn.Softmax
LogSoftmax = _C.nn.LogSoftmax
Flatten = _C.nn.Flatten
Unflatten = _C.nn.Unflatten
MaxPool2d = _C.nn.MaxPool2d
MaxPool2d.return_indices = False  # the default for instances built in C++ (ResNet's maxpool)
AvgPool2d = _C.nn.AvgPool2d
AdaptiveAvgPool2d = _C.nn.AdaptiveAvgPool2d
AdaptiveMaxPool2d = _C.nn.AdaptiveMaxPool2d
Sequential = _C.nn.Sequential
ModuleList = _C.nn.ModuleList
ModuleDict = _C.nn.ModuleDict
MultiheadAttention = _C.nn.MultiheadAttention
TransformerEncoderLayer = _C.nn.TransformerEncoderLayer
LSTM = _C.nn.LSTM
CrossEntropyLoss = _C.nn.CrossEntropyLoss
NLLLoss = _C.nn.NLLLoss
MSELoss = _C.nn.MSELoss
L1Loss = _C.nn.L1Loss
SmoothL1Loss = _C.nn.SmoothL1Loss
HuberLoss = _C.nn.HuberLoss
BCELoss = _C.nn.BCELoss
BCEWithLogitsLoss = _C.nn.BCEWithLogitsLoss
KLDivLoss = _C.nn.KLDivLoss


class TransformerEncoder(Module):
    """A stack of num_layers copies of encoder_layer (a TransformerEncoderLayer; each copy starts
    with its weights, as PyTorch's deep copies do), then an optional norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            raise TypeError("TransformerEncoder: encoder_layer must be a "
                            f"kiln.nn.TransformerEncoderLayer, got {_typename(encoder_layer)}")
        self.layers = ModuleList([_copy_encoder_layer(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        if norm is not None:
            self.norm = norm
        else:
            self.__dict__["norm"] = None

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=bool(is_causal))
        if self.norm is not None:
            output = self.norm(output)
        return output


def _copy_encoder_layer(layer):
    attn = layer.self_attn
    copy = TransformerEncoderLayer(
        attn.embed_dim, attn.num_heads, dim_feedforward=layer.linear1.out_features,
        dropout=layer.dropout.p, activation=layer.activation, layer_norm_eps=layer.norm1.eps,
        batch_first=attn.batch_first, norm_first=layer.norm_first,
        bias=layer.linear1.bias is not None)
    copy.to(attn.in_proj_weight.dtype)
    copy.load_state_dict(layer.state_dict())
    copy.train(layer.training)
    return copy


__all__ = [name for name, value in globals().items()
           if isinstance(value, type) and issubclass(value, Module) and not name.startswith("_")]
