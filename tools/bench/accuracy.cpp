#include "accuracy.h"

#include <kiln/kiln.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln_bench {
namespace {

// Compared on the CPU: the same arithmetic (in float64) whichever device produced the outputs.
kiln::Tensor on_cpu(const kiln::Tensor& t) { return t.is_cpu() ? t : t.to(kiln::kCPU); }

}  // namespace

double max_rel_err(const std::vector<kiln::Tensor>& eager,
                   const std::vector<kiln::Tensor>& compiled) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (eager.size() != compiled.size()) return kInfinity;
  kiln::autograd::NoGradGuard no_grad;
  double worst = 0;
  for (size_t i = 0; i < eager.size(); ++i) {
    const kiln::IntList e_sizes = eager[i].sizes(), c_sizes = compiled[i].sizes();
    if (!std::equal(e_sizes.begin(), e_sizes.end(), c_sizes.begin(), c_sizes.end())) {
      return kInfinity;
    }
    if (eager[i].numel() == 0) continue;
    const kiln::Tensor e = on_cpu(eager[i]).to(kiln::kFloat64);
    const kiln::Tensor c = on_cpu(compiled[i]).to(kiln::kFloat64);
    const double diff = (c - e).abs().max().item<double>();
    const double scale = std::max(e.abs().max().item<double>(), 1e-30);
    if (std::isnan(diff)) return diff;
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

}  // namespace kiln_bench
