// Decompositions keep to their inputs' device: every op-info sample, traced as prims with its
// tensors on the meta device (so that no kernel runs), gives a graph whose values are all on that
// device but 0-dim CPU numbers. A factory in a decomposition that forgets the device makes a CPU
// tensor, which on a GPU becomes a mixed-device graph (the inductor cannot generate it and the
// eager kernels refuse it).
#include "test_util.h"

#include <kiln/aot/aot.h>
#include <kiln/kiln.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

Tensor on_meta(const Tensor& t) {
  return empty_strided(t.sizes(), t.strides(), TensorOptions(t.dtype()).device(Device::meta()));
}

TEST(DecompositionDevices, FactoriesFollowTheInputs) {
  std::string current;
  size_t traced = 0;
  auto check = [&](const graph::Graph& graph, std::span<const Tensor>,
                   const BackendContext&) -> CompiledGraph {
    ++traced;
    for (const auto& n : graph.nodes()) {
      for (const graph::ValueMeta& m : n->outputs) {
        EXPECT_FALSE(m.device.is_cpu() && !m.sizes.empty())
            << current << ": %" << n->name << " is on the CPU";
      }
    }
    return [](std::span<const Tensor>) -> std::vector<Tensor> {
      throw Error("meta graphs are not run");
    };
  };
  CompileOptions options;
  options.backend =
      aot::aot_autograd({.forward_compiler = check, .backward_compiler = check, .decompose = true});
  autograd::NoGradGuard no_grad;
  for (const ops::OpDef* op : ops::OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->samples || op->is_random) continue;
    for (const ops::Sample& sample : op->samples()) {
      ops::Stack args = sample.args;
      std::vector<Tensor> tensors;
      for (ops::IValue& v : args) {
        if (v.is_tensor() && v.to_tensor().defined()) tensors.push_back(on_meta(v.to_tensor()));
        if (v.is_tensor_list()) {
          for (const Tensor& t : v.to_tensor_list()) {
            if (t.defined()) tensors.push_back(on_meta(t));
          }
        }
      }
      if (tensors.empty()) continue;  // a factory: its device is its own argument
      current = op->full_name() + " [" + sample.description + "]";
      auto run = [op, &args](const std::vector<Tensor>& in) {
        ops::Stack a = args;
        size_t pos = 0;
        for (ops::IValue& v : a) {
          if (v.is_tensor() && v.to_tensor().defined()) v = ops::IValue(in.at(pos++));
          if (v.is_tensor_list()) {
            std::vector<Tensor> list = v.to_tensor_list();
            for (Tensor& t : list) {
              if (t.defined()) t = in.at(pos++);
            }
            v = ops::IValue(std::move(list));
          }
        }
        return ops::call(*op, std::move(a));
      };
      try {
        compile(run, options)(tensors);
      } catch (const Error&) {
        // Error samples, and the meta graphs' refusal to run.
      }
    }
  }
  EXPECT_GT(traced, 500u);
  std::cerr << traced << " graphs traced\n";
}

}  // namespace
}  // namespace kiln
