// bert-dynamic: BERT inference over several sequence lengths in turn. One step is a pass over all
// lengths; the compiled side has the default options, as torch.compile's side: automatic dynamic
// (static at the first length, one symbolic graph after the first recompile), so later lengths
// reuse that graph (the row reports the recompiles of the first pass and the time of the second).
#include <kiln/kiln.h>

#include <memory>
#include <vector>

#include "bert_config.h"
#include "case.h"
#include "varying_sizes.h"

namespace kiln_bench {
namespace {

std::vector<int64_t> sequence_lengths(Shapes shapes) {
  if (shapes == Shapes::tiny) return {4, 8, 12};
  return {16, 40, 64, 100, 128, 200, 256, 384, 512};
}

// One input per length (batch 2 at the CPU's shapes, 8 at the GPU's), drawn on the CPU.
std::vector<Tensor> inputs(const Setup& setup) {
  const int64_t batch = setup.size(1, 2, 8);
  std::vector<Tensor> ids;
  kiln::manual_seed(1);
  for (int64_t length : sequence_lengths(setup.shapes)) {
    Tensor batch_ids =
        kiln::randint(0, bert_config(setup.shapes).vocab_size, {batch, length}, kiln::kInt64);
    ids.push_back(setup.place(batch_ids));
  }
  return ids;
}

// BERT from seed 0, built on the CPU and moved to the case's device, in eval mode.
std::shared_ptr<kiln::models::BertForSequenceClassification> seeded_bert(const Setup& setup) {
  kiln::manual_seed(0);
  auto model = kiln::models::bert_for_sequence_classification(bert_config(setup.shapes));
  if (setup.on_gpu()) model->to(setup.device);
  model->eval();
  return model;
}

}  // namespace

Case bert_dynamic_case() {
  return {"bert-dynamic", "inference", 1e-3, true,
          [](const kiln::CompileOptions& options, const Setup& setup) -> Step {
            return varying_sizes_step(seeded_bert(setup),
                                      kiln::compile(seeded_bert(setup), options), inputs(setup));
          }};
}

}  // namespace kiln_bench
