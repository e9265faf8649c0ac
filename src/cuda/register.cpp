#include "cuda/register.h"

#include <kiln/core/error.h>

namespace kiln::cuda {

void structured(const char* op, ops::ImplFn fn) {
  ops::OpDef& def = ops::OpRegistry::instance().mutable_def(op);
  KILN_CHECK(def.kind == ops::OpKind::Structured, "CUDA registration: {} is not a structured op",
             op);
  def.impl[static_cast<size_t>(DeviceType::CUDA)] = std::move(fn);
}

void custom(const char* op, ops::CustomFn fn) {
  ops::OpDef& def = ops::OpRegistry::instance().mutable_def(op);
  KILN_CHECK(def.kind == ops::OpKind::Custom, "CUDA registration: {} is not a custom op", op);
  def.custom[static_cast<size_t>(DeviceType::CUDA)] = std::move(fn);
}

}  // namespace kiln::cuda
