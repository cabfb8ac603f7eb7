// Helpers shared by the shape-inference files (shape_inference*.cc): every
// rule checks what it relies on and fails with a ShapeError naming the opcode
// and the operand shapes.
#ifndef UIR_HLO_SHAPE_INFERENCE_INTERNAL_H_
#define UIR_HLO_SHAPE_INFERENCE_INTERNAL_H_

#include <optional>
#include <string>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace uir::hlo::infer {

using Shapes = std::vector<const Shape*>;

[[noreturn]] void Fail(HloOpcode op, const Shapes& s, const std::string& why);
void RequireArray(HloOpcode op, const Shapes& s, size_t i);
void RequireArrays(HloOpcode op, const Shapes& s);
void RequireSameDims(HloOpcode op, const Shapes& s, size_t a, size_t b);
void RequireScalar(HloOpcode op, const Shapes& s, size_t i, const char* what);
void RequireIntegral(HloOpcode op, const Shapes& s, size_t i, const char* what);
// `d` must lie in [0, rank).
void CheckDim(HloOpcode op, const Shapes& s, int64_t d, int64_t rank, const char* what);
// Every entry of `dims` in [0, rank), none twice; `sorted` also requires
// increasing order (XLA requires it of gather's and scatter's dim lists).
void CheckDimList(HloOpcode op, const Shapes& s, const std::vector<int64_t>& dims, int64_t rank,
                  const char* what, bool sorted = false);

const std::vector<int64_t>* Ints(const AttributeMap& a, AttrKey k);
std::vector<int64_t> IntsOr(const AttributeMap& a, AttrKey k);
std::vector<int64_t> RequireInts(HloOpcode op, const Shapes& s, const AttributeMap& a, AttrKey k);
int64_t RequireInt(HloOpcode op, const Shapes& s, const AttributeMap& a, AttrKey k);
bool Contains(const std::vector<int64_t>& v, int64_t x);

// a + b and a * b for sizes, failing instead of overflowing.
int64_t AddSize(HloOpcode op, const Shapes& s, int64_t a, int64_t b);
int64_t MulSize(HloOpcode op, const Shapes& s, int64_t a, int64_t b);

Shape WithType(const Shape& like, PrimitiveType type);

// Output size of one windowed dimension (reduce-window, select-and-scatter,
// convolution), after checking the window dimension is well formed.
int64_t WindowedSize(HloOpcode op, const Shapes& s, int64_t n, const WindowDim& w);

// Family rules (shape_inference_indexing.cc, shape_inference_linalg.cc).
std::optional<Shape> InferGather(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferScatter(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferDynamicSlice(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferDynamicUpdateSlice(HloOpcode op, const Shapes& s);
std::optional<Shape> InferReduceWindow(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferSelectAndScatter(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferDot(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferConvolution(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferFft(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferTriangularSolve(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferCholesky(HloOpcode op, const Shapes& s);
std::optional<Shape> InferBatchNorm(HloOpcode op, const Shapes& s, const AttributeMap& a);
std::optional<Shape> InferRng(HloOpcode op, const Shapes& s, const AttributeMap& a);

}  // namespace uir::hlo::infer

#endif  // UIR_HLO_SHAPE_INFERENCE_INTERNAL_H_
