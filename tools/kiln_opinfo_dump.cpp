// kiln_opinfo_dump FILE: runs every op-info sample in the registry (functional ops, not random)
// and writes each sample's arguments, kiln's outputs (or error) and the op's tolerances as JSON.
// The PyTorch oracle test feeds the same arguments to torch.ops.aten and compares.
#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iostream>

using json = nlohmann::json;
using namespace kiln;

namespace {

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json tensor_json(const Tensor& t) {
  json j;
  j["kind"] = "tensor";
  if (!t.defined()) {
    j["kind"] = "none";
    return j;
  }
  j["dtype"] = std::string(dtype_name(t.dtype()));
  j["shape"] = std::vector<int64_t>(t.sizes().begin(), t.sizes().end());
  j["wrapped"] = t.impl()->is_wrapped_number();
  json data = json::array();
  if (is_integral(t.dtype(), /*include_bool=*/true)) {
    for (int64_t v : t.tolist<int64_t>()) data.push_back(v);
  } else {
    for (double v : t.tolist<double>()) data.push_back(number(v));
  }
  j["data"] = std::move(data);
  return j;
}

json ivalue_json(const ops::IValue& v) {
  const auto& var = v.variant();
  if (v.is_none()) return json{{"kind", "none"}};
  if (v.is_tensor()) return tensor_json(v.to_tensor());
  if (v.is_tensor_list()) {
    json items = json::array();
    for (const Tensor& t : v.to_tensor_list()) items.push_back(tensor_json(t));
    return json{{"kind", "tensor_list"}, {"items", items}};
  }
  if (v.is_bool()) return json{{"kind", "bool"}, {"value", v.to_bool()}};
  if (v.is_int() || std::holds_alternative<SymInt>(var)) {
    return json{{"kind", "int"}, {"value", v.to_int()}};
  }
  if (v.is_double()) return json{{"kind", "float"}, {"value", number(v.to_double())}};
  if (v.is_scalar()) {
    Scalar s = v.to_scalar();
    if (s.is_bool()) return json{{"kind", "bool"}, {"value", s.to_bool()}};
    if (s.is_integral()) return json{{"kind", "int"}, {"value", s.to_int()}};
    return json{{"kind", "float"}, {"value", number(s.to_double())}};
  }
  if (v.is_string()) return json{{"kind", "str"}, {"value", v.to_string()}};
  if (std::holds_alternative<DType>(var)) {
    return json{{"kind", "dtype"}, {"value", std::string(dtype_name(v.to_dtype()))}};
  }
  if (std::holds_alternative<Device>(var))
    return json{{"kind", "device"}, {"value", v.to_device().str()}};
  if (std::holds_alternative<std::vector<double>>(var)) {
    return json{{"kind", "float_list"}, {"value", v.to_double_list()}};
  }
  return json{{"kind", "int_list"}, {"value", v.to_int_list()}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: kiln_opinfo_dump OUTPUT.json\n";
    return 2;
  }
  json records = json::array();
  for (const ops::OpDef* op : ops::OpRegistry::instance().all()) {
    if (op->variant != ops::Variant::Functional || !op->samples || op->is_random) continue;
    std::vector<ops::Sample> samples;
    try {
      samples = op->samples();
    } catch (const std::exception& e) {
      std::cerr << op->full_name() << ": samples() threw: " << e.what() << "\n";
      return 1;
    }
    for (const ops::Sample& s : samples) {
      json r;
      r["op"] = op->name();
      r["overload"] = op->schema.overload;
      r["schema"] = op->schema.str();
      r["sample"] = s.description;
      r["rtol"] = op->sample_rtol;
      r["atol"] = op->sample_atol;
      json args = json::array();
      for (size_t i = 0; i < s.args.size(); ++i) {
        json a = ivalue_json(s.args[i]);
        const auto& arg = op->schema.arguments.at(i);
        a["name"] = arg.name;
        a["kwarg_only"] = arg.kwarg_only;
        args.push_back(std::move(a));
      }
      r["args"] = std::move(args);
      try {
        std::vector<Tensor> outs = ops::call(*op, s.args);
        json jo = json::array();
        for (const Tensor& t : outs) jo.push_back(tensor_json(t));
        r["outputs"] = std::move(jo);
      } catch (const Error& e) {
        r["error"] = e.what();
      }
      records.push_back(std::move(r));
    }
  }
  std::ofstream out(argv[1]);
  out << records.dump() << "\n";
  std::cout << "wrote " << records.size() << " samples to " << argv[1] << "\n";
  return out ? 0 : 1;
}
