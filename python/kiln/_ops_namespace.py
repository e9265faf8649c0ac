"""Every registered op as a function of the kiln package (kiln.add, kiln.softmax, ...), bound from
its schema by kiln._C._ops; names starting with an underscore stay internal."""
from . import _C

__all__ = [name for name in dir(_C._ops) if not name.startswith("_")]
globals().update({name: getattr(_C._ops, name) for name in __all__})
