// conv2d forward at the shapes of ResNet-18's convolutions, batch 8, float32, reported as
// GFLOP/s (2 * N * C_out * H_out * W_out * C_in * kH * kW per call). Named
// "BM_conv2d/<layer>/t<threads>"; the inputs are NCHW except "layer1_3x3_channels_last", the
// layer1 shape with a channels-last input (and so a channels-last output).
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <cstdint>

namespace {

constexpr int64_t kBatch = 8;

struct ConvShape {
  int64_t c_in, c_out, size, kernel, stride, padding;
  bool channels_last = false;
};

void run_conv2d(benchmark::State& state, ConvShape s) {
  kiln::set_num_threads(static_cast<int>(state.range(0)));
  kiln::manual_seed(0);
  kiln::Tensor x = kiln::randn({kBatch, s.c_in, s.size, s.size});
  if (s.channels_last) x = x.contiguous(kiln::MemoryFormat::ChannelsLast);
  kiln::Tensor w = kiln::randn({s.c_out, s.c_in, s.kernel, s.kernel});
  for (auto _ : state) {
    kiln::Tensor y = kiln::conv2d(x, w, {}, s.stride, s.padding);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  const int64_t out = (s.size + 2 * s.padding - s.kernel) / s.stride + 1;
  const double flops = 2.0 * kBatch * s.c_out * out * out * s.c_in * s.kernel * s.kernel;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

#define KILN_CONV_BENCH(layer, ...)                            \
  BENCHMARK_CAPTURE(run_conv2d, layer, ConvShape{__VA_ARGS__}) \
      ->Name("BM_conv2d/" #layer)                              \
      ->ArgName("t")                                           \
      ->Arg(1)                                                 \
      ->Arg(2)                                                 \
      ->UseRealTime()                                          \
      ->Unit(benchmark::kMillisecond)

// name: c_in, c_out, input side, kernel, stride, padding
KILN_CONV_BENCH(conv1_7x7_s2, 3, 64, 224, 7, 2, 3);
KILN_CONV_BENCH(layer1_3x3, 64, 64, 56, 3, 1, 1);
KILN_CONV_BENCH(layer1_3x3_channels_last, 64, 64, 56, 3, 1, 1, true);
KILN_CONV_BENCH(layer2_3x3_s2, 64, 128, 56, 3, 2, 1);
KILN_CONV_BENCH(layer2_3x3, 128, 128, 28, 3, 1, 1);
KILN_CONV_BENCH(layer2_downsample_1x1_s2, 64, 128, 56, 1, 2, 0);
KILN_CONV_BENCH(layer3_3x3_s2, 128, 256, 28, 3, 2, 1);
KILN_CONV_BENCH(layer3_3x3, 256, 256, 14, 3, 1, 1);
KILN_CONV_BENCH(layer4_3x3_s2, 256, 512, 14, 3, 2, 1);
KILN_CONV_BENCH(layer4_3x3, 512, 512, 7, 3, 1, 1);

}  // namespace

BENCHMARK_MAIN();
