#include "ops/conv/conv_samples.h"

#include "ops/samples.h"

#include <string>

namespace kiln::ops::conv {
namespace {

using Ints = std::vector<int64_t>;

Tensor conv_samples_sample(IntList sizes, uint64_t seed, DType dt = kFloat32) {
  return make_sample(sizes, dt, -2.0, 2.0, seed);
}
Tensor channels_last(const Tensor& t) { return t.contiguous(MemoryFormat::ChannelsLast); }

// One convolution call: (input, weight, bias, stride, padding, dilation, transposed,
// output_padding, groups).
Sample conv(Tensor x, Tensor w, IValue bias, Ints stride, Ints padding, Ints dilation,
            bool transposed, Ints output_padding, int64_t groups, std::string what) {
  return {{std::move(x), std::move(w), std::move(bias), stride, padding, dilation, transposed,
           output_padding, groups},
          std::move(what)};
}

}  // namespace

std::vector<Sample> convolution_samples() {
  std::vector<Sample> out;
  const IValue none;
  for (DType dt : {kFloat32, kFloat64}) {
    const std::string d(dtype_name(dt));
    out.push_back(conv(conv_samples_sample({2, 3, 7, 6}, 1, dt),
                       conv_samples_sample({4, 3, 3, 3}, 2, dt), conv_samples_sample({4}, 3, dt),
                       {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1, "2-d with bias " + d));
    out.push_back(conv(conv_samples_sample({2, 3, 9, 8}, 4, dt),
                       conv_samples_sample({5, 3, 3, 2}, 5, dt), none, {2, 3}, {1, 0}, {1, 2},
                       false, {0, 0}, 1, "stride, padding, dilation " + d));
    out.push_back(conv(conv_samples_sample({1, 4, 6, 6}, 6, dt),
                       conv_samples_sample({6, 2, 3, 3}, 7, dt), conv_samples_sample({6}, 8, dt),
                       {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 2, "groups 2 " + d));
    out.push_back(conv(conv_samples_sample({2, 4, 5, 5}, 9, dt),
                       conv_samples_sample({4, 1, 3, 3}, 10, dt), conv_samples_sample({4}, 11, dt),
                       {2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 4, "depthwise " + d));
    out.push_back(conv(conv_samples_sample({2, 3, 10}, 12, dt),
                       conv_samples_sample({5, 3, 4}, 13, dt), conv_samples_sample({5}, 14, dt),
                       {2}, {1}, {2}, false, {0}, 1, "1-d " + d));
    out.push_back(conv(conv_samples_sample({1, 2, 5, 4, 4}, 15, dt),
                       conv_samples_sample({3, 2, 2, 3, 2}, 16, dt), none, {1, 2, 1}, {1, 0, 1},
                       {1, 1, 2}, false, {0, 0, 0}, 1, "3-d " + d));
    out.push_back(conv(conv_samples_sample({2, 4, 5, 5}, 17, dt),
                       conv_samples_sample({4, 3, 3, 3}, 18, dt), conv_samples_sample({3}, 19, dt),
                       {2, 2}, {1, 1}, {1, 1}, true, {1, 1}, 1, "transposed " + d));
    out.push_back(conv(conv_samples_sample({1, 4, 4, 5}, 20, dt),
                       conv_samples_sample({4, 2, 3, 2}, 21, dt), none, {2, 1}, {0, 1}, {2, 1},
                       true, {1, 0}, 2, "transposed, groups, dilation " + d));
    out.push_back(conv(conv_samples_sample({2, 3, 7}, 22, dt),
                       conv_samples_sample({3, 2, 3}, 23, dt), conv_samples_sample({2}, 24, dt),
                       {3}, {1}, {1}, true, {2}, 1, "transposed 1-d " + d));
  }
  out.push_back(conv(channels_last(conv_samples_sample({2, 3, 6, 6}, 25)),
                     conv_samples_sample({4, 3, 3, 3}, 26), conv_samples_sample({4}, 27), {1, 1},
                     {1, 1}, {1, 1}, false, {0, 0}, 1, "channels-last input"));
  out.push_back(conv(conv_samples_sample({2, 3, 6, 6}, 28),
                     channels_last(conv_samples_sample({4, 3, 3, 3}, 29)), none, {2, 2}, {1, 1},
                     {1, 1}, false, {0, 0}, 1, "channels-last weight"));
  out.push_back(conv(channels_last(conv_samples_sample({2, 4, 5, 5}, 30)),
                     conv_samples_sample({4, 3, 3, 3}, 31), conv_samples_sample({3}, 32), {2, 2},
                     {1, 1}, {1, 1}, true, {1, 1}, 1, "transposed, channels-last"));
  out.push_back(conv(channels_last(conv_samples_sample({1, 6, 5, 5}, 33, kFloat64)),
                     conv_samples_sample({6, 2, 3, 3}, 34, kFloat64), none, {1, 1}, {1, 1}, {1, 1},
                     false, {0, 0}, 3, "channels-last float64 groups"));
  out.push_back(conv(make_noncontiguous_sample({2, 3, 6, 7}, kFloat32, -2, 2, 35),
                     make_noncontiguous_sample({4, 3, 2, 2}, kFloat32, -2, 2, 36), none, {1, 1},
                     {0, 0}, {1, 1}, false, {0, 0}, 1, "non-contiguous"));
  out.push_back(conv(conv_samples_sample({0, 3, 5, 5}, 37), conv_samples_sample({4, 3, 3, 3}, 38),
                     conv_samples_sample({4}, 39), {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1,
                     "empty batch"));
  out.push_back(conv(conv_samples_sample({1, 2, 3, 3}, 43), conv_samples_sample({2, 2, 3, 3}, 44),
                     none, {2, 2}, {1, 1}, {3, 3}, true, {2, 2}, 1,
                     "output_padding >= stride, < dilation"));
  out.push_back(conv(
      conv_samples_sample({2, 3, 6, 6}, 45, kInt64), conv_samples_sample({2, 3, 2, 2}, 46, kInt64),
      conv_samples_sample({2}, 47, kInt64), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1, "int64"));
  out.push_back(conv(conv_samples_sample({1, 2, 4, 4}, 48, kInt64),
                     conv_samples_sample({2, 3, 2, 2}, 49, kInt64), none, {2, 2}, {0, 0}, {1, 1},
                     true, {1, 1}, 1, "int64 transposed"));
  out.push_back(conv(conv_samples_sample({2, 3, 5, 5}, 50), conv_samples_sample({4, 3, 3, 3}, 51),
                     none, {1}, {1}, {1}, false, {0}, 1, "one-element lists"));
  // Bad inputs: each must raise in kiln and in PyTorch.
  out.push_back(conv(conv_samples_sample({2, 4, 5, 5}, 52), conv_samples_sample({4, 3, 3, 3}, 53),
                     none, {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1, "wrong channel count"));
  out.push_back(conv(conv_samples_sample({1, 4, 5, 5}, 54), conv_samples_sample({3, 2, 3, 3}, 55),
                     none, {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 2,
                     "out channels not divisible by groups"));
  out.push_back(conv(conv_samples_sample({1, 4, 5, 5}, 56), conv_samples_sample({3, 4, 3}, 57),
                     none, {1}, {0}, {1}, false, {0}, 1, "weight rank mismatch"));
  out.push_back(conv(conv_samples_sample({1, 4, 2, 2}, 58), conv_samples_sample({3, 4, 3, 3}, 59),
                     none, {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1, "kernel larger than input"));
  out.push_back(conv(conv_samples_sample({1, 4, 5, 5}, 60), conv_samples_sample({3, 4, 3, 3}, 61),
                     none, {0, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1, "zero stride"));
  out.push_back(conv(conv_samples_sample({1, 4, 5, 5}, 62), conv_samples_sample({3, 4, 3, 3}, 63),
                     none, {1, 1}, {0, 0}, {1, 0}, false, {0, 0}, 1, "zero dilation"));
  out.push_back(conv(conv_samples_sample({1, 4, 5, 5}, 64), conv_samples_sample({3, 4, 3, 3}, 65),
                     conv_samples_sample({4}, 66), {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1,
                     "bias size mismatch"));
  out.push_back(conv(conv_samples_sample({1, 4, 5, 5}, 67), conv_samples_sample({4, 3, 3, 3}, 68),
                     none, {2, 2}, {0, 0}, {1, 1}, true, {2, 0}, 1, "output_padding too large"));
  out.push_back(conv(conv_samples_sample({1, 3, 5, 5}, 69),
                     conv_samples_sample({3, 3, 3, 3}, 70, kFloat64), none, {1, 1}, {0, 0}, {1, 1},
                     false, {0, 0}, 1, "dtype mismatch"));
  return out;
}

std::vector<Sample> conv_nd_samples(int64_t spatial, bool padding_mode) {
  std::vector<Sample> out;
  Ints in{2, 4}, unbatched{4}, w{6, 2};
  Ints sizes = spatial == 1 ? Ints{9} : spatial == 2 ? Ints{7, 6} : Ints{5, 6, 6};
  Ints kernel = spatial == 1 ? Ints{4} : spatial == 2 ? Ints{2, 3} : Ints{2, 3, 2};
  in.insert(in.end(), sizes.begin(), sizes.end());
  unbatched.insert(unbatched.end(), sizes.begin(), sizes.end());
  w.insert(w.end(), kernel.begin(), kernel.end());
  const IValue none;
  auto l = [spatial](int64_t v) { return Ints(static_cast<size_t>(spatial), v); };
  if (!padding_mode) {
    out.push_back({{conv_samples_sample(in, 1), conv_samples_sample(w, 2),
                    conv_samples_sample({6}, 3), l(2), l(1), l(1), 2},
                   "stride 2, padding 1, groups 2"});
    out.push_back(
        {{conv_samples_sample(unbatched, 4), conv_samples_sample(w, 5), none, l(1), l(0), l(2), 2},
         "unbatched, dilation 2"});
    out.push_back(
        {{conv_samples_sample(in, 6), conv_samples_sample(w, 7), none, l(1), l(0), l(1), 2},
         "groups 2"});
    out.push_back({{conv_samples_sample(in, 8, kFloat64), conv_samples_sample(w, 9, kFloat64),
                    conv_samples_sample({6}, 10, kFloat64), l(1), l(1), l(1), 2},
                   "float64"});
    out.push_back({{conv_samples_sample(Ints(in.begin(), in.begin() + 2), 11),
                    conv_samples_sample(w, 12), none, l(1), l(0), l(1), 2},
                   "input rank too small"});
  } else {
    out.push_back({{conv_samples_sample(in, 1), conv_samples_sample(w, 2),
                    conv_samples_sample({6}, 3), l(1), "same", l(1), 2},
                   "same, even kernel"});
    out.push_back(
        {{conv_samples_sample(in, 4), conv_samples_sample(w, 5), none, l(1), "same", l(2), 2},
         "same, dilation 2"});
    out.push_back({{conv_samples_sample(unbatched, 6), conv_samples_sample(w, 7),
                    conv_samples_sample({6}, 8), l(1), "valid", l(1), 2},
                   "valid, unbatched"});
    out.push_back(
        {{conv_samples_sample(in, 9), conv_samples_sample(w, 10), none, l(2), "same", l(1), 2},
         "same with stride 2"});
    out.push_back(
        {{conv_samples_sample(in, 11), conv_samples_sample(w, 12), none, l(1), "full", l(1), 2},
         "unknown padding string"});
    if (spatial == 2) {
      out.push_back({{channels_last(conv_samples_sample(in, 13)), conv_samples_sample(w, 14), none,
                      l(1), "same", l(1), 2},
                     "same, channels-last"});
    }
  }
  return out;
}

std::vector<Sample> conv_transpose_nd_samples(int64_t spatial) {
  std::vector<Sample> out;
  Ints in{2, 4}, unbatched{4}, w{4, 3};
  Ints sizes = spatial == 1 ? Ints{6} : spatial == 2 ? Ints{4, 5} : Ints{3, 4, 3};
  Ints kernel = spatial == 1 ? Ints{3} : spatial == 2 ? Ints{3, 2} : Ints{2, 3, 2};
  in.insert(in.end(), sizes.begin(), sizes.end());
  unbatched.insert(unbatched.end(), sizes.begin(), sizes.end());
  w.insert(w.end(), kernel.begin(), kernel.end());
  const IValue none;
  auto l = [spatial](int64_t v) { return Ints(static_cast<size_t>(spatial), v); };
  out.push_back({{conv_samples_sample(in, 1), conv_samples_sample(w, 2),
                  conv_samples_sample({6}, 3), l(2), l(1), l(1), 2, l(1)},
                 "stride 2, output_padding 1"});
  out.push_back({{conv_samples_sample(unbatched, 4), conv_samples_sample(w, 5), none, l(1), l(0),
                  l(0), 1, l(2)},
                 "unbatched, dilation 2"});
  out.push_back(
      {{conv_samples_sample(in, 6), conv_samples_sample(w, 7), none, l(1), l(0), l(0), 1, l(1)},
       "no bias"});
  out.push_back({{conv_samples_sample(in, 8, kFloat64), conv_samples_sample(w, 9, kFloat64),
                  conv_samples_sample({3}, 10, kFloat64), l(3), l(2), l(2), 1, l(1)},
                 "float64, stride 3"});
  return out;
}

}  // namespace kiln::ops::conv
