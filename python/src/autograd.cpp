// Grad mode, inference mode, autograd.grad, random seeds and threads.
#include <pybind11/stl.h>

#include <memory>

#include "bindings.h"

namespace kiln::python {
namespace {

// Holds an InferenceMode for a `with kiln.inference_mode():` block.
class InferenceModeScope {
 public:
  explicit InferenceModeScope(bool enabled) : enabled_(enabled) {}
  void enter() { guard_ = std::make_unique<autograd::InferenceMode>(enabled_); }
  void exit() { guard_.reset(); }

 private:
  bool enabled_;
  std::unique_ptr<autograd::InferenceMode> guard_;
};

}  // namespace

void bind_autograd(py::module_& m) {
  m.def("is_grad_enabled", &autograd::GradMode::is_enabled);
  m.def("_set_grad_enabled", &autograd::GradMode::set_enabled);
  m.def("is_inference_mode_enabled", &autograd::InferenceMode::is_enabled);
  py::class_<InferenceModeScope>(m, "_InferenceModeScope")
      .def(py::init<bool>())
      .def("enter", &InferenceModeScope::enter)
      .def("exit", &InferenceModeScope::exit);
  m.def(
      "manual_seed", [](uint64_t seed) { manual_seed(seed); }, py::arg("seed"));
  m.def("set_num_threads", &set_num_threads);
  m.def("get_num_threads", &get_num_threads);
  m.def(
      "_autograd_grad",
      [](const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
         const std::vector<std::optional<Tensor>>& grad_outputs, std::optional<bool> retain_graph,
         bool create_graph, bool allow_unused) {
        std::vector<Tensor> grads;
        for (const auto& g : grad_outputs) grads.push_back(g.value_or(Tensor()));
        std::vector<Tensor> result =
            autograd::grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused);
        py::list out;
        for (const Tensor& r : result) out.append(r.defined() ? py::cast(r) : py::none());
        return py::tuple(out);
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs"), py::arg("retain_graph"),
      py::arg("create_graph"), py::arg("allow_unused"));
}

}  // namespace kiln::python
