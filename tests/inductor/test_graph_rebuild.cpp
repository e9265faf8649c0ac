// GraphRebuild derives the metadata of the nodes it emits as the dispatcher would place them: a
// GPU value beside a CPU number gives a GPU output, a factory goes where its device argument says,
// and nothing is allocated there while deriving (the values here are metadata only: no GPU needed).
#include "inductor/graph_rebuild.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <vector>

namespace kiln {
namespace {

using graph::InputRole;
using graph::ValueMeta;

ValueMeta meta_on(Device device, std::vector<int64_t> sizes) {
  ValueMeta m = ValueMeta::of(zeros(sizes));
  m.device = device;
  return m;
}

TEST(GraphRebuild, OutputsGoWhereTheDispatcherWouldPutThem) {
  graph::Graph source;
  graph::Node& number = source.add_input(InputRole::UserArg, "number", meta_on(Device::cpu(), {}));
  graph::Node& x = source.add_input(InputRole::UserArg, "x", meta_on(Device::cuda(), {2, 3}));
  source.set_outputs({x.out()});

  inductor::GraphRebuild rebuild(source);
  rebuild.copy(number);
  rebuild.copy(x);
  // The CPU number last: the GPU value still decides (a 0-dim CPU tensor gives way).
  const graph::Value product = rebuild.emit("mul", {rebuild[x.out()], rebuild[number.out()]}).out();
  EXPECT_EQ(product.meta().device, Device::cuda());
  EXPECT_EQ(rebuild.emit("mul", {rebuild[number.out()], rebuild[number.out()]}).out().meta().device,
            Device::cpu());
  // A factory: its device argument's, derived on the meta device.
  const graph::Value made =
      rebuild
          .emit("empty", {ops::IValue(std::vector<int64_t>{4, 5}), ops::IValue(DType::BFloat16),
                          ops::IValue(Device::cuda())})
          .out();
  EXPECT_EQ(made.meta().device, Device::cuda());
  EXPECT_EQ(made.meta().dtype, DType::BFloat16);
  EXPECT_EQ(made.meta().sizes.size(), 2u);
  // A copy keeps its input's device.
  EXPECT_EQ(rebuild.emit("_to_copy", {made, ops::IValue(DType::Float32), ops::IValue(true)})
                .out()
                .meta()
                .device,
            Device::cuda());
}

}  // namespace
}  // namespace kiln
