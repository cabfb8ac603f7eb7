// The library convolution: patches of the input gathered into rows
// (im2col) and multiplied by the kernel on BLAS, described by numbers only
// (the Kernel Graph plans it from a convolution).
#ifndef UIR_RUNTIME_CONV_H_
#define UIR_RUNTIME_CONV_H_

#include <array>
#include <cstdint>
#include <string>

namespace uir::runtime {

// out[b, g*og + f, o...] = sum over window positions k... and input
// features i of in[b, g*ig + i, pos...] * kernel[i, g*og + f, k'...], where
// pos_d = o_d * stride_d + k_d * window_dilation_d - pad_low_d counts in
// the input dilated by base_dilation_d (a position between input elements,
// or outside the input, reads 0) and k'_d is k_d, or size_d - 1 - k_d where
// the window is reversed. Each array is addressed by element strides, one
// per logical dimension, so any layout works.
struct ConvPlan {
  static constexpr int kMaxSpatial = 3;
  using Dims = std::array<int64_t, kMaxSpatial>;
  bool f64 = false;  // double, else float
  int spatial = 0;   // spatial dimensions, 0..kMaxSpatial
  int64_t batch = 1, groups = 1;
  int64_t in_features = 1, out_features = 1;  // per group: ig, og
  Dims in_size{1, 1, 1}, out_size{1, 1, 1}, window{1, 1, 1};
  Dims stride{1, 1, 1}, pad_low{0, 0, 0}, base_dilation{1, 1, 1}, window_dilation{1, 1, 1};
  std::array<bool, kMaxSpatial> reversed{false, false, false};
  // Element strides.
  int64_t in_batch = 0, in_feature = 0, kernel_in = 0, kernel_out = 0;
  int64_t out_batch = 0, out_feature = 0;
  Dims in_spatial{0, 0, 0}, kernel_spatial{0, 0, 0}, out_spatial{0, 0, 0};

  int64_t ElementBytes() const { return f64 ? 8 : 4; }
  // Elements each array spans (the largest offset plus one).
  int64_t InputElements() const;
  int64_t KernelElements() const;
  int64_t OutputElements() const;
  // Why the plan is malformed (non-positive sizes or strides, too many
  // spatial dimensions), or "".
  std::string Invalid() const;
  // "f32 2x[28x28] 64->128/1 window 3x3 stride 1x1".
  std::string ToString() const;
};

// Runs `plan`: output blocks over the worker threads when the product is
// large, each block's GEMM on one thread.
void RunConv(const ConvPlan& plan, const void* in, const void* kernel, void* out);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CONV_H_
