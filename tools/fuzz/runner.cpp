#include "fuzz/runner.h"

#include "fuzz/rng.h"

#include <kiln/capture/mark_dynamic.h>
#include <kiln/kiln.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace kiln::fuzz {

std::string RunConfig::name() const {
  const char* shape = shapes == ShapeMode::Static    ? "static"
                      : shapes == ShapeMode::Dynamic ? "dynamic"
                                                     : "mark_dynamic";
  return backend + "/" + shape + "/" + mode;
}

std::vector<RunConfig> configs_of(const std::vector<std::string>& backends,
                                  const std::vector<std::string>& shape_modes,
                                  const std::vector<std::string>& modes) {
  std::vector<RunConfig> out;
  for (const std::string& backend : backends) {
    for (const std::string& shape : shape_modes) {
      ShapeMode s;
      if (shape == "static") {
        s = ShapeMode::Static;
      } else if (shape == "dynamic") {
        s = ShapeMode::Dynamic;
      } else if (shape == "mark_dynamic") {
        s = ShapeMode::MarkDynamic;
      } else {
        throw Error("kiln_fuzz: unknown shape mode '" + shape +
                    "' (expected static, dynamic or mark_dynamic)");
      }
      for (const std::string& mode : modes) out.push_back({backend, s, mode});
    }
  }
  return out;
}

std::string Outcome::signature() const {
  if (status == Status::Mismatch) {
    const std::string where =
        detail.starts_with(kAtOtherSizes) ? std::string(", ") + kAtOtherSizes : "";
    return detail.find("[slight]") != std::string::npos ? "mismatch (slight)" + where
                                                        : "mismatch" + where;
  }
  if (status != Status::Error) return "";
  return "error: " + detail.substr(0, detail.find(':'));
}

Tolerance tolerance_of(const Program& program) {
  Tolerance tol;
  for (const Node& node : program.nodes) {
    tol.rtol = std::max(tol.rtol, ops::OpRegistry::instance().get(node.op).sample_rtol);
  }
  return tol;
}

namespace {

// The weights of the loss sum(output_i * w_i): fixed by the program's seed, drawn in float32.
Tensor loss_weight(const Program& program, size_t i, const Tensor& output) {
  Generator gen(program.seed + 7919 * (i + 1));
  return randn(output.sizes().vec(), TensorOptions().dtype(DType::Float32), &gen)
      .to(output.dtype());
}

// Runs `fn` on fresh inputs in `float_dtype` (the compiled function or eager) and its backward.
template <typename Fn>
EagerRun run_with(const Program& program, DType float_dtype, Fn&& fn,
                  const std::function<void(const std::vector<Tensor>&)>& before = {}) {
  std::vector<Tensor> inputs = make_inputs(program, float_dtype);
  if (before) before(inputs);
  EagerRun run;
  run.outputs = fn(inputs);
  Tensor loss;
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    const Tensor& o = run.outputs[i];
    if (!o.requires_grad() || !is_floating_point(o.dtype())) continue;
    const Tensor term = (o * loss_weight(program, i, o)).sum();
    loss = loss.defined() ? loss + term : term;
  }
  if (loss.defined()) loss.backward();
  for (const Tensor& in : inputs) {
    run.inputs_after.push_back(in.detach().clone());
    run.grads.push_back(in.requires_grad() ? in.grad() : Tensor());
  }
  for (Tensor& o : run.outputs) o = o.detach();
  return run;
}

}  // namespace

std::optional<std::pair<size_t, int64_t>> marked_dim(const Program& program) {
  std::vector<std::pair<size_t, int64_t>> candidates;
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const auto& sizes = program.inputs[i].sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] >= 2) candidates.emplace_back(i, static_cast<int64_t>(d));
    }
  }
  if (candidates.empty()) return std::nullopt;
  Rng rng(program.seed ^ 0x5bd1e995ull);
  return rng.pick(candidates);
}

namespace {

std::string compare_runs(const EagerRun& got, const EagerRun& e32, const EagerRun& e64,
                         const Tolerance& tol) {
  if (got.outputs.size() != e32.outputs.size()) {
    return fmt::format("{} outputs vs eager's {}", got.outputs.size(), e32.outputs.size());
  }
  for (size_t i = 0; i < got.outputs.size(); ++i) {
    std::string d = compare(got.outputs[i], e32.outputs[i], e64.outputs[i], tol);
    if (!d.empty()) return fmt::format("output {} ({}): {}", i, i, d);
  }
  for (size_t i = 0; i < got.inputs_after.size(); ++i) {
    std::string d = compare(got.inputs_after[i], e32.inputs_after[i], e64.inputs_after[i], tol);
    if (!d.empty()) return fmt::format("input {} after the call: {}", i, d);
  }
  for (size_t i = 0; i < got.grads.size(); ++i) {
    std::string d = compare(got.grads[i], e32.grads[i], e64.grads[i], tol);
    if (!d.empty()) return fmt::format("gradient of input {}: {}", i, d);
  }
  return "";
}

}  // namespace

EagerRun run_eager(const Program& program, DType float_dtype) {
  return run_with(program, float_dtype, [&](const std::vector<Tensor>& inputs) {
    return execute(program, inputs, float_dtype);
  });
}

std::optional<Program> at_other_sizes(const Program& program) {
  Program other = program;
  bool changed = false;
  for (InputSpec& in : other.inputs) {
    for (int64_t& size : in.sizes) {
      if (size >= 2) {
        ++size;
        changed = true;
      }
    }
  }
  if (!changed) return std::nullopt;
  return other;
}

EagerRuns run_eager_references(const Program& program) {
  EagerRuns runs;
  runs.f32 = run_eager(program, DType::Float32);
  runs.f64 = run_eager(program, DType::Float64);
  if (std::optional<Program> other = at_other_sizes(program)) {
    try {
      runs.other_f32 = run_eager(*other, DType::Float32);
      runs.other_f64 = run_eager(*other, DType::Float64);
      runs.other_sizes = std::move(other);
    } catch (const std::exception&) {
      // Its size arguments do not fit other sizes: the program is only run at its own.
    }
  }
  return runs;
}

Outcome run_config(const Program& program, const RunConfig& config, const EagerRuns& eager) {
  Outcome outcome;
  outcome.config = config;
  CompileOptions options;
  options.backend = config.backend;
  options.mode = config.mode;
  std::function<void(const std::vector<Tensor>&)> before;
  if (config.shapes == ShapeMode::Static) options.dynamic = false;
  if (config.shapes == ShapeMode::Dynamic) options.dynamic = true;
  if (config.shapes == ShapeMode::MarkDynamic) {
    const auto marked = marked_dim(program);
    if (!marked) {
      outcome.status = Outcome::Status::Skipped;
      return outcome;
    }
    before = [marked](const std::vector<Tensor>& inputs) {
      mark_dynamic(inputs[marked->first], marked->second);
    };
  }
  auto fn = [&program](const std::vector<Tensor>& inputs) {
    return execute(program, inputs, DType::Float32);
  };
  const Tolerance tol = tolerance_of(program);
  try {
    auto compiled = compile(fn, options);
    // One call of `compiled` on `at`, compared with eager's runs there; false on a mismatch.
    auto matches = [&](const Program& at, const EagerRun& want32, const EagerRun& want64,
                       std::string_view label) {
      const std::string d =
          compare_runs(run_with(at, DType::Float32, compiled, before), want32, want64, tol);
      if (d.empty()) return true;
      outcome.status = Outcome::Status::Mismatch;
      outcome.detail = fmt::format("{}: {}", label, d);
      return false;
    };
    // Twice: the first call compiles, the second runs what the cache holds.
    if (!matches(program, eager.f32, eager.f64, "first call")) return outcome;
    if (!matches(program, eager.f32, eager.f64, "second call")) return outcome;
    // Then the same nodes on inputs of other sizes (a recompile, or the dynamic graph again);
    // an error there is marked as such too.
    if (eager.other_sizes) {
      try {
        if (!matches(*eager.other_sizes, eager.other_f32, eager.other_f64, kAtOtherSizes)) {
          return outcome;
        }
      } catch (const std::exception& e) {
        throw Error(fmt::format("{}: {}", kAtOtherSizes, e.what()));
      }
    }
  } catch (const std::exception& e) {
    outcome.status = Outcome::Status::Error;
    outcome.detail = e.what();
  }
  return outcome;
}

ProgramResult run_program(const Program& program, const std::vector<RunConfig>& configs,
                          const std::function<void(const ProgramResult&)>& progress) {
  ProgramResult result;
  reset();  // compiled functions of earlier programs are gone; drop their cache state too
  EagerRuns eager;
  try {
    eager = run_eager_references(program);
  } catch (const std::exception& e) {
    result.eager_rejected = true;
    result.eager_detail = e.what();
    return result;
  }
  if (progress) progress(result);
  for (const RunConfig& config : configs) {
    result.outcomes.push_back(run_config(program, config, eager));
    if (progress) progress(result);
  }
  return result;
}

}  // namespace kiln::fuzz
