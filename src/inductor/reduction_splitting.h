#pragma once
// Split reductions (GPU): a reduction with few outputs over a long loop runs one block per output
// (or per 8 outputs in the column form), leaving most of a GPU idle: batch norm's per-channel
// sums over [32, 64, 56, 56] ran on 64 blocks of an H100's 132 multiprocessors. Such a reduction
// becomes two: partial results over S chunks of its first reduction loop ([S, outputs...], S
// times the blocks), then the reduction of the partials over S.
#include "inductor/loop_ir.h"

#include <kiln/backends/backend.h>

namespace kiln::inductor {

// Whether reductions are split: options{"split_reductions": "true" | "false"} decides; unset, on
// GPUs only (a CPU thread runs many outputs' reductions in turn: nothing sits idle).
bool splits_reductions(const BackendContext& context, const Device& device);

// Splits every lone reduction of `program` (a nest of one Reduction kernel, as lowering makes
// them) over at least 4096 elements whose outputs fill fewer than 512 blocks (one output a block,
// or a tile of 8 or 16 in the column form), on a divisor of its first reduction loop (leading
// loops read as one run merged first), aiming at 1024 blocks of partials of at least 1024
// elements; static sizes only. Partial sums and products are kept in the device accumulator's
// type (float64 for floats, int64 for integers), maxima and minima in the output's. Returns how
// many were split.
size_t split_long_reductions(Program& program);

}  // namespace kiln::inductor
