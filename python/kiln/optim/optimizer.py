"""The optimizer base, as torch.optim.Optimizer: parameters in groups (dicts of "params" and
options), per-parameter state, state_dict / load_state_dict.

kiln's own optimizers (SGD, Adam, ...) run their step in C++ (kiln::optim); their param_groups
are live views of the C++ groups, so `group["lr"] = 0.01` changes the rate the next step uses.
A Python subclass of Optimizer that implements step() works as in PyTorch.
"""
import collections
import collections.abc

from .._C import Tensor
from .._grad_mode import enable_grad


def _param_groups(params):
    """The constructor's params as a list of group dicts: an iterable of tensors, of
    (name, tensor) pairs, or of dicts with "params"."""
    if isinstance(params, Tensor):
        raise TypeError("params argument given to the optimizer should be an iterable of "
                        f"Tensors or dicts, but got {type(params).__name__}")
    items = list(params)
    if not items:
        raise ValueError("optimizer got an empty parameter list")
    if not isinstance(items[0], dict):
        items = [{"params": items}]
    groups = []
    for item in items:
        group = dict(item)
        ps = group["params"]
        ps = [ps] if isinstance(ps, Tensor) else list(ps)
        if ps and isinstance(ps[0], tuple):  # named parameters, as torch >= 2.6 accepts
            group["param_names"] = [name for name, _ in ps]
            ps = [p for _, p in ps]
        for p in ps:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
        group["params"] = ps
        groups.append(group)
    return groups


class Optimizer:
    """Base class of optimizers. Subclasses implement step(); self.param_groups is a list of
    dicts and self.state a dict from parameter to its state dict."""

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        for group in _param_groups(params):
            self.add_param_group(group)

    def add_param_group(self, param_group):
        group = dict(param_group)
        ps = group["params"]
        group["params"] = [ps] if isinstance(ps, Tensor) else list(ps)
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = p.grad.detach().zero_()

    def step(self, closure=None):
        # The base class has no update rule (as torch.optim.Optimizer): a subclass defines step.
        raise NotImplementedError(f"{type(self).__name__} derives from kiln.optim.Optimizer "
                                  "and must define step(closure=None)")

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


class _ParamGroup(collections.abc.MutableMapping):
    """A live view of one C++ param group: options read and write the C++ group; other keys
    (a user's "name", "param_names") are kept here."""

    def __init__(self, optimizer, index, params, extra):
        self._optimizer = optimizer
        self._index = index
        self._params = params
        self._extra = extra

    def _options(self):
        return self._optimizer._impl.group_options(self._index)

    def __getitem__(self, key):
        if key == "params":
            return self._params
        options = self._options()
        if key in options:
            return options[key]
        return self._extra[key]

    def __setitem__(self, key, value):
        if key == "params":
            raise KeyError("the params of a kiln optimizer's param group can't be replaced; "
                           "use add_param_group")
        if key in self._options():
            self._optimizer._impl.set_group_options(self._index, {key: value})
        else:
            self._extra[key] = value

    def __delitem__(self, key):
        if key in self._extra:
            del self._extra[key]
        else:
            raise KeyError(f"{key!r} can't be removed from a kiln optimizer's param group")

    def __iter__(self):
        yield "params"
        yield from self._options()
        yield from self._extra

    def __len__(self):
        return 1 + len(self._options()) + len(self._extra)

    def __repr__(self):
        return repr(dict(self))


class _NativeOptimizer(Optimizer):
    """An optimizer whose step runs in C++: `_native` is its kiln._C.optim class."""

    _native = None

    def __init__(self, params, defaults):
        groups = _param_groups(params)
        native = []
        extras = []
        for g in groups:
            options = {k: v for k, v in g.items() if k != "params" and k in defaults}
            native.append((g["params"], options))
            extras.append({k: v for k, v in g.items() if k != "params" and k not in defaults})
        self._impl = self._native(native, defaults)
        self.defaults = dict(defaults)
        self._groups = [_ParamGroup(self, i, g["params"], extra)
                        for i, (g, extra) in enumerate(zip(groups, extras))]

    @property
    def param_groups(self):
        return self._groups

    def _all_params(self):
        return [p for g in self._groups for p in g._params]

    @property
    def state(self):
        """Each stepped parameter's state ({"step": ..., "exp_avg": ...}), sharing memory with
        the optimizer's."""
        params = self._all_params()
        return {params[i]: entries for i, entries in self._impl.state_dict()["state"].items()}

    def add_param_group(self, param_group):
        group = dict(param_group)
        ps = group.pop("params")
        ps = [ps] if isinstance(ps, Tensor) else list(ps)
        options = {k: v for k, v in group.items() if k in self.defaults}
        extra = {k: v for k, v in group.items() if k not in self.defaults}
        self._impl.add_param_group(ps, options)
        self._groups.append(_ParamGroup(self, len(self._groups), ps, extra))

    def zero_grad(self, set_to_none=True):
        self._impl.zero_grad(set_to_none)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._impl.step()
        return loss

    def state_dict(self):
        """{"state": {index: {...}}, "param_groups": [{options..., "params": [indices]}]}, as
        torch.optim; the state tensors share memory with the optimizer's."""
        sd = self._impl.state_dict()
        for group, extra in zip(sd["param_groups"], (g._extra for g in self._groups)):
            group.update(extra)
        return sd

    def load_state_dict(self, state_dict):
        self._impl.load_state_dict({"state": dict(state_dict["state"]),
                                    "param_groups": [dict(g) for g in state_dict["param_groups"]]})
        for group, saved in zip(self._groups, state_dict["param_groups"]):
            for key, value in saved.items():
                if key != "params" and key not in self.defaults:
                    group._extra[key] = value
