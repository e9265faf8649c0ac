#include "ops/indexing/overload_out.h"

namespace kiln::ops {

const OpDef& with_overload_out(const OpDef& functional) {
  KILN_CHECK(functional.kind == OpKind::Structured && functional.schema.returns.size() == 1 &&
                 !functional.schema.overload.empty(),
             "op '{}': with_overload_out needs a structured, overloaded op with one output",
             functional.full_name());
  OpDef d;
  d.schema = functional.schema;
  d.schema.overload = functional.schema.overload + "_out";
  Argument out;
  out.name = "out";
  out.type = ArgType::Tensor;
  out.type_str = "Tensor";
  out.kwarg_only = true;
  out.is_mutable = true;
  out.alias_set = "a";
  d.schema.arguments.push_back(out);
  Argument ret = out;
  ret.name.clear();
  d.schema.returns = {ret};
  d.variant = Variant::Out;
  d.kind = OpKind::Structured;
  d.functional = &functional;
  d.differentiable = false;
  d.is_random = functional.is_random;
  OpRegistry& reg = OpRegistry::instance();
  const OpDef& added = reg.add(std::move(d));
  reg.mutable_def(functional.full_name()).out = &added;
  return functional;
}

}  // namespace kiln::ops
