// Bit-exact conversions between float and the narrow floating-point types
// (f16, bf16, the f8, f6 and f4 families), rounding to nearest even.
#ifndef UIR_SUPPORT_FLOAT_FORMAT_H_
#define UIR_SUPPORT_FLOAT_FORMAT_H_

#include <cstdint>

#include "support/primitive_type.h"

namespace uir {

// How a narrow format spends its encodings on NaN and infinity.
enum class NanEncoding : uint8_t {
  kIeee,      // exponent all ones: infinity (mantissa 0) or NaN
  kAllOnes,   // "fn": no infinity; only S.1111.111 is NaN
  kNegZero,   // "fnuz": no infinity, no -0; the encoding of -0 is the only NaN
  kNone,      // no NaN, no infinity (f6, f4)
  kAllOnesU,  // "fnu" (e8m0): no sign, no zero; all ones is NaN
};

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  NanEncoding nan;
  int total_bits() const {
    return (nan == NanEncoding::kAllOnesU ? 0 : 1) + exponent_bits + mantissa_bits;
  }
};

// The format of a narrow float type; f32 and f64 are not narrow.
// Throws InternalError for any other type.
const FloatFormat& FormatOf(PrimitiveType type);
bool IsNarrowFloat(PrimitiveType type);

// Rounds `value` to the nearest value of `type` (ties to even) and returns its
// encoding in the low bits. Out-of-range values become infinity where the
// type has one, else NaN where it has one, else the largest finite value of
// that sign; NaN becomes the type's NaN (or zero if it has none).
uint32_t EncodeNarrowFloat(PrimitiveType type, float value);
// The exact value of `bits` as a float.
float DecodeNarrowFloat(PrimitiveType type, uint32_t bits);

}  // namespace uir

#endif  // UIR_SUPPORT_FLOAT_FORMAT_H_
