// Generic narrow-float encoding, parameterized by FloatFormat. Values go
// through double, where every narrow value and every float is exact, so the
// only rounding is the one to the narrow type.
#include "support/float_format.h"

#include <cmath>
#include <cstdint>

#include "support/error.h"

namespace uir {
namespace {

constexpr FloatFormat kF16{5, 10, 15, NanEncoding::kIeee};
constexpr FloatFormat kBF16{8, 7, 127, NanEncoding::kIeee};
constexpr FloatFormat kF8E5M2{5, 2, 15, NanEncoding::kIeee};
constexpr FloatFormat kF8E4M3{4, 3, 7, NanEncoding::kIeee};
constexpr FloatFormat kF8E4M3FN{4, 3, 7, NanEncoding::kAllOnes};
constexpr FloatFormat kF8E4M3B11FNUZ{4, 3, 11, NanEncoding::kNegZero};
constexpr FloatFormat kF8E3M4{3, 4, 3, NanEncoding::kIeee};
constexpr FloatFormat kF8E5M2FNUZ{5, 2, 16, NanEncoding::kNegZero};
constexpr FloatFormat kF8E4M3FNUZ{4, 3, 8, NanEncoding::kNegZero};
constexpr FloatFormat kF8E8M0FNU{8, 0, 127, NanEncoding::kAllOnesU};
constexpr FloatFormat kF6E3M2FN{3, 2, 3, NanEncoding::kNone};
constexpr FloatFormat kF6E2M3FN{2, 3, 1, NanEncoding::kNone};
constexpr FloatFormat kF4E2M1FN{2, 1, 1, NanEncoding::kNone};

const FloatFormat* FindFormat(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16:
      return &kF16;
    case PrimitiveType::kBF16:
      return &kBF16;
    case PrimitiveType::kF8E5M2:
      return &kF8E5M2;
    case PrimitiveType::kF8E4M3:
      return &kF8E4M3;
    case PrimitiveType::kF8E4M3FN:
      return &kF8E4M3FN;
    case PrimitiveType::kF8E4M3B11FNUZ:
      return &kF8E4M3B11FNUZ;
    case PrimitiveType::kF8E3M4:
      return &kF8E3M4;
    case PrimitiveType::kF8E5M2FNUZ:
      return &kF8E5M2FNUZ;
    case PrimitiveType::kF8E4M3FNUZ:
      return &kF8E4M3FNUZ;
    case PrimitiveType::kF8E8M0FNU:
      return &kF8E8M0FNU;
    case PrimitiveType::kF6E3M2FN:
      return &kF6E3M2FN;
    case PrimitiveType::kF6E2M3FN:
      return &kF6E2M3FN;
    case PrimitiveType::kF4E2M1FN:
      return &kF4E2M1FN;
    default:
      return nullptr;
  }
}

bool HasSign(const FloatFormat& f) { return f.nan != NanEncoding::kAllOnesU; }
uint32_t SignBit(const FloatFormat& f) {
  return HasSign(f) ? 1u << (f.exponent_bits + f.mantissa_bits) : 0;
}
uint32_t MagnitudeMask(const FloatFormat& f) {
  return (1u << (f.exponent_bits + f.mantissa_bits)) - 1;
}

// The encoding of NaN with the given sign bit.
uint32_t NanBits(const FloatFormat& f, uint32_t sign) {
  switch (f.nan) {
    case NanEncoding::kIeee:  // quiet NaN: exponent all ones, top mantissa bit
      return sign | (((1u << f.exponent_bits) - 1) << f.mantissa_bits) |
             (1u << (f.mantissa_bits - 1));
    case NanEncoding::kAllOnes:
      return sign | MagnitudeMask(f);
    case NanEncoding::kNegZero:
      return SignBit(f);
    case NanEncoding::kAllOnesU:
      return MagnitudeMask(f);
    case NanEncoding::kNone:
      return sign;  // zero
  }
  return 0;
}

// The largest finite magnitude's encoding.
uint32_t MaxFiniteBits(const FloatFormat& f) {
  switch (f.nan) {
    case NanEncoding::kIeee:
      return ((((1u << f.exponent_bits) - 1) << f.mantissa_bits)) - 1;
    case NanEncoding::kAllOnes:
      return MagnitudeMask(f) - 1;
    case NanEncoding::kNegZero:
      return MagnitudeMask(f);
    case NanEncoding::kNone:
      return MagnitudeMask(f);
    case NanEncoding::kAllOnesU:
      return MagnitudeMask(f) - 1;
  }
  return 0;
}

bool IsNanBits(const FloatFormat& f, uint32_t bits) {
  uint32_t mag = bits & MagnitudeMask(f);
  uint32_t exp_all = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  switch (f.nan) {
    case NanEncoding::kIeee:
      return (mag & exp_all) == exp_all && (mag & ~exp_all) != 0;
    case NanEncoding::kAllOnes:
      return mag == MagnitudeMask(f);
    case NanEncoding::kNegZero:
      return bits == SignBit(f);
    case NanEncoding::kAllOnesU:
      return mag == MagnitudeMask(f);
    case NanEncoding::kNone:
      return false;
  }
  return false;
}

double DecodeMagnitude(const FloatFormat& f, uint32_t mag) {
  uint32_t exp_field = mag >> f.mantissa_bits;
  uint32_t man = mag & ((1u << f.mantissa_bits) - 1);
  double scale = std::ldexp(1.0, -f.mantissa_bits);
  if (exp_field == 0 && f.nan != NanEncoding::kAllOnesU) {
    return std::ldexp(man * scale, 1 - f.bias);  // subnormal
  }
  return std::ldexp(1.0 + man * scale, static_cast<int>(exp_field) - f.bias);
}

}  // namespace

bool IsNarrowFloat(PrimitiveType type) { return FindFormat(type) != nullptr; }

const FloatFormat& FormatOf(PrimitiveType type) {
  const FloatFormat* f = FindFormat(type);
  UIR_CHECK(f != nullptr) << PrimitiveTypeName(type) << " is not a narrow float type";
  return *f;
}

uint32_t EncodeNarrowFloat(PrimitiveType type, float value) {
  const FloatFormat& f = FormatOf(type);
  uint32_t sign = std::signbit(value) ? SignBit(f) : 0;
  if (std::isnan(value)) return NanBits(f, sign);
  double mag = std::fabs(static_cast<double>(value));
  if (f.nan == NanEncoding::kAllOnesU) {
    // e8m0: powers of two only, no zero; round in the exponent domain, ties
    // (odd exponent midpoints) to even exponents as for any RNE format.
    if (std::signbit(value) && mag != 0) return NanBits(f, 0);
    if (mag == 0) return 0;  // the smallest value, 2^-127
  }
  auto overflow = [&]() -> uint32_t {
    if (f.nan == NanEncoding::kIeee) {
      return sign | (((1u << f.exponent_bits) - 1) << f.mantissa_bits);  // infinity
    }
    if (f.nan == NanEncoding::kNone) return sign | MaxFiniteBits(f);
    return NanBits(f, sign);
  };
  if (std::isinf(value)) return overflow();
  if (mag == 0) return f.nan == NanEncoding::kNegZero ? 0 : sign;

  // Work in units of the smallest subnormal (or of the mantissa ulp at the
  // value's exponent), where the encoding is an integer to round.
  int exp2 = 0;
  std::frexp(mag, &exp2);  // mag = m * 2^exp2, m in [0.5, 1)
  int e = exp2 - 1;        // mag in [2^e, 2^(e+1))
  int min_normal_exp = f.nan == NanEncoding::kAllOnesU ? -f.bias : 1 - f.bias;
  int ulp_exp = std::max(e, min_normal_exp) - f.mantissa_bits;
  double units = std::nearbyint(std::ldexp(mag, -ulp_exp));  // round to nearest even
  // `units` counts ulps at exponent ulp_exp; turn it into an encoding.
  uint64_t encoding;
  if (e < min_normal_exp) {
    encoding = static_cast<uint64_t>(units);  // subnormal (may round up to min normal)
  } else {
    uint64_t q = static_cast<uint64_t>(units);  // in [2^M, 2^(M+1)]
    int biased = e + f.bias;
    encoding = (static_cast<uint64_t>(biased) << f.mantissa_bits) + (q - (1ull << f.mantissa_bits));
  }
  if (encoding > MaxFiniteBits(f)) return overflow();
  // fnuz types have no -0: its encoding is NaN, so underflow goes to +0.
  if (encoding == 0 && f.nan == NanEncoding::kNegZero) return 0;
  return sign | static_cast<uint32_t>(encoding);
}

float DecodeNarrowFloat(PrimitiveType type, uint32_t bits) {
  const FloatFormat& f = FormatOf(type);
  bits &= (1u << f.total_bits()) - 1;
  uint32_t mag = bits & MagnitudeMask(f);
  bool negative = (bits & SignBit(f)) != 0;
  // A NaN keeps its sign where the format has signed NaNs, as widening
  // the bits does (a total-order compare tells -NaN from NaN).
  if (IsNanBits(f, bits)) {
    const bool signed_nan = f.nan == NanEncoding::kIeee || f.nan == NanEncoding::kAllOnes;
    return signed_nan && negative ? -std::nanf("") : std::nanf("");
  }
  if (f.nan == NanEncoding::kIeee && (mag >> f.mantissa_bits) == (1u << f.exponent_bits) - 1) {
    return negative ? -INFINITY : INFINITY;
  }
  double v = DecodeMagnitude(f, mag);
  return static_cast<float>(negative ? -v : v);
}

}  // namespace uir
