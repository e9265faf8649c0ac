#pragma once
// The scheduler (DESIGN.md §5): decides which kernels share loops. Each kernel's loops are first
// normalized (loops of one iteration dropped; its parallel loops first: a pointwise kernel's output
// loops but the innermost, a reduction's output loops). Consecutive kernels whose leading loops
// agree are then fused into one loop nest over those loops, when every value a kernel reads from
// an earlier one in the nest was written in the same iteration of the shared loops: a reduction
// and its epilogue (softmax's max, sum and output per row; layer norm's mean, variance and
// output), and siblings reading the same inputs, become one parallel loop whose rows stay in cache.
// What could not be fused, and why, is said on the perf_hints channel.
#include "inductor/loop_ir.h"

#include <string>

namespace kiln::inductor {

Program schedule(Program program, const std::string& graph_name);

}  // namespace kiln::inductor
