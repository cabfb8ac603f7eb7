// Literal helpers for the evaluator.
#include "eval/typed.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "support/float_format.h"

namespace uir::eval {

using hlo::Literal;

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * dims[i + 1];
  return s;
}

int64_t IndexAt(const uint8_t* data, int64_t i, PrimitiveType type) {
  const auto size = static_cast<size_t>(StorageBytes(type));
  uint64_t raw = 0;
  std::memcpy(&raw, data + i * static_cast<int64_t>(size), size);
  const int bits = static_cast<int>(size * 8);
  if (bits < 64 && IsSigned(type) && ((raw >> (bits - 1)) & 1) != 0) {
    raw |= ~((uint64_t{1} << bits) - 1);  // sign-extend
  }
  if (IsUnsigned(type) && bits == 64 && static_cast<int64_t>(raw) < 0) {
    return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(raw);
}

Literal MakeLiteral(PrimitiveType type, const std::vector<int64_t>& dims) {
  return Literal(hlo::Shape(type, dims));
}

Literal WidenToF32(const Literal& l) {
  const PrimitiveType t = l.shape().element_type();
  Literal out = MakeLiteral(PrimitiveType::kF32, l.shape().dimensions());
  float* o = MutableData<float>(out);
  const int64_t n = l.element_count();
  if (t == PrimitiveType::kF16 || t == PrimitiveType::kBF16) {
    const auto* in = Data<uint16_t>(l);
    for (int64_t i = 0; i < n; ++i) o[i] = DecodeNarrowFloat(t, in[i]);
  } else {
    const auto* in = Data<uint8_t>(l);
    for (int64_t i = 0; i < n; ++i) o[i] = DecodeNarrowFloat(t, in[i]);
  }
  return out;
}

Literal NarrowFromF32(const Literal& f32, PrimitiveType type) {
  Literal out = MakeLiteral(type, f32.shape().dimensions());
  const float* in = Data<float>(f32);
  const int64_t n = f32.element_count();
  if (type == PrimitiveType::kF16 || type == PrimitiveType::kBF16) {
    auto* o = MutableData<uint16_t>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint16_t>(EncodeNarrowFloat(type, in[i]));
  } else {
    auto* o = MutableData<uint8_t>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint8_t>(EncodeNarrowFloat(type, in[i]));
  }
  return out;
}

Literal ElementAt(const Literal& l, int64_t i) {
  Literal out = MakeLiteral(l.shape().element_type(), {});
  CopyElement(l, i, out, 0);
  return out;
}

void SetElement(Literal& l, int64_t i, const Literal& scalar) { CopyElement(scalar, 0, l, i); }

void CopyElement(const Literal& src, int64_t from, Literal& dst, int64_t to) {
  const size_t size = static_cast<size_t>(StorageBytes(src.shape().element_type()));
  std::memcpy(dst.mutable_bytes().data() + to * size, src.bytes().data() + from * size, size);
}

Literal Reshaped(const Literal& l, const std::vector<int64_t>& dims) {
  Literal out = MakeLiteral(l.shape().element_type(), dims);
  const auto b = l.bytes();
  out.mutable_bytes().assign(b.begin(), b.end());
  return out;
}

Literal TupleOf(std::vector<Literal> elements) {
  std::vector<hlo::Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal out(hlo::Shape::Tuple(std::move(shapes)));
  out.mutable_tuple_elements() = std::move(elements);
  return out;
}

void NormalizeSubByte(Literal& l) {
  const PrimitiveType t = l.shape().element_type();
  const int bits = BitWidth(t);
  if (bits >= 8 || !IsInteger(t)) return;
  auto* p = MutableData<uint8_t>(l);
  const int64_t n = l.element_count();
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  if (IsUnsigned(t)) {
    for (int64_t i = 0; i < n; ++i) p[i] &= mask;
  } else {
    const uint8_t sign = static_cast<uint8_t>(1u << (bits - 1));
    for (int64_t i = 0; i < n; ++i) {
      uint8_t v = p[i] & mask;
      p[i] = static_cast<uint8_t>((v ^ sign) - sign);
    }
  }
}

bool SameArrays(const hlo::Shape& a, const hlo::Shape& b) {
  if (a.IsBuffer()) return SameArrays(a.buffer_element(), b);
  if (b.IsBuffer()) return SameArrays(a, b.buffer_element());
  if (a.IsTuple() != b.IsTuple()) return false;
  if (!a.IsTuple()) return a.element_type() == b.element_type() && a.dimensions() == b.dimensions();
  if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
  for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
    if (!SameArrays(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
  }
  return true;
}

bool FitsShape(const hlo::Shape& actual, const hlo::Shape& declared) {
  if (actual.IsBuffer()) return FitsShape(actual.buffer_element(), declared);
  if (declared.IsBuffer()) return FitsShape(actual, declared.buffer_element());
  if (actual.IsTuple() != declared.IsTuple()) return false;
  if (actual.IsTuple()) {
    if (actual.tuple_shapes_size() != declared.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < actual.tuple_shapes_size(); ++i) {
      if (!FitsShape(actual.tuple_shapes(i), declared.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (actual.element_type() != declared.element_type() || actual.rank() != declared.rank())
    return false;
  for (int64_t i = 0; i < actual.rank(); ++i) {
    const int64_t got = actual.dimensions(i), bound = declared.dimensions(i);
    if (got != bound && !(declared.is_dynamic_dimension(i) && got >= 0 && got <= bound))
      return false;
  }
  return true;
}

Literal Resized(const Literal& l, const std::vector<int64_t>& dims) {
  const std::vector<int64_t>& from = l.shape().dimensions();
  UIR_CHECK(from.size() == dims.size()) << "Resized keeps the rank";
  Literal out = MakeLiteral(l.shape().element_type(), dims);
  std::vector<int64_t> common(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) common[i] = std::min(from[i], dims[i]);
  const auto from_strides = Strides(from), to_strides = Strides(dims);
  const size_t bytes = static_cast<size_t>(StorageBytes(l.shape().element_type()));
  int64_t total = 1;
  for (int64_t c : common) total *= c;
  if (total == 0) return out;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t src = 0, dst = 0;
    for (size_t i = 0; i < index.size(); ++i) {
      src += index[i] * from_strides[i];
      dst += index[i] * to_strides[i];
    }
    std::memcpy(out.mutable_bytes().data() + dst * bytes, l.bytes().data() + src * bytes, bytes);
    for (int64_t i = static_cast<int64_t>(index.size()) - 1; i >= 0; --i) {
      if (++index[i] < common[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

}  // namespace uir::eval
