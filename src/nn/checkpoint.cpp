#include <kiln/nn/checkpoint.h>

namespace kiln::nn {

LoadStateDictResult load_safetensors(Module& module, const std::string& path, bool strict) {
  return module.load_state_dict(safetensors::load(path), strict);
}

void save_safetensors(const Module& module, const std::string& path,
                      const safetensors::Metadata& metadata) {
  safetensors::TensorMap tensors;
  for (const auto& [name, tensor] : module.state_dict()) tensors.emplace(name, tensor);
  safetensors::save(path, tensors, metadata);
}

}  // namespace kiln::nn
