// resnet18-dynamic (kiln's own workload beside BENCHMARKS.md's): ResNet-18 inference over several
// image sizes in turn, as bert-dynamic is over sequence lengths. One step is a pass over all
// sizes; the compiled side has the default options (automatic dynamic: static at the first size,
// one graph with symbolic batch, height and width after the first recompile), so later sizes
// reuse that graph. The row reports the recompiles of the first pass and the time of the second.
#include <kiln/kiln.h>

#include <memory>
#include <vector>

#include "case.h"
#include "varying_sizes.h"

namespace kiln_bench {
namespace {

// Square images; every size keeps the last stage at least 2 pixels wide (a 1-pixel stage is a
// guard of the symbolic graph: it would compile again).
std::vector<int64_t> image_sizes(Shapes shapes) {
  if (shapes == Shapes::tiny) return {40, 48, 64};
  return {128, 160, 192, 224, 256};
}

// One batch per size (4 at the CPU's shapes, 16 at the GPU's), drawn on the CPU.
std::vector<Tensor> inputs(const Setup& setup) {
  const int64_t batch = setup.size(1, 4, 16);
  std::vector<Tensor> images;
  kiln::manual_seed(1);
  for (int64_t side : image_sizes(setup.shapes)) {
    images.push_back(setup.place(kiln::randn({batch, 3, side, side})));
  }
  return images;
}

// ResNet-18 from seed 0 (1000 classes; 10 at tiny shapes), on the case's device, in eval mode.
std::shared_ptr<kiln::models::ResNet> seeded_resnet(const Setup& setup) {
  kiln::manual_seed(0);
  auto model = kiln::models::resnet18(setup.tiny() ? 10 : 1000);
  if (setup.on_gpu()) model->to(setup.device);
  model->eval();
  return model;
}

}  // namespace

Case resnet_dynamic_case() {
  return {"resnet18-dynamic", "inference", 1e-3, true,
          [](const kiln::CompileOptions& options, const Setup& setup) -> Step {
            return varying_sizes_step(seeded_resnet(setup),
                                      kiln::compile(seeded_resnet(setup), options), inputs(setup));
          }};
}

}  // namespace kiln_bench
