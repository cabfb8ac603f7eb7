// convolution, as StableHLO specifies it: the input is padded (low/high
// padding, negative allowed) and base-dilated, each output position takes a
// window of it (strided, window-dilated, optionally reversed), and the
// output features are dot products of that window with the kernel.
// feature_group_count splits input and output features into groups that
// convolve separately; batch_group_count does the same with the input batch
// and the output features.
//
// Like dot, operands are converted to a wide working type first (f64, s64
// or c128), each output accumulates in a fixed order (kernel positions
// row-major, then input features), and the result is converted once to the
// output type. For speed, the input windows of a run of output positions are
// gathered into a [positions x window elements] matrix and multiplied by the
// kernel laid out as [window element x output feature] (through BLAS for
// large float products, in double).
#include "eval/convolution.h"

#include <algorithm>
#include <complex>
#include <type_traits>

#include "eval/blas.h"
#include "eval/elementwise.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::Literal;

struct Geometry {
  int64_t groups = 1;         // feature or batch groups (at most one is > 1)
  bool batch_groups = false;  // groups split the input batch
  int64_t out_batch = 0, out_features = 0, in_features = 0;  // per group: in_features
  int64_t kernel_elements = 1;                               // product of window sizes
  std::vector<int64_t> out_spatial;                          // output spatial sizes
};

template <typename T>
void Convolve(const HloInstruction& inst, const Literal& lhs, const Literal& rhs, Literal& out) {
  const auto& dn = inst.attributes().Get<hlo::ConvolutionDimensionNumbers>(AttrKey::kDimLabels);
  // No window= means size-1 windows with no padding, stride or dilation.
  const auto window = inst.attributes()
                          .GetOr<hlo::Window>(AttrKey::kWindow)
                          .value_or(hlo::Window{std::vector<hlo::WindowDim>(
                              inst.attributes()
                                  .Get<hlo::ConvolutionDimensionNumbers>(AttrKey::kDimLabels)
                                  .input_spatial_dimensions.size())})
                          .dimensions;
  const int64_t fgc = inst.attributes().GetOr<int64_t>(AttrKey::kFeatureGroupCount).value_or(1);
  const int64_t bgc = inst.attributes().GetOr<int64_t>(AttrKey::kBatchGroupCount).value_or(1);
  const auto& in_dims = lhs.shape().dimensions();
  const auto& k_dims = rhs.shape().dimensions();
  const auto& o_dims = out.shape().dimensions();
  const auto in_strides = Strides(in_dims), k_strides = Strides(k_dims),
             o_strides = Strides(o_dims);
  const size_t spatial = window.size();

  const int64_t groups = fgc > 1 ? fgc : bgc;
  const int64_t out_features = k_dims[dn.kernel_output_feature_dimension];
  const int64_t og = out_features / groups;                      // output features per group
  const int64_t ig = k_dims[dn.kernel_input_feature_dimension];  // input features per group
  const int64_t out_batch = o_dims[dn.output_batch_dimension];
  std::vector<int64_t> window_sizes, out_spatial;
  for (size_t d = 0; d < spatial; ++d) {
    window_sizes.push_back(window[d].size);
    out_spatial.push_back(o_dims[dn.output_spatial_dimensions[d]]);
  }
  std::vector<std::vector<int64_t>> offsets;  // kernel positions, row-major
  ForEachIndex(window_sizes, [&](const std::vector<int64_t>& k, int64_t) { offsets.push_back(k); });
  const int64_t positions = static_cast<int64_t>(offsets.size());
  const int64_t patch_size = positions * ig;

  const T* x = Data<T>(lhs);
  const T* w = Data<T>(rhs);
  T* o = MutableData<T>(out);
  std::vector<T> kernel(static_cast<size_t>(patch_size * og));
  for (int64_t q = 0; q < groups; ++q) {
    // kernel[(p * ig + i) * og + f] = rhs[output feature q*og+f, input feature i, position p].
    for (int64_t p = 0; p < positions; ++p) {
      int64_t base = 0;
      for (size_t d = 0; d < spatial; ++d) {
        const int64_t k =
            window[d].window_reversal ? window[d].size - 1 - offsets[p][d] : offsets[p][d];
        base += k * k_strides[dn.kernel_spatial_dimensions[d]];
      }
      for (int64_t i = 0; i < ig; ++i) {
        for (int64_t f = 0; f < og; ++f) {
          kernel[(p * ig + i) * og + f] =
              w[base + i * k_strides[dn.kernel_input_feature_dimension] +
                (q * og + f) * k_strides[dn.kernel_output_feature_dimension]];
        }
      }
    }
    const int64_t feature0 = fgc > 1 ? q * ig : 0;
    std::vector<std::vector<int64_t>> positions_out;  // output spatial indices, row-major
    ForEachIndex(out_spatial,
                 [&](const std::vector<int64_t>& s, int64_t) { positions_out.push_back(s); });
    const int64_t rows = static_cast<int64_t>(positions_out.size());
    // Up to this many output positions at a time: their patches form a
    // [rows x patch_size] matrix multiplied by the kernel.
    const int64_t chunk =
        std::max<int64_t>(1, std::min<int64_t>(rows, (1 << 22) / std::max<int64_t>(patch_size, 1)));
    std::vector<T> patches(static_cast<size_t>(chunk * patch_size));
    std::vector<T> results(static_cast<size_t>(chunk * og));
    for (int64_t b = 0; b < out_batch; ++b) {
      const int64_t n = bgc > 1 ? q * out_batch + b : b;
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t count = std::min(chunk, rows - r0);
        for (int64_t r = 0; r < count; ++r) {
          const std::vector<int64_t>& s = positions_out[r0 + r];
          T* patch = patches.data() + r * patch_size;
          // Gather the window; padding and dilation holes are 0.
          for (int64_t p = 0; p < positions; ++p) {
            int64_t at = n * in_strides[dn.input_batch_dimension];
            bool inside = true;
            for (size_t d = 0; d < spatial && inside; ++d) {
              const hlo::WindowDim& wd = window[d];
              const int64_t pos =
                  s[d] * wd.stride + offsets[p][d] * wd.window_dilation - wd.padding_low;
              const int64_t i = pos / wd.base_dilation;
              inside = pos >= 0 && pos % wd.base_dilation == 0 &&
                       i < in_dims[dn.input_spatial_dimensions[d]];
              at += i * in_strides[dn.input_spatial_dimensions[d]];
            }
            for (int64_t i = 0; i < ig; ++i) {
              patch[p * ig + i] =
                  inside ? x[at + (feature0 + i) * in_strides[dn.input_feature_dimension]] : T(0);
            }
          }
        }
        bool done = false;
        if constexpr (!std::is_same_v<T, int64_t>) {
          if (count * patch_size * og >= kMinBlasWork) {
            GemmAB(count, og, patch_size, patches.data(), kernel.data(), results.data());
            done = true;
          }
        }
        if (!done) {
          for (int64_t r = 0; r < count; ++r) {
            T* acc = results.data() + r * og;
            std::fill(acc, acc + og, T(0));
            for (int64_t e = 0; e < patch_size; ++e) {
              const T v = patches[r * patch_size + e];
              const T* kr = kernel.data() + e * og;
              if constexpr (std::is_same_v<T, int64_t>) {
                for (int64_t f = 0; f < og; ++f) {
                  acc[f] =
                      static_cast<int64_t>(static_cast<uint64_t>(acc[f]) +
                                           static_cast<uint64_t>(v) * static_cast<uint64_t>(kr[f]));
                }
              } else {
                for (int64_t f = 0; f < og; ++f) acc[f] += v * kr[f];
              }
            }
          }
        }
        for (int64_t r = 0; r < count; ++r) {
          const std::vector<int64_t>& s = positions_out[r0 + r];
          int64_t dst = b * o_strides[dn.output_batch_dimension];
          for (size_t d = 0; d < spatial; ++d)
            dst += s[d] * o_strides[dn.output_spatial_dimensions[d]];
          for (int64_t f = 0; f < og; ++f)
            o[dst + (q * og + f) * o_strides[dn.output_feature_dimension]] = results[r * og + f];
        }
      }
    }
  }
}

}  // namespace

Literal EvalConvolution(const HloInstruction& inst, const Literal& lhs_in, const Literal& rhs_in) {
  const PrimitiveType out_type = inst.shape().element_type();
  const bool integral = IsInteger(out_type) || out_type == PrimitiveType::kPred;
  const PrimitiveType work = IsComplex(out_type) ? PrimitiveType::kC128
                             : integral          ? PrimitiveType::kS64
                                                 : PrimitiveType::kF64;
  const Literal lhs = Convert(lhs_in, work), rhs = Convert(rhs_in, work);
  Literal out = MakeLiteral(work, inst.shape().dimensions());
  DispatchNative(work, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, int64_t> ||
                  std::is_same_v<T, std::complex<double>>) {
      Convolve<T>(inst, lhs, rhs, out);
    }
  });
  return Convert(out, out_type);
}

}  // namespace uir::eval
