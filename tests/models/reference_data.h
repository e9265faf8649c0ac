#pragma once
// Reads the reference data tests/models/export_reference.py writes: <dir>/<model>/index.txt (one
// line per tensor: name, dtype f32|i64, byte offset, ndim, dims) and tensors.bin (raw
// little-endian data). The directory comes from $KILN_MODELS_REFERENCE_DIR, else from the path
// CMake compiles in (where the CTest fixture models_reference_export writes it).
#include <kiln/kiln.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
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
    auto dir = reference_dir() / model;
    std::ifstream index(dir / "index.txt");
    if (!index) return;
    std::ifstream bin(dir / "tensors.bin", std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(bin)), std::istreambuf_iterator<char>());
    std::string line;
    while (std::getline(index, line)) {
      if (line.empty()) continue;
      std::istringstream in(line);
      std::string name, dtype;
      size_t offset = 0;
      int64_t ndim = 0;
      in >> name >> dtype >> offset >> ndim;
      std::vector<int64_t> shape(static_cast<size_t>(ndim));
      for (auto& s : shape) in >> s;
      DType dt = dtype == "f32" ? DType::Float32 : DType::Int64;
      Tensor t = kiln::empty(shape, TensorOptions(dt));
      KILN_CHECK(offset + t.nbytes() <= data.size(), "reference data {}: {} lies past the end",
                 model, name);
      std::memcpy(t.data_ptr(), data.data() + offset, t.nbytes());
      order_.push_back(name);
      tensors_.emplace(name, t);
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
