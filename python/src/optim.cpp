// kiln.optim's native part (kiln._C.optim): the C++ optimizers and LR schedulers. python/kiln/optim
// wraps them in torch.optim's Python API (param_groups as dicts, state, state_dict); options
// travel as PyTorch's state-dict option maps ({"lr": 0.1, "betas": (0.9, 0.999), ...}), which
// each optimizer's options read and write (to_map / update_from).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <kiln/optim/adam.h>
#include <kiln/optim/adamw.h>
#include <kiln/optim/lr_scheduler.h>
#include <kiln/optim/rmsprop.h>
#include <kiln/optim/sgd.h>

#include "bindings.h"

namespace kiln::python {
namespace {

using namespace pybind11::literals;
using optim::OptionMap;
using optim::OptionValue;

// A Python dict of options as an OptionMap: bools stay flags, numbers become doubles, sequences
// of numbers tuples (Adam's betas). Other keys (PyTorch's "foreach", a user's "name") are not
// options of kiln's optimizers: the Python side keeps them.
OptionMap option_map(const py::dict& options, const char* who) {
  OptionMap out;
  for (auto [key, value] : options) {
    auto name = key.cast<std::string>();
    if (value.is_none()) continue;
    if (py::isinstance<py::bool_>(value)) {
      out.emplace(name, value.cast<bool>());
    } else if (auto s = as_scalar(value)) {
      out.emplace(name, s->to<double>());
    } else if (py::isinstance<py::sequence>(value) && !py::isinstance<py::str>(value)) {
      out.emplace(name, value.cast<std::vector<double>>());
    } else {
      throw py::type_error(
          fmt::format("{}: option \"{}\" must be a number, a bool or a tuple of "
                      "numbers, got {}",
                      who, name, type_name_of(value)));
    }
  }
  return out;
}

py::dict option_dict(const OptionMap& options) {
  py::dict out;
  for (const auto& [name, value] : options) {
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::vector<double>>) {
            out[py::str(name)] = py::tuple(py::cast(v));
          } else {
            out[py::str(name)] = py::cast(v);
          }
        },
        value);
  }
  return out;
}

// torch.optim's state_dict(): {"state": {index: {name: tensor}}, "param_groups": [{options...,
// "params": [indices]}]}.
py::dict state_dict_object(const optim::OptimizerState& s) {
  py::dict state;
  for (const auto& [index, entries] : s.state) state[py::int_(index)] = py::cast(entries);
  py::list groups;
  for (const auto& g : s.param_groups) {
    py::dict group = option_dict(g.options);
    group["params"] = py::cast(g.params);
    groups.append(group);
  }
  return py::dict("state"_a = state, "param_groups"_a = groups);
}

optim::OptimizerState state_from_object(const py::dict& d, const char* who) {
  KILN_CHECK(d.contains("state") && d.contains("param_groups"),
             "{}.load_state_dict: expected a dict with \"state\" and \"param_groups\"", who);
  optim::OptimizerState s;
  for (auto [index, entries] : d["state"].cast<py::dict>()) {
    s.state.emplace(index.cast<int64_t>(), entries.cast<std::map<std::string, Tensor>>());
  }
  for (py::handle g : d["param_groups"].cast<py::list>()) {
    auto group = g.cast<py::dict>();
    py::dict options;
    for (auto [key, value] : group) {
      if (key.cast<std::string>() != "params") options[key] = value;
    }
    s.param_groups.push_back(
        {option_map(options, who), group["params"].cast<std::vector<int64_t>>()});
  }
  return s;
}

// One optimizer class: constructed from param groups [(params, options)] and the defaults, with
// each group's options readable and writable as dicts (what the Python param_groups views use).
template <class Opt>
void bind_optimizer(py::module_& m, const char* name) {
  using Options = std::decay_t<decltype(std::declval<Opt&>().defaults())>;
  py::class_<Opt, optim::Optimizer, std::shared_ptr<Opt>>(m, name)
      .def(py::init([name](const py::list& groups, const py::dict& defaults) {
             Options d;
             d.update_from(option_map(defaults, name), name);
             std::vector<optim::ParamGroup<Options>> param_groups;
             for (py::handle g : groups) {
               auto pair = g.cast<py::tuple>();
               Options o = d;
               o.update_from(option_map(pair[1].cast<py::dict>(), name), name);
               param_groups.push_back({pair[0].cast<std::vector<Tensor>>(), o});
             }
             return std::make_shared<Opt>(std::move(param_groups), d);
           }),
           "param_groups"_a, "defaults"_a)
      .def("defaults", [](const Opt& o) { return option_dict(o.defaults().to_map()); })
      .def("group_options",
           [](const Opt& o, size_t group) { return option_dict(o.options(group).to_map()); })
      .def("set_group_options",
           [name](Opt& o, size_t group, const py::dict& options) {
             // Validated on a copy, so that a bad value leaves the group as it was.
             Options updated = o.options(group);
             updated.update_from(option_map(options, name), name);
             updated.validate(name);
             o.options(group) = updated;
           })
      .def("add_param_group", [name](Opt& o, std::vector<Tensor> params, const py::dict& options) {
        Options updated = o.defaults();
        updated.update_from(option_map(options, name), name);
        o.add_param_group({std::move(params), updated});
      });
}

void bind_optimizers(py::module_& m) {
  py::class_<optim::Optimizer, std::shared_ptr<optim::Optimizer>>(m, "Optimizer")
      .def("step",
           [](optim::Optimizer& o) {
             PythonCallSite site;
             o.step();
           })
      .def("zero_grad", &optim::Optimizer::zero_grad, "set_to_none"_a = true)
      .def("num_param_groups", &optim::Optimizer::num_param_groups)
      .def("params", &optim::Optimizer::params, "group"_a)
      .def("state_dict",
           [](const optim::Optimizer& o) { return state_dict_object(o.state_dict()); })
      .def("load_state_dict", [](optim::Optimizer& o, const py::dict& state) {
        o.load_state_dict(state_from_object(state, "Optimizer"));
      });
  bind_optimizer<optim::SGD>(m, "SGD");
  bind_optimizer<optim::Adam>(m, "Adam");
  bind_optimizer<optim::AdamW>(m, "AdamW");
  bind_optimizer<optim::RMSprop>(m, "RMSprop");
}

// ---- LR schedulers (each keeps its optimizer alive: it holds a reference to it) ----

void bind_schedulers(py::module_& m) {
  using optim::LRScheduler;
  using optim::Optimizer;
  py::class_<LRScheduler>(m, "LRScheduler")
      .def("step", &LRScheduler::step)
      .def("get_last_lr", &LRScheduler::get_last_lr)
      .def_property_readonly("last_epoch", &LRScheduler::last_epoch)
      .def_property_readonly("base_lrs", &LRScheduler::base_lrs)
      .def("state_dict",
           [](const LRScheduler& s) {
             auto st = s.state_dict();
             return py::dict("last_epoch"_a = st.last_epoch, "_step_count"_a = st.step_count,
                             "base_lrs"_a = st.base_lrs, "_last_lr"_a = st.last_lr);
           })
      .def("load_state_dict", [](LRScheduler& s, const py::dict& d) {
        optim::LRSchedulerState st;
        st.last_epoch = d["last_epoch"].cast<int64_t>();
        st.step_count = d["_step_count"].cast<int64_t>();
        st.base_lrs = d["base_lrs"].cast<std::vector<double>>();
        st.last_lr = d["_last_lr"].cast<std::vector<double>>();
        s.load_state_dict(st);
      });

  py::class_<optim::StepLR, LRScheduler>(m, "StepLR")
      .def(py::init<Optimizer&, int64_t, double>(), py::keep_alive<1, 2>(), "optimizer"_a,
           "step_size"_a, "gamma"_a = 0.1);
  py::class_<optim::MultiStepLR, LRScheduler>(m, "MultiStepLR")
      .def(py::init<Optimizer&, std::vector<int64_t>, double>(), py::keep_alive<1, 2>(),
           "optimizer"_a, "milestones"_a, "gamma"_a = 0.1);
  py::class_<optim::CosineAnnealingLR, LRScheduler>(m, "CosineAnnealingLR")
      .def(py::init<Optimizer&, int64_t, double>(), py::keep_alive<1, 2>(), "optimizer"_a,
           "T_max"_a, "eta_min"_a = 0.0);
  py::class_<optim::LinearLR, LRScheduler>(m, "LinearLR")
      .def(py::init<Optimizer&, double, double, int64_t>(), py::keep_alive<1, 2>(), "optimizer"_a,
           "start_factor"_a = 1.0 / 3, "end_factor"_a = 1.0, "total_iters"_a = 5);
  // Python callables: pybind11's std::function wrapper takes the GIL around each call.
  py::class_<optim::LambdaLR, LRScheduler>(m, "LambdaLR")
      .def(py::init<Optimizer&, std::vector<optim::LambdaLR::Lambda>>(), py::keep_alive<1, 2>(),
           "optimizer"_a, "lr_lambdas"_a);
  py::class_<optim::OneCycleLR, LRScheduler>(m, "OneCycleLR")
      .def(py::init([](Optimizer& optimizer, std::vector<double> max_lrs, int64_t total_steps,
                       double pct_start, std::string anneal_strategy, bool cycle_momentum,
                       double base_momentum, double max_momentum, double div_factor,
                       double final_div_factor, bool three_phase) {
             optim::OneCycleLROptions o{pct_start,        std::move(anneal_strategy),
                                        cycle_momentum,   base_momentum,
                                        max_momentum,     div_factor,
                                        final_div_factor, three_phase};
             return std::make_unique<optim::OneCycleLR>(optimizer, std::move(max_lrs), total_steps,
                                                        o);
           }),
           py::keep_alive<1, 2>(), "optimizer"_a, "max_lrs"_a, "total_steps"_a, "pct_start"_a,
           "anneal_strategy"_a, "cycle_momentum"_a, "base_momentum"_a, "max_momentum"_a,
           "div_factor"_a, "final_div_factor"_a, "three_phase"_a);
}

}  // namespace

void bind_optim(py::module_& m) {
  py::module_ om = m.def_submodule("optim", "kiln::optim: optimizers and LR schedulers");
  bind_optimizers(om);
  bind_schedulers(om);
}

}  // namespace kiln::python
