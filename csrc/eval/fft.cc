// FFTs through Eigen's FFT module (a mixed-radix kissfft in double). Its
// butterflies cost O(p) per point for each prime factor p of the length, so
// a length with a large prime factor goes through Bluestein's chirp-z
// transform instead: a circular convolution done with power-of-two FFTs.
// Eigen is included here only.
#include "eval/fft.h"

#include <cmath>
#include <numbers>
#include <unsupported/Eigen/FFT>

#include "eval/elementwise.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "support/error.h"
#include "support/integers.h"

namespace uir::eval {
namespace {

using C = std::complex<double>;

// Lengths whose prime factors are all at most this run in Eigen directly.
constexpr int64_t kMaxDirectRadix = 64;
// Eigen indexes its plans with int; the chirp squares indices in int64.
constexpr int64_t kMaxLength = int64_t{1} << 29;

// Transforms lines of one length. Forward and unscaled throughout: the
// inverse is conj(F(conj(x))) / n.
class LineTransform {
 public:
  explicit LineTransform(int64_t n) : n_(n) {
    fft_.SetFlag(Eigen::FFT<double>::Unscaled);
    if (n_ <= 1 || LargestPrimeFactor(n_) <= kMaxDirectRadix) return;
    // Bluestein: jk = (j^2 + k^2 - (k-j)^2) / 2, so with w_m = exp(-i pi m^2 / n),
    // X[k] = w_k * sum_j (x_j w_j) conj(w_{k-j}): a convolution of length m_
    // >= 2n - 1. m^2 is reduced mod 2n first, so the angle stays exact.
    m_ = 1;
    while (m_ < 2 * n_ - 1) m_ *= 2;
    chirp_.resize(static_cast<size_t>(n_));
    for (int64_t k = 0; k < n_; ++k) {
      const int64_t sq = k * k % (2 * n_);  // k < 2^29: no overflow
      const double angle = -std::numbers::pi * static_cast<double>(sq) / static_cast<double>(n_);
      chirp_[k] = C(std::cos(angle), std::sin(angle));
    }
    std::vector<C> kernel(static_cast<size_t>(m_), C(0, 0));
    for (int64_t k = 0; k < n_; ++k) {
      kernel[k] = std::conj(chirp_[k]);
      if (k > 0) kernel[m_ - k] = std::conj(chirp_[k]);
    }
    kernel_spectrum_.resize(static_cast<size_t>(m_));
    fft_.fwd(kernel_spectrum_.data(), kernel.data(), m_);
    work_.resize(static_cast<size_t>(m_));
    spectrum_.resize(static_cast<size_t>(m_));
  }

  // line <- DFT(line), unscaled.
  void Forward(std::vector<C>& line) {
    if (n_ <= 1) return;
    if (m_ == 0) {
      out_.resize(line.size());
      fft_.fwd(out_.data(), line.data(), n_);
      line.swap(out_);
      return;
    }
    std::fill(work_.begin(), work_.end(), C(0, 0));
    for (int64_t j = 0; j < n_; ++j) work_[j] = line[j] * chirp_[j];
    fft_.fwd(spectrum_.data(), work_.data(), m_);
    for (int64_t i = 0; i < m_; ++i) spectrum_[i] *= kernel_spectrum_[i];
    fft_.inv(work_.data(), spectrum_.data(), m_);
    const double scale = 1.0 / static_cast<double>(m_);
    for (int64_t k = 0; k < n_; ++k) line[k] = work_[k] * scale * chirp_[k];
  }

 private:
  int64_t n_;
  int64_t m_ = 0;  // the Bluestein convolution length, 0 when Eigen runs directly
  Eigen::FFT<double> fft_;
  std::vector<C> chirp_, kernel_spectrum_, work_, spectrum_, out_;
};

}  // namespace

void FftLines(std::vector<C>& x, const std::vector<int64_t>& dims, size_t dim, bool inverse) {
  const int64_t n = dims[dim];
  if (n == 0 || x.empty()) return;
  if (n > kMaxLength) {
    throw UnimplementedError("the evaluator's fft takes lengths up to 2^29, not " +
                             std::to_string(n));
  }
  const auto strides = Strides(dims);
  const int64_t stride = strides[dim];
  LineTransform transform(n);
  std::vector<int64_t> outer = dims;
  outer[dim] = 1;
  std::vector<C> line(static_cast<size_t>(n));
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  ForEachIndex(outer, [&](const std::vector<int64_t>& idx, int64_t) {
    int64_t base = 0;
    for (size_t d = 0; d < idx.size(); ++d) base += idx[d] * strides[d];
    for (int64_t i = 0; i < n; ++i) {
      const C v = x[base + i * stride];
      line[i] = inverse ? std::conj(v) : v;
    }
    transform.Forward(line);
    for (int64_t i = 0; i < n; ++i)
      x[base + i * stride] = inverse ? std::conj(line[i]) * scale : line[i];
  });
}

// fft(x): FFT/IFFT over the trailing fft_length dims of a complex array,
// RFFT from reals (the last dim halved plus one), IRFFT back to reals.
hlo::Literal Fft(const hlo::HloInstruction& inst, const hlo::Literal& in) {
  using hlo::AttrKey;
  using hlo::Literal;
  const hlo::FftType type = inst.attributes().GetEnum<hlo::FftType>(AttrKey::kFftType);
  const auto& length = inst.attributes().Get<std::vector<int64_t>>(AttrKey::kFftLength);
  const auto& out_dims = inst.shape().dimensions();
  const size_t rank = out_dims.size(), k = length.size();
  const Literal x = Convert(in, PrimitiveType::kC128);
  std::vector<int64_t> dims = in.shape().dimensions();
  std::vector<C> data(Data<C>(x), Data<C>(x) + x.element_count());
  if (type == hlo::FftType::kIrfft) {
    // Inverse over the leading fft dims, then rebuild each last-dim line
    // from Hermitian symmetry and invert it.
    for (size_t d = rank - k; d + 1 < rank; ++d) FftLines(data, dims, d, true);
    const int64_t n = length.back(), half = dims.back();
    std::vector<int64_t> full = dims;
    full.back() = n;
    std::vector<C> expanded(static_cast<size_t>(n == 0 ? 0 : data.size() / half * n));
    for (size_t line = 0; half > 0 && line < data.size() / half; ++line) {
      for (int64_t i = 0; i < n; ++i) {
        expanded[line * n + i] =
            i < half ? data[line * half + i] : std::conj(data[line * half + (n - i)]);
      }
    }
    FftLines(expanded, full, rank - 1, true);
    Literal out = MakeLiteral(PrimitiveType::kF64, out_dims);
    for (int64_t i = 0; i < out.element_count(); ++i)
      MutableData<double>(out)[i] = expanded[i].real();
    return Convert(out, inst.shape().element_type());
  }
  const bool inverse = type == hlo::FftType::kIfft;
  for (size_t d = rank - k; d < rank; ++d) FftLines(data, dims, d, inverse);
  Literal out = MakeLiteral(PrimitiveType::kC128, out_dims);
  // RFFT keeps the first n/2+1 entries of the last dim.
  const auto in_strides = Strides(dims);
  ForEachIndex(out_dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * in_strides[d];
    MutableData<C>(out)[linear] = data[src];
  });
  return Convert(out, inst.shape().element_type());
}

}  // namespace uir::eval
