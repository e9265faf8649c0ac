#include "inductor/compiled_program.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/creation.h>

#include <fmt/format.h>

#include <set>

namespace kiln::inductor {

namespace {

// The storage base: buffers are addressed by absolute storage offsets (views fold into them).
void* storage_base(const Tensor& t) {
  return static_cast<char*>(t.data_ptr()) -
         t.storage_offset() * static_cast<int64_t>(itemsize(t.dtype()));
}

// The buffer's storage in elements (its layout's extent), at least one.
int64_t storage_elements(const Buffer& b) {
  return std::max<int64_t>(storage_bytes(b) / static_cast<int64_t>(itemsize(b.dtype)), 1);
}

Tensor allocate(const Buffer& b) {
  // One flat allocation viewed with the buffer's layout (offset included).
  return empty({storage_elements(b)}, b.dtype).as_strided(b.sizes, b.strides, b.offset);
}

bool same_layout(const Tensor& t, const Buffer& b) {
  return t.dtype() == b.dtype && t.sizes().vec() == b.sizes && t.strides().vec() == b.strides &&
         t.storage_offset() == b.offset;
}

}  // namespace

CompiledProgram::CompiledProgram(Program program, std::shared_ptr<const LoadedModule> module,
                                 bool keep_arena)
    : program_(std::move(program)),
      module_(std::move(module)),
      plan_(plan_memory(program_)),
      keep_arena_(keep_arena) {
  extern_reads_.assign(program_.buffers.size(), false);
  // Last reader of each intermediate buffer; outputs are never released.
  std::vector<int> last(program_.buffers.size(), -1);
  auto read = [&](int buffer, int step) {
    if (buffer >= 0) last[static_cast<size_t>(buffer)] = step;
  };
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const int step = static_cast<int>(s);
    if (const auto* nest = std::get_if<LoopNest>(&program_.steps[s])) {
      kernels_.push_back(reinterpret_cast<KernelFn>(module_->symbol(nest->function)));
      for (int b : nest->args) read(b, step);
    } else {
      kernels_.push_back(nullptr);
      for (const ExternCall::Input& in : std::get<ExternCall>(program_.steps[s]).inputs) {
        read(in.buffer, step);
        extern_reads_[static_cast<size_t>(in.buffer)] = true;
      }
    }
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

std::vector<Tensor> CompiledProgram::run(std::span<const Tensor> inputs) const {
  if (plan_.arena_bytes == 0) return run_with(inputs, Tensor());
  // One allocation per call, or none: the kept arena, unless another call holds it.
  const auto fresh = [this] { return empty({plan_.arena_bytes + 64}, kUInt8); };
  if (keep_arena_) {
    std::unique_lock lock(arena_mutex_, std::try_to_lock);
    if (lock.owns_lock()) {
      if (!arena_.defined()) arena_ = fresh();
      std::vector<Tensor> outputs = run_with(inputs, arena_);
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
  return run_with(inputs, fresh());
}

std::vector<Tensor> CompiledProgram::run_with(std::span<const Tensor> inputs,
                                              const Tensor& arena) const {
  KILN_CHECK(inputs.size() == program_.num_inputs, "inductor: the graph takes {} inputs, got {}",
             program_.num_inputs, inputs.size());
  std::vector<Tensor> buffers(program_.buffers.size());
  std::vector<void*> pointers(program_.buffers.size(), nullptr);
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    const Buffer& buf = program_.buffers[b];
    if (buf.role != Buffer::Role::Input) continue;
    Tensor t = inputs[static_cast<size_t>(buf.input)];
    KILN_CHECK(t.dtype() == buf.dtype && t.sizes().vec() == buf.sizes,
               "inductor: input {} is {} [{}]; the compiled graph expects {} [{}]", buf.input,
               dtype_name(t.dtype()), fmt::join(t.sizes(), ", "), dtype_name(buf.dtype),
               fmt::join(buf.sizes, ", "));
    if (!same_layout(t, buf)) {
      // Another layout than the graph was compiled for (a gradient arriving in another layout
      // than the forward output had): a copy in the expected one.
      Tensor laid_out = allocate(buf);
      laid_out.copy_(t);
      t = laid_out;
    }
    buffers[b] = t;
    pointers[b] = t.numel() > 0 ? storage_base(t) : nullptr;
  }
  // Planned buffers: places in the arena (64-byte aligned), as flat tensors sharing its memory
  // for the extern calls that read them.
  char* base = nullptr;
  if (arena.defined()) {
    const auto address = reinterpret_cast<uintptr_t>(arena.data_ptr());
    base = static_cast<char*>(arena.data_ptr()) + (64 - address % 64) % 64;
  }
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    if (plan_.offset[b] < 0) continue;
    const Buffer& buf = program_.buffers[b];
    void* at = base + plan_.offset[b];
    pointers[b] = at;
    if (!extern_reads_[b]) continue;
    buffers[b] =
        from_blob(at, {storage_elements(buf)}, {1}, buf.dtype, [arena](void*) { (void)arena; });
  }
  autograd::NoGradGuard no_grad;
  std::vector<void*> args;
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    if (const auto* nest = std::get_if<LoopNest>(&program_.steps[s])) {
      for (const Kernel& k : nest->parts) {
        const size_t out = static_cast<size_t>(k.output);
        if (program_.buffers[out].role == Buffer::Role::Local || plan_.offset[out] >= 0) continue;
        buffers[out] = allocate(program_.buffers[out]);
        pointers[out] = storage_base(buffers[out]);
      }
      args.clear();
      for (int b : nest->args) args.push_back(pointers[static_cast<size_t>(b)]);
      kernels_[s](args.data());
    } else {
      const ExternCall& e = std::get<ExternCall>(program_.steps[s]);
      ops::Stack args = e.args;
      for (const ExternCall::Input& in : e.inputs) {
        Tensor t =
            buffers[static_cast<size_t>(in.buffer)].as_strided(in.sizes, in.strides, in.offset);
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
        const Buffer& buf = program_.buffers[out];
        Tensor r = results[i];
        if (!r.defined()) continue;
        if (!same_layout(r, buf)) {
          // A kernel chose another layout than its meta function said: copy into the promised one.
          Tensor fixed = allocate(buf);
          fixed.copy_(r);
          r = fixed;
        }
        buffers[out] = r;
        pointers[out] = r.numel() > 0 ? storage_base(r) : nullptr;
      }
    }
    for (int b : release_[s]) {
      buffers[static_cast<size_t>(b)] = Tensor();
      pointers[static_cast<size_t>(b)] = nullptr;
    }
  }
  std::vector<Tensor> outputs;
  for (const OutputView& o : program_.outputs) {
    outputs.push_back(
        buffers[static_cast<size_t>(o.buffer)].as_strided(o.sizes, o.strides, o.offset));
  }
  return outputs;
}

}  // namespace kiln::inductor
