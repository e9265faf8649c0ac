#include <kiln/ops/schema.h>

#include <cctype>
#include <charconv>

namespace kiln::ops {
namespace {

class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  Schema parse() {
    Schema s;
    std::string full = identifier();
    if (auto dot = full.find('.'); dot != std::string::npos) {
      s.name = full.substr(0, dot);
      s.overload = full.substr(dot + 1);
    } else {
      s.name = full;
    }
    expect('(');
    bool kwarg_only = false;
    skip_ws();
    while (peek() != ')') {
      skip_ws();
      if (peek() == '*') {
        ++pos_;
        kwarg_only = true;
      } else {
        Argument a = argument(/*with_name=*/true);
        a.kwarg_only = kwarg_only;
        s.arguments.push_back(std::move(a));
      }
      skip_ws();
      if (peek() == ',') ++pos_;
      skip_ws();
    }
    expect(')');
    skip_ws();
    expect('-');
    expect('>');
    skip_ws();
    if (peek() == '(') {
      ++pos_;
      while (peek() != ')') {
        s.returns.push_back(argument(/*with_name=*/false));
        skip_ws();
        if (peek() == ',') ++pos_;
        skip_ws();
      }
      expect(')');
    } else if (text_.substr(pos_, 2) != "()") {
      s.returns.push_back(argument(/*with_name=*/false));
    }
    skip_ws();
    if (pos_ != text_.size()) fail("trailing characters");
    return s;
  }

 private:
  Argument argument(bool with_name) {
    skip_ws();
    Argument a;
    std::string type = identifier();
    // Alias annotation: Tensor(a) or Tensor(a!)
    if (peek() == '(') {
      ++pos_;
      std::string alias;
      while (peek() != ')' && peek() != '!') alias += text_[pos_++];
      if (peek() == '!') {
        a.is_mutable = true;
        ++pos_;
      }
      expect(')');
      a.alias_set = alias;
    }
    if (peek() == '?' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '[') {
      ++pos_;  // Tensor?[]
      a.optional_elements = true;
    }
    bool list = false;
    if (peek() == '[') {
      ++pos_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {  // int[2]
        a.list_size = a.list_size * 10 + (text_[pos_++] - '0');
      }
      expect(']');
      list = true;
    }
    if (a.optional_elements && !(list && type == "Tensor")) fail("only Tensor?[] may hold None");
    if (peek() == '?') {
      ++pos_;
      a.optional = true;
    }
    a.type_str = type + (a.optional_elements ? "?" : "") +
                 (list ? (a.list_size ? "[" + std::to_string(a.list_size) + "]" : "[]") : "") +
                 (a.optional ? "?" : "");
    a.type = arg_type(type, list);
    skip_ws();
    if (with_name && std::isalpha(static_cast<unsigned char>(peek()))) {
      a.name = identifier();
      skip_ws();
      if (peek() == '=') {
        ++pos_;
        a.default_value = default_value(a);
      }
    } else if (!with_name && (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_')) {
      a.name = identifier();  // named return
    }
    return a;
  }

  ArgType arg_type(const std::string& t, bool list) {
    if (t == "Tensor") return list ? ArgType::TensorList : ArgType::Tensor;
    if (t == "int") return list ? ArgType::IntList : ArgType::Int;
    if (t == "SymInt") return list ? ArgType::SymIntList : ArgType::SymInt;
    if (t == "float") return list ? ArgType::FloatList : ArgType::Float;
    if (t == "bool") return list ? ArgType::BoolList : ArgType::Bool;
    if (list) fail("lists of " + t + " are not supported");
    if (t == "Scalar") return ArgType::Scalar;
    if (t == "str") return ArgType::String;
    if (t == "ScalarType") return ArgType::DType;
    if (t == "Device") return ArgType::Device;
    fail("unknown type '" + t + "'");
  }

  IValue default_value(const Argument& a) {
    skip_ws();
    size_t start = pos_;
    if (peek() == '[') {
      int depth = 0;
      do {
        if (peek() == '[') ++depth;
        if (peek() == ']') --depth;
        ++pos_;
      } while (depth > 0 && pos_ < text_.size());
    } else if (peek() == '\'' || peek() == '"') {
      char q = text_[pos_++];
      while (pos_ < text_.size() && text_[pos_] != q) ++pos_;
      ++pos_;
    } else {
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ')') ++pos_;
    }
    std::string v(text_.substr(start, pos_ - start));
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    if (v == "None") return IValue();
    if (v == "True" || v == "False") {
      bool b = v == "True";
      if (a.type == ArgType::Scalar) return Scalar(b);
      return b;
    }
    if (v.front() == '\'' || v.front() == '"') return v.substr(1, v.size() - 2);
    if (v.front() == '[') {
      std::vector<int64_t> items;
      std::string_view body(v);
      body = body.substr(1, body.size() - 2);
      while (!body.empty()) {
        while (!body.empty() && (body.front() == ' ' || body.front() == ',')) body.remove_prefix(1);
        if (body.empty()) break;
        int64_t x = 0;
        auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), x);
        if (ec != std::errc()) fail("bad list default " + v);
        body.remove_prefix(static_cast<size_t>(p - body.data()));
        items.push_back(x);
      }
      if (a.type == ArgType::SymIntList) return std::vector<SymInt>(items.begin(), items.end());
      return items;
    }
    if (auto dt = dtype_from_name(v.starts_with("kiln.") ? v.substr(5) : v);
        dt && a.type == ArgType::DType) {
      return *dt;
    }
    bool is_float = v.find_first_of(".eE") != std::string::npos || v == "inf" || v == "-inf";
    if (is_float) {
      double d = std::stod(v);
      if (a.type == ArgType::Scalar) return Scalar(d);
      return d;
    }
    int64_t i = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), i);
    if (ec != std::errc() || p != v.data() + v.size()) fail("bad default value '" + v + "'");
    if (a.type == ArgType::Scalar) return Scalar(i);
    if (a.type == ArgType::Float) return static_cast<double>(i);
    if (a.list_size > 0 && a.type == ArgType::IntList)  // "int[2] stride=1"
      return std::vector<int64_t>(static_cast<size_t>(a.list_size), i);
    if (a.list_size > 0 && a.type == ArgType::SymIntList)
      return std::vector<SymInt>(static_cast<size_t>(a.list_size), SymInt(i));
    if (a.type == ArgType::IntList || a.type == ArgType::SymIntList) {
      return std::vector<int64_t>{i};
    }
    return i;
  }

  std::string identifier() {
    skip_ws();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    if (start == pos_) fail("expected an identifier");
    return std::string(text_.substr(start, pos_ - start));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  [[noreturn]] void fail(const std::string& why) const {
    KILN_FAIL("schema parse error at position {} of \"{}\": {}", pos_, text_, why);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool matches(const Argument& a, const IValue& v) {
  if (v.is_none()) return a.optional;
  const auto& var = v.variant();
  switch (a.type) {
    case ArgType::Tensor:
      return v.is_tensor();
    case ArgType::TensorList:
      return v.is_tensor_list();
    case ArgType::Int:
      return v.is_int() || std::holds_alternative<SymInt>(var) || v.is_bool();
    case ArgType::SymInt:
      return v.is_int() || std::holds_alternative<SymInt>(var);
    case ArgType::IntList:
    case ArgType::SymIntList:
      return std::holds_alternative<std::vector<int64_t>>(var) ||
             std::holds_alternative<std::vector<SymInt>>(var) || v.is_int();
    case ArgType::Float:
      return v.is_double() || v.is_int() || v.is_scalar();
    case ArgType::FloatList:
      return std::holds_alternative<std::vector<double>>(var);
    case ArgType::Bool:
      return v.is_bool();
    case ArgType::BoolList:
      return std::holds_alternative<std::vector<int64_t>>(var);
    case ArgType::Scalar:
      return v.is_scalar() || v.is_double() || v.is_int() || v.is_bool();
    case ArgType::String:
      return v.is_string();
    case ArgType::DType:
      return std::holds_alternative<DType>(var);
    case ArgType::Device:
      return std::holds_alternative<Device>(var);
  }
  return false;
}

}  // namespace

Schema parse_schema(std::string_view text) { return SchemaParser(text).parse(); }

int Schema::find(std::string_view arg_name) const {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].name == arg_name) return static_cast<int>(i);
  }
  return -1;
}

bool Schema::is_mutating() const {
  for (const auto& a : arguments) {
    if (a.is_mutable) return true;
  }
  return false;
}

namespace {
// "Tensor(a!)" from a type and its alias annotation.
std::string annotated_type(const Argument& a) {
  std::string type = a.type_str;
  if (a.alias_set) {
    auto base_end = type.find_first_of("[?");
    type.insert(base_end == std::string::npos ? type.size() : base_end,
                fmt::format("({}{})", *a.alias_set, a.is_mutable ? "!" : ""));
  }
  return type;
}
}  // namespace

std::string Schema::str() const {
  std::string s = full_name() + "(";
  bool kw = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Argument& a = arguments[i];
    if (i) s += ", ";
    if (a.kwarg_only && !kw) {
      s += "*, ";
      kw = true;
    }
    s += fmt::format("{} {}", annotated_type(a), a.name);
    if (a.default_value) s += fmt::format("={}", a.default_value->repr());
  }
  s += ") -> ";
  auto ret = [](const Argument& r) {
    return r.name.empty() ? annotated_type(r) : fmt::format("{} {}", annotated_type(r), r.name);
  };
  if (returns.size() == 1) {
    s += ret(returns[0]);
  } else {
    s += "(";
    for (size_t i = 0; i < returns.size(); ++i) s += (i ? ", " : "") + ret(returns[i]);
    s += ")";
  }
  return s;
}

void normalize_args(const Schema& schema, Stack& args) {
  KILN_CHECK(args.size() <= schema.arguments.size(), "{}: expected at most {} arguments, got {}",
             schema.full_name(), schema.arguments.size(), args.size());
  for (size_t i = 0; i < schema.arguments.size(); ++i) {
    const Argument& a = schema.arguments[i];
    if (i >= args.size()) {
      KILN_CHECK(a.default_value.has_value(), "{}: missing required argument '{}' ({})",
                 schema.full_name(), a.name, a.type_str);
      args.push_back(*a.default_value);
      continue;
    }
    if (!matches(a, args[i])) {
      throw TypeError(fmt::format("{}: argument '{}' must be {}, got {} ({})", schema.full_name(),
                                  a.name, a.type_str, args[i].type_name(), args[i].repr()));
    }
    // A single int for "int[N]" stands for N copies, as PyTorch's argument parser reads it.
    if (a.list_size > 0 && (a.type == ArgType::IntList || a.type == ArgType::SymIntList) &&
        (args[i].is_int() || std::holds_alternative<SymInt>(args[i].variant()))) {
      std::vector<SymInt> copies(static_cast<size_t>(a.list_size), args[i].to_sym_int());
      if (a.type == ArgType::SymIntList)
        args[i] = std::move(copies);
      else
        args[i] = std::vector<int64_t>(copies.size(), copies[0].expect_int());
    }
    if (a.type == ArgType::Tensor && !a.optional && !args[i].to_tensor().defined()) {
      KILN_FAIL("{}: argument '{}' is an undefined tensor", schema.full_name(), a.name);
    }
  }
}

}  // namespace kiln::ops
