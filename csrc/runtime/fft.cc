#include "runtime/fft.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <kissfft/kissfft.hh>
#include <numbers>
#include <optional>
#include <vector>

#include "support/integers.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {

// KISS FFT's generic butterfly costs p operations per output for a prime
// factor p; above this one the chirp convolution is cheaper.
constexpr int64_t kLargestDirectFactor = 61;

// One unscaled 1-D transform of length n in one direction: out[k] =
// sum_j in[j] e^{-+2 pi i jk/n}. KISS FFT's butterfly for factors past 5
// writes a scratch buffer of the plan's own, so each worker runs a copy.
template <typename T>
class Line {
 public:
  using C = std::complex<T>;

  Line(int64_t n, bool inverse) : n_(n) {
    if (n <= 1) return;
    if (LargestPrimeFactor(n) <= kLargestDirectFactor) {
      direct_.emplace(static_cast<size_t>(n), inverse);
      return;
    }
    // Bluestein: jk = (j^2 + k^2 - (k-j)^2) / 2, so with c_j = e^{-+pi i
    // j^2/n}, X_k = c_k sum_j (x_j c_j) conj(c_{k-j}): a circular
    // convolution of length m >= 2n - 1 done with power-of-two FFTs.
    m_ = 1;
    while (m_ < 2 * n - 1) m_ *= 2;
    forward_.emplace(static_cast<size_t>(m_), false);
    backward_.emplace(static_cast<size_t>(m_), true);
    chirp_.resize(static_cast<size_t>(n));
    const double sign = inverse ? 1.0 : -1.0;
    // q = j^2 mod 2n, stepped by (j+1)^2 = j^2 + 2j + 1: the angle stays
    // exact for large j.
    for (int64_t j = 0, q = 0; j < n; ++j) {
      const double angle =
          sign * std::numbers::pi * static_cast<double>(q) / static_cast<double>(n);
      chirp_[static_cast<size_t>(j)] =
          C(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
      q = (q + 2 * j + 1) % (2 * n);
    }
    std::vector<C> kernel(static_cast<size_t>(m_), C(0, 0));
    kernel[0] = std::conj(chirp_[0]);
    for (int64_t d = 1; d < n; ++d) {
      kernel[static_cast<size_t>(d)] = kernel[static_cast<size_t>(m_ - d)] =
          std::conj(chirp_[static_cast<size_t>(d)]);
    }
    kernel_spectrum_.resize(static_cast<size_t>(m_));
    forward_->transform(kernel.data(), kernel_spectrum_.data());
    // The convolution's inverse transform is unscaled: fold 1/m in here.
    for (C& v : kernel_spectrum_) v /= static_cast<T>(m_);
  }

  // Complex elements of scratch Run needs.
  int64_t ScratchSize() const { return 2 * m_; }

  // `in` and `out` hold n elements each and must not overlap.
  void Run(const C* in, C* out, C* scratch) const {
    if (n_ <= 1) {
      if (n_ == 1) out[0] = in[0];
      return;
    }
    if (direct_) {
      direct_->transform(in, out);
      return;
    }
    C* a = scratch;
    C* spectrum = scratch + m_;
    for (int64_t j = 0; j < n_; ++j) a[j] = in[j] * chirp_[static_cast<size_t>(j)];
    std::fill(a + n_, a + m_, C(0, 0));
    forward_->transform(a, spectrum);
    for (int64_t k = 0; k < m_; ++k) spectrum[k] *= kernel_spectrum_[static_cast<size_t>(k)];
    backward_->transform(spectrum, a);
    for (int64_t k = 0; k < n_; ++k) out[k] = a[k] * chirp_[static_cast<size_t>(k)];
  }

 private:
  int64_t n_ = 0;
  std::optional<kissfft<T>> direct_;
  int64_t m_ = 0;
  std::optional<kissfft<T>> forward_, backward_;
  std::vector<std::complex<T>> chirp_, kernel_spectrum_;
};

int64_t Grain(int64_t n) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)); }

// Transforms every line of `data` along an axis of length n: line (o, i)
// starts at o*n*inner + i and steps by inner. Lines next to each other in
// memory (consecutive i) are gathered and scattered a block at a time, so
// each cache line read serves the whole block.
template <typename T>
void TransformAxis(std::complex<T>* data, int64_t outer, int64_t n, int64_t inner,
                   const Line<T>& line) {
  using C = std::complex<T>;
  if (n <= 1) return;
  constexpr int64_t kBlock = 16;
  const int64_t block = std::min(inner, kBlock);
  const int64_t blocks_per_outer = (inner + block - 1) / block;
  ParallelFor(outer * blocks_per_outer, Grain(n * block), [&](int64_t begin, int64_t end) {
    const Line<T> own = line;
    std::vector<C> buffer(static_cast<size_t>((block + 1) * n + own.ScratchSize()));
    C* lines = buffer.data();  // block lines of n, one after another
    C* out = lines + block * n;
    C* scratch = out + n;
    for (int64_t u = begin; u < end; ++u) {
      const int64_t o = u / blocks_per_outer, i0 = (u % blocks_per_outer) * block;
      const int64_t width = std::min(block, inner - i0);
      C* at = data + o * n * inner + i0;
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t b = 0; b < width; ++b) lines[b * n + k] = at[k * inner + b];
      }
      for (int64_t b = 0; b < width; ++b) {
        own.Run(lines + b * n, out, scratch);
        std::copy(out, out + n, lines + b * n);
      }
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t b = 0; b < width; ++b) at[k * inner + b] = lines[b * n + k];
      }
    }
  });
}

int64_t Product(const FftPlan& p, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; ++d) n *= p.length[static_cast<size_t>(d)];
  return n;
}

template <typename T>
void Scale(std::complex<T>* data, int64_t count, T by) {
  ParallelFor(count, 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) data[k] *= by;
  });
}

template <typename T>
void Run(const FftPlan& p, const void* in_v, void* out_v) {
  using C = std::complex<T>;
  const int r = p.rank;
  const int64_t last = p.length[static_cast<size_t>(r - 1)];
  const int64_t total = Product(p, 0, r);
  const bool inverse = p.kind == FftKind::kIfft || p.kind == FftKind::kIrfft;
  const T scale = total > 0 ? static_cast<T>(1.0 / static_cast<double>(total)) : T(1);
  if (p.kind == FftKind::kFft || p.kind == FftKind::kIfft) {
    C* out = static_cast<C*>(out_v);
    std::memcpy(out, in_v, static_cast<size_t>(p.OutputElements()) * sizeof(C));
    for (int a = r - 1; a >= 0; --a) {
      const int64_t n = p.length[static_cast<size_t>(a)];
      TransformAxis(out, p.batch * Product(p, 0, a), n, Product(p, a + 1, r), Line<T>(n, inverse));
    }
    if (inverse) Scale(out, p.OutputElements(), scale);
    return;
  }
  const int64_t half = last / 2 + 1;
  const int64_t rows = p.batch * Product(p, 0, r - 1);
  const Line<T> line(last, inverse);
  if (p.kind == FftKind::kRfft) {
    const T* in = static_cast<const T*>(in_v);
    C* out = static_cast<C*>(out_v);
    if (last % 2 == 0 && LargestPrimeFactor(last / 2) <= kLargestDirectFactor) {
      // An even length: its 2m reals as m complex values, one FFT of half
      // the length, then the two interleaved spectra taken apart (KISS
      // FFT's transform_real packs the zero and Nyquist terms in the first).
      const int64_t m = last / 2;
      const kissfft<T> plan(static_cast<size_t>(m), false);
      ParallelFor(rows, Grain(m), [&](int64_t begin, int64_t end) {
        const kissfft<T> packed = plan;
        for (int64_t i = begin; i < end; ++i) {
          C* o = out + i * half;
          packed.transform_real(in + i * last, o);
          const T zero = o[0].real(), nyquist = o[0].imag();
          o[0] = C(zero, 0);
          o[m] = C(nyquist, 0);
        }
      });
    } else {
      ParallelFor(rows, Grain(last), [&](int64_t begin, int64_t end) {
        const Line<T> own = line;
        std::vector<C> buffer(static_cast<size_t>(2 * last + own.ScratchSize()));
        C* row = buffer.data();
        C* spectrum = row + last;
        for (int64_t i = begin; i < end; ++i) {
          for (int64_t k = 0; k < last; ++k) row[k] = C(in[i * last + k], 0);
          own.Run(row, spectrum, spectrum + last);
          std::copy(spectrum, spectrum + half, out + i * half);
        }
      });
    }
    for (int a = r - 2; a >= 0; --a) {
      const int64_t n = p.length[static_cast<size_t>(a)];
      TransformAxis(out, p.batch * Product(p, 0, a), n, Product(p, a + 1, r - 1) * half,
                    Line<T>(n, false));
    }
    return;
  }
  // IRFFT: the leading axes first, on a copy of the half spectrum, then each
  // innermost line made whole by its Hermitian symmetry.
  std::vector<C> spectrum(static_cast<const C*>(in_v),
                          static_cast<const C*>(in_v) + p.InputElements());
  for (int a = r - 2; a >= 0; --a) {
    const int64_t n = p.length[static_cast<size_t>(a)];
    TransformAxis(spectrum.data(), p.batch * Product(p, 0, a), n, Product(p, a + 1, r - 1) * half,
                  Line<T>(n, true));
  }
  T* out = static_cast<T*>(out_v);
  ParallelFor(rows, Grain(last), [&](int64_t begin, int64_t end) {
    const Line<T> own = line;
    std::vector<C> buffer(static_cast<size_t>(2 * last + own.ScratchSize()));
    C* whole = buffer.data();
    C* signal = whole + last;
    for (int64_t i = begin; i < end; ++i) {
      const C* h = spectrum.data() + i * half;
      for (int64_t k = 0; k < last; ++k) whole[k] = k < half ? h[k] : std::conj(h[last - k]);
      own.Run(whole, signal, signal + last);
      for (int64_t k = 0; k < last; ++k) out[i * last + k] = signal[k].real() * scale;
    }
  });
}

}  // namespace

std::string_view FftKindName(FftKind kind) {
  switch (kind) {
    case FftKind::kFft:
      return "fft";
    case FftKind::kIfft:
      return "ifft";
    case FftKind::kRfft:
      return "rfft";
    case FftKind::kIrfft:
      return "irfft";
  }
  return "?";
}

int64_t FftPlan::InputElements() const {
  const int64_t inner = length[static_cast<size_t>(rank - 1)];
  const int64_t lead = batch * Product(*this, 0, rank - 1);
  return lead * (kind == FftKind::kIrfft ? inner / 2 + 1 : inner);
}

int64_t FftPlan::OutputElements() const {
  const int64_t inner = length[static_cast<size_t>(rank - 1)];
  const int64_t lead = batch * Product(*this, 0, rank - 1);
  return lead * (kind == FftKind::kRfft ? inner / 2 + 1 : inner);
}

int64_t FftPlan::InputBytes() const { return (f64 ? 8 : 4) * (kind == FftKind::kRfft ? 1 : 2); }

int64_t FftPlan::OutputBytes() const { return (f64 ? 8 : 4) * (kind == FftKind::kIrfft ? 1 : 2); }

std::string FftPlan::Invalid() const {
  if (rank < 1 || rank > 3) return "an fft of " + std::to_string(rank) + " dimensions";
  if (batch < 0) return "a negative batch";
  for (int d = 0; d < rank; ++d) {
    if (length[static_cast<size_t>(d)] < 0) return "a negative fft length";
  }
  return "";
}

std::string FftPlan::ToString() const {
  std::string out = std::string(FftKindName(kind)) + " " +
                    (kind == FftKind::kRfft ? (f64 ? "f64" : "f32") : (f64 ? "c128" : "c64")) +
                    " [";
  for (int d = 0; d < rank; ++d) {
    out += (d ? "x" : "") + std::to_string(length[static_cast<size_t>(d)]);
  }
  return out + "] x " + std::to_string(batch);
}

void RunFft(const FftPlan& plan, const void* in, void* out) {
  if (plan.InputElements() == 0 || plan.OutputElements() == 0) return;
  if (plan.f64) {
    Run<double>(plan, in, out);
  } else {
    Run<float>(plan, in, out);
  }
}

}  // namespace uir::runtime
