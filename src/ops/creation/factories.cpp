// Factory ops: empty, empty_strided, full (zeros/ones are full), and wrapping numbers and
// caller-owned memory as tensors.
#include "ops/copy/copy_kernels.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

void check_sizes(SymIntList sizes, const char* op) {
  for (const SymInt& s : sizes) {
    auto v = s.maybe_int();
    KILN_CHECK(!v || *v >= 0, "{}: negative dimension {} in size [{}]", op, s.str(),
               IValue(sizes).repr());
  }
}

}  // namespace

KILN_OP("empty(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      auto sizes = args[0].to_sym_int_list();
      check_sizes(sizes, "empty");
      return std::vector<TensorMeta>{
          TensorMeta::contiguous(sizes, args[1].to_optional_dtype().value_or(default_float_dtype()),
                                 args[2].to_device_or_cpu())};
    })
    .cpu([](const Stack&, const std::vector<Tensor>&) {})
    .decomposition([](const Stack& args) {
      // empty_strided with row-major strides.
      auto sizes = args[0].to_sym_int_list();
      check_sizes(sizes, "empty");
      const TensorMeta m =
          TensorMeta::contiguous(sizes, args[1].to_optional_dtype().value_or(default_float_dtype()),
                                 args[2].to_device_or_cpu());
      static const OpDef& empty_strided = OpRegistry::instance().get("empty_strided");
      return call(empty_strided, {m.sizes, m.strides, m.dtype, m.device});
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{{{std::vector<int64_t>{2, 3}}, "float32"},
                                 {{std::vector<int64_t>{0, 4}, kInt64}, "empty int64"}};
    });

KILN_OP(
    "empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Device? "
    "device=None) -> Tensor")
    .meta([](const Stack& args) {
      TensorMeta m;
      m.sizes = args[0].to_sym_int_list();
      m.strides = args[1].to_sym_int_list();
      check_sizes(m.sizes, "empty_strided");
      KILN_CHECK(m.sizes.size() == m.strides.size(), "empty_strided: got {} sizes but {} strides",
                 m.sizes.size(), m.strides.size());
      m.dtype = args[2].to_optional_dtype().value_or(default_float_dtype());
      m.device = args[3].to_device_or_cpu();
      return std::vector<TensorMeta>{m};
    })
    .cpu([](const Stack&, const std::vector<Tensor>&) {})
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{std::vector<int64_t>{2, 3}, std::vector<int64_t>{1, 2}}, "column-major"},
          {{std::vector<int64_t>{2, 3}, std::vector<int64_t>{0, 1}, kFloat64}, "overlapping"}};
    });

KILN_OP(
    "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> "
    "Tensor")
    .meta([](const Stack& args) {
      auto sizes = args[0].to_sym_int_list();
      check_sizes(sizes, "full");
      Scalar v = args[1].to_scalar();
      DType inferred = v.is_floating_point() ? default_float_dtype() : v.dtype();
      return std::vector<TensorMeta>{TensorMeta::contiguous(
          sizes, args[2].to_optional_dtype().value_or(inferred), args[3].to_device_or_cpu())};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      if (out[0].numel() == 0) return;
      auto iter = TensorIteratorConfig().add_output(out[0]).op_name("full").build();
      fill_kernels(iter, args[1].to_scalar());
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{{{std::vector<int64_t>{2, 3}, Scalar(1.5)}, "float"},
                                 {{std::vector<int64_t>{4}, Scalar(int64_t{7})}, "int"},
                                 {{std::vector<int64_t>{0, 2}, Scalar(true)}, "empty bool"}};
    });

}  // namespace kiln::ops

namespace kiln {

Tensor empty(IntList size, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("empty");
  Tensor t = ops::call1(op, {size, options.dtype(), options.device()}, &loc);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor empty_strided(IntList size, IntList stride, TensorOptions options,
                     const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("empty_strided");
  Tensor t = ops::call1(op, {size, stride, options.dtype(), options.device()}, &loc);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor full(IntList size, const Scalar& fill_value, TensorOptions options,
            const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("full");
  Tensor t = ops::call1(op, {size, fill_value, options.dtype_opt(), options.device()}, &loc);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor zeros(IntList size, TensorOptions options, const kiln::SourceLocation& loc) {
  return full(size, 0, options.dtype(options.dtype()), loc);
}
Tensor ones(IntList size, TensorOptions options, const kiln::SourceLocation& loc) {
  return full(size, 1, options.dtype(options.dtype()), loc);
}

Tensor scalar_tensor(const Scalar& value, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  DType inferred = value.is_floating_point() ? default_float_dtype() : value.dtype();
  return full({}, value, options.dtype(options.dtype_or(inferred)));
}

Tensor wrapped_scalar(const Scalar& value, Device device) {
  // Built directly (not through the registry): it is an argument, not a computation, and
  // capture treats it as a constant.
  DType dtype = value.dtype();
  // A number beside CUDA tensors stays on the CPU, as in PyTorch: ops accept a CPU 0-dim operand
  // with tensors of any device, and the value is written here by the host.
  if (device.is_cuda()) device = Device::cpu();
  Storage storage = make_storage(itemsize(dtype), device);
  auto impl = std::make_shared<TensorImpl>(std::move(storage), dtype, SymIntList{}, SymIntList{});
  impl->set_wrapped_number(true);
  if (!device.is_meta()) {
    KILN_DISPATCH_ALL(dtype, "wrapped_scalar",
                      [&]<typename T>() { *static_cast<T*>(impl->data()) = value.to<T>(); });
  }
  return Tensor(std::move(impl));
}

namespace {
struct BlobContext {
  std::function<void(void*)> deleter;
};
void delete_blob(void* ctx, void* ptr, size_t) {
  std::unique_ptr<BlobContext> owned(static_cast<BlobContext*>(ctx));
  if (owned->deleter) owned->deleter(ptr);
}
}  // namespace

Tensor from_blob(void* data, IntList sizes, IntList strides, DType dtype,
                 std::function<void(void*)> deleter, Device device) {
  KILN_CHECK(sizes.size() == strides.size(), "from_blob: got {} sizes but {} strides", sizes.size(),
             strides.size());
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    KILN_CHECK(sizes[i] >= 0 && strides[i] >= 0,
               "from_blob: sizes and strides must be non-negative, got size {} stride {}", sizes[i],
               strides[i]);
    if (sizes[i] == 0) extent = 0;
    if (extent) extent += (sizes[i] - 1) * strides[i];
  }
  size_t nbytes = static_cast<size_t>(extent) * itemsize(dtype);
  auto ctx = std::make_unique<BlobContext>(BlobContext{std::move(deleter)});
  DataPtr ptr(data, nbytes, device, &delete_blob, ctx.release());
  auto storage = std::make_shared<StorageImpl>(std::move(ptr), nbytes);
  return Tensor(
      std::make_shared<TensorImpl>(std::move(storage), dtype, to_sym(sizes), to_sym(strides)));
}

}  // namespace kiln
