#include "ops/reduction/reduce_meta.h"

namespace kiln::ops {

std::vector<bool> reduction_mask(int64_t ndim, IntList dims, const char* op) {
  std::vector<bool> mask(static_cast<size_t>(ndim), dims.empty());
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    const auto w = static_cast<size_t>(wrap_dim(d, ndim, op));
    KILN_CHECK(!seen[w], "{}: dim {} appears multiple times in the list of dims", op, w);
    seen[w] = true;
    if (ndim > 0) mask[w] = true;
  }
  return mask;
}

std::vector<bool> reduction_mask(int64_t ndim, const IValue& dims, const char* op) {
  if (dims.is_none()) return std::vector<bool>(static_cast<size_t>(ndim), true);
  return reduction_mask(ndim, IntList(dims.to_int_list()), op);
}

SymDimVector reduced_sizes(SymIntList sizes, const std::vector<bool>& mask, bool keepdim) {
  SymDimVector out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) {
      out.push_back(sizes[d]);
    } else if (keepdim) {
      out.push_back(SymInt(1));
    }
  }
  return out;
}

TensorMeta reduction_meta(const Tensor& self, const std::vector<bool>& mask, bool keepdim,
                          DType dtype) {
  return TensorMeta::contiguous(reduced_sizes(self.sym_sizes(), mask, keepdim), dtype,
                                self.device());
}

void check_nonempty_reduction(const Tensor& self, const std::vector<bool>& mask, bool all_dims,
                              const char* op) {
  if (all_dims) {
    KILN_CHECK(self.sym_numel() != 0,
               "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
               "reduction dim with the 'dim' argument.",
               op);
    return;
  }
  for (size_t d = 0; d < mask.size(); ++d) {
    KILN_CHECK_T(IndexError, !mask[d] || self.sym_sizes()[d] != 0,
                 "{}(): Expected reduction dim {} to have non-zero size.", op, d);
  }
}

const char* torch_type_name(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return "Bool";
    case DType::UInt8:
      return "Byte";
    case DType::Int8:
      return "Char";
    case DType::Int16:
      return "Short";
    case DType::Int32:
      return "Int";
    case DType::Int64:
      return "Long";
    case DType::Float16:
      return "Half";
    case DType::BFloat16:
      return "BFloat16";
    case DType::Float32:
      return "Float";
    case DType::Float64:
      return "Double";
  }
  return "?";
}

}  // namespace kiln::ops
