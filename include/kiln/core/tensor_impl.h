#pragma once
// TensorImpl: a view of a Storage — sizes, strides (in elements) and an offset, all SymInts stored
// in their one-word encoding — with dtype, device and the autograd slot.
#include <kiln/core/array_ref.h>
#include <kiln/core/dtype.h>
#include <kiln/core/storage.h>

#include <memory>

namespace kiln {

// Filled in by the autograd layer (grad, grad_fn, hooks). Core only owns the slot.
class AutogradMetaInterface {
 public:
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl {
 public:
  TensorImpl(Storage storage, DType dtype, SymIntList sizes, SymIntList strides,
             SymInt storage_offset = 0);
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;
  ~TensorImpl();

  const Storage& storage() const { return storage_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }

  // Concrete sizes/strides/offset; raise kiln::Error if symbolic.
  IntList sizes() const {
    if (has_symbolic_) [[unlikely]]
      throw_symbolic("sizes");
    return IntList(sizes_.data(), sizes_.size());
  }
  IntList strides() const {
    if (has_symbolic_) [[unlikely]]
      throw_symbolic("strides");
    return IntList(strides_.data(), strides_.size());
  }
  int64_t storage_offset() const {
    if (has_symbolic_) [[unlikely]]
      throw_symbolic("storage_offset");
    return storage_offset_;
  }
  int64_t numel() const {
    if (has_symbolic_) [[unlikely]]
      throw_symbolic("numel");
    return numel_;
  }
  // Symbolic-aware views of the same fields. The encoding makes an int64_t array readable as
  // SymInts (one int64_t member, standard layout).
  SymIntList sym_sizes() const {
    return SymIntList(reinterpret_cast<const SymInt*>(sizes_.data()), sizes_.size());
  }
  SymIntList sym_strides() const {
    return SymIntList(reinterpret_cast<const SymInt*>(strides_.data()), strides_.size());
  }
  SymInt sym_storage_offset() const { return SymInt::from_raw(storage_offset_); }
  SymInt sym_numel() const;
  bool has_symbolic_sizes_strides() const { return has_symbolic_; }

  bool is_contiguous() const { return is_contiguous_; }
  // True if the strides are a permutation of a dense layout (no gaps, no overlap).
  bool is_non_overlapping_and_dense() const;

  // Replaces the geometry (used by resize_, as_strided_, and set-style in-place view ops).
  void set_sizes_and_strides(SymIntList sizes, SymIntList strides, SymInt storage_offset);
  void set_storage(Storage storage) { storage_ = std::move(storage); }
  // With set_storage, lets nn::Module::to(dtype) give a parameter converted data in place
  // (PyTorch's `param.data = ...`).
  void set_dtype(DType dtype) { dtype_ = dtype; }

  // A 0-dim tensor made from a C++ number: ranks lowest in type promotion, like PyTorch's wrapped
  // numbers.
  bool is_wrapped_number() const { return is_wrapped_number_; }
  void set_wrapped_number(bool v) { is_wrapped_number_ = v; }

  bool requires_grad() const { return requires_grad_; }
  void set_requires_grad(bool v) { requires_grad_ = v; }
  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  const std::shared_ptr<AutogradMetaInterface>& shared_autograd_meta() const {
    return autograd_meta_;
  }
  void set_autograd_meta(std::shared_ptr<AutogradMetaInterface> m) {
    autograd_meta_ = std::move(m);
  }

  // For a view op's output: the tensor at the root of its chain of views (whose memory it
  // reads); null for tensors that are not views. Autograd uses it for in-place changes made
  // through a view.
  const std::shared_ptr<TensorImpl>& view_base() const { return view_base_; }
  void set_view_base(std::shared_ptr<TensorImpl> base) { view_base_ = std::move(base); }

  uint32_t version() const { return storage_->version(); }
  void bump_version() { storage_->bump_version(); }

  void* data() const {
    if (storage_->data() == nullptr && storage_->nbytes() != 0) [[unlikely]]
      return data_of_storage_without_memory();
    return static_cast<char*>(storage_->data()) +
           storage_offset_ * static_cast<int64_t>(itemsize(dtype_));
  }
  // A tensor whose storage has a size but no memory on a real device is a capture proxy (a value
  // a compiled function has not computed yet). Reading its data asks the hook to compute it (a
  // graph break), which must give the tensor a storage with memory; without a hook, or if the
  // hook leaves it without memory, reading raises kiln::Error.
  // `what` says what needed the data ("Tensor.item()"), for graph-break reasons.
  using MaterializeHook = void (*)(TensorImpl& proxy, const char* what);
  static void set_materialize_hook(MaterializeHook hook);
  // Computes a proxy's value now (no-op for other tensors); raises kiln::Error as data() does.
  void materialize(const char* what) const {
    if (is_proxy()) [[unlikely]]
      materialize_proxy(what);
  }
  bool is_proxy() const {
    return storage_->data() == nullptr && storage_->nbytes() != 0 && !storage_->device().is_meta();
  }

 private:
  void* data_of_storage_without_memory() const;
  void materialize_proxy(const char* what) const;
  void refresh_derived();
  void release_symbols();
  [[noreturn]] void throw_symbolic(const char* what) const;

  Storage storage_;
  DimVector sizes_;    // encoded SymInts
  DimVector strides_;  // encoded SymInts
  int64_t storage_offset_ = 0;
  int64_t numel_ = 0;
  DType dtype_;
  bool has_symbolic_ = false;
  bool is_contiguous_ = true;
  bool is_wrapped_number_ = false;
  bool requires_grad_ = false;
  std::shared_ptr<AutogradMetaInterface> autograd_meta_;
  std::shared_ptr<TensorImpl> view_base_;
};

// Contiguous (row-major) strides for sizes.
DimVector contiguous_strides(IntList sizes);
SymDimVector contiguous_strides(SymIntList sizes);

}  // namespace kiln
