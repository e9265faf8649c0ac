"""safetensors checkpoints: a module's state dict under PyTorch's names (what
safetensors.torch.save_file(model.state_dict(), path) writes), or a dict of tensors."""
import os

from . import _C
from .nn.modules import Module, _IncompatibleKeys


def load_safetensors(module_or_path, path=None, strict=True):
    """load_safetensors(module, path, strict=True): loads the file into module's parameters and
    buffers (in place, converting dtypes), as module.load_state_dict; returns its missing and
    unexpected keys. load_safetensors(path): the file's tensors as a dict, name -> kiln.Tensor
    (memory-mapped where aligned; writing to them never changes the file)."""
    if isinstance(module_or_path, Module):
        if path is None:
            raise TypeError("load_safetensors(module, path): the path is missing")
        missing, unexpected = _C.nn._load_safetensors_into(module_or_path, os.fspath(path),
                                                           strict)
        return _IncompatibleKeys(missing, unexpected)
    if path is not None:
        raise TypeError("load_safetensors(module, path): the first argument must be a "
                        f"kiln.nn.Module, got {type(module_or_path).__name__}")
    return _C.nn._safetensors_load(os.fspath(module_or_path))


def load_safetensors_metadata(path):
    """The file header's "__metadata__" (a dict of strings), without reading the tensors."""
    return _C.nn._safetensors_load_metadata(os.fspath(path))


def save_safetensors(module_or_dict, path, metadata=None):
    """Writes a module's state_dict() (tied tensors under each of their names) or a dict of
    tensors to path, atomically; metadata: an optional dict of strings."""
    metadata = dict(metadata or {})
    if isinstance(module_or_dict, Module):
        _C.nn._save_module_safetensors(module_or_dict, os.fspath(path), metadata)
    else:
        _C.nn._safetensors_save(os.fspath(path), dict(module_or_dict), metadata)
