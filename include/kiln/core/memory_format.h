#pragma once
// Memory formats, as in PyTorch: the dense layouts a 4-d (N, C, H, W) or 5-d (N, C, D, H, W)
// tensor may have. ChannelsLast keeps C innermost (NHWC in memory) while sizes stay NCHW.
#include <kiln/core/array_ref.h>
#include <kiln/core/small_vector.h>
#include <kiln/core/symint.h>

#include <cstdint>

namespace kiln {

enum class MemoryFormat : uint8_t { Contiguous, ChannelsLast, ChannelsLast3d, Preserve };

const char* memory_format_name(MemoryFormat fmt);

// Dense strides for sizes laid out in fmt. ChannelsLast needs 4 dims, ChannelsLast3d 5 dims
// (kiln::Error otherwise); Preserve is not a layout and is rejected.
DimVector strides_for_memory_format(IntList sizes, MemoryFormat fmt);
SymDimVector strides_for_memory_format(SymIntList sizes, MemoryFormat fmt);

// Whether (sizes, strides) is exactly the dense layout fmt describes; dims of size 1 may have
// any stride, as in PyTorch.
bool is_contiguous_in(IntList sizes, IntList strides, MemoryFormat fmt);
// The same on symbolic geometry: its comparisons on symbols record guards.
bool is_contiguous_in(SymIntList sizes, SymIntList strides, MemoryFormat fmt);

// The format a result computed from a tensor of this geometry should take: ChannelsLast(3d) when
// the tensor is dense in that layout and not also row-major contiguous, Contiguous otherwise.
MemoryFormat suggest_memory_format(IntList sizes, IntList strides);
MemoryFormat suggest_memory_format(SymIntList sizes, SymIntList strides);

}  // namespace kiln
