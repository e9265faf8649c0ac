// Every op that decomposes into loops runs eagerly on CUDA: the CUDA slots that no hand-written
// kernel fills get the inductor's generated kernels (src/inductor/generated_eager_kernel.h).
// Hand-written kernels registered by other files of this folder replace them whatever the order
// of the static initializers.
#include "cuda/register.h"
#include "inductor/generated_eager_kernel.h"

#include <algorithm>

namespace kiln::cuda {

KILN_CUDA_REGISTER(generated_kernels) {
  constexpr auto cuda = static_cast<size_t>(DeviceType::CUDA);
  for (const ops::OpDef* def : ops::OpRegistry::instance().all()) {
    if (def->variant != ops::Variant::Functional || !inductor::may_run_generated(*def)) continue;
    const ops::OpDef& op = *def;
    if (op.kind == ops::OpKind::Structured && !op.impl[cuda]) {
      structured(op.full_name().c_str(),
                 [&op](const ops::Stack& args, const std::vector<Tensor>& outputs) {
                   // Outputs without elements (sized by the meta function) need no kernel.
                   if (std::all_of(outputs.begin(), outputs.end(),
                                   [](const Tensor& t) { return t.numel() == 0; })) {
                     return;
                   }
                   const std::vector<Tensor> results = inductor::run_generated_kernel(op, args);
                   for (size_t i = 0; i < outputs.size() && i < results.size(); ++i) {
                     if (!outputs[i].defined() || !results[i].defined()) continue;
                     Tensor out = outputs[i];  // a handle: the caller's tensor is written
                     out.copy_(results[i]);
                   }
                 });
    } else if (op.kind == ops::OpKind::Custom && !op.custom[cuda]) {
      custom(op.full_name().c_str(),
             [&op](const ops::Stack& args) { return inductor::run_generated_kernel(op, args); });
    }
  }
}

}  // namespace kiln::cuda
