#pragma once
// A tensor saved for backward, with the version it had when saved: unpacking it after an
// in-place change raises PyTorch's "modified by an inplace operation" error instead of computing
// a wrong gradient. A saved output keeps only a weak link to its producer (the node saving it),
// so that graphs have no ownership cycles.
#include <kiln/autograd/node.h>
#include <kiln/core/tensor.h>

#include <memory>

namespace kiln::autograd {

class SavedVariable {
 public:
  SavedVariable() = default;
  // check_version: the formula reads the values (not only sizes and dtype), so an in-place
  // change before backward is an error.
  SavedVariable(const Tensor& t, bool is_output, bool check_version);

  // The saved tensor (undefined if an undefined tensor was saved). node_name names the node for
  // the error messages.
  Tensor unpack(const std::string& node_name) const;
  void reset();

 private:
  Tensor data_;  // an input itself; for an output, an alias without autograd meta
  std::weak_ptr<Node> grad_fn_;
  uint32_t output_nr_ = 0;
  uint32_t version_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool was_defined_ = false;
  bool released_ = false;
  bool check_version_ = true;
};

}  // namespace kiln::autograd
