#include "autograd/saved_variable.h"

#include "autograd/autograd_meta.h"

#include <kiln/core/error.h>

namespace kiln::autograd {
namespace {

Tensor alias_without_history(const Tensor& t) {
  TensorImpl* impl = t.impl();
  return Tensor(std::make_shared<TensorImpl>(impl->storage(), impl->dtype(), impl->sym_sizes(),
                                             impl->sym_strides(), impl->sym_storage_offset()));
}

std::string describe(const Tensor& t) {
  std::string sizes;
  for (int64_t s : t.sizes()) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
  return fmt::format("[{} [{}]]", dtype_name(t.dtype()), sizes);
}

}  // namespace

SavedVariable::SavedVariable(const Tensor& t, bool is_output, bool check_version)
    : is_output_(is_output), was_defined_(t.defined()), check_version_(check_version) {
  if (!t.defined()) return;
  version_ = t._version();
  requires_grad_ = t.requires_grad();
  if (is_output) {
    data_ = alias_without_history(t);
    if (AutogradMeta* m = meta_if(t)) {
      grad_fn_ = m->grad_fn;
      output_nr_ = m->output_nr;
    }
  } else if (check_version) {
    data_ = t;
  } else {
    // A formula that reads only sizes and dtypes needs no history: holding the input itself
    // would close a cycle when the input's own history later leads back here (an in-place
    // write through a view makes the base's CopySlices reach the view's node, which saved
    // the base).
    data_ = alias_without_history(t);
  }
}

Tensor SavedVariable::unpack(const std::string& node_name) const {
  KILN_CHECK(!released_,
             "Trying to backward through the graph a second time (or directly access saved "
             "tensors after they have already been freed): {} released its saved tensors after "
             "the first backward. Specify retain_graph=true on the first backward() or grad() "
             "call if you need to backward through the graph a second time.",
             node_name);
  if (!was_defined_) return Tensor();
  KILN_CHECK(!check_version_ || data_._version() == version_,
             "one of the variables needed for gradient computation has been modified by an "
             "inplace operation: {}, saved by {}, is at version {}; expected version {} instead.",
             describe(data_), node_name, data_._version(), version_);
  if (!is_output_) return data_;
  Tensor out = alias_without_history(data_);
  if (requires_grad_) {
    if (std::shared_ptr<Node> fn = grad_fn_.lock()) {
      set_history(out, fn, output_nr_);
    } else {
      out.impl()->set_requires_grad(true);
    }
  }
  return out;
}

void SavedVariable::reset() {
  data_ = Tensor();
  released_ = true;
}

}  // namespace kiln::autograd
