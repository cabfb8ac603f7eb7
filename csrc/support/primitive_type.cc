// Lookups over primitive_type.def.
#include "support/primitive_type.h"

#include <array>

#include "support/error.h"

namespace uir {
namespace {

struct TypeInfo {
  std::string_view name;
  int bits;
  int bytes;
  TypeKind kind;
  std::string_view dtype;
  DtypeSource source;
};

constexpr std::array<TypeInfo, kNumPrimitiveTypes> kTypes = {{
#define UIR_PRIMITIVE_TYPE(e, name, bits, bytes, kind, dtype, source) \
  {name, bits, bytes, TypeKind::kind, dtype, DtypeSource::source},
#include "support/primitive_type.def"
#undef UIR_PRIMITIVE_TYPE
}};

const TypeInfo& Info(PrimitiveType type) {
  auto index = static_cast<size_t>(type);
  UIR_CHECK(index < kTypes.size()) << "bad PrimitiveType " << index;
  return kTypes[index];
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) { return Info(type).name; }

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  for (size_t i = 0; i < kTypes.size(); ++i) {
    if (kTypes[i].name == name) return static_cast<PrimitiveType>(i);
  }
  return std::nullopt;
}

TypeKind KindOf(PrimitiveType type) { return Info(type).kind; }
std::string_view DtypeName(PrimitiveType type) { return Info(type).dtype; }
DtypeSource DtypeSourceOf(PrimitiveType type) { return Info(type).source; }

std::optional<PrimitiveType> PrimitiveTypeFromDtypeName(std::string_view name) {
  if (name.empty()) return std::nullopt;
  for (size_t i = 0; i < kTypes.size(); ++i) {
    if (kTypes[i].dtype == name) return static_cast<PrimitiveType>(i);
  }
  return std::nullopt;
}
int BitWidth(PrimitiveType type) { return Info(type).bits; }
int StorageBytes(PrimitiveType type) { return Info(type).bytes; }

PrimitiveType ComplexComponentType(PrimitiveType type) {
  UIR_CHECK(IsComplex(type)) << PrimitiveTypeName(type) << " is not complex";
  return type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
}

}  // namespace uir
