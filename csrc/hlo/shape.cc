// Shape construction, comparison and printing.
#include "hlo/shape.h"

#include <sstream>

#include "support/error.h"

namespace uir::hlo {
namespace {

void AppendInts(std::ostringstream& os, const std::vector<int64_t>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) os << ",";
    if (values[i] == Tile::kCombineDim) {
      os << "*";
    } else {
      os << values[i];
    }
  }
}

}  // namespace

bool Layout::HasOnlyMinorToMajor() const {
  Layout plain;
  plain.minor_to_major = minor_to_major;
  return *this == plain;
}

std::string LayoutToString(const Layout& layout) {
  std::ostringstream os;
  AppendInts(os, layout.minor_to_major);
  if (layout.HasOnlyMinorToMajor()) return os.str();
  os << ":";
  if (!layout.dim_level_types.empty()) {
    os << "D(";
    for (size_t i = 0; i < layout.dim_level_types.size(); ++i) {
      os << (i ? "," : "") << layout.dim_level_types[i];
    }
    os << ")";
  }
  if (!layout.tiles.empty()) {
    os << "T";
    for (const Tile& tile : layout.tiles) {
      os << "(";
      AppendInts(os, tile.dims);
      os << ")";
    }
  }
  if (layout.tail_padding_alignment_in_elements != 1) {
    os << "L(" << layout.tail_padding_alignment_in_elements << ")";
  }
  if (layout.index_primitive_type) {
    os << "#(" << PrimitiveTypeName(*layout.index_primitive_type) << ")";
  }
  if (layout.pointer_primitive_type) {
    os << "*(" << PrimitiveTypeName(*layout.pointer_primitive_type) << ")";
  }
  if (layout.element_size_in_bits != 0) os << "E(" << layout.element_size_in_bits << ")";
  if (layout.memory_space != 0) os << "S(" << layout.memory_space << ")";
  if (!layout.split_configs.empty()) {
    os << "SC";
    for (const SplitConfig& sc : layout.split_configs) {
      os << "(" << sc.dimension << ":";
      AppendInts(os, sc.split_indices);
      os << ")";
    }
  }
  if (layout.dynamic_shape_metadata_prefix_bytes != 0) {
    os << "M(" << layout.dynamic_shape_metadata_prefix_bytes << ")";
  }
  return os.str();
}

Shape::Shape(PrimitiveType type, std::vector<int64_t> dims)
    : kind_(Kind::kArray), type_(type), dims_(std::move(dims)), dynamic_(dims_.size(), false) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.kind_ = Kind::kTuple;
  s.tuple_ = std::move(elements);
  return s;
}

Shape Shape::Buffer(Shape element) {
  Shape s;
  s.kind_ = Kind::kBuffer;
  s.tuple_.push_back(std::move(element));
  return s;
}

void Shape::set_dimensions(std::vector<int64_t> dims) {
  dims_ = std::move(dims);
  dynamic_.assign(dims_.size(), false);
}

bool Shape::is_static() const {
  if (IsTuple() || IsBuffer()) {
    for (const Shape& s : tuple_) {
      if (!s.is_static()) return false;
    }
    return true;
  }
  for (bool d : dynamic_) {
    if (d) return false;
  }
  return true;
}

int64_t Shape::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

Layout Shape::DefaultLayout(int64_t rank) {
  Layout layout;
  for (int64_t i = rank - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  return layout;
}

void Shape::FillMissingLayouts() {
  if (kind_ != Kind::kArray) {
    for (Shape& s : tuple_) s.FillMissingLayouts();
    return;
  }
  if (!layout_ && IsArray()) layout_ = DefaultLayout(rank());
}

void Shape::ClearLayouts() {
  layout_.reset();
  for (Shape& s : tuple_) s.ClearLayouts();
}

bool Shape::Compatible(const Shape& other) const {
  if (kind_ != other.kind_) return false;
  if (kind_ != Kind::kArray) {
    if (tuple_.size() != other.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].Compatible(other.tuple_[i])) return false;
    }
    return true;
  }
  return type_ == other.type_ && dims_ == other.dims_ && dynamic_ == other.dynamic_;
}

std::string Shape::ToString(bool print_layout, bool index_comments) const {
  std::ostringstream os;
  if (kind_ == Kind::kTuple) {
    os << "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i) os << ", ";
      if (index_comments && i > 0 && i % 5 == 0) os << "/*index=" << i << "*/";
      os << tuple_[i].ToString(print_layout, index_comments);
    }
    os << ")";
    return os.str();
  }
  if (kind_ == Kind::kBuffer) return "b(" + tuple_[0].ToString(print_layout, index_comments) + ")";
  os << PrimitiveTypeName(type_) << "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) os << ",";
    if (dynamic_[i]) {
      if (dims_[i] == kUnboundedSize) {
        os << "?";
        continue;
      }
      os << "<=";
    }
    os << dims_[i];
  }
  os << "]";
  // Scalars print a layout only when it carries extras: f16[]{:T(256)}.
  if (print_layout && layout_ && IsArray() && (rank() > 0 || !layout_->HasOnlyMinorToMajor())) {
    os << "{" << LayoutToString(*layout_) << "}";
  }
  return os.str();
}

bool IsContiguousBlock(const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
  size_t k = 0;
  while (k < dims.size() && sizes[k] == 1) ++k;
  for (size_t d = k + 1; d < dims.size(); ++d) {
    if (sizes[d] != dims[d]) return false;
  }
  return true;
}

}  // namespace uir::hlo
