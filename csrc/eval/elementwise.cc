// Elementwise evaluation: picks the typed kernel for the element type; narrow
// floats are computed in f32 and rounded back, sub-byte ints wrapped back.
#include "eval/elementwise.h"

#include <cmath>
#include <cstring>

#include "eval/kernels.h"
#include "eval/typed.h"
#include "support/float_format.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

[[noreturn]] void Unsupported(const HloInstruction& inst, PrimitiveType t) {
  throw UnimplementedError("the evaluator does not support " +
                           std::string(hlo::OpcodeName(inst.opcode())) + " on " +
                           std::string(PrimitiveTypeName(t)) + " (%" + inst.name() + ")");
}

// Expands a scalar to `dims` (clamp's bounds may be scalars).
Literal Expand(const Literal& l, const std::vector<int64_t>& dims) {
  if (l.shape().dimensions() == dims) return l;
  Literal out = MakeLiteral(l.shape().element_type(), dims);
  const size_t size = static_cast<size_t>(StorageBytes(l.shape().element_type()));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    std::memcpy(out.mutable_bytes().data() + i * size, l.bytes().data(), size);
  }
  return out;
}

[[noreturn]] void Unsupported(std::string_view what, PrimitiveType t) {
  throw UnimplementedError("the evaluator does not support " + std::string(what) + " on " +
                           std::string(PrimitiveTypeName(t)));
}

Literal Unary(const HloInstruction& inst, HloOpcode op, const Literal& x) {
  return ApplyUnary(op, x, std::string(hlo::OpcodeName(inst.opcode())) + " (%" + inst.name() + ")");
}

Literal Binary(const HloInstruction& inst, HloOpcode op, const Literal& x, const Literal& y) {
  return ApplyBinary(op, x, y,
                     std::string(hlo::OpcodeName(inst.opcode())) + " (%" + inst.name() + ")");
}

Literal CompareImpl(Direction d, bool total, const Literal& x, const Literal& y) {
  const PrimitiveType t = x.shape().element_type();
  if (IsNarrowFloat(t)) return CompareImpl(d, total, WidenToF32(x), WidenToF32(y));
  Literal out = MakeLiteral(PrimitiveType::kPred, x.shape().dimensions());
  DispatchNative(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CompareKernel<T>(d, total, Data<T>(x), Data<T>(y), MutableData<bool>(out), x.element_count());
  });
  return out;
}

Literal Select(const Literal& pred, const Literal& on_true, const Literal& on_false) {
  Literal out = on_true;
  const size_t size = static_cast<size_t>(StorageBytes(on_true.shape().element_type()));
  const bool* p = Data<bool>(pred);
  const bool scalar = pred.element_count() == 1 && on_true.element_count() != 1;
  for (int64_t i = 0; i < out.element_count(); ++i) {
    if (!p[scalar ? 0 : i]) {
      std::memcpy(out.mutable_bytes().data() + i * size, on_false.bytes().data() + i * size, size);
    }
  }
  return out;
}

Literal Compare(const HloInstruction& inst, const Literal& x, const Literal& y) {
  const Direction d = DirectionOf(inst);
  const auto type = inst.attributes().GetEnumOr<hlo::ComparisonType>(AttrKey::kCompareType);
  const bool total = type == hlo::ComparisonType::kTotalOrder;
  const PrimitiveType t = x.shape().element_type();
  if (IsComplex(t) && d != Direction::kEq && d != Direction::kNe) Unsupported(inst, t);
  return CompareImpl(d, total, x, y);
}

// Real part, imaginary part or magnitude of a complex literal.
Literal ComplexPart(HloOpcode op, const Literal& x) {
  const bool c64 = x.shape().element_type() == PrimitiveType::kC64;
  Literal out =
      MakeLiteral(c64 ? PrimitiveType::kF32 : PrimitiveType::kF64, x.shape().dimensions());
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* in = Data<std::complex<T>>(x);
    T* o = MutableData<T>(out);
    for (int64_t i = 0; i < x.element_count(); ++i) {
      o[i] = op == HloOpcode::kReal   ? in[i].real()
             : op == HloOpcode::kImag ? in[i].imag()
                                      : std::abs(in[i]);
    }
  };
  if (c64) {
    run(Tag<float>{});
  } else {
    run(Tag<double>{});
  }
  return out;
}

Literal MakeComplex(const Literal& re, const Literal& im) {
  const bool f32 = re.shape().element_type() == PrimitiveType::kF32;
  Literal out =
      MakeLiteral(f32 ? PrimitiveType::kC64 : PrimitiveType::kC128, re.shape().dimensions());
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* o = MutableData<std::complex<T>>(out);
    for (int64_t i = 0; i < re.element_count(); ++i) o[i] = {Data<T>(re)[i], Data<T>(im)[i]};
  };
  if (f32) {
    run(Tag<float>{});
  } else {
    run(Tag<double>{});
  }
  return out;
}

template <typename T, typename Bits>
T ReducePrecisionOne(T value, int exponent_bits, int mantissa_bits) {
  constexpr int kMantissa = std::numeric_limits<T>::digits - 1;
  constexpr int kExponent = sizeof(T) * 8 - 1 - kMantissa;
  Bits x;
  std::memcpy(&x, &value, sizeof(T));
  const Bits sign_mask = Bits(1) << (sizeof(T) * 8 - 1);
  const Bits exp_mask = ((Bits(1) << kExponent) - 1) << kMantissa;
  if (mantissa_bits < kMantissa) {
    // Round to nearest even at the new last mantissa bit.
    const Bits last = Bits(1) << (kMantissa - mantissa_bits);
    const Bits bias = (last >> 1) - 1;
    const Bits x_last = (x & last) >> (kMantissa - mantissa_bits);
    x = (x + x_last + bias) & ~(last - 1);
  }
  if (exponent_bits < kExponent) {
    const Bits sign = x & sign_mask;
    const Bits x_exp = x & exp_mask;
    const int64_t ebias = (int64_t{1} << (kExponent - 1)) - 1;
    const int64_t max_exp = ebias + (int64_t{1} << (exponent_bits - 1)) - 1;
    // XLA flushes every value whose biased exponent is at most
    // bias - (2^(e-1) - 1) to zero: the reduced type's denormals included.
    const int64_t min_exp = ebias - ((int64_t{1} << (exponent_bits - 1)) - 1);
    if (x_exp > (static_cast<Bits>(max_exp) << kMantissa)) {
      x = sign | exp_mask;  // overflow: infinity
    } else if (x_exp <= (static_cast<Bits>(min_exp) << kMantissa)) {
      x = sign;  // underflow: zero
    }
  }
  T out;
  std::memcpy(&out, &x, sizeof(T));
  if (std::isnan(value))
    return mantissa_bits > 0 ? value : std::copysign(std::numeric_limits<T>::infinity(), value);
  return out;
}

Literal ReducePrecision(const HloInstruction& inst, const Literal& x) {
  const PrimitiveType t = x.shape().element_type();
  if (IsNarrowFloat(t)) return NarrowFromF32(ReducePrecision(inst, WidenToF32(x)), t);
  const int e = static_cast<int>(inst.attributes().Get<int64_t>(AttrKey::kExponentBits));
  const int m = static_cast<int>(inst.attributes().Get<int64_t>(AttrKey::kMantissaBits));
  Literal out = x;
  if (t == PrimitiveType::kF32) {
    float* p = MutableData<float>(out);
    for (int64_t i = 0; i < out.element_count(); ++i)
      p[i] = ReducePrecisionOne<float, uint32_t>(p[i], e, m);
  } else if (t == PrimitiveType::kF64) {
    double* p = MutableData<double>(out);
    for (int64_t i = 0; i < out.element_count(); ++i)
      p[i] = ReducePrecisionOne<double, uint64_t>(p[i], e, m);
  } else {
    Unsupported(inst, t);
  }
  return out;
}

}  // namespace

Direction DirectionOf(const HloInstruction& compare) {
  return compare.attributes().GetEnum<Direction>(AttrKey::kDirection);
}

// stochastic-convert as XLA's evaluator defines it: |x| rounds away from
// zero when the random bits r are below frac(|x|) * 2^bits, so with
// probability frac(|x|); NaN gives 0, infinities and out-of-range values
// saturate to the result type's bounds.
Literal StochasticConvert(const HloInstruction& inst, const Literal& x, const Literal& random) {
  const PrimitiveType t = inst.shape().element_type();
  const int out_bits = BitWidth(t);
  const int random_bits = BitWidth(random.shape().element_type());
  const int64_t max = static_cast<int64_t>((uint64_t{1} << (out_bits - 1)) - 1);
  const int64_t min = -max - 1;
  Literal out = MakeLiteral(t, x.shape().dimensions());
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const double v = x.GetDouble(i);
    int64_t r;
    if (std::isnan(v)) {
      r = 0;
    } else if (v >= static_cast<double>(max)) {
      r = max;
    } else if (v <= static_cast<double>(min)) {
      r = min;
    } else {
      const double a = std::fabs(v);
      int64_t whole = static_cast<int64_t>(a);
      const double frac = a - static_cast<double>(whole);
      const auto threshold = static_cast<uint64_t>(std::ldexp(frac, random_bits));
      if (frac != 0 && random.GetUint64(i) < threshold) ++whole;
      r = v < 0 ? -whole : whole;
    }
    out.SetInt64(i, r);
  }
  return out;
}

Literal EvalElementwise(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  const HloOpcode op = inst.opcode();
  switch (op) {
    case HloOpcode::kStochasticConvert:
      return StochasticConvert(inst, *ops[0], *ops[1]);
    case HloOpcode::kConvert:
      return Convert(*ops[0], inst.shape().element_type());
    case HloOpcode::kCompare:
      return Compare(inst, *ops[0], *ops[1]);
    case HloOpcode::kSelect:
      return Select(*ops[0], *ops[1], *ops[2]);
    case HloOpcode::kClamp: {
      const auto& dims = ops[1]->shape().dimensions();
      Literal lo = Expand(*ops[0], dims), hi = Expand(*ops[2], dims);
      return Binary(inst, HloOpcode::kMinimum, Binary(inst, HloOpcode::kMaximum, *ops[1], lo), hi);
    }
    case HloOpcode::kComplex:
      return MakeComplex(*ops[0], *ops[1]);
    case HloOpcode::kIsFinite: {
      Literal f = IsNarrowFloat(ops[0]->shape().element_type()) ? WidenToF32(*ops[0]) : *ops[0];
      Literal out = MakeLiteral(PrimitiveType::kPred, f.shape().dimensions());
      bool* o = MutableData<bool>(out);
      for (int64_t i = 0; i < f.element_count(); ++i) o[i] = std::isfinite(f.GetDouble(i));
      return out;
    }
    case HloOpcode::kReducePrecision:
      return ReducePrecision(inst, *ops[0]);
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kAbs:
      if (IsComplex(ops[0]->shape().element_type())) return ComplexPart(op, *ops[0]);
      return Unary(inst, op, *ops[0]);
    default:
      break;
  }
  switch (hlo::OpcodeCategoryOf(op)) {
    case hlo::OpcodeCategory::kUnary:
      return Unary(inst, op, *ops[0]);
    case hlo::OpcodeCategory::kBinary:
      return Binary(inst, op, *ops[0], *ops[1]);
    default:
      break;
  }
  if (op == HloOpcode::kCopy || op == HloOpcode::kOptimizationBarrier) return *ops[0];
  Unsupported(inst, ops.empty() ? inst.shape().element_type() : ops[0]->shape().element_type());
}

Literal ApplyUnary(HloOpcode op, const Literal& x, std::string_view what) {
  const PrimitiveType t = x.shape().element_type();
  if (IsNarrowFloat(t)) return NarrowFromF32(ApplyUnary(op, WidenToF32(x), what), t);
  Literal out = MakeLiteral(t, x.shape().dimensions());
  bool ok = DispatchNative(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return UnaryKernel<T>(op, Data<T>(x), MutableData<T>(out), x.element_count());
  });
  if (!ok) Unsupported(what, t);
  NormalizeSubByte(out);
  return out;
}

Literal ApplyBinary(HloOpcode op, const Literal& x, const Literal& y, std::string_view what) {
  const PrimitiveType t = x.shape().element_type();
  if (IsNarrowFloat(t)) {
    return NarrowFromF32(ApplyBinary(op, WidenToF32(x), WidenToF32(y), what), t);
  }
  Literal out = MakeLiteral(t, x.shape().dimensions());
  bool ok = DispatchNative(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return BinaryKernel<T>(op, Data<T>(x), Data<T>(y), MutableData<T>(out), x.element_count());
  });
  if (!ok) Unsupported(what, t);
  NormalizeSubByte(out);
  return out;
}

Literal ApplyCompare(Direction direction, const Literal& x, const Literal& y, bool total) {
  return CompareImpl(direction, total, x, y);
}

Literal ApplySelect(const Literal& pred, const Literal& on_true, const Literal& on_false) {
  return Select(pred, on_true, on_false);
}

}  // namespace uir::eval
