// Fast Fourier transforms for the evaluator's fft op: O(n log n) for every
// length, in double precision.
#ifndef UIR_EVAL_FFT_H_
#define UIR_EVAL_FFT_H_

#include <complex>
#include <cstdint>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"

namespace uir::eval {

// The discrete Fourier transform of every line of `x` (row-major `dims`)
// along `dim`, in place: X[k] = sum_j x[j] exp(-2 pi i jk / n), or with
// `inverse` the conjugate twiddles and a 1/n scale (XLA's IFFT).
void FftLines(std::vector<std::complex<double>>& x, const std::vector<int64_t>& dims, size_t dim,
              bool inverse);

// The fft op (FFT, IFFT, RFFT, IRFFT over fft_length trailing dims).
hlo::Literal Fft(const hlo::HloInstruction& inst, const hlo::Literal& in);

}  // namespace uir::eval

#endif  // UIR_EVAL_FFT_H_
