// Typed instruction attributes: the value types, the attribute table
// (attribute.def) and the small sorted map instructions keep them in.
#ifndef UIR_HLO_ATTRIBUTES_H_
#define UIR_HLO_ATTRIBUTES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "hlo/attribute_enums.h"
#include "hlo/literal.h"
#include "hlo/shape.h"

namespace uir::hlo {

class HloComputation;

enum class AttrKey : uint8_t {
#define UIR_ATTRIBUTE(e, name, kind) e,
#include "hlo/attribute.def"
#undef UIR_ATTRIBUTE
};

// How an attribute's value is written and stored.
enum class AttrKind : uint8_t {
  kInt,                 // 3
  kBool,                // true
  kFloat,               // 0.001
  kString,              // "text"
  kEnum,                // GT, kLoop, API_VERSION_TYPED_FFI: one of EnumNames(key)
  kIdentifier,          // dot_bf16_bf16_f32, rng_default: any identifier, kept as text
  kRaw,                 // a {...} block kept as written
  kIntList,             // {1,0}
  kIntListList,         // {{0,1},{1,2}}
  kBoolList,            // {true,false}
  kComputation,         // %name
  kComputationList,     // {%a, %b}
  kSliceRanges,         // {[0:4:2], [1:3]}
  kPadding,             // 0_0x1_2_1
  kWindow,              // {size=3x3 stride=2x2 pad=1_1x1_1}
  kDimLabels,           // b01f_01io->b01f
  kPrecisionList,       // {default,high}
  kShape,               // f32[2]
  kShapeList,           // {f32[2]{0}, s32[]}
  kAliasing,            // {{0}: (1, {}), {1}: (0, {})}
  kLiteral,             // s32[] 1
  kReplicaGroups,       // {{0,1},{2,3}} or [2,2]<=[4]
  kSharding,            // {replicated}, {devices=[2,1]0,1}, {{...}, {...}}
  kFrontendAttributes,  // {key="value", other={raw}}
  kMetadata,            // {op_type="Add" op_name="x" source_line=3}
  kBackendConfig,       // "text" or {raw block}
};

std::string_view AttrName(AttrKey key);
std::optional<AttrKey> AttrKeyFromName(std::string_view name);
AttrKind AttrKindOf(AttrKey key);

// A kEnum attribute's value: its index in EnumNames(key), parsed once. The
// enums of attribute_enums.h name the indices of each list.
struct EnumValue {
  uint8_t index = 0;
  bool operator==(const EnumValue&) const = default;
};
// The spellings of a kEnum attribute's values, in index order (empty for
// other attributes).
const std::vector<std::string_view>& EnumNames(AttrKey key);
std::string_view EnumName(AttrKey key, EnumValue value);
// The value spelled exactly `name`, if any.
std::optional<EnumValue> EnumFromName(AttrKey key, std::string_view name);
std::string_view FusionKindName(FusionKind kind);  // "kLoop", ...

struct SliceRange {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceRange&) const = default;
};

struct PaddingDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDim&) const = default;
};
using PaddingConfig = std::vector<PaddingDim>;

struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool window_reversal = false;
  bool operator==(const WindowDim&) const = default;
};
struct Window {
  std::vector<WindowDim> dimensions;
  bool operator==(const Window&) const = default;
};

// Convolution dimension numbers, written as dim_labels (b01f_01io->b01f).
// A dimension labelled '?' is in no list.
struct ConvolutionDimensionNumbers {
  int64_t input_rank = 0, kernel_rank = 0, output_rank = 0;
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

// output_to_operand_aliasing entry: {output_index}: (operand, {operand_index}).
struct OutputOperandAlias {
  std::vector<int64_t> output_index;
  int64_t operand = 0;
  std::vector<int64_t> operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

struct ReplicaGroups {
  enum class Form : uint8_t { kExplicit, kIota, kMesh };
  Form form = Form::kExplicit;
  std::vector<std::vector<int64_t>> groups;  // kExplicit
  // kIota: [num_groups,group_size]<=[reshape_dims]T(transpose_perm)
  int64_t num_groups = 0;
  int64_t group_size = 0;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose_perm;
  std::string mesh_text;  // kMesh: kept as written
  bool operator==(const ReplicaGroups&) const = default;
};

// HloSharding: how a value is laid out over devices. A single-host compiler
// only carries it through, but passes can read it. Forms XLA has that are not
// modelled here (mesh-based named shardings) are kept as written (kRaw).
struct Sharding {
  enum class Kind : uint8_t {
    kReplicated,
    kManual,
    kUnknown,
    kUnreduced,
    kMaximal,
    kTiled,
    kTuple,
    kRaw
  };
  Kind kind = Kind::kReplicated;
  int64_t device = 0;              // kMaximal
  std::vector<int64_t> tile_dims;  // kTiled: devices=[...]
  std::vector<int64_t> devices;    // kTiled, explicit device list
  bool iota = false;               // kTiled, devices=[...]<=[reshape]T(perm)
  std::vector<int64_t> iota_reshape_dims;
  std::vector<int64_t> iota_transpose_perm;
  bool last_tile_dim_replicate = false;
  std::vector<std::string> last_tile_dims;  // subgroup types: manual, replicated, ...
  std::string metadata;                     // metadata={...} kept as written
  std::vector<Sharding> tuple_elements;     // kTuple
  std::string text;                         // kRaw: the whole {...}
  bool operator==(const Sharding&) const = default;
};
std::string ShardingToString(const Sharding& sharding);

struct FrontendAttribute {
  std::string key;
  std::string value;
  bool is_raw_block = false;  // {…} written unquoted
  bool operator==(const FrontendAttribute&) const = default;
};
using FrontendAttributes = std::vector<FrontendAttribute>;

struct Metadata {
  std::string op_type, op_name, source_file, deduplicated_name, scheduling_name;
  int64_t source_line = 0, source_end_line = 0, source_column = 0, source_end_column = 0;
  int64_t stack_frame_id = 0;
  std::vector<int64_t> profile_type;
  bool preserve_layout = false;
  bool operator==(const Metadata&) const = default;
};

struct BackendConfig {
  std::string text;
  bool is_raw_block = false;
  bool operator==(const BackendConfig&) const = default;
};

// A value held out of line, so that a variant holding one stays small: it
// copies deeply and compares by value. Only a moved-from Boxed is empty.
template <typename T>
class Boxed {
 public:
  Boxed(T value) : p_(std::make_unique<T>(std::move(value))) {}  // NOLINT: implicit on purpose
  Boxed(const Boxed& other) : p_(std::make_unique<T>(*other.p_)) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) p_ = std::make_unique<T>(*other.p_);
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;
  const T& get() const { return *p_; }
  T& get() { return *p_; }
  bool operator==(const Boxed& other) const { return *p_ == *other.p_; }

 private:
  std::unique_ptr<T> p_;
};

// How an attribute value of type T is stored in AttrValue: in place, or
// boxed for the large structured ones (an attribute costs 40 bytes, not the
// size of the largest value type).
template <typename T>
struct AttrStorage {
  using type = T;
};
#define UIR_BOXED_ATTR(T)  \
  template <>              \
  struct AttrStorage<T> {  \
    using type = Boxed<T>; \
  };
UIR_BOXED_ATTR(ConvolutionDimensionNumbers)
UIR_BOXED_ATTR(Shape)
UIR_BOXED_ATTR(Literal)
UIR_BOXED_ATTR(ReplicaGroups)
UIR_BOXED_ATTR(Sharding)
UIR_BOXED_ATTR(Metadata)
UIR_BOXED_ATTR(BackendConfig)
#undef UIR_BOXED_ATTR
template <typename T>
using AttrStored = typename AttrStorage<T>::type;

using AttrValue =
    std::variant<int64_t, bool, double, std::string, std::vector<int64_t>,
                 std::vector<std::vector<int64_t>>, std::vector<bool>, EnumValue, HloComputation*,
                 std::vector<HloComputation*>, std::vector<SliceRange>, PaddingConfig, Window,
                 AttrStored<ConvolutionDimensionNumbers>, std::vector<std::string>,
                 AttrStored<Shape>, std::vector<Shape>, std::vector<OutputOperandAlias>,
                 AttrStored<Literal>, AttrStored<ReplicaGroups>, AttrStored<Sharding>,
                 FrontendAttributes, AttrStored<Metadata>, AttrStored<BackendConfig>>;

// The value of type T in `value`, or null if it holds another type.
template <typename T>
const T* AttrIf(const AttrValue& value) {
  const auto* stored = std::get_if<AttrStored<T>>(&value);
  if constexpr (std::is_same_v<AttrStored<T>, T>) {
    return stored;
  } else {
    return stored != nullptr ? &stored->get() : nullptr;
  }
}
// The value of type T in `value` (std::bad_variant_access if it holds another).
template <typename T>
const T& AttrAs(const AttrValue& value) {
  const T* p = AttrIf<T>(value);
  if (p == nullptr) throw std::bad_variant_access();
  return *p;
}
template <typename T>
bool AttrHolds(const AttrValue& value) {
  return std::holds_alternative<AttrStored<T>>(value);
}

// An instruction's attributes, kept sorted by key (= printing order).
class AttributeMap {
 public:
  bool Has(AttrKey key) const { return Find(key) != nullptr; }
  const AttrValue* Find(AttrKey key) const;
  AttrValue* FindMutable(AttrKey key);
  void Set(AttrKey key, AttrValue value);
  bool Erase(AttrKey key);
  const std::vector<std::pair<AttrKey, AttrValue>>& entries() const { return entries_; }

  // Typed getters; each throws InternalError if the key is absent or holds another type.
  template <typename T>
  const T& Get(AttrKey key) const {
    const AttrValue* v = Find(key);
    const T* value = v != nullptr ? AttrIf<T>(*v) : nullptr;
    CheckType(key, value != nullptr);
    return *value;
  }
  template <typename T>
  std::optional<T> GetOr(AttrKey key) const {
    const AttrValue* v = Find(key);
    const T* value = v != nullptr ? AttrIf<T>(*v) : nullptr;
    if (value == nullptr) return std::nullopt;
    return *value;
  }
  // kEnum attributes as their typed enum (FusionKind, ComparisonDirection, ...).
  template <typename E>
  E GetEnum(AttrKey key) const {
    return static_cast<E>(Get<EnumValue>(key).index);
  }
  template <typename E>
  std::optional<E> GetEnumOr(AttrKey key) const {
    const auto v = GetOr<EnumValue>(key);
    if (!v) return std::nullopt;
    return static_cast<E>(v->index);
  }
  template <typename E>
  void SetEnum(AttrKey key, E value) {
    Set(key, EnumValue{static_cast<uint8_t>(value)});
  }

 private:
  static void CheckType(AttrKey key, bool ok);
  std::vector<std::pair<AttrKey, AttrValue>> entries_;
};

// Text forms of the structured values, as the printer writes them.
std::string SliceRangesToString(const std::vector<SliceRange>& ranges);
std::string PaddingToString(const PaddingConfig& padding);
std::string WindowToString(const Window& window);
std::string DimLabelsToString(const ConvolutionDimensionNumbers& dnums);
std::string ReplicaGroupsToString(const ReplicaGroups& groups);
std::string MetadataToString(const Metadata& metadata);
std::string FrontendAttributesToString(const FrontendAttributes& attrs);
std::string AliasingToString(const std::vector<OutputOperandAlias>& aliasing);
std::string IntListToString(const std::vector<int64_t>& values);  // {1,2}
// XLA's C-style escaping inside double quotes (without the quotes).
std::string CEscape(std::string_view text);

}  // namespace uir::hlo

#endif  // UIR_HLO_ATTRIBUTES_H_
