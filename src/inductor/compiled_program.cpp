#include "inductor/compiled_program.h"

#include "graph/interpret_symbolic.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>
#include <kiln/symbolic/sym_node.h>

#include <fmt/format.h>

#include <set>
#include <utility>

namespace kiln::inductor {

namespace {

// The storage base: buffers are addressed by absolute storage offsets (views fold into them).
void* storage_base(const Tensor& t) {
  return static_cast<char*>(t.data_ptr()) -
         t.storage_offset() * static_cast<int64_t>(itemsize(t.dtype()));
}

// Storage bytes in elements, at least one.
int64_t storage_elements(int64_t bytes, DType dtype) {
  return std::max<int64_t>(bytes / static_cast<int64_t>(itemsize(dtype)), 1);
}

}  // namespace

Tensor CompiledProgram::allocate(const Buffers& buffers, int b) const {
  // One flat allocation viewed with the buffer's layout (offset included).
  const auto u = static_cast<size_t>(b);
  const View& v = buffers.layout->buffers[u];
  const DType dtype = program_.buffers[u].dtype;
  return empty({storage_elements(buffers.layout->bytes[u], dtype)},
               TensorOptions(dtype).device(program_.device))
      .as_strided(v.sizes, v.strides, v.offset);
}

// `t` in the buffer's layout: itself, or a copy when it came in another one.
Tensor CompiledProgram::in_layout_of(const Tensor& t, const Buffers& buffers, int b) const {
  const View& v = buffers.layout->buffers[static_cast<size_t>(b)];
  if (t.dtype() == program_.buffers[static_cast<size_t>(b)].dtype && t.sizes().vec() == v.sizes &&
      t.strides().vec() == v.strides && t.storage_offset() == v.offset) {
    return t;
  }
  Tensor laid_out = allocate(buffers, b);
  laid_out.copy_(t);
  return laid_out;
}

CompiledProgram::CompiledProgram(Program program, const KernelLoader& kernels, bool keep_arena,
                                 AutotuneSettings autotune)
    : program_(std::move(program)), keep_arena_(keep_arena), autotune_(std::move(autotune)) {
  tuned_ = !autotune_.enabled;
  std::vector<int64_t> hints;
  if (program_.is_symbolic()) {
    std::vector<Sizes> input_sizes(program_.num_inputs);
    for (const Buffer& b : program_.buffers) {
      if (b.role == Buffer::Role::Input) input_sizes[static_cast<size_t>(b.input)] = b.sizes;
    }
    binding_ = symbolic::SymbolBinding(input_sizes, program_.num_symbols, "inductor");
    for (size_t k = 0; k < program_.num_symbols; ++k) {
      hints.push_back(program_.facts.hint(Size::symbol(static_cast<int64_t>(k))));
    }
  }
  hint_layout_ = layout_at(std::move(hints));
  extern_reads_.assign(program_.buffers.size(), false);
  // Last reader of each intermediate buffer; outputs are never released.
  std::vector<int> last(program_.buffers.size(), -1);
  auto read = [&](int buffer, int step) {
    if (buffer >= 0) last[static_cast<size_t>(buffer)] = step;
  };
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const int step = static_cast<int>(s);
    const Step& st = program_.steps[s];
    StepFunctions functions;
    for (const LoopNest* nest : loop_nests(st)) {
      functions.nests.push_back(functions_of(*nest, kernels));
      for (int b : nest->args) read(b, step);
    }
    const ExternCall* call = std::get_if<ExternCall>(&st);
    if (const auto* choice = std::get_if<ExternOrGenerated>(&st)) {
      call = &choice->extern_call;
      // The op and its inputs' layouts say what the extern call does; the generated functions,
      // what the other way is.
      std::string key = "extern " + call->op->full_name();
      for (const ExternCall::Input& in : call->inputs) {
        key += fmt::format(" [{}]/[{}]", fmt::join(in.sizes, ", "), fmt::join(in.strides, ", "));
      }
      for (const LoopNest& nest : choice->generated) key += " | " + nest.function;
      functions.extern_or_generated = TuningSite{key, {"extern", "generated"}};
    }
    if (call != nullptr) {
      for (const ExternCall::Input& in : call->inputs) {
        read(in.buffer, step);
        extern_reads_[static_cast<size_t>(in.buffer)] = true;
      }
    }
    functions_.push_back(std::move(functions));
  }
  std::set<int> kept;
  for (const OutputView& o : program_.outputs) kept.insert(o.buffer);
  release_.resize(program_.steps.size());
  for (size_t b = 0; b < last.size(); ++b) {
    const bool intermediate = program_.buffers[b].role == Buffer::Role::Intermediate;
    if (intermediate && last[b] >= 0 && !kept.count(static_cast<int>(b))) {
      release_[static_cast<size_t>(last[b])].push_back(static_cast<int>(b));
    }
  }
}

std::shared_ptr<const CompiledProgram::Layout> CompiledProgram::layout_at(
    std::vector<int64_t> symbols) const {
  auto layout = std::make_shared<Layout>();
  const auto view_of = [&symbols](const Sizes& sizes, const Sizes& strides, const Size& offset) {
    return View{evaluate_sizes(sizes, symbols), evaluate_sizes(strides, symbols),
                evaluate_sizes({offset}, symbols).front()};
  };
  for (const Buffer& b : program_.buffers) {
    layout->buffers.push_back(view_of(b.sizes, b.strides, b.offset));
    const View& v = layout->buffers.back();
    layout->bytes.push_back(storage_bytes(IntList(v.sizes), IntList(v.strides), v.offset, b.dtype));
  }
  for (const Step& step : program_.steps) {
    const ExternCall* call = extern_call(step);
    std::vector<View> inputs;
    if (call != nullptr) {
      for (const ExternCall::Input& in : call->inputs) {
        inputs.push_back(view_of(in.sizes, in.strides, in.offset));
      }
    }
    layout->extern_inputs.push_back(std::move(inputs));
  }
  for (const OutputView& o : program_.outputs) {
    layout->outputs.push_back(view_of(o.sizes, o.strides, o.offset));
  }
  std::vector<int64_t> planned_bytes = layout->bytes;
  for (size_t b = 0; b < planned_bytes.size(); ++b) {
    if (program_.buffers[b].role != Buffer::Role::Intermediate) planned_bytes[b] = 0;
  }
  layout->plan = plan_memory(program_, planned_bytes);
  layout->symbols = std::move(symbols);
  return layout;
}

std::shared_ptr<const CompiledProgram::Layout> CompiledProgram::layout_for(
    std::span<const Tensor> inputs) const {
  if (!program_.is_symbolic()) return hint_layout_;
  std::vector<int64_t> symbols = binding_.bind(inputs);
  std::lock_guard lock(layouts_mutex_);
  for (const auto& l : recent_layouts_) {
    if (l->symbols == symbols) return l;
  }
  constexpr size_t kRecentLayouts = 8;
  if (recent_layouts_.size() == kRecentLayouts) recent_layouts_.pop_back();
  recent_layouts_.push_front(layout_at(std::move(symbols)));
  return recent_layouts_.front();
}

CompiledProgram::NestFunctions CompiledProgram::functions_of(const LoopNest& nest,
                                                             const KernelLoader& kernels) const {
  NestFunctions f;
  f.site.key = nest.function;
  f.site.labels.push_back("default");
  f.functions.push_back(kernels(nest, nest.function));
  for (const LoopNest::Variant& v : nest.variants) {
    f.site.labels.push_back(v.label);
    f.functions.push_back(kernels(nest, v.function));
  }
  return f;
}

std::vector<Tensor> CompiledProgram::run(std::span<const Tensor> inputs) const {
  KILN_CHECK(inputs.size() == program_.num_inputs, "inductor: the graph takes {} inputs, got {}",
             program_.num_inputs, inputs.size());
  if (!tuned_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(tuning_mutex_);
    if (!tuned_.load(std::memory_order_relaxed)) {
      Autotuner tuner(autotune_);
      std::vector<Tensor> outputs = run_once(inputs, &tuner);
      tuner.finish();
      tuned_.store(true, std::memory_order_release);
      return outputs;
    }
  }
  return run_once(inputs, nullptr);
}

std::vector<Tensor> CompiledProgram::run_once(std::span<const Tensor> inputs,
                                              Autotuner* tuner) const {
  const std::shared_ptr<const Layout> layout = layout_for(inputs);
  const int64_t arena_bytes = layout->plan.arena_bytes;
  if (arena_bytes == 0) return run_with(inputs, *layout, Tensor(), tuner);
  // One allocation per call, or none: the kept arena, unless another call holds it.
  const auto fresh = [this, arena_bytes] {
    return empty({arena_bytes + 64}, TensorOptions(kUInt8).device(program_.device));
  };
  if (keep_arena_) {
    std::unique_lock lock(arena_mutex_, std::try_to_lock);
    if (lock.owns_lock()) {
      // Sizes that need more than the kept arena (a symbolic program) grow it.
      if (!arena_.defined() || arena_.numel() < arena_bytes + 64) arena_ = fresh();
      std::vector<Tensor> outputs = run_with(inputs, *layout, arena_, tuner);
      // An output aliasing the arena (an extern call returning a view of its input) would be
      // overwritten by the next call: it gets its own memory.
      const auto* begin = static_cast<const char*>(arena_.data_ptr());
      for (Tensor& o : outputs) {
        const auto* p = static_cast<const char*>(o.defined() ? o.data_ptr() : nullptr);
        if (p != nullptr && p >= begin && p < begin + arena_.numel()) o = o.clone();
      }
      return outputs;
    }
  }
  return run_with(inputs, *layout, fresh(), tuner);
}

std::vector<Tensor> CompiledProgram::run_with(std::span<const Tensor> inputs, const Layout& layout,
                                              const Tensor& arena, Autotuner* tuner) const {
  Buffers buffers{std::vector<Tensor>(program_.buffers.size()),
                  std::vector<void*>(program_.buffers.size(), nullptr), &layout};
  const MemoryPlan& plan = layout.plan;
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    const Buffer& buf = program_.buffers[b];
    if (buf.role != Buffer::Role::Input) continue;
    Tensor t = inputs[static_cast<size_t>(buf.input)];
    // A number beside GPU tensors comes as a 0-dim CPU tensor: generated kernels take its value
    // from the host (Buffer::host_scalar); extern calls get it on the device.
    const bool by_value = buf.host_scalar && t.device() != program_.device && t.dim() == 0;
    const Tensor host = by_value ? t : Tensor();
    if (t.device() != program_.device && t.dim() == 0 && (!by_value || extern_reads_[b])) {
      t = t.to(program_.device);
    }
    const View& want = layout.buffers[b];
    KILN_CHECK(t.dtype() == buf.dtype && t.sizes().vec() == want.sizes,
               "inductor: input {} is {} [{}]; the compiled graph expects {} [{}]", buf.input,
               dtype_name(t.dtype()), fmt::join(t.sizes(), ", "), dtype_name(buf.dtype),
               fmt::join(want.sizes, ", "));
    // Another layout than the graph was compiled for (a gradient arriving in another layout
    // than the forward output had) is copied into the expected one.
    t = in_layout_of(t, buffers, static_cast<int>(b));
    buffers.tensors[b] = t;
    buffers.pointers[b] = by_value ? storage_base(host) : t.numel() > 0 ? storage_base(t) : nullptr;
  }
  // Planned buffers: places in the arena (64-byte aligned), as flat tensors sharing its memory
  // for the extern calls that read them.
  char* base = nullptr;
  if (arena.defined()) {
    const auto address = reinterpret_cast<uintptr_t>(arena.data_ptr());
    base = static_cast<char*>(arena.data_ptr()) + (64 - address % 64) % 64;
  }
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    if (plan.offset[b] < 0) continue;
    const Buffer& buf = program_.buffers[b];
    void* at = base + plan.offset[b];
    buffers.pointers[b] = at;
    if (!extern_reads_[b]) continue;
    buffers.tensors[b] = from_blob(
        at, {storage_elements(layout.bytes[b], buf.dtype)}, {1}, buf.dtype,
        [arena](void*) { (void)arena; }, program_.device);
  }
  autograd::NoGradGuard no_grad;
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const Step& step = program_.steps[s];
    if (const auto* nest = std::get_if<LoopNest>(&step)) {
      run_nest(*nest, functions_[s].nests.at(0), buffers, tuner);
    } else if (const auto* call = std::get_if<ExternCall>(&step)) {
      run_extern(*call, layout.extern_inputs[s], buffers);
    } else {
      run_extern_or_generated(std::get<ExternOrGenerated>(step), layout.extern_inputs[s],
                              functions_[s], buffers, tuner);
    }
    for (int b : release_[s]) {
      buffers.tensors[static_cast<size_t>(b)] = Tensor();
      buffers.pointers[static_cast<size_t>(b)] = nullptr;
    }
  }
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < program_.outputs.size(); ++i) {
    const View& v = layout.outputs[i];
    outputs.push_back(buffers.tensors[static_cast<size_t>(program_.outputs[i].buffer)].as_strided(
        v.sizes, v.strides, v.offset));
  }
  return outputs;
}

void CompiledProgram::run_nest(const LoopNest& nest, NestFunctions& functions, Buffers& buffers,
                               Autotuner* tuner) const {
  for (const Kernel& k : nest.parts) {
    const size_t out = static_cast<size_t>(k.output);
    if (program_.buffers[out].role == Buffer::Role::Local || buffers.layout->plan.offset[out] >= 0)
      continue;
    buffers.tensors[out] = allocate(buffers, k.output);
    buffers.pointers[out] = storage_base(buffers.tensors[out]);
  }
  std::vector<void*> args;
  for (int b : nest.args) args.push_back(buffers.pointers[static_cast<size_t>(b)]);
  const int64_t* symbols = buffers.layout->symbols.data();
  if (tuner != nullptr) {
    if (const auto chosen = tuner->decided(functions.site)) {
      functions.chosen = *chosen;
    } else if (const auto why = not_repeatable(nest, buffers)) {
      functions.chosen = tuner->keep_default(functions.site, *why);
    } else {
      // A GPU launch returns before its kernel ends: each timed run waits for it.
      const bool on_gpu = program_.device.is_cuda();
      functions.chosen = tuner->time(functions.site, [&](size_t i) {
        functions.functions[i](args.data(), symbols);
        if (on_gpu) cuda::synchronize(program_.device.index());
      });
    }
  }
  // The chosen function runs last: the results are its own.
  functions.functions[functions.chosen](args.data(), symbols);
}

void CompiledProgram::run_extern(const ExternCall& e, std::span<const View> inputs,
                                 Buffers& buffers) const {
  ops::Stack args = e.args;
  if (program_.is_symbolic()) {
    // Size arguments (a new tensor's sizes) in this call's values.
    graph::concretize(args, [&](const SymInt& size) {
      return binding_.value_of(program_.facts.simplify(symbolic::expr_of(size)),
                               buffers.layout->symbols);
    });
  }
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const ExternCall::Input& in = e.inputs[i];
    const View& v = inputs[i];
    Tensor t =
        buffers.tensors[static_cast<size_t>(in.buffer)].as_strided(v.sizes, v.strides, v.offset);
    if (in.element < 0) {
      args[static_cast<size_t>(in.arg)] = ops::IValue(std::move(t));
    } else {
      auto list = args[static_cast<size_t>(in.arg)].to_tensor_list();
      list[static_cast<size_t>(in.element)] = std::move(t);
      args[static_cast<size_t>(in.arg)] = ops::IValue(std::move(list));
    }
  }
  std::vector<Tensor> results;
  {
    ops::DispatchModeGuard plain(nullptr);
    results = ops::call(*e.op, std::move(args));
  }
  for (size_t i = 0; i < e.outputs.size() && i < results.size(); ++i) {
    const size_t out = static_cast<size_t>(e.outputs[i]);
    if (!results[i].defined()) continue;
    // A kernel that chose another layout than its meta function said is copied into the
    // promised one.
    const Tensor r = in_layout_of(results[i], buffers, e.outputs[i]);
    buffers.tensors[out] = r;
    buffers.pointers[out] = r.numel() > 0 ? storage_base(r) : nullptr;
  }
}

void CompiledProgram::run_extern_or_generated(const ExternOrGenerated& choice,
                                              std::span<const View> inputs,
                                              StepFunctions& functions, Buffers& buffers,
                                              Autotuner* tuner) const {
  // The generated way: its nests in order, each with its chosen variant (tuned on its first run).
  const auto generated = [&](Autotuner* nest_tuner) {
    for (size_t i = 0; i < choice.generated.size(); ++i) {
      run_nest(choice.generated[i], functions.nests[i], buffers, nest_tuner);
    }
  };
  if (tuner != nullptr) {
    const TuningSite& site = *functions.extern_or_generated;
    std::optional<size_t> chosen = tuner->decided(site);
    if (!chosen) {
      generated(tuner);  // the nests' variants first, then both ways as a whole
      chosen = tuner->time(site, [&](size_t i) {
        if (i == 0) {
          run_extern(choice.extern_call, inputs, buffers);
        } else {
          generated(nullptr);
        }
      });
    } else if (*chosen == 1) {
      generated(tuner);
    }
    functions.generated = *chosen == 1;
  }
  // The chosen way runs last: the outputs are its own.
  if (functions.generated) {
    generated(nullptr);
  } else {
    run_extern(choice.extern_call, inputs, buffers);
  }
}

std::optional<std::string> CompiledProgram::not_repeatable(const LoopNest& nest,
                                                           const Buffers& buffers) const {
  // A part reading a buffer that it or a later part writes, and no earlier part wrote in this
  // run, reads what the previous run left (an in-place update). A row an earlier part writes and
  // a later one updates in place (softmax's output) is written anew by every run.
  std::set<int> written, read_only;
  for (size_t j = 0; j < nest.parts.size(); ++j) {
    std::set<int> from_here;
    for (size_t k = j; k < nest.parts.size(); ++k) from_here.insert(nest.parts[k].output);
    std::optional<int> rewritten;
    for_each_load(nest.parts[j].body, [&](const ExprNode& l) {
      if (from_here.count(l.buffer) && !written.count(l.buffer)) rewritten = l.buffer;
    });
    if (rewritten) return fmt::format("it updates buf{} in place", *rewritten);
    written.insert(nest.parts[j].output);
  }
  for (const Kernel& k : nest.parts) {
    for_each_load(k.body, [&](const ExprNode& l) {
      if (!written.count(l.buffer)) read_only.insert(l.buffer);
    });
  }
  // Distinct buffers in overlapping memory (an output aliasing an input).
  const auto extent = [&](int b) {
    const auto* begin = static_cast<const char*>(buffers.pointers[static_cast<size_t>(b)]);
    return std::pair{begin, begin + buffers.layout->bytes[static_cast<size_t>(b)]};
  };
  for (int w : written) {
    if (program_.buffers[static_cast<size_t>(w)].role == Buffer::Role::Local) continue;
    const auto [wb, we] = extent(w);
    for (int r : read_only) {
      const auto [rb, re] = extent(r);
      if (wb != nullptr && rb != nullptr && wb < re && rb < we) {
        return fmt::format("buf{} overlaps buf{}, which it reads", w, r);
      }
    }
  }
  return std::nullopt;
}

}  // namespace kiln::inductor
