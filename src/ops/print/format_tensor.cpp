// format_tensor: the layout half of PyTorch's torch/_tensor_str.py — nested brackets, line
// wrapping of rows, summarization with "...", and the "tensor(" prefix with its suffixes
// (device, size, dtype, requires_grad). Values are read straight from memory through the
// tensor's strides; ElementFormatter decides how each one is spelled.
#include <kiln/ops/print.h>

#include "ops/print/element_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

namespace kiln {

namespace {

using print_detail::ElementFormatter;

// The indices of one dim that are shown: all of them, or edgeitems at each end when the tensor
// is summarized (an empty list when edgeitems is 0: the dim prints as "...").
std::vector<int64_t> shown_indices(int64_t size, bool summarize, int64_t edgeitems) {
  std::vector<int64_t> idx;
  if (summarize && size > 2 * edgeitems) {
    for (int64_t i = 0; i < edgeitems; ++i) idx.push_back(i);
    for (int64_t i = size - edgeitems; i < size; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < size; ++i) idx.push_back(i);
  }
  return idx;
}

class TensorPrinter {
 public:
  TensorPrinter(const Tensor& t, const PrintOptions& options)
      : options_(options),
        sizes_(t.sizes().begin(), t.sizes().end()),
        strides_(t.strides().begin(), t.strides().end()),
        base_(static_cast<const char*>(t.data_ptr())),
        itemsize_(static_cast<int64_t>(t.itemsize())),
        summarize_(t.numel() > options.threshold),
        formatter_(t.dtype(), options) {
    if (!(summarize_ && options_.edgeitems == 0)) observe(0, 0);
    formatter_.finish_observing();
  }

  std::string str(int indent) const { return nested(0, 0, indent); }

 private:
  const char* at(int64_t offset) const { return base_ + offset * itemsize_; }
  int64_t ndim() const { return static_cast<int64_t>(sizes_.size()); }

  void observe(int64_t dim, int64_t offset) {
    if (dim == ndim()) {
      formatter_.observe(at(offset));
      return;
    }
    for (int64_t i : shown_indices(sizes_[dim], summarize_, options_.edgeitems)) {
      observe(dim + 1, offset + i * strides_[dim]);
    }
  }

  bool elided(int64_t size) const { return summarize_ && size > 2 * options_.edgeitems; }

  std::string nested(int64_t dim, int64_t offset, int indent) const {
    if (dim == ndim()) return formatter_.format(at(offset));
    if (dim == ndim() - 1) return row(dim, offset, indent);
    int64_t size = sizes_[dim];
    std::vector<std::string> slices;
    auto add = [&](int64_t i) {
      slices.push_back(nested(dim + 1, offset + i * strides_[dim], indent + 1));
    };
    if (elided(size)) {
      for (int64_t i = 0; i < options_.edgeitems; ++i) add(i);
      slices.emplace_back("...");
      for (int64_t i = size - options_.edgeitems; i < size; ++i) add(i);
    } else {
      for (int64_t i = 0; i < size; ++i) add(i);
    }
    // Sub-tensors of rank k are separated by k blank-free newlines, aligned under the bracket.
    std::string sep = fmt::format(",{}{}", std::string(static_cast<size_t>(ndim() - dim - 1), '\n'),
                                  std::string(static_cast<size_t>(indent + 1), ' '));
    return fmt::format("[{}]", join(slices, sep));
  }

  // The innermost dim: elements separated by ", ", wrapped to fit the line width.
  std::string row(int64_t dim, int64_t offset, int indent) const {
    int64_t size = sizes_[dim];
    std::vector<std::string> items;
    auto add = [&](int64_t i) {
      items.push_back(formatter_.format(at(offset + i * strides_[dim])));
    };
    if (summarize_ && options_.edgeitems == 0) {
      items.emplace_back("...");
    } else if (elided(size)) {
      for (int64_t i = 0; i < options_.edgeitems; ++i) add(i);
      items.emplace_back(" ...");
      for (int64_t i = size - options_.edgeitems; i < size; ++i) add(i);
    } else {
      for (int64_t i = 0; i < size; ++i) add(i);
    }
    int element_length = formatter_.width() + 2;
    int available = options_.linewidth - indent;
    int per_line = std::max(1, available >= 0 ? available / element_length : 0);
    std::vector<std::string> lines;
    for (size_t i = 0; i < items.size(); i += static_cast<size_t>(per_line)) {
      size_t end = std::min(items.size(), i + static_cast<size_t>(per_line));
      lines.push_back(join({items.begin() + static_cast<std::ptrdiff_t>(i),
                            items.begin() + static_cast<std::ptrdiff_t>(end)},
                           ", "));
    }
    std::string sep = fmt::format(",\n{}", std::string(static_cast<size_t>(indent + 1), ' '));
    return fmt::format("[{}]", join(lines, sep));
  }

  static std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i) out += sep;
      out += parts[i];
    }
    return out;
  }

  PrintOptions options_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  const char* base_;
  int64_t itemsize_;
  bool summarize_;
  ElementFormatter formatter_;
};

// Python's repr of a shape tuple: (), (5,), (2, 3).
std::string size_tuple(const Tensor& t) {
  auto sizes = t.sym_sizes();
  if (sizes.size() == 1) return fmt::format("({},)", sizes[0].str());
  std::vector<std::string> parts;
  for (const SymInt& s : sizes) parts.push_back(s.str());
  return fmt::format("({})", fmt::join(parts, ", "));
}

std::string dtype_suffix(DType dtype) { return fmt::format("dtype=kiln.{}", dtype_name(dtype)); }

// Appends ", suffix" to the last line, or starts a new line indented under the contents when
// the suffix would not fit in the line width.
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes, int indent,
                         int linewidth) {
  size_t newline = text.rfind('\n');
  // PyTorch counts this as len - rfind + 1 (rfind is -1 without a newline).
  int64_t last_line_len = static_cast<int64_t>(text.size()) -
                          (newline == std::string::npos ? -1 : static_cast<int64_t>(newline)) + 1;
  for (const auto& suffix : suffixes) {
    int64_t len = static_cast<int64_t>(suffix.size());
    if (last_line_len + len + 2 > linewidth) {
      text += fmt::format(",\n{}{}", std::string(static_cast<size_t>(indent), ' '), suffix);
      last_line_len = indent + len;
    } else {
      text += fmt::format(", {}", suffix);
      last_line_len += len + 2;
    }
  }
  return text + ")";
}

}  // namespace

std::string format_tensor(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  t.impl()->materialize("printing a tensor");
  const PrintOptions options = get_printoptions();
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  const DType dtype = t.dtype();
  std::vector<std::string> suffixes;
  if (!t.is_cpu()) suffixes.push_back(fmt::format("device='{}'", t.device().str()));

  std::string contents;
  if (t.is_meta()) {
    // No values to show; the shape and any non-default dtype say what it is.
    suffixes.push_back(fmt::format("size={}", size_tuple(t)));
    if (dtype != default_float_dtype()) suffixes.push_back(dtype_suffix(dtype));
    contents = "...";
  } else if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back(fmt::format("size={}", size_tuple(t)));
    // No values show what an empty tensor holds, so any non-float32 dtype is spelled out.
    if (dtype != default_float_dtype()) suffixes.push_back(dtype_suffix(dtype));
    contents = "[]";
  } else {
    if (options.edgeitems == 0) suffixes.push_back(fmt::format("size={}", size_tuple(t)));
    bool default_dtype =
        dtype == default_float_dtype() || dtype == DType::Int64 || dtype == DType::Bool;
    if (!default_dtype) suffixes.push_back(dtype_suffix(dtype));
    Tensor host = t.is_cpu() ? t : t.to(Device::cpu());
    contents = TensorPrinter(host, options).str(indent);
  }
  if (t.requires_grad()) suffixes.emplace_back("requires_grad=True");
  return add_suffixes(fmt::format("{}{}", prefix, contents), suffixes, indent, options.linewidth);
}

}  // namespace kiln
