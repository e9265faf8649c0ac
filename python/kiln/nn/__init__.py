"""kiln.nn: Module, Parameter, the layers, functional, init and utils (torch.nn)."""
from .parameter import Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import functional, init, utils  # noqa: F401,E402
