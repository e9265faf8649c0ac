#pragma once
// A module's state_dict to and from a safetensors file, under PyTorch's dotted names, so that a
// checkpoint written by `safetensors.torch.save_file(model.state_dict(), path)` loads into the
// kiln model of the same architecture and back.
#include <kiln/nn/module.h>
#include <kiln/serialize/safetensors.h>

#include <string>

namespace kiln::nn {

// Module::load_state_dict(safetensors::load(path), strict): the same checks and errors.
LoadStateDictResult load_safetensors(Module& module, const std::string& path, bool strict = true);

// Writes module.state_dict() (tied tensors under each of their names, as PyTorch's
// state_dict) to path, atomically.
void save_safetensors(const Module& module, const std::string& path,
                      const safetensors::Metadata& metadata = {});

}  // namespace kiln::nn
