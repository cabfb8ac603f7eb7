#include "analysis/shape_index.h"

#include <algorithm>

#include "support/error.h"
#include "support/primitive_type.h"

namespace uir::analysis {

std::string IndexToString(const ShapeIndex& index) {
  std::string out = "{";
  for (size_t i = 0; i < index.size(); ++i) out += (i ? "," : "") + std::to_string(index[i]);
  return out + "}";
}

const hlo::Shape& Subshape(const hlo::Shape& shape, const ShapeIndex& index) {
  const hlo::Shape* s = &shape;
  for (int64_t k : index) {
    UIR_CHECK(s->IsTuple() && k >= 0 && k < s->tuple_shapes_size())
        << "index " << IndexToString(index) << " is not in shape " << shape.ToString();
    s = &s->tuple_shapes(k);
  }
  return *s;
}

namespace {

void Collect(const hlo::Shape& shape, ShapeIndex& prefix, std::vector<ShapeIndex>& out) {
  out.push_back(prefix);
  if (!shape.IsTuple()) return;
  for (int64_t k = 0; k < shape.tuple_shapes_size(); ++k) {
    prefix.push_back(k);
    Collect(shape.tuple_shapes(k), prefix, out);
    prefix.pop_back();
  }
}

}  // namespace

std::vector<ShapeIndex> AllIndices(const hlo::Shape& shape) {
  std::vector<ShapeIndex> out;
  ShapeIndex prefix;
  Collect(shape, prefix, out);
  return out;
}

int64_t ByteSize(const hlo::Shape& shape, int64_t pointer_bytes) {
  if (shape.IsTuple()) return pointer_bytes * shape.tuple_shapes_size();
  if (!shape.IsArray()) return 0;  // token, opaque
  // Sub-byte elements take a byte each in every buffer, as in NumPy's
  // ml_dtypes arrays, the evaluator's literals and the kernels: an element
  // size in the layout (E(4) on s4) is kept in the text, not in memory, so
  // every stage sizes a buffer alike.
  const int64_t bits = std::max<int64_t>(BitWidth(shape.element_type()), 8);
  return (shape.element_count() * bits + 7) / 8;
}

}  // namespace uir::analysis
