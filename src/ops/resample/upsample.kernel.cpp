// Linear and bilinear upsampling: each output element blends two (1-D) or four (2-D) input
// elements with weights from per-dim tables. Planes (contiguous) or pixels (channels-last) are
// split across threads; the inner loop runs along the contiguous dim.
#include "ops/resample/upsample_kernels.h"

#include <kiln/core/parallel.h>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using ops::LinearTable;

template <typename T>
void linear_upsample_typed(const Tensor& out, const Tensor& in, const LinearTable& ht,
                           const LinearTable& wt, bool blend_h, bool channels_last) {
  using acc_t = opmath_t<T>;
  const int64_t n = in.size(0), c = in.size(1), ih = in.size(2), iw = in.size(3);
  const int64_t oh = out.size(2), ow = out.size(3);
  const T* src = in.data_ptr<T>();
  T* dst = out.data_ptr<T>();
  auto weight = [](const std::vector<double>& v, int64_t i) {
    return static_cast<acc_t>(v[static_cast<size_t>(i)]);
  };
  auto at = [](const std::vector<int64_t>& v, int64_t i) { return v[static_cast<size_t>(i)]; };
  if (!channels_last) {
    const int64_t planes = n * c, plane_out = oh * ow;
    parallel_for(
        0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(plane_out, 1)),
        [&](int64_t first, int64_t last) {
          for (int64_t p = first; p < last; ++p) {
            const T* plane = src + p * ih * iw;
            T* o = dst + p * plane_out;
            for (int64_t y = 0; y < oh; ++y) {
              const T* r0 = plane + at(ht.index0, y) * iw;
              const T* r1 = plane + at(ht.index1, y) * iw;
              const acc_t h0 = weight(ht.lambda0, y), h1 = weight(ht.lambda1, y);
              for (int64_t x = 0; x < ow; ++x) {
                const int64_t x0 = at(wt.index0, x), x1 = at(wt.index1, x);
                const acc_t w0 = weight(wt.lambda0, x), w1 = weight(wt.lambda1, x);
                acc_t v = w0 * static_cast<acc_t>(r0[x0]) + w1 * static_cast<acc_t>(r0[x1]);
                if (blend_h) {
                  v = h0 * v +
                      h1 * (w0 * static_cast<acc_t>(r1[x0]) + w1 * static_cast<acc_t>(r1[x1]));
                }
                o[y * ow + x] = static_cast<T>(v);
              }
            }
          }
        });
    return;
  }
  // Channels-last: (N, H, W, C) in memory; each output pixel blends whole channel vectors.
  const int64_t pixels = n * oh * ow;
  parallel_for(0, pixels, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(c, 1)),
               [&](int64_t first, int64_t last) {
                 for (int64_t p = first; p < last; ++p) {
                   const int64_t b = p / (oh * ow), y = (p / ow) % oh, x = p % ow;
                   const T* image = src + b * ih * iw * c;
                   const acc_t h0 = weight(ht.lambda0, y), h1 = weight(ht.lambda1, y);
                   const acc_t w0 = weight(wt.lambda0, x), w1 = weight(wt.lambda1, x);
                   const T* p00 = image + (at(ht.index0, y) * iw + at(wt.index0, x)) * c;
                   const T* p01 = image + (at(ht.index0, y) * iw + at(wt.index1, x)) * c;
                   const T* p10 = image + (at(ht.index1, y) * iw + at(wt.index0, x)) * c;
                   const T* p11 = image + (at(ht.index1, y) * iw + at(wt.index1, x)) * c;
                   T* o = dst + p * c;
                   for (int64_t k = 0; k < c; ++k) {
                     acc_t v = w0 * static_cast<acc_t>(p00[k]) + w1 * static_cast<acc_t>(p01[k]);
                     if (blend_h) {
                       v = h0 * v +
                           h1 * (w0 * static_cast<acc_t>(p10[k]) + w1 * static_cast<acc_t>(p11[k]));
                     }
                     o[k] = static_cast<T>(v);
                   }
                 }
               });
}

void linear_upsample_kernel(const Tensor& out, const Tensor& in, const LinearTable& h,
                            const LinearTable& w, bool blend_h, bool channels_last) {
  KILN_DISPATCH_FLOATING(in.dtype(), "upsample_linear", [&]<typename T>() {
    linear_upsample_typed<T>(out, in, h, w, blend_h, channels_last);
  });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::linear_upsample_kernels, &linear_upsample_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
