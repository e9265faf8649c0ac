"""kiln.nn.init: in-place initializers, as torch.nn.init (kiln::nn::init). Each runs under
no_grad and returns the tensor it was given."""
from .. import _C

_init = _C.nn._init

calculate_gain = _init.calculate_gain
_calculate_fan_in_and_fan_out = _init._calculate_fan_in_and_fan_out


def _no_generator(generator):
    if generator is not None:
        raise NotImplementedError("kiln.nn.init: generator= is not supported (seed with "
                                  "kiln.manual_seed)")


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    _no_generator(generator)
    return _init.uniform_(tensor, a, b)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    _no_generator(generator)
    return _init.normal_(tensor, mean, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    _no_generator(generator)
    return _init.trunc_normal_(tensor, mean, std, a, b)


def constant_(tensor, val):
    return _init.constant_(tensor, val)


def ones_(tensor):
    return _init.ones_(tensor)


def zeros_(tensor):
    return _init.zeros_(tensor)


def eye_(tensor):
    return _init.eye_(tensor)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    _no_generator(generator)
    return _init.xavier_uniform_(tensor, gain)


def xavier_normal_(tensor, gain=1.0, generator=None):
    _no_generator(generator)
    return _init.xavier_normal_(tensor, gain)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    _no_generator(generator)
    return _init.kaiming_uniform_(tensor, a, mode, nonlinearity)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    _no_generator(generator)
    return _init.kaiming_normal_(tensor, a, mode, nonlinearity)


def orthogonal_(tensor, gain=1, generator=None):
    _no_generator(generator)
    return _init.orthogonal_(tensor, gain)
