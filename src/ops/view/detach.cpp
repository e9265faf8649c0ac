// detach: the same tensor (an alias of its storage, same geometry) without gradient history.
// Tensor::detach() makes it directly; a compiled function records this op when a detached
// tensor it traced is used (capture/trace_session.cpp), so that the graph cuts the gradient
// where the eager code did.
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/registry.h>

namespace kiln::ops {

using namespace view_detail;

KILN_OP("detach(Tensor(a) self) -> Tensor(a)")
    .view([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      return one_view(self, self.sym_sizes().vec(), self.sym_strides().vec(),
                      self.impl()->sym_storage_offset());
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 3}, kFloat32)}, "matrix"},
          {{make_noncontiguous_sample({3, 2}, kFloat64)}, "non-contiguous"},
          {{make_sample({}, kInt64)}, "0-dim"},
      };
    });

}  // namespace kiln::ops
