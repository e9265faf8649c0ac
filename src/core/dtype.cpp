#include <kiln/core/dtype.h>

#include <array>
#include <string>

namespace kiln {

std::string_view dtype_name(DType t) {
  static constexpr std::array<std::string_view, kNumDTypes> names = {
      "bool",  "uint8",   "int8",     "int16",   "int32",
      "int64", "float16", "bfloat16", "float32", "float64"};
  return names[static_cast<size_t>(t)];
}

std::optional<DType> dtype_from_name(std::string_view name) {
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias aliases[] = {
      {"bool", DType::Bool},       {"uint8", DType::UInt8},   {"int8", DType::Int8},
      {"int16", DType::Int16},     {"short", DType::Int16},   {"int32", DType::Int32},
      {"int", DType::Int32},       {"int64", DType::Int64},   {"long", DType::Int64},
      {"float16", DType::Float16}, {"half", DType::Float16},  {"bfloat16", DType::BFloat16},
      {"float32", DType::Float32}, {"float", DType::Float32}, {"float64", DType::Float64},
      {"double", DType::Float64}};
  for (const auto& a : aliases) {
    if (a.name == name) return a.type;
  }
  return std::nullopt;
}

DType promote_types(DType a, DType b) {
  // PyTorch's promotion table restricted to kiln's dtypes (rows/cols in enum order:
  // b1 u1 i1 i2 i4 i8 f2 bf f4 f8).
  constexpr DType b1 = DType::Bool, u1 = DType::UInt8, i1 = DType::Int8, i2 = DType::Int16,
                  i4 = DType::Int32, i8 = DType::Int64, f2 = DType::Float16, bf = DType::BFloat16,
                  f4 = DType::Float32, f8 = DType::Float64;
  static constexpr DType table[kNumDTypes][kNumDTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[static_cast<size_t>(a)][static_cast<size_t>(b)];
}

namespace detail {
void unsupported_dtype(const char* op, DType t, const char* expected) {
  throw TypeError(
      fmt::format("{}: got a tensor of dtype {}, expected {}", op, dtype_name(t), expected));
}
}  // namespace detail

}  // namespace kiln
