// ShapeIndex: the path to a subshape of a (possibly nested) tuple shape,
// as XLA writes it: {} is the whole shape, {1,0} element 0 of element 1.
#ifndef UIR_ANALYSIS_SHAPE_INDEX_H_
#define UIR_ANALYSIS_SHAPE_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/shape.h"

namespace uir::analysis {

using ShapeIndex = std::vector<int64_t>;

// "{}", "{1,0}".
std::string IndexToString(const ShapeIndex& index);

// The subshape at `index`; throws InternalError when the index leaves the shape.
const hlo::Shape& Subshape(const hlo::Shape& shape, const ShapeIndex& index);

// Every index of `shape` in pre-order (a tuple before its elements).
std::vector<ShapeIndex> AllIndices(const hlo::Shape& shape);

// Bytes a value of this shape occupies: an array its elements (sub-byte
// types take a byte each, whatever E(n) the layout names), a tuple
// a table of `pointer_bytes` per element, a token none.
int64_t ByteSize(const hlo::Shape& shape, int64_t pointer_bytes = 8);

}  // namespace uir::analysis

#endif  // UIR_ANALYSIS_SHAPE_INDEX_H_
