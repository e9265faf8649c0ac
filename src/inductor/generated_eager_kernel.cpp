#include "inductor/generated_eager_kernel.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/capture/compile.h>
#include <kiln/core/error.h>
#include <kiln/decomp/prims.h>

#include "inductor/lowering.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>

namespace kiln::inductor {

namespace {

using Function = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// The signature a compiled op is valid for: the op, then each argument (tensors by device, dtype,
// sizes and strides; other values by their rendering).
std::string signature(const ops::OpDef& op, const ops::Stack& args) {
  std::string key = op.full_name();
  const auto add_tensor = [&key](const Tensor& t) {
    if (!t.defined()) {
      key += " undefined";
      return;
    }
    key += fmt::format(" {}:{}[{}]/[{}]+{}{}", t.device().str(), dtype_name(t.dtype()),
                       fmt::join(t.sizes(), ","), fmt::join(t.strides(), ","), t.storage_offset(),
                       t.impl()->is_wrapped_number() ? " number" : "");
  };
  for (const ops::IValue& v : args) {
    if (v.is_tensor()) {
      add_tensor(v.to_tensor());
    } else if (v.is_tensor_list()) {
      key += " list";
      for (const Tensor& t : v.to_tensor_list()) add_tensor(t);
    } else {
      key += " " + v.repr();
    }
  }
  return key;
}

// The op with the tensors of `args` taken from the function's argument, in order.
Function op_alone(const ops::OpDef& op, const ops::Stack& args) {
  return [&op, args](const std::vector<Tensor>& tensors) {
    ops::Stack a = args;
    size_t pos = 0;
    for (ops::IValue& v : a) {
      if (v.is_tensor() && v.to_tensor().defined()) {
        v = ops::IValue(tensors.at(pos++));
      } else if (v.is_tensor_list()) {
        std::vector<Tensor> list = v.to_tensor_list();
        for (Tensor& t : list) {
          if (t.defined()) t = tensors.at(pos++);
        }
        v = ops::IValue(std::move(list));
      }
    }
    return ops::call(op, std::move(a));
  };
}

std::vector<Tensor> tensors_of(const ops::Stack& args) {
  std::vector<Tensor> tensors;
  for (const ops::IValue& v : args) {
    if (v.is_tensor() && v.to_tensor().defined()) tensors.push_back(v.to_tensor());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined()) tensors.push_back(t);
      }
    }
  }
  return tensors;
}

// Compiled ops by signature (bounded: a long-running program with ever new sizes starts over).
class GeneratedKernels {
 public:
  static GeneratedKernels& instance() {
    static GeneratedKernels kernels;
    return kernels;
  }

  Function get(const std::string& key, const ops::OpDef& op, const ops::Stack& args) {
    std::lock_guard lock(mutex_);
    if (auto it = compiled_.find(key); it != compiled_.end()) return it->second;
    constexpr size_t kMaxEntries = 4096;
    if (compiled_.size() == kMaxEntries) compiled_.clear();
    CompileOptions options;
    options.dynamic = false;
    options.fullgraph = true;
    // A graph the inductor cannot generate is an error here, not an interpreted graph (which
    // would call the op again).
    options.options = {{"interpreter_fallback", "false"}};
    auto compiled = std::make_shared<Compiled<Function>>(
        op_alone(op, args), options, fmt::format("generated kernel of {}", op.full_name()));
    Function run = [compiled](const std::vector<Tensor>& tensors) { return (*compiled)(tensors); };
    compiled_.emplace(key, run);
    return run;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, Function> compiled_;
};

// Signatures being compiled or run on this thread: a generated kernel whose graph falls back to
// the interpreter would call the op again and land here.
thread_local std::set<std::string> in_progress;

}  // namespace

bool may_run_generated(const ops::OpDef& op) {
  if (op.is_random) return false;
  if (decomp::is_prim(op)) return generates_loops(op);
  return static_cast<bool>(op.decomposition);
}

std::vector<Tensor> run_generated_kernel(const ops::OpDef& op, const ops::Stack& args) {
  const std::string key = signature(op, args);
  const std::vector<Tensor> tensors = tensors_of(args);
  Device device = Device::cpu();  // the first device but the CPU's scalars
  for (const Tensor& t : tensors) {
    if (!t.device().is_cpu()) {
      device = t.device();
      break;
    }
  }
  // The generated graph calls the op's prims, never the op itself, unless a decomposition
  // leads back to it.
  KILN_CHECK(!in_progress.count(key), "{}: no kernel for device {} (its decomposition calls it)",
             op.full_name(), device.str());
  in_progress.insert(key);
  struct Done {
    const std::string& key;
    ~Done() { in_progress.erase(key); }
  } done{key};
  const Function run = GeneratedKernels::instance().get(key, op, args);
  autograd::NoGradGuard no_grad;
  try {
    return run(tensors);
  } catch (const Error& e) {
    // A decomposition that breaks the graph (an output sized by the values, as masked_select's
    // index with a mask) cannot be one generated graph: it runs eagerly, op by op, each op on
    // its own device kernel.
    if (op.decomposition && std::string_view(e.what()).find("graph break") != std::string::npos) {
      return op.decomposition(args);
    }
    KILN_FAIL("{}: no kernel for device {}, and none could be generated for these arguments: {}",
              op.full_name(), device.str(), e.what());
  }
}

}  // namespace kiln::inductor
