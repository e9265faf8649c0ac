#pragma once
// Reads the reference data tests/models/export_reference.py writes: <dir>/<model>/model.safetensors
// (through kiln's safetensors reader, so these tests exercise it on files from the Python package).
// The directory comes from $KILN_MODELS_REFERENCE_DIR, else from the path CMake compiles in (where
// the CTest fixture models_reference_export writes it).
#include <kiln/kiln.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kiln::models_testing {

inline std::filesystem::path reference_dir() {
  if (const char* env = std::getenv("KILN_MODELS_REFERENCE_DIR")) return env;
#ifdef KILN_MODELS_REFERENCE_DIR
  return KILN_MODELS_REFERENCE_DIR;
#else
  return {};
#endif
}

class ReferenceData {
 public:
  // Empty when the model's data was not exported (has() is false for every name then).
  explicit ReferenceData(const std::string& model) {
    const auto file = reference_dir() / model / "model.safetensors";
    if (!std::filesystem::exists(file)) return;
    for (auto& [name, tensor] : safetensors::load(file.string())) {
      order_.push_back(name);
      tensors_.emplace(name, tensor);
    }
  }

  bool empty() const { return tensors_.empty(); }
  bool has(const std::string& name) const { return tensors_.contains(name); }
  const Tensor& operator[](const std::string& name) const {
    auto it = tensors_.find(name);
    KILN_CHECK(it != tensors_.end(), "reference data: no tensor named {}", name);
    return it->second;
  }
  // Every tensor under "<prefix>.", in file order, with the prefix stripped.
  nn::OrderedDict<Tensor> with_prefix(const std::string& prefix) const {
    nn::OrderedDict<Tensor> out;
    for (const auto& name : order_) {
      if (name.rfind(prefix + ".", 0) == 0)
        out.insert(name.substr(prefix.size() + 1), tensors_.at(name));
    }
    return out;
  }

 private:
  std::vector<std::string> order_;
  std::map<std::string, Tensor> tensors_;
};

}  // namespace kiln::models_testing
