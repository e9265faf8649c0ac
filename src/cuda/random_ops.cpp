// The CUDA slots of the random ops (src/ops/random/random_ops.cpp) and native_dropout
// (src/ops/dropout/dropout_ops.cpp). Each draw reserves its Philox counters on the host from the
// device's generator (default_generator(device), seeded by manual_seed like the CPU's, or the
// per-call one), exactly as many as the CPU kernel would, and launches with (seed, offset): no
// synchronization, and the same seed gives the CPU's numbers on the GPU (kernels/random.h says
// how exact). Element i of a draw is always the output's i-th element in row-major order: an
// output that is not contiguous is drawn into a contiguous buffer first, as on the CPU. While a
// kiln::cuda::Graph captures the stream, a draw reserves nothing: its kernel reads the seed and
// offset that each replay writes (cuda/graph_rng.h).
//
// randperm is a Fisher-Yates shuffle, sequential by nature: it runs on the host with the CPU
// kernel over the counters reserved from the device's generator and is copied over (a blocking
// copy), which gives the CPU's permutation exactly; it cannot be captured into a CUDA graph.
#include "cuda/device_state.h"
#include "cuda/graph_rng.h"
#include "cuda/kernels/random.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "ops/dropout/dropout_kernels.h"
#include "ops/random/generator_scope.h"
#include "ops/random/random_kernels.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/cuda/graph.h>
#include <kiln/ops/creation.h>

#include <cmath>

namespace kiln::cuda {
namespace {

using ops::Stack;
using Outs = std::vector<Tensor>;
using random_detail::philox_blocks;

// The Philox arguments of `op`'s draw of n elements with `words` words each on out's device:
// counters reserved from its generator, or, while a Graph captures the stream, the draw's place
// in the graph (each replay reserves the graph's counters from the device's default generator).
kernels::PhiloxArgs reserve(const Tensor& out, int64_t n, int words, const char* op) {
  const uint64_t counters = philox_blocks(n, words);
  Generator& generator = random_detail::current_generator(out.device());
  if (auto in_graph = graph_rng_draw(out.device().index(), counters)) {
    KILN_CHECK(&generator == &default_generator(out.device()),
               "{} (CUDA): a draw from a Generator passed to the op cannot be captured into a "
               "CUDA graph (replays draw from the default generator of {}); expected none",
               op, out.device().str());
    return *in_graph;
  }
  auto [seed, offset] = generator.seed_and_reserve(counters);
  return {seed, offset};
}

// Runs fill(data) on out's memory when out is contiguous, else on a contiguous buffer copied into
// out afterwards (the CPU's fill_row_major).
template <typename Fill>
void fill_row_major(const Tensor& out, const Fill& fill) {
  if (out.is_contiguous()) {
    fill(out.data_ptr());
    return;
  }
  const Tensor buffer = empty_cuda_like(out, out.dtype());
  fill(buffer.data_ptr());
  device_copy(out, buffer);
}

void uniform_into(const Tensor& out, double from, double to) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int device = out.device().index();
  DeviceGuard guard(device);
  const kernels::PhiloxArgs s = reserve(out, n, ops::uniform_words(out.dtype()), "uniform_");
  fill_row_major(out, [&](void* data) {
    kernels::random_uniform(scalar_type(out.dtype()), data, n, from, to - from, s,
                            stream_of(device));
  });
}

void normal_into(const Tensor& out, double mean, double std) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int device = out.device().index();
  DeviceGuard guard(device);
  const kernels::PhiloxArgs s = reserve(out, n, ops::normal_words(out.dtype()), "normal_");
  fill_row_major(out, [&](void* data) {
    kernels::random_normal(scalar_type(out.dtype()), data, n, mean, std, s, stream_of(device));
  });
}

void randint_into(const Tensor& out, int64_t low, int64_t high) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int device = out.device().index();
  DeviceGuard guard(device);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const int words = ops::randint_words(range);
  const kernels::PhiloxArgs s = reserve(out, n, words, "randint");
  fill_row_major(out, [&](void* data) {
    kernels::random_int(scalar_type(out.dtype()), data, n, low, range, words, s, stream_of(device));
  });
}

// Whether every element of the bool tensor `ok` is true: one reduction and an 8-byte read (a
// synchronization, as the CPU's and PyTorch's argument checks of tensor values have).
bool all_true(const Tensor& ok) {
  return ok.sum(DType::Int64).to(Device::cpu()).item<int64_t>() == ok.numel();
}

// The CPU's checks of std (normal) and p (bernoulli), run on the host copy only when the device
// found a bad element, so that the message names the same value.
void check_std(const Tensor& std) {
  const Tensor std64 = std.to(DType::Float64);
  if (all_true(std64 >= 0.0)) return;
  const Tensor host = std64.to(Device::cpu()).contiguous();
  const double* sp = host.data_ptr<double>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    KILN_CHECK(sp[i] >= 0.0, "normal: expects all elements of std >= 0.0, but found {}", sp[i]);
  }
}

void check_probabilities(const Tensor& p) {
  const Tensor p64 = p.to(DType::Float64);
  if (all_true((p64 >= 0.0) * (p64 <= 1.0))) return;
  const Tensor host = p64.to(Device::cpu()).contiguous();
  const double* pp = host.data_ptr<double>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    KILN_CHECK(pp[i] >= 0.0 && pp[i] <= 1.0,
               "bernoulli: expects all elements of p in [0, 1], but found {}", pp[i]);
  }
}

void check_probability(double p, const char* op) {
  KILN_CHECK(p >= 0.0 && p <= 1.0, "{}: expects 0 <= p <= 1, but got p={}", op, p);
}

void check_floating(DType dtype, const char* op) {
  KILN_CHECK_T(TypeError, is_floating_point(dtype), "{}: expected a floating point dtype, got {}",
               op, dtype_name(dtype));
}

// out = 1 where a float64 uniform (drawn as rand(float64)) is below p, else 0: the CPU's
// bernoulli_into; p broadcasts to out (a CPU 0-dim float64 tensor for a number p).
void bernoulli_into(const Tensor& out, const Tensor& p) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device().index());
  autograd::NoGradGuard no_grad;
  const Tensor u = empty_cuda_like(out, DType::Float64);
  uniform_into(u, 0.0, 1.0);
  device_copy(out, u < p);  // compared in float64 (u's dtype wins), as on the CPU
}

// normal(mean, std) with tensors: a standard normal draw z of out's dtype, then mean + std * z in
// float64 (the CPU's normal_tensor_impl; the CUDA mul and add round each step as the CPU does).
void normal_tensor(const Stack& args, const Tensor& out) {
  auto operand = [](const ops::IValue& v) {
    return v.is_tensor() ? v.to_tensor() : wrapped_scalar(v.to_double());
  };
  const Tensor mean = operand(args[0]), std = operand(args[1]);
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device().index());
  autograd::NoGradGuard no_grad;
  check_std(std);
  const Tensor z = empty_cuda_like(out, out.dtype());
  normal_into(z, 0.0, 1.0);
  device_copy(out, mean.to(DType::Float64) + std.to(DType::Float64) * z.to(DType::Float64));
}

void randperm_into(const Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int device = out.device().index();
  DeviceGuard guard(device);
  // A replay would give the capture's permutation again (and the copy below waits for the host).
  KILN_CHECK(!is_capturing(device),
             "randperm (CUDA): cannot be captured into a CUDA graph (it shuffles on the host); "
             "expected cuda:{}'s stream not to be captured",
             device);
  auto [seed, offset] = random_detail::current_generator(out.device())
                            .seed_and_reserve(philox_blocks(n, ops::kRandpermWords));
  const random_detail::PhiloxStream s{seed, offset};
  Tensor perm = empty({n}, DType::Int64);
  ops::randperm_fill_kernels(perm.data_ptr<int64_t>(), n, s);
  Tensor target = out;
  target.copy_(perm);  // converts on the device; blocks until the host buffer is read
}

void native_dropout(const Stack& args, const Outs& out) {
  const Tensor& input = args[0].to_tensor();
  const double p = args[1].to_double();
  const bool train = args[2].is_none() || args[2].to_bool();
  const int device = out[0].device().index();
  DeviceGuard guard(device);
  if (!train) {
    device_copy(out[0], input);
    Tensor mask = out[1];
    mask.fill_(true);
    return;
  }
  const int64_t n = input.numel();
  if (n == 0) return;
  KILN_CHECK(out[0].is_contiguous() && out[1].is_contiguous(),
             "native_dropout (CUDA): expected contiguous outputs of size [{}]",
             fmt::join(input.sizes(), ", "));
  const kernels::PhiloxArgs s = reserve(out[0], n, ops::kDropoutWords, "native_dropout");
  // The CPU kernel's threshold and scale: keep when the word's top 24 bits are below
  // ceil(float(1 - p) * 2^24); kept elements times 1 / (1 - p).
  const double keep_probability = 1.0 - p;
  const auto threshold = static_cast<uint32_t>(
      std::ceil(static_cast<double>(static_cast<float>(keep_probability)) * 16777216.0));
  const double scale = keep_probability == 0.0 ? 0.0 : 1.0 / keep_probability;
  const Tensor x = as_input(input, out[0].device(), input.dtype(), "native_dropout").contiguous();
  kernels::dropout(scalar_type(input.dtype()), x.data_ptr(), out[0].data_ptr(),
                   out[1].data_ptr<bool>(), n, threshold, scale, s, stream_of(device));
}

// In-place ops write self and count as a change of it.
Outs written(const Tensor& self) {
  self.impl()->bump_version();
  return {self};
}

}  // namespace

KILN_CUDA_REGISTER(random_ops) {
  structured("rand", [](const Stack& a, const Outs& out) {
    check_factory_device(a[2], out[0], "rand");
    uniform_into(out[0], 0.0, 1.0);
  });
  structured("randn", [](const Stack& a, const Outs& out) {
    check_factory_device(a[2], out[0], "randn");
    normal_into(out[0], 0.0, 1.0);
  });
  structured("randint", [](const Stack& a, const Outs& out) {
    check_factory_device(a[3], out[0], "randint");
    randint_into(out[0], 0, a[0].to_int());
  });
  structured("randint.low", [](const Stack& a, const Outs& out) {
    check_factory_device(a[4], out[0], "randint");
    randint_into(out[0], a[0].to_int(), a[1].to_int());
  });
  structured("normal.float_float", [](const Stack& a, const Outs& out) {
    check_factory_device(a[4], out[0], "normal");
    normal_into(out[0], a[0].to_double(), a[1].to_double());
  });
  for (const char* op : {"normal.Tensor_Tensor", "normal.Tensor_float", "normal.float_Tensor"}) {
    structured(op, [](const Stack& a, const Outs& out) { normal_tensor(a, out[0]); });
  }
  structured("bernoulli", [](const Stack& a, const Outs& out) {
    const Tensor& p = a[0].to_tensor();
    if (p.numel() == 0) return;
    check_probabilities(p);
    bernoulli_into(out[0], p);
  });
  structured("bernoulli.p", [](const Stack& a, const Outs& out) {
    bernoulli_into(out[0], scalar_tensor(a[1].to_double(), DType::Float64));
  });
  structured("randperm", [](const Stack& a, const Outs& out) {
    check_factory_device(a[2], out[0], "randperm");
    randperm_into(out[0]);
  });
  structured("rand_like", [](const Stack&, const Outs& out) { uniform_into(out[0], 0.0, 1.0); });
  structured("randn_like", [](const Stack&, const Outs& out) { normal_into(out[0], 0.0, 1.0); });
  structured("native_dropout", native_dropout);

  // The in-place ops check their arguments themselves (they have no meta function), with the
  // CPU's messages.
  custom("uniform_", [](const Stack& a) {
    const Tensor& self = a[0].to_tensor();
    const double from = a[1].to_double(), to = a[2].to_double();
    check_floating(self.dtype(), "uniform_");
    KILN_CHECK(from <= to,
               "uniform_: expects to return a [from, to) range, but found from={} > to={}", from,
               to);
    uniform_into(self, from, to);
    return written(self);
  });
  custom("normal_", [](const Stack& a) {
    const Tensor& self = a[0].to_tensor();
    const double mean = a[1].to_double(), std = a[2].to_double();
    check_floating(self.dtype(), "normal_");
    KILN_CHECK(std >= 0.0, "normal_: expects std >= 0.0, but found std {}", std);
    normal_into(self, mean, std);
    return written(self);
  });
  custom("bernoulli_.float", [](const Stack& a) {
    const Tensor& self = a[0].to_tensor();
    const double p = a[1].to_double();
    check_probability(p, "bernoulli_");
    bernoulli_into(self, scalar_tensor(p, DType::Float64));
    return written(self);
  });
}

}  // namespace kiln::cuda
