// Running ops as prims: the mode expands composites and decompositions in place of the ops
// they define, recursively, so that only prims reach kernels.
#include <kiln/core/error.h>
#include <kiln/decomp/prims.h>

namespace kiln::decomp {

namespace {

// The result of a decomposition written into an existing tensor (in-place and out= variants).
void write_into(const Tensor& target, const Tensor& value) {
  static const ops::OpDef& copy = ops::OpRegistry::instance().get("copy_");
  ops::call(copy, {target, value});
}

}  // namespace

std::vector<Tensor> DecomposeMode::dispatch(const ops::OpDef& op, ops::Stack& args) {
  if (op.kind == ops::OpKind::Composite) {
    ops::DispatchModeGuard again(this);
    return op.composite(args);
  }
  if (is_prim(op)) {
    if (on_prim_) on_prim_(op);
    return ops::call_kernel(op, args);
  }
  const ops::OpDef& f = op.functional != nullptr ? *op.functional : op;
  KILN_CHECK(static_cast<bool>(f.decomposition),
             "decompose: {} is neither a prim nor decomposable (declare a decomposition in its "
             "registry entry, or add it to the prim set in src/decomp/prims.cpp)",
             op.full_name());
  ops::DispatchModeGuard again(this);
  switch (op.variant) {
    case ops::Variant::Functional:
      return f.decomposition(args);
    case ops::Variant::InPlace: {
      const Tensor self = args[0].to_tensor();
      std::vector<Tensor> result = f.decomposition(args);
      write_into(self, result.at(0));
      return {self};
    }
    case ops::Variant::Out: {
      const size_t nout = op.schema.returns.size();
      ops::Stack fargs(args.begin(), args.end() - static_cast<std::ptrdiff_t>(nout));
      std::vector<Tensor> result = f.decomposition(fargs);
      std::vector<Tensor> outs;
      for (size_t i = 0; i < nout; ++i) {
        const Tensor out = args[args.size() - nout + i].to_tensor();
        const Tensor& r = result.at(i);
        ops::resize_output(
            out,
            ops::TensorMeta::contiguous(SymDimVector(r.sym_sizes().begin(), r.sym_sizes().end()),
                                        out.dtype(), out.device()),
            op.full_name().c_str());
        write_into(out, r);
        outs.push_back(out);
      }
      return outs;
    }
  }
  return {};
}

std::vector<Tensor> call_as_prims(const ops::OpDef& op, ops::Stack args,
                                  const std::function<void(const ops::OpDef&)>& on_prim) {
  DecomposeMode mode(on_prim);
  ops::DispatchModeGuard guard(&mode);
  return ops::call(op, std::move(args));
}

}  // namespace kiln::decomp
