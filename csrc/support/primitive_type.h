// The element types (from primitive_type.def, in XLA's order and spelling)
// and their properties: the one table that HLO, the evaluator, the passes,
// the code generator and the runtime all read.
#ifndef UIR_SUPPORT_PRIMITIVE_TYPE_H_
#define UIR_SUPPORT_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace uir {

enum class PrimitiveType : uint8_t {
#define UIR_PRIMITIVE_TYPE(e, name, bits, bytes, kind, dtype, source) e,
#include "support/primitive_type.def"
#undef UIR_PRIMITIVE_TYPE
};

enum class TypeKind : uint8_t { kPred, kSigned, kUnsigned, kFloat, kComplex, kToken, kOpaque };

// Where the Python dtype of an element type comes from.
enum class DtypeSource : uint8_t { kNumPy, kMlDtypes, kNone };

inline constexpr int kNumPrimitiveTypes = 0
#define UIR_PRIMITIVE_TYPE(e, name, bits, bytes, kind, dtype, source) +1
#include "support/primitive_type.def"
#undef UIR_PRIMITIVE_TYPE
    ;

// XLA's text spelling ("f32", "bf16", ...).
std::string_view PrimitiveTypeName(PrimitiveType type);
// The type spelled `name`, if any.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);

TypeKind KindOf(PrimitiveType type);
// The NumPy or ml_dtypes dtype name ("float32", "bfloat16"; "" for none).
std::string_view DtypeName(PrimitiveType type);
DtypeSource DtypeSourceOf(PrimitiveType type);
// The element type whose dtype is named `name`, if any.
std::optional<PrimitiveType> PrimitiveTypeFromDtypeName(std::string_view name);
// Bits of one value (pred: 1; token and opaque: 0).
int BitWidth(PrimitiveType type);
// Bytes one element takes in a Literal (sub-byte types take one byte).
int StorageBytes(PrimitiveType type);

inline bool IsFloat(PrimitiveType t) { return KindOf(t) == TypeKind::kFloat; }
inline bool IsComplex(PrimitiveType t) { return KindOf(t) == TypeKind::kComplex; }
inline bool IsSigned(PrimitiveType t) { return KindOf(t) == TypeKind::kSigned; }
inline bool IsUnsigned(PrimitiveType t) { return KindOf(t) == TypeKind::kUnsigned; }
inline bool IsInteger(PrimitiveType t) { return IsSigned(t) || IsUnsigned(t); }
// Types whose values are numbers or booleans (everything but token and opaque).
inline bool IsArrayType(PrimitiveType t) {
  return KindOf(t) != TypeKind::kToken && KindOf(t) != TypeKind::kOpaque;
}
// Whether a bitcast-convert from `from` to `to` reads each element's bits
// as one element of the other type in a kernel's registers: one width,
// whole-byte integers and f32/f64 only (narrow floats widen to f32 there,
// which may quiet a signalling NaN; pred is one bit).
inline bool IsRegisterBitcast(PrimitiveType from, PrimitiveType to) {
  auto ok = [](PrimitiveType t) {
    return (IsInteger(t) && BitWidth(t) % 8 == 0) || t == PrimitiveType::kF32 ||
           t == PrimitiveType::kF64;
  };
  return ok(from) && ok(to) && BitWidth(from) == BitWidth(to);
}
// The real component type of a complex type (c64 -> f32, c128 -> f64).
PrimitiveType ComplexComponentType(PrimitiveType type);

}  // namespace uir

#endif  // UIR_SUPPORT_PRIMITIVE_TYPE_H_
