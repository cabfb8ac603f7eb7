// The library FFT: HLO's fft (FFT, IFFT, RFFT, IRFFT) over the innermost one
// to three dimensions of row-major arrays, described by numbers only. Each
// line of the transform runs through KISS FFT (a mixed-radix FFT) in the
// arrays' own precision; lengths with a prime factor too large for its
// generic butterfly run as Bluestein's chirp convolution of power-of-two
// FFTs, so every length costs O(n log n). Lines spread over the worker
// threads.
#ifndef UIR_RUNTIME_FFT_H_
#define UIR_RUNTIME_FFT_H_

#include <array>
#include <cstdint>
#include <string>

namespace uir::runtime {

enum class FftKind : uint8_t { kFft, kIfft, kRfft, kIrfft };
std::string_view FftKindName(FftKind kind);

// An FFT over `rank` innermost dimensions of lengths `length` (the real
// lengths for RFFT and IRFFT, whose complex side holds length[rank-1]/2+1
// elements innermost), repeated over `batch` leading elements. FFT and
// RFFT take e^{-2 pi i jk/n}; IFFT and IRFFT e^{+2 pi i jk/n} and divide by
// the product of the lengths, as XLA and NumPy do. IRFFT reads the
// innermost half spectrum as Hermitian (the imaginary parts of its zero
// and, for even lengths, Nyquist terms do not matter).
struct FftPlan {
  FftKind kind = FftKind::kFft;
  bool f64 = false;  // complex128 / float64 instead of complex64 / float32
  int rank = 1;
  std::array<int64_t, 3> length{};
  int64_t batch = 1;

  // Elements of the input and of the output (complex ones count once).
  int64_t InputElements() const;
  int64_t OutputElements() const;
  // Bytes per element of the input and of the output.
  int64_t InputBytes() const;
  int64_t OutputBytes() const;
  // Why the plan cannot run (rank, lengths), or "".
  std::string Invalid() const;
  // "rfft f32 [8] x 1024x1024": kind, precision, batch and lengths.
  std::string ToString() const;
};

// Runs `plan` from `in` to `out` (which must not overlap).
void RunFft(const FftPlan& plan, const void* in, void* out);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_FFT_H_
