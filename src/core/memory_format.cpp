// Dense layouts for memory formats: the stride orders PyTorch uses for NCHW and NCDHW tensors.
#include <kiln/core/error.h>
#include <kiln/core/memory_format.h>

#include <algorithm>
#include <array>

namespace kiln {
namespace {

// Dims from innermost to outermost for each layout of an n-d tensor.
SmallVector<int64_t, 6> innermost_first(size_t ndim, MemoryFormat fmt) {
  switch (fmt) {
    case MemoryFormat::Contiguous: {
      SmallVector<int64_t, 6> order;
      for (int64_t d = static_cast<int64_t>(ndim) - 1; d >= 0; --d) order.push_back(d);
      return order;
    }
    case MemoryFormat::ChannelsLast:
      KILN_CHECK(ndim == 4, "memory format channels_last needs a 4-d tensor, got {} dims", ndim);
      return {1, 3, 2, 0};
    case MemoryFormat::ChannelsLast3d:
      KILN_CHECK(ndim == 5, "memory format channels_last_3d needs a 5-d tensor, got {} dims", ndim);
      return {1, 4, 3, 2, 0};
    case MemoryFormat::Preserve:
      break;
  }
  throw Error("memory format preserve_format names no layout: it keeps the input's");
}

template <typename Int, typename Vec>
Vec strides_in_order(ArrayRef<Int> sizes, MemoryFormat fmt) {
  Vec strides(sizes.size());
  Int s = 1;
  for (int64_t d : innermost_first(sizes.size(), fmt)) {
    strides[d] = s;
    if constexpr (std::is_same_v<Int, int64_t>) {
      s = s * std::max<int64_t>(sizes[d], 1);
    } else {
      auto v = sizes[d].maybe_int();
      s = (v && *v < 1) ? s : s * sizes[d];
    }
  }
  return strides;
}

}  // namespace

const char* memory_format_name(MemoryFormat fmt) {
  switch (fmt) {
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    case MemoryFormat::ChannelsLast3d:
      return "channels_last_3d";
    case MemoryFormat::Preserve:
      return "preserve_format";
  }
  return "?";
}

DimVector strides_for_memory_format(IntList sizes, MemoryFormat fmt) {
  return strides_in_order<int64_t, DimVector>(sizes, fmt);
}

SymDimVector strides_for_memory_format(SymIntList sizes, MemoryFormat fmt) {
  return strides_in_order<SymInt, SymDimVector>(sizes, fmt);
}

namespace {

// One rule for plain and symbolic geometry (on symbols its comparisons record guards: the layout
// a trace takes is an assumption about the sizes).
template <typename Int>
bool contiguous_in(ArrayRef<Int> sizes, ArrayRef<Int> strides, MemoryFormat fmt) {
  if (fmt == MemoryFormat::ChannelsLast && sizes.size() != 4) return false;
  if (fmt == MemoryFormat::ChannelsLast3d && sizes.size() != 5) return false;
  if (fmt == MemoryFormat::Preserve) return false;
  Int expected = 1;
  for (int64_t d : innermost_first(sizes.size(), fmt)) {
    if (sizes[d] == 0) return true;
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected = expected * sizes[d];
  }
  return true;
}

template <typename Int>
MemoryFormat suggested_format(ArrayRef<Int> sizes, ArrayRef<Int> strides) {
  for (MemoryFormat fmt :
       {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d}) {
    if (contiguous_in(sizes, strides, fmt)) return fmt;
  }
  return MemoryFormat::Contiguous;
}

}  // namespace

bool is_contiguous_in(IntList sizes, IntList strides, MemoryFormat fmt) {
  return contiguous_in(sizes, strides, fmt);
}
bool is_contiguous_in(SymIntList sizes, SymIntList strides, MemoryFormat fmt) {
  return contiguous_in(sizes, strides, fmt);
}

MemoryFormat suggest_memory_format(IntList sizes, IntList strides) {
  return suggested_format(sizes, strides);
}
MemoryFormat suggest_memory_format(SymIntList sizes, SymIntList strides) {
  return suggested_format(sizes, strides);
}

}  // namespace kiln
