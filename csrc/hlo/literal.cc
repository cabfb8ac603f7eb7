// Literal storage, element conversion and XLA-style printing.
#include "hlo/literal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "support/error.h"
#include "support/float_format.h"

namespace uir::hlo {
namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Sign-extends the low `bits` bits of `raw`.
int64_t SignExtend(uint64_t raw, int bits) {
  if (bits >= 64) return static_cast<int64_t>(raw);
  uint64_t m = 1ull << (bits - 1);
  raw &= (1ull << bits) - 1;
  return static_cast<int64_t>((raw ^ m) - m);
}

template <typename F, typename U>
std::string FormatIeee(F value, int digits10, int max_digits10) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (std::isnan(value)) {
    U bits;
    std::memcpy(&bits, &value, sizeof(F));
    constexpr int kMantissa = std::numeric_limits<F>::digits - 1;
    U mantissa = bits & ((U{1} << kMantissa) - 1);
    U quiet = U{1} << (kMantissa - 1);
    std::string sign = std::signbit(value) ? "-" : "";
    if (mantissa == quiet) return sign + "nan";
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%snan(0x%llx)", sign.c_str(),
                  static_cast<unsigned long long>(mantissa));
    return buf;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", digits10, static_cast<double>(value));
  F back;
  if constexpr (sizeof(F) == 4) {
    back = std::strtof(buf, nullptr);
  } else {
    back = std::strtod(buf, nullptr);
  }
  if (back != value)
    std::snprintf(buf, sizeof(buf), "%.*g", max_digits10, static_cast<double>(value));
  return buf;
}

}  // namespace

std::string FormatFloat(float value) { return FormatIeee<float, uint32_t>(value, 6, 9); }
std::string FormatDouble(double value) { return FormatIeee<double, uint64_t>(value, 15, 17); }

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) elements_.emplace_back(s);
    return;
  }
  if (shape.IsArray()) {
    data_.assign(static_cast<size_t>(shape.element_count()) * StorageBytes(shape.element_type()),
                 0);
  }
}

Literal Literal::View(const Shape& shape, const uint8_t* data,
                      std::shared_ptr<const void> keepalive) {
  UIR_CHECK(shape.IsArray()) << "a literal view must be an array, not " << shape.ToString();
  Literal out;
  out.shape_ = shape;
  out.view_ = data;
  out.view_size_ = static_cast<size_t>(shape.element_count()) * StorageBytes(shape.element_type());
  out.keepalive_ = std::move(keepalive);
  return out;
}

std::vector<uint8_t>& Literal::mutable_bytes() {
  if (view_ != nullptr) {
    data_.assign(view_, view_ + view_size_);
    view_ = nullptr;
    view_size_ = 0;
    keepalive_.reset();
  }
  return data_;
}

void Literal::set_shape_layouts_from(const Shape& shape) {
  UIR_CHECK(shape.Compatible(shape_)) << shape.ToString() << " vs " << shape_.ToString();
  shape_ = shape;
  for (size_t i = 0; i < elements_.size(); ++i) {
    elements_[i].set_shape_layouts_from(shape.tuple_shapes(static_cast<int64_t>(i)));
  }
}

uint64_t Literal::GetBits(int64_t i) const {
  const int bytes = StorageBytes(shape_.element_type());
  const uint8_t* p = raw() + i * bytes;
  switch (bytes) {
    case 1:
      return p[0];
    case 2:
      return Load<uint16_t>(p);
    case 4:
      return Load<uint32_t>(p);
    case 8:
      return Load<uint64_t>(p);
    default:
      UIR_CHECK(false) << "GetBits on " << PrimitiveTypeName(shape_.element_type());
  }
  return 0;
}

void Literal::SetBits(int64_t i, uint64_t bits) {
  const int bytes = StorageBytes(shape_.element_type());
  uint8_t* p = mutable_bytes().data() + i * bytes;
  switch (bytes) {
    case 1:
      p[0] = static_cast<uint8_t>(bits);
      break;
    case 2:
      Store<uint16_t>(p, static_cast<uint16_t>(bits));
      break;
    case 4:
      Store<uint32_t>(p, static_cast<uint32_t>(bits));
      break;
    case 8:
      Store<uint64_t>(p, bits);
      break;
    default:
      UIR_CHECK(false) << "SetBits on " << PrimitiveTypeName(shape_.element_type());
  }
}

double Literal::GetDouble(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  switch (KindOf(t)) {
    case TypeKind::kPred:
      return GetBits(i) != 0 ? 1.0 : 0.0;
    case TypeKind::kSigned:
      return static_cast<double>(GetInt64(i));
    case TypeKind::kUnsigned:
      return static_cast<double>(GetUint64(i));
    case TypeKind::kFloat:
      if (t == PrimitiveType::kF32) return Load<float>(raw() + i * 4);
      if (t == PrimitiveType::kF64) return Load<double>(raw() + i * 8);
      return DecodeNarrowFloat(t, static_cast<uint32_t>(GetBits(i)));
    case TypeKind::kComplex:
      return GetComplex(i).real();
    default:
      UIR_CHECK(false) << "GetDouble on " << PrimitiveTypeName(t);
  }
  return 0;
}

int64_t Literal::GetInt64(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (IsSigned(t)) return SignExtend(GetBits(i), BitWidth(t));
  if (IsUnsigned(t) || t == PrimitiveType::kPred) return static_cast<int64_t>(GetBits(i));
  return static_cast<int64_t>(GetDouble(i));
}

uint64_t Literal::GetUint64(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (IsSigned(t)) return static_cast<uint64_t>(GetInt64(i));
  return GetBits(i);
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::kC64) {
    const uint8_t* p = raw() + i * 8;
    return {Load<float>(p), Load<float>(p + 4)};
  }
  if (t == PrimitiveType::kC128) {
    const uint8_t* p = raw() + i * 16;
    return {Load<double>(p), Load<double>(p + 8)};
  }
  return {GetDouble(i), 0.0};
}

void Literal::SetDouble(int64_t i, double v) {
  PrimitiveType t = shape_.element_type();
  switch (KindOf(t)) {
    case TypeKind::kPred:
      SetBits(i, v != 0 ? 1 : 0);
      return;
    case TypeKind::kSigned:
      SetInt64(i, static_cast<int64_t>(v));
      return;
    case TypeKind::kUnsigned:
      SetUint64(i, static_cast<uint64_t>(v));
      return;
    case TypeKind::kFloat:
      if (t == PrimitiveType::kF32) {
        Store<float>(mutable_bytes().data() + i * 4, static_cast<float>(v));
      } else if (t == PrimitiveType::kF64) {
        Store<double>(mutable_bytes().data() + i * 8, v);
      } else {
        SetBits(i, EncodeNarrowFloat(t, static_cast<float>(v)));
      }
      return;
    case TypeKind::kComplex:
      SetComplex(i, {v, 0.0});
      return;
    default:
      UIR_CHECK(false) << "SetDouble on " << PrimitiveTypeName(t);
  }
}

void Literal::SetInt64(int64_t i, int64_t v) {
  PrimitiveType t = shape_.element_type();
  if (IsInteger(t) || t == PrimitiveType::kPred) {
    int bits = BitWidth(t);
    uint64_t raw = static_cast<uint64_t>(v);
    if (bits < 64) raw &= (1ull << bits) - 1;
    SetBits(i, raw);
    return;
  }
  SetDouble(i, static_cast<double>(v));
}

void Literal::SetUint64(int64_t i, uint64_t v) {
  PrimitiveType t = shape_.element_type();
  if (IsInteger(t) || t == PrimitiveType::kPred) {
    SetInt64(i, static_cast<int64_t>(v));
    return;
  }
  SetDouble(i, static_cast<double>(v));
}

void Literal::SetComplex(int64_t i, std::complex<double> v) {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::kC64) {
    uint8_t* p = mutable_bytes().data() + i * 8;
    Store<float>(p, static_cast<float>(v.real()));
    Store<float>(p + 4, static_cast<float>(v.imag()));
  } else if (t == PrimitiveType::kC128) {
    uint8_t* p = mutable_bytes().data() + i * 16;
    Store<double>(p, v.real());
    Store<double>(p + 8, v.imag());
  } else {
    SetDouble(i, v.real());
  }
}

bool Literal::operator==(const Literal& other) const {
  const auto a = bytes(), b = other.bytes();
  return shape_.Compatible(other.shape_) && std::equal(a.begin(), a.end(), b.begin(), b.end()) &&
         elements_ == other.elements_;
}

std::string Literal::ElementToString(int64_t i) const {
  PrimitiveType t = shape_.element_type();
  switch (KindOf(t)) {
    case TypeKind::kPred:
      return GetBits(i) ? "1" : "0";
    case TypeKind::kSigned:
      return std::to_string(GetInt64(i));
    case TypeKind::kUnsigned:
      return std::to_string(GetUint64(i));
    case TypeKind::kFloat:
      // f32 and f64 print from their bits: a NaN's payload must not be
      // quieted by a conversion.
      if (t == PrimitiveType::kF64) return FormatDouble(Load<double>(raw() + i * 8));
      if (t == PrimitiveType::kF32) return FormatFloat(Load<float>(raw() + i * 4));
      {
        // Narrow floats print as floats. A NaN keeps its sign, and in the
        // IEEE-like formats (f16, bf16, f8e5m2) its payload as XLA writes
        // it: nan(0x...) unless it is the plain quiet NaN.
        float v = static_cast<float>(GetDouble(i));
        if (std::isnan(v)) {
          const FloatFormat& f = FormatOf(t);
          uint64_t sign_bit = f.nan == NanEncoding::kAllOnesU || f.nan == NanEncoding::kNegZero
                                  ? 0
                                  : 1ull << (f.exponent_bits + f.mantissa_bits);
          const std::string sign = (GetBits(i) & sign_bit) ? "-" : "";
          const uint64_t mantissa = GetBits(i) & ((1ull << f.mantissa_bits) - 1);
          if (f.nan != NanEncoding::kIeee || mantissa == 1ull << (f.mantissa_bits - 1))
            return sign + "nan";
          char buf[48];
          std::snprintf(buf, sizeof(buf), "%snan(0x%llx)", sign.c_str(),
                        static_cast<unsigned long long>(mantissa));
          return buf;
        }
        return FormatFloat(v);
      }
    case TypeKind::kComplex: {
      std::complex<double> c = GetComplex(i);
      if (t == PrimitiveType::kC64) {
        return "(" + FormatFloat(static_cast<float>(c.real())) + ", " +
               FormatFloat(static_cast<float>(c.imag())) + ")";
      }
      return "(" + FormatDouble(c.real()) + ", " + FormatDouble(c.imag()) + ")";
    }
    default:
      return "";
  }
}

std::string Literal::ToString() const {
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out += ", ";
      out += elements_[i].ToString();
    }
    return out + ")";
  }
  if (!shape_.IsArray()) return "";
  const int64_t rank = shape_.rank();
  if (rank == 0) {
    if (shape_.element_type() == PrimitiveType::kPred) return GetBits(0) ? "true" : "false";
    return ElementToString(0);
  }
  // Rank 1 prints "{1, 2}"; higher ranks nest with inner spaces: "{ { 1, 2 }, { 3, 4 } }".
  const std::vector<int64_t>& dims = shape_.dimensions();
  std::string out;
  int64_t index = 0;
  auto emit = [&](auto&& self, int64_t dim) -> void {
    const bool spaced = rank > 1;
    out += spaced ? "{ " : "{";
    for (int64_t k = 0; k < dims[dim]; ++k) {
      if (k) out += ", ";
      if (dim + 1 == rank) {
        out += ElementToString(index++);
      } else {
        self(self, dim + 1);
      }
    }
    out += spaced ? " }" : "}";
  };
  emit(emit, 0);
  return out;
}

}  // namespace uir::hlo
