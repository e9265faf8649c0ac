#include "inductor/reduction_splitting.h"

#include "inductor/column_reads.h"
#include "inductor/loop_merging.h"
#include "inductor/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace kiln::inductor {

namespace {

// Splitting aims at kTargetBlocks blocks of partials, each reducing at least kLeastChunk
// elements, for reductions over at least kLongReduction elements.
constexpr int64_t kTargetBlocks = 1024;
constexpr int64_t kLeastChunk = 1024;
constexpr int64_t kLongReduction = 4096;

// Outputs the GPU's code generator gives one block: a tile of the column form (a 32-byte sector
// of the narrowest load, when the reduction reads across the outputs' innermost loop), else one
// (codegen_cuda.cpp's KernelWriter::column_shape decides the same way).
int64_t outputs_per_block(const Kernel& k) {
  if (k.ranges.empty()) return 1;
  ColumnReads reads;
  reads.add(k, static_cast<int64_t>(k.ranges.size() - 1),
            static_cast<int64_t>(k.ranges.size() + k.reduction_ranges.size() - 1));
  return reads.across() ? reads.tile() : 1;
}

// The largest divisor d >= 2 of `first` (the first reduction loop's size) with outputs * d within
// the blocks aimed at and length / d >= kLeastChunk, or 1 when none.
int64_t split_factor(int64_t outputs, int64_t per_block, int64_t length, int64_t first) {
  const int64_t target = kTargetBlocks * per_block;
  if (outputs * 2 > target || length < kLongReduction) return 1;
  for (int64_t d = std::min(first, target / outputs); d >= 2; --d) {
    if (first % d == 0 && length / d >= kLeastChunk) return d;
  }
  return 1;
}

// The type partial results are kept in: what the GPU's accumulator holds for sums and products
// (so that splitting rounds no more than one block's loop), the output's own for max and min.
DType partial_dtype(const std::string& reduction, DType out) {
  if (reduction == "max" || reduction == "min") return out;
  return is_floating_point(out) ? DType::Float64 : DType::Int64;
}

Sizes contiguous_sizes(const Sizes& sizes) {
  Sizes strides(sizes.size(), Size(1));
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
  return strides;
}

std::vector<Index> loop_vars(int64_t first, size_t count) {
  std::vector<Index> v;
  for (size_t i = 0; i < count; ++i) v.push_back(var(first + static_cast<int64_t>(i)));
  return v;
}

// The two nests of a split reduction `k` (factor `split`), its partials in buffer `partials`.
std::pair<LoopNest, LoopNest> split_nests(const Kernel& k, int64_t split, int partials,
                                          DType partials_dtype) {
  const size_t n = k.ranges.size(), r = k.reduction_ranges.size();
  const Size chunk(k.reduction_ranges[0].constant_value().value() / split);
  // Partials over [split, outputs...], the split loop outermost: the outputs' innermost loop
  // stays the innermost (a channels-last column keeps its contiguous lanes).
  Kernel partial = k;
  partial.ranges.insert(partial.ranges.begin(), Size(split));
  partial.reduction_ranges[0] = chunk;
  std::vector<Index> to;
  for (size_t i = 0; i < n; ++i) to.push_back(var(static_cast<int64_t>(i) + 1));
  to.push_back(var(0) * constant(chunk) + var(static_cast<int64_t>(n) + 1));
  for (size_t j = 1; j < r; ++j) to.push_back(var(static_cast<int64_t>(n + 1 + j)));
  partial.body = rewrite(
      k.body, [&to](const Index& e) { return rename_vars(e, to); }, [](int b) { return b; });
  partial.output = partials;
  const Sizes partial_strides = contiguous_sizes(partial.ranges);
  partial.store = strided_offset(loop_vars(0, n + 1), partial_strides, 0);

  // The partials reduced over the split loop, into the original output.
  Kernel total;
  total.kind = Kernel::Kind::Reduction;
  total.ranges = k.ranges;
  total.reduction_ranges = {Size(split)};
  total.reduction = k.reduction;
  std::vector<Index> at = {var(static_cast<int64_t>(n))};
  const std::vector<Index> outputs = loop_vars(0, n);
  at.insert(at.end(), outputs.begin(), outputs.end());
  total.body = load(partials, strided_offset(at, partial_strides, 0), partials_dtype);
  total.output = k.output;
  total.store = k.store;

  LoopNest first, second;
  first.parts.push_back(std::move(partial));
  second.parts.push_back(std::move(total));
  return {std::move(first), std::move(second)};
}

}  // namespace

bool splits_reductions(const BackendContext& context, const Device& device) {
  if (option_is(context, "split_reductions", "true")) return true;
  if (option_is(context, "split_reductions", "false")) return false;
  return device.is_cuda();
}

size_t split_long_reductions(Program& program) {
  size_t split_count = 0;
  std::vector<Step> steps;
  steps.reserve(program.steps.size());
  for (Step& step : program.steps) {
    auto* nest = std::get_if<LoopNest>(&step);
    const Kernel* k = nest != nullptr && nest->parts.size() == 1 && nest->outer.empty()
                          ? &nest->parts.front()
                          : nullptr;
    if (k == nullptr || k->kind != Kernel::Kind::Reduction || k->reduction_ranges.empty() ||
        !is_static(k->ranges) || !is_static(k->reduction_ranges)) {
      steps.push_back(std::move(step));
      continue;
    }
    // Leading reduction loops read as one run (channels-last [N, H, W] with stride C) are split
    // as one: more divisors than N's alone.
    Kernel merged = *k;
    while (merge_reduction_pair(merged, 0, program.facts)) {
    }
    const int64_t outputs = product(merged.ranges).constant_value().value();
    const int64_t length = product(merged.reduction_ranges).constant_value().value();
    const int64_t first = merged.reduction_ranges[0].constant_value().value();
    const int64_t split = split_factor(outputs, outputs_per_block(merged), length, first);
    if (split == 1) {
      steps.push_back(std::move(step));
      continue;
    }
    k = &merged;
    const DType out = program.buffers.at(static_cast<size_t>(k->output)).dtype;
    Buffer partials;
    partials.sizes = k->ranges;
    partials.sizes.insert(partials.sizes.begin(), Size(split));
    partials.strides = contiguous_sizes(partials.sizes);
    partials.dtype = partial_dtype(k->reduction, out);
    partials.name = fmt::format("buf{}", program.buffers.size());
    const DType partials_dtype = partials.dtype;
    program.buffers.push_back(std::move(partials));
    auto [first_nest, second_nest] =
        split_nests(*k, split, static_cast<int>(program.buffers.size()) - 1, partials_dtype);
    steps.emplace_back(std::move(first_nest));
    steps.emplace_back(std::move(second_nest));
    ++split_count;
  }
  program.steps = std::move(steps);
  return split_count;
}

}  // namespace kiln::inductor
