#include "fuzz/reproducer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <sstream>

namespace kiln::fuzz {
namespace {

std::string dtype_cpp(DType d) { return literal_cpp(ops::IValue(d)); }

std::string value_name(int v) { return fmt::format("v{}", v); }

std::string arg_cpp(const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::Value:
      return value_name(a.values[0]);
    case Arg::Kind::ValueList: {
      std::vector<std::string> names;
      for (int v : a.values) names.push_back(value_name(v));
      return fmt::format("std::vector<kiln::Tensor>{{{}}}", fmt::join(names, ", "));
    }
    case Arg::Kind::Literal:
      return literal_cpp(a.literal);
  }
  return "";
}

std::string node_cpp(const Node& node, int value) {
  std::vector<std::string> args;
  for (const Arg& a : node.args) args.push_back(arg_cpp(a));
  const std::string name = value_name(value);
  switch (node.target) {
    case WriteTarget::Functional:
    case WriteTarget::Argument:
      return fmt::format("  kiln::Tensor {} = call(\"{}\", {{{}}}{});\n", name, node.op,
                         fmt::join(args, ", "),
                         node.output != 0 ? fmt::format(", {}", node.output) : "");
    case WriteTarget::Clone:
    case WriteTarget::CloneNarrow: {
      std::string target = name;
      if (node.target == WriteTarget::CloneNarrow) {
        target = fmt::format("{}.narrow({}, {}, {})", name, node.narrow_dim, node.narrow_start,
                             node.narrow_length);
      }
      const std::string source = arg_cpp(node.args[0]);
      args[0] = target;
      return fmt::format("  kiln::Tensor {} = {}.clone();\n  call(\"{}\", {{{}}});\n", name, source,
                         node.op, fmt::join(args, ", "));
    }
  }
  return "";
}

std::string input_cpp(const InputSpec& in) {
  const std::string sizes = fmt::format("{{{}}}", fmt::join(in.sizes, ", "));
  std::string make;
  if (in.dtype == DType::Bool) {
    make = fmt::format(
        "kiln::randint(0, 2, {}, kiln::TensorOptions().dtype(kiln::DType::Int64), "
        "&gen).to(kiln::DType::Bool)",
        sizes);
  } else if (is_floating_point(in.dtype)) {
    make = fmt::format("kiln::randn({}, kiln::TensorOptions().dtype({}), &gen)", sizes,
                       dtype_cpp(in.dtype));
  } else {
    make = fmt::format("kiln::randint(-4, 5, {}, kiln::TensorOptions().dtype({}), &gen)", sizes,
                       dtype_cpp(in.dtype));
  }
  return fmt::format(
      "  {{\n    kiln::Generator gen({}ull);\n    kiln::Tensor t = {};\n{}    in.push_back(t);\n  "
      "}}\n",
      in.data_seed, make, in.requires_grad ? "    t.requires_grad_(true);\n" : "");
}

std::string shape_mode_cpp(ShapeMode m) {
  switch (m) {
    case ShapeMode::Static:
      return "  options.dynamic = false;\n";
    case ShapeMode::Dynamic:
      return "  options.dynamic = true;\n";
    case ShapeMode::MarkDynamic:
      return "";
  }
  return "";
}

// The header comment's finding, one "// " line per line.
std::string commented(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) out += "//   " + line + "\n";
  return out;
}

constexpr const char* kHelpers = R"(
namespace {

// One registry op call, as the fuzzer made it.
kiln::Tensor call(const char* op, kiln::ops::Stack args, size_t output = 0) {
  return kiln::ops::call(kiln::ops::OpRegistry::instance().get(op), std::move(args)).at(output);
}

// Within 1e-4 relative of eager, plus 1e-4 of the result's largest magnitude; exact for integer
// and bool results; NaN where eager has NaN.
void expect_close(const kiln::Tensor& got, const kiln::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.defined(), want.defined()) << what;
  if (!want.defined()) return;
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::vector<double> g = got.detach().to(kiln::DType::Float64).contiguous().tolist<double>();
  const std::vector<double> w = want.detach().to(kiln::DType::Float64).contiguous().tolist<double>();
  double scale = 1;
  for (double x : w) {
    if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
  }
  const bool exact = !kiln::is_floating_point(want.dtype());
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " element " << i << ": " << g[i] << " vs NaN";
    } else if (exact || !std::isfinite(w[i])) {
      EXPECT_EQ(g[i], w[i]) << what << " element " << i;
    } else {
      EXPECT_NEAR(g[i], w[i], 1e-4 * std::abs(w[i]) + 1e-4 * scale) << what << " element " << i;
    }
  }
}

)";

}  // namespace

std::string reproducer_test_name(const Program& program, const RunConfig& config) {
  std::string shape = config.name();
  std::string name = fmt::format("Seed{}_{}", program.seed, shape);
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

std::string reproducer_cpp(const Program& program, const RunConfig& config,
                           const std::string& test_name, const std::string& finding) {
  std::ostringstream out;
  out << "// A program kiln_fuzz generated (seed " << program.seed << ", then shrunk) that failed\n"
      << "// with " << config.name() << ":\n"
      << commented(finding) << "// Generated by tools/fuzz/reproducer.cpp; the program is\n"
      << commented(program.str())
      << "#include <kiln/capture/mark_dynamic.h>\n#include <kiln/kiln.h>\n\n"
      << "#include <gtest/gtest.h>\n\n#include <algorithm>\n#include <cmath>\n#include <string>\n"
      << "#include <vector>\n";
  out << kHelpers;
  out << "std::vector<kiln::Tensor> program(const std::vector<kiln::Tensor>& in) {\n";
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    out << fmt::format("  const kiln::Tensor& {} = in[{}];\n", value_name(static_cast<int>(i)), i);
  }
  const int num_inputs = static_cast<int>(program.inputs.size());
  for (size_t n = 0; n < program.nodes.size(); ++n) {
    out << node_cpp(program.nodes[n], num_inputs + static_cast<int>(n));
  }
  std::vector<std::string> outputs;
  for (int v : program.outputs) outputs.push_back(value_name(v));
  out << fmt::format("  return {{{}}};\n}}\n\n", fmt::join(outputs, ", "));
  out << "std::vector<kiln::Tensor> inputs() {\n  std::vector<kiln::Tensor> in;\n";
  for (const InputSpec& in : program.inputs) out << input_cpp(in);
  out << "  return in;\n}\n\n";
  const std::optional<Program> other = at_other_sizes(program);
  const bool at_other = finding.find(kAtOtherSizes) != std::string::npos && other.has_value();
  if (at_other) {
    out << "// The same inputs with every size >= 2 grown by one.\n"
        << "std::vector<kiln::Tensor> inputs_at_other_sizes() {\n"
        << "  std::vector<kiln::Tensor> in;\n";
    for (const InputSpec& in : other->inputs) out << input_cpp(in);
    out << "  return in;\n}\n\n";
  }
  // The loss weights, drawn as the runner draws them.
  out << "kiln::Tensor loss_of(const std::vector<kiln::Tensor>& outs) {\n"
      << "  kiln::Tensor loss;\n"
      << "  for (size_t i = 0; i < outs.size(); ++i) {\n"
      << "    if (!outs[i].requires_grad() || !kiln::is_floating_point(outs[i].dtype())) "
         "continue;\n"
      << fmt::format("    kiln::Generator gen({}ull + 7919 * (i + 1));\n", program.seed)
      << "    const kiln::Tensor w = kiln::randn(outs[i].sizes().vec(), "
         "kiln::TensorOptions().dtype(kiln::DType::Float32), &gen).to(outs[i].dtype());\n"
      << "    const kiln::Tensor term = (outs[i] * w).sum();\n"
      << "    loss = loss.defined() ? loss + term : term;\n  }\n  return loss;\n}\n\n"
      << "}  // namespace\n\n";
  out << "TEST(FuzzRegression, " << test_name << ") {\n"
      << "  kiln::CompileOptions options;\n"
      << fmt::format("  options.backend = std::string(\"{}\");\n", config.backend)
      << fmt::format("  options.mode = \"{}\";\n", config.mode)
      << shape_mode_cpp(config.shapes)
      // A lambda, not the function itself: compile() checks a callable for null, which a
      // function's address never is (GCC warns).
      << "  auto compiled = kiln::compile(\n"
         "      [](const std::vector<kiln::Tensor>& in) { return program(in); }, options);\n";
  const auto marked = config.shapes == ShapeMode::MarkDynamic ? marked_dim(program) : std::nullopt;
  const std::string mark_args =
      marked ? fmt::format("[{}], {}", marked->first, marked->second) : std::string();
  // The mark_dynamic line for the inputs in `var` (none outside that mode).
  auto mark = [&mark_args](std::string_view indent, std::string_view var) {
    return mark_args.empty() ? std::string()
                             : fmt::format("{}kiln::mark_dynamic({}{});\n", indent, var, mark_args);
  };
  if (at_other) {
    out << "  // Compiled at the generated sizes; the finding is at other sizes.\n"
        << "  {\n    std::vector<kiln::Tensor> first = inputs();\n"
        << mark("    ", "first") << "    compiled(first);\n  }\n"
        << "  std::vector<kiln::Tensor> eager_in = inputs_at_other_sizes(),\n"
        << "                            compiled_in = inputs_at_other_sizes();\n";
  } else {
    out << "  std::vector<kiln::Tensor> eager_in = inputs(), compiled_in = inputs();\n";
  }
  out << mark("  ", "compiled_in");
  out << "  const std::vector<kiln::Tensor> want = program(eager_in);\n"
      << "  const std::vector<kiln::Tensor> got = compiled(compiled_in);\n"
      << "  ASSERT_EQ(got.size(), want.size());\n"
      << "  for (size_t i = 0; i < want.size(); ++i) {\n"
      << "    expect_close(got[i], want[i], \"output \" + std::to_string(i));\n  }\n"
      << "  for (size_t i = 0; i < eager_in.size(); ++i) {\n"
      << "    expect_close(compiled_in[i].detach(), eager_in[i].detach(), \"input \" + "
         "std::to_string(i) + \" after the call\");\n  }\n"
      << "  const kiln::Tensor want_loss = loss_of(want), got_loss = loss_of(got);\n"
      << "  ASSERT_EQ(got_loss.defined(), want_loss.defined());\n"
      << "  if (!want_loss.defined()) return;\n"
      << "  want_loss.backward();\n  got_loss.backward();\n"
      << "  for (size_t i = 0; i < eager_in.size(); ++i) {\n"
      << "    if (!eager_in[i].requires_grad()) continue;\n"
      << "    expect_close(compiled_in[i].grad(), eager_in[i].grad(), \"gradient of input \" + "
         "std::to_string(i));\n  }\n}\n";
  return out.str();
}

}  // namespace kiln::fuzz
