#pragma once
// Memory planning (DESIGN.md §5): the intermediate buffers the generated kernels write are placed
// in one arena at offsets chosen from their lifetimes, so that buffers whose lives do not overlap
// share memory (reuse by liveness) and a call makes one allocation instead of one per buffer, or
// none when the arena is kept across calls (mode "reduce-overhead"). Graph outputs, inputs, local
// buffers and extern calls' outputs (allocated by their kernels) are not planned.
#include "inductor/loop_ir.h"

#include <kiln/core/array_ref.h>

#include <cstdint>
#include <span>
#include <vector>

namespace kiln::inductor {

struct MemoryPlan {
  std::vector<int64_t>
      offset;  // per buffer: byte offset of its storage in the arena, -1 if unplanned
  int64_t arena_bytes = 0;
  int64_t total_bytes = 0;  // the planned buffers' sizes added up (memory without reuse)
};

// Bytes a buffer's storage spans (its layout's extent from position 0): a static buffer's, and
// one's in a layout of concrete sizes.
int64_t storage_bytes(const Buffer& b);
int64_t storage_bytes(IntList sizes, IntList strides, int64_t offset, DType dtype);

// The plan of a static program.
MemoryPlan plan_memory(const Program& program);
// The plan with each buffer's storage of bytes[buffer] (a symbolic program's, per binding).
MemoryPlan plan_memory(const Program& program, std::span<const int64_t> bytes);

}  // namespace kiln::inductor
