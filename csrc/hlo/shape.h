// Shapes and layouts, as XLA writes them: f32[10,<=20,?]{2,0,1:T(8,128)S(1)}, (s32[], pred[]).
#ifndef UIR_HLO_SHAPE_H_
#define UIR_HLO_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/primitive_type.h"

namespace uir::hlo {

// One tile of a tiled layout: T(8,128). kCombineDim is XLA's '*'.
struct Tile {
  static constexpr int64_t kCombineDim = INT64_MIN;
  std::vector<int64_t> dims;
  bool operator==(const Tile&) const = default;
};

// SC(dim:i,j,...): a split of one dimension at the given indices.
struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  bool operator==(const SplitConfig&) const = default;
};

// A layout: minor_to_major plus XLA's optional extras, printed in this order.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<std::string> dim_level_types;             // D(...), legacy sparse; kept as written
  std::vector<Tile> tiles;                              // T(...)(...)
  int64_t tail_padding_alignment_in_elements = 1;       // L(n)
  std::optional<PrimitiveType> index_primitive_type;    // #(type)
  std::optional<PrimitiveType> pointer_primitive_type;  // *(type)
  int64_t element_size_in_bits = 0;                     // E(n)
  int64_t memory_space = 0;                             // S(n)
  std::vector<SplitConfig> split_configs;               // SC(d:i,...)
  int64_t dynamic_shape_metadata_prefix_bytes = 0;      // M(n)

  bool operator==(const Layout&) const = default;
  // True when nothing but minor_to_major is set.
  bool HasOnlyMinorToMajor() const;
};

// An array shape (element type and dimensions, optionally a layout), a tuple
// of shapes, or a buffer shape b(...) wrapping one array shape.
class Shape {
 public:
  // The size of an unbounded dynamic dimension ('?').
  static constexpr int64_t kUnboundedSize = -1;

  Shape() = default;  // the empty tuple ()
  Shape(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Buffer(Shape element);
  static Shape Token() { return Shape(PrimitiveType::kToken, {}); }

  bool IsTuple() const { return kind_ == Kind::kTuple; }
  bool IsBuffer() const { return kind_ == Kind::kBuffer; }
  bool IsArray() const { return kind_ == Kind::kArray && IsArrayType(type_); }
  bool IsToken() const { return kind_ == Kind::kArray && type_ == PrimitiveType::kToken; }
  bool IsOpaque() const { return kind_ == Kind::kArray && type_ == PrimitiveType::kOpaque; }

  // Element type of an array (or token/opaque) shape.
  PrimitiveType element_type() const { return type_; }
  void set_element_type(PrimitiveType type) { type_ = type; }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[i]; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  void set_dimensions(std::vector<int64_t> dims);
  // Dynamic dimensions: `<=N` (bounded, size N) or `?` (size kUnboundedSize).
  bool is_dynamic_dimension(int64_t i) const { return dynamic_[i]; }
  const std::vector<bool>& dynamic_dimensions() const { return dynamic_; }
  void set_dynamic_dimension(int64_t i, bool dynamic) { dynamic_[i] = dynamic; }
  bool is_static() const;
  // Number of elements (product of dimensions); 1 for scalars.
  int64_t element_count() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_[i]; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_.size()); }
  // The element of a buffer shape.
  const Shape& buffer_element() const { return tuple_[0]; }

  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  const std::optional<Layout>& maybe_layout() const { return layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout() { layout_.reset(); }
  // Gives every array in this shape (recursively) a layout: the default
  // major-to-minor one where it has none.
  void FillMissingLayouts();
  // Removes every layout in this shape, recursively.
  void ClearLayouts();

  // Same kind, element types, dimensions and dynamic dims, recursively; layouts ignored.
  bool Compatible(const Shape& other) const;
  // Everything equal, layouts included (a missing layout equals only a missing one).
  bool operator==(const Shape& other) const = default;

  // XLA's text, e.g. "f32[2,3]{1,0}"; with print_layout=false, "f32[2,3]".
  // index_comments adds XLA's /*index=5*/ before every fifth tuple element.
  std::string ToString(bool print_layout = true, bool index_comments = false) const;
  // Just "f32[2,3]" as in error messages (no layout).
  std::string Describe() const { return ToString(false); }

  // The default major-to-minor layout for rank `rank`: {rank-1, ..., 0}.
  static Layout DefaultLayout(int64_t rank);

 private:
  enum class Kind : uint8_t { kArray, kTuple, kBuffer };
  Kind kind_ = Kind::kTuple;
  PrimitiveType type_ = PrimitiveType::kPred;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  std::vector<Shape> tuple_;  // tuple elements, or the one element of a buffer
  std::optional<Layout> layout_;
};

// XLA's layout text without braces' surroundings: "1,0:T(8,128)S(1)".
std::string LayoutToString(const Layout& layout);

// Whether a block of `sizes` is contiguous in a row-major array of `dims`:
// size 1 before the first dimension it cuts, whole after it.
bool IsContiguousBlock(const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes);

}  // namespace uir::hlo

#endif  // UIR_HLO_SHAPE_H_
