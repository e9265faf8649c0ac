#include "optim/one_pass_update.h"

#include "ops/current_dispatch_mode.h"
#include "optim/device_updates.h"

#include <unordered_set>

namespace kiln::optim::detail {

std::optional<Device> one_pass_device(
    std::initializer_list<std::reference_wrapper<const Tensor>> tensors) {
  if (ops::current_dispatch_mode() != nullptr) return std::nullopt;
  const Tensor& first = tensors.begin()->get();
  if (!first.defined() || !has_device_updates(first.device().type())) return std::nullopt;
  std::unordered_set<const StorageImpl*> storages;
  for (const Tensor& t : tensors) {
    if (!t.defined() || t.impl()->is_proxy() || t.dtype() != DType::Float32 ||
        t.device() != first.device() || !t.is_contiguous() || t.sizes() != first.sizes() ||
        !storages.insert(t.storage().get()).second) {
      return std::nullopt;
    }
  }
  return first.device();
}

}  // namespace kiln::optim::detail
