// mark_dynamic / mark_static: the marks are kept in a side table keyed by TensorImpl and held
// weakly, so they die with the tensor and a reused address never inherits them (the weak pointer
// must still lead to the same impl).
#include <kiln/capture/mark_dynamic.h>
#include <kiln/core/error.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace kiln {

namespace {

struct TensorMarks {
  std::weak_ptr<TensorImpl> impl;
  std::map<int64_t, capture::DimMark> dims;
};

std::mutex& marks_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<const TensorImpl*, TensorMarks>& marks_table() {
  static std::unordered_map<const TensorImpl*, TensorMarks> t;
  return t;
}

int64_t checked_dim(const Tensor& t, int64_t dim, const char* who) {
  KILN_CHECK(t.defined(), "{}: expected a defined tensor", who);
  const int64_t rank = t.dim();
  KILN_CHECK(dim >= -rank && dim < rank, "{}: dim {} is out of range for a tensor of rank {}", who,
             dim, rank);
  return dim < 0 ? dim + rank : dim;
}

void set_mark(const Tensor& t, int64_t dim, capture::DimMark mark) {
  std::lock_guard lock(marks_mutex());
  auto& table = marks_table();
  std::erase_if(table, [](const auto& item) { return item.second.impl.expired(); });
  TensorMarks& marks = table[t.impl()];
  if (marks.impl.lock() != t.impl_ptr()) marks = TensorMarks{t.impl_ptr(), {}};
  marks.dims[dim] = mark;
}

}  // namespace

void mark_dynamic(const Tensor& t, int64_t dim, std::optional<int64_t> min,
                  std::optional<int64_t> max) {
  const int64_t d = checked_dim(t, dim, "mark_dynamic");
  KILN_CHECK(!min || !max || *min <= *max, "mark_dynamic: min {} is greater than max {}",
             min.value_or(0), max.value_or(0));
  set_mark(t, d, capture::DimMark{true, min, max});
}

void mark_static(const Tensor& t, int64_t dim) {
  set_mark(t, checked_dim(t, dim, "mark_static"), capture::DimMark{false, {}, {}});
}

namespace capture {

std::optional<DimMark> dim_mark(const Tensor& t, int64_t dim) {
  std::lock_guard lock(marks_mutex());
  const auto& table = marks_table();
  auto it = table.find(t.impl());
  if (it == table.end() || it->second.impl.lock() != t.impl_ptr()) return std::nullopt;
  auto d = it->second.dims.find(dim);
  if (d == it->second.dims.end()) return std::nullopt;
  return d->second;
}

}  // namespace capture
}  // namespace kiln
