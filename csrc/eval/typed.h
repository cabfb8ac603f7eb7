// Element-type dispatch and literal helpers shared by the evaluator's files.
#ifndef UIR_EVAL_TYPED_H_
#define UIR_EVAL_TYPED_H_

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "hlo/literal.h"
#include "support/error.h"

namespace uir::eval {

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with T the C++ type a literal of `type` stores its
// elements as. Sub-byte integers use int8_t/uint8_t (see NormalizeSubByte).
// Narrow floats are not native: callers widen them to f32 first.
template <typename F>
decltype(auto) DispatchNative(PrimitiveType type, F&& f) {
  switch (type) {
    case PrimitiveType::kPred:
      return f(Tag<bool>{});
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8:
      return f(Tag<int8_t>{});
    case PrimitiveType::kS16:
      return f(Tag<int16_t>{});
    case PrimitiveType::kS32:
      return f(Tag<int32_t>{});
    case PrimitiveType::kS64:
      return f(Tag<int64_t>{});
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
    case PrimitiveType::kU8:
      return f(Tag<uint8_t>{});
    case PrimitiveType::kU16:
      return f(Tag<uint16_t>{});
    case PrimitiveType::kU32:
      return f(Tag<uint32_t>{});
    case PrimitiveType::kU64:
      return f(Tag<uint64_t>{});
    case PrimitiveType::kF32:
      return f(Tag<float>{});
    case PrimitiveType::kF64:
      return f(Tag<double>{});
    case PrimitiveType::kC64:
      return f(Tag<std::complex<float>>{});
    case PrimitiveType::kC128:
      return f(Tag<std::complex<double>>{});
    default:
      break;
  }
  throw UnimplementedError("the evaluator has no native storage for " +
                           std::string(PrimitiveTypeName(type)));
}

template <typename T>
const T* Data(const hlo::Literal& l) {
  return reinterpret_cast<const T*>(l.bytes().data());
}
template <typename T>
T* MutableData(hlo::Literal& l) {
  return reinterpret_cast<T*>(l.mutable_bytes().data());
}

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims);

// Element i of an integer array of `type` at `data`, as an index: signed
// types sign-extended; a u64 above INT64_MAX reads as INT64_MAX (out of any
// range, as the value is).
int64_t IndexAt(const uint8_t* data, int64_t i, PrimitiveType type);

// A literal with `type` and `dims` (no layout), zero-filled.
hlo::Literal MakeLiteral(PrimitiveType type, const std::vector<int64_t>& dims);

// Narrow floats travel through f32: widening is exact; narrowing rounds to
// nearest even, as XLA rounds after each op on these types.
hlo::Literal WidenToF32(const hlo::Literal& l);
hlo::Literal NarrowFromF32(const hlo::Literal& f32, PrimitiveType type);

// A scalar literal holding element `i` of `l`, and the reverse.
hlo::Literal ElementAt(const hlo::Literal& l, int64_t i);
void SetElement(hlo::Literal& l, int64_t i, const hlo::Literal& scalar);
// Copies element `from` of `src` to element `to` of `dst` (same element type).
void CopyElement(const hlo::Literal& src, int64_t from, hlo::Literal& dst, int64_t to);

// `l`'s elements (row-major) under other dimensions of the same count.
hlo::Literal Reshaped(const hlo::Literal& l, const std::vector<int64_t>& dims);

// Same element types and dimensions, tuples alike; layouts and dynamic
// markers aside, a buffer shape b(...) standing for its element.
bool SameArrays(const hlo::Shape& a, const hlo::Shape& b);

// Whether an evaluated value of shape `actual` stands for `declared`: as
// SameArrays, except that a dynamic dimension (<=N) of `declared` holds any
// size up to N. The evaluator keeps a dynamic array at its actual size.
bool FitsShape(const hlo::Shape& actual, const hlo::Shape& declared);

// `l` with other dimensions of the same rank: the elements both share keep
// their index, new ones are zero.
hlo::Literal Resized(const hlo::Literal& l, const std::vector<int64_t>& dims);

// A tuple literal of `elements`.
hlo::Literal TupleOf(std::vector<hlo::Literal> elements);

// Wraps sub-byte integers (s1..s4, u1..u4) back into their bit width after
// arithmetic done in 8 bits.
void NormalizeSubByte(hlo::Literal& l);

}  // namespace uir::eval

#endif  // UIR_EVAL_TYPED_H_
