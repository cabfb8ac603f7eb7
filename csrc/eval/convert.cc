// convert between every pair of element types, as typed loops.
#include <cmath>
#include <limits>
#include <type_traits>

#include "eval/elementwise.h"
#include "eval/typed.h"
#include "support/float_format.h"

namespace uir::eval {
namespace {

using hlo::Literal;

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

template <typename D, typename S>
D ConvertOne(S s) {
  if constexpr (IsComplex<D>::value) {
    if constexpr (IsComplex<S>::value) {
      return D(static_cast<typename D::value_type>(s.real()),
               static_cast<typename D::value_type>(s.imag()));
    } else {
      return D(static_cast<typename D::value_type>(s), 0);
    }
  } else if constexpr (IsComplex<S>::value) {
    return ConvertOne<D>(s.real());
  } else if constexpr (std::is_same_v<D, bool>) {
    return s != S(0);
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    // Saturating, NaN -> 0, as XLA defines float -> int conversion.
    if (std::isnan(s)) return D(0);
    if (s <= static_cast<S>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    // max() as S may round up past max (e.g. 2^63 for int64), so compare >=.
    if (s >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(s);
  } else {
    return static_cast<D>(s);
  }
}

// Saturating float -> sub-byte int needs the narrow range, not int8's.
void SaturateSubByte(const Literal& in, Literal& out) {
  const PrimitiveType t = out.shape().element_type();
  const int bits = BitWidth(t);
  if (bits >= 8 || !IsInteger(t) || !(IsFloat(in.shape().element_type()))) return;
  const double lo = IsSigned(t) ? -std::ldexp(1.0, bits - 1) : 0;
  const double hi = IsSigned(t) ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
  for (int64_t i = 0; i < in.element_count(); ++i) {
    double v = in.GetDouble(i);
    if (std::isnan(v)) {
      out.SetInt64(i, 0);
    } else {
      out.SetInt64(i, static_cast<int64_t>(std::fmin(std::fmax(std::trunc(v), lo), hi)));
    }
  }
}

}  // namespace

Literal Convert(const Literal& in, PrimitiveType type) {
  const PrimitiveType from = in.shape().element_type();
  if (IsNarrowFloat(from)) return Convert(WidenToF32(in), type);
  // To a narrow float through f32, as XLA (and Eigen's conversions) do.
  if (IsNarrowFloat(type)) return NarrowFromF32(Convert(in, PrimitiveType::kF32), type);
  Literal out = MakeLiteral(type, in.shape().dimensions());
  const int64_t n = in.element_count();
  DispatchNative(from, [&](auto s_tag) {
    using S = typename decltype(s_tag)::type;
    DispatchNative(type, [&](auto d_tag) {
      using D = typename decltype(d_tag)::type;
      const S* src = Data<S>(in);
      D* dst = MutableData<D>(out);
      for (int64_t i = 0; i < n; ++i) dst[i] = ConvertOne<D>(src[i]);
    });
  });
  SaturateSubByte(in, out);
  NormalizeSubByte(out);
  return out;
}

}  // namespace uir::eval
