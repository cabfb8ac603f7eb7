// Small integer facts more than one stage needs.
#ifndef UIR_SUPPORT_INTEGERS_H_
#define UIR_SUPPORT_INTEGERS_H_

#include <cstdint>

namespace uir {

// The largest prime factor of n (n itself for a prime; 1 for n <= 1): what
// decides whether an FFT of length n factors into small radices.
inline int64_t LargestPrimeFactor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  }
  return n > 1 ? n : largest;
}

}  // namespace uir

#endif  // UIR_SUPPORT_INTEGERS_H_
