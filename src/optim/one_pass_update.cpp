#include "optim/one_pass_update.h"

#include "ops/current_dispatch_mode.h"

#include <unordered_set>

namespace kiln::optim::detail {

bool one_pass_applies(std::initializer_list<std::reference_wrapper<const Tensor>> tensors) {
  if (ops::current_dispatch_mode() != nullptr) return false;
  const Tensor& first = tensors.begin()->get();
  std::unordered_set<const StorageImpl*> storages;
  for (const Tensor& t : tensors) {
    if (!t.defined() || t.impl()->is_proxy() || t.dtype() != DType::Float32 ||
        !t.device().is_cpu() || !t.is_contiguous() || t.sizes() != first.sizes() ||
        !storages.insert(t.storage().get()).second) {
      return false;
    }
  }
  return true;
}

}  // namespace kiln::optim::detail
