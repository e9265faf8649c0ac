#include <kiln/core/tensor_impl.h>

#include <kiln/core/error.h>

#include <algorithm>
#include <atomic>
#include <numeric>

namespace kiln {

TensorImpl::TensorImpl(Storage storage, DType dtype, SymIntList sizes, SymIntList strides,
                       SymInt storage_offset)
    : storage_(std::move(storage)), dtype_(dtype) {
  set_sizes_and_strides(sizes, strides, std::move(storage_offset));
}

TensorImpl::~TensorImpl() { release_symbols(); }

namespace {
std::atomic<TensorImpl::MaterializeHook> materialize_hook{nullptr};
}  // namespace

void TensorImpl::set_materialize_hook(MaterializeHook hook) { materialize_hook.store(hook); }

void TensorImpl::materialize_proxy(const char* what) const {
  if (MaterializeHook hook = materialize_hook.load()) hook(const_cast<TensorImpl&>(*this), what);
  KILN_CHECK(storage_->data() != nullptr,
             "{}: a traced tensor's data was read outside the compiled function that made it",
             what);
}

void* TensorImpl::data_of_storage_without_memory() const {
  // Meta tensors have no memory by design.
  if (storage_->device().is_meta()) return nullptr;
  materialize_proxy("reading a tensor's data");
  return static_cast<char*>(storage_->data()) +
         storage_offset_ * static_cast<int64_t>(itemsize(dtype_));
}

void TensorImpl::release_symbols() {
  if (!has_symbolic_) return;
  // Adopting each owned handle into a temporary SymInt drops the array's reference.
  for (int64_t raw : sizes_) SymInt::adopt_raw(raw);
  for (int64_t raw : strides_) SymInt::adopt_raw(raw);
  SymInt::adopt_raw(storage_offset_);
  has_symbolic_ = false;
}

void TensorImpl::set_sizes_and_strides(SymIntList sizes, SymIntList strides,
                                       SymInt storage_offset) {
  KILN_INTERNAL_ASSERT(sizes.size() == strides.size());
  release_symbols();
  has_symbolic_ = false;
  sizes_.resize(sizes.size());
  strides_.resize(strides.size());
  auto store = [this](const SymInt& s) {
    SymInt copy = s;
    has_symbolic_ |= copy.is_symbolic();
    return copy.release();
  };
  for (size_t i = 0; i < sizes.size(); ++i) {
    sizes_[i] = store(sizes[i]);
    strides_[i] = store(strides[i]);
  }
  storage_offset_ = store(storage_offset);
  refresh_derived();
}

void TensorImpl::refresh_derived() {
  if (has_symbolic_) {
    is_contiguous_ = false;
    numel_ = -1;
    return;
  }
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  // PyTorch's rule: size-1 dims may have any stride; empty tensors are contiguous.
  is_contiguous_ = true;
  if (numel_ == 0) return;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) {
      is_contiguous_ = false;
      return;
    }
    expected *= sizes_[d];
  }
}

SymInt TensorImpl::sym_numel() const {
  if (!has_symbolic_) return numel_;
  SymInt n = 1;
  for (const SymInt& s : sym_sizes()) n = n * s;
  return n;
}

bool TensorImpl::is_non_overlapping_and_dense() const {
  if (has_symbolic_) return false;
  if (is_contiguous_) return true;
  std::vector<int64_t> perm(sizes_.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sizes_[a] < 2) return false;
    if (sizes_[b] < 2) return true;
    return strides_[a] < strides_[b];
  });
  int64_t expected = 1;
  for (int64_t d : perm) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) return false;
    expected *= sizes_[d];
  }
  return true;
}

void TensorImpl::throw_symbolic(const char* what) const {
  KILN_FAIL("Tensor.{}: the tensor has symbolic sizes or strides; use sym_{} instead", what, what);
}

DimVector contiguous_strides(IntList sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

SymDimVector contiguous_strides(SymIntList sizes) {
  SymDimVector strides(sizes.size());
  SymInt s = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    auto v = sizes[d].maybe_int();
    s = (v && *v < 1) ? s : s * sizes[d];
  }
  return strides;
}

}  // namespace kiln
