// Shape inference for the indexing ops: gather, scatter, dynamic-slice,
// dynamic-update-slice, reduce-window and select-and-scatter. The dimension
// numbers are checked as XLA's ShapeInference checks them: every index in
// range, no index twice, the lists consistent with each other and with the
// operand ranks, so the evaluator and later stages can index without checks.
#include <algorithm>

#include "hlo/shape_inference_internal.h"

namespace uir::hlo::infer {
namespace {

// The dimensions of `indices` other than index_vector_dim, and the length of
// the index vector (1 when index_vector_dim is the rank: implicit).
struct IndexBatch {
  std::vector<int64_t> dims;   // sizes, in order
  std::vector<int64_t> which;  // the indices dimensions they come from
  int64_t vector_size = 1;
};

IndexBatch SplitIndices(HloOpcode op, const Shapes& s, const Shape& indices, int64_t ivd) {
  if (ivd < 0 || ivd > indices.rank()) {
    Fail(op, s,
         "index_vector_dim " + std::to_string(ivd) + " is out of range for indices of rank " +
             std::to_string(indices.rank()));
  }
  IndexBatch b;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i == ivd) {
      b.vector_size = indices.dimensions(i);
    } else {
      b.dims.push_back(indices.dimensions(i));
      b.which.push_back(i);
    }
  }
  return b;
}

// Batching dims pair an operand dim with an indices dim of the same size.
void CheckBatching(HloOpcode op, const Shapes& s, const Shape& operand, const Shape& indices,
                   const std::vector<int64_t>& operand_dims,
                   const std::vector<int64_t>& indices_dims, int64_t ivd, const char* operand_name,
                   const char* indices_name) {
  CheckDimList(op, s, operand_dims, operand.rank(), operand_name, /*sorted=*/true);
  CheckDimList(op, s, indices_dims, indices.rank(), indices_name);
  if (operand_dims.size() != indices_dims.size())
    Fail(op, s, std::string(operand_name) + "s and " + indices_name + "s differ in count");
  for (size_t i = 0; i < operand_dims.size(); ++i) {
    if (indices_dims[i] == ivd) Fail(op, s, std::string(indices_name) + " is index_vector_dim");
    if (operand.dimensions(operand_dims[i]) != indices.dimensions(indices_dims[i]))
      Fail(op, s,
           std::string(operand_name) + " " + std::to_string(operand_dims[i]) +
               " and its indices batching dimension differ in size");
  }
}

void CheckDisjoint(HloOpcode op, const Shapes& s, const std::vector<int64_t>& a,
                   const std::vector<int64_t>& b, const char* what) {
  for (int64_t x : a) {
    if (Contains(b, x)) Fail(op, s, std::string(what) + " share dimension " + std::to_string(x));
  }
}

// Start indices of dynamic-slice/-update-slice from operand `first` on: one
// integer scalar per dimension (or, in the old form, one integer vector).
void CheckStartIndices(HloOpcode op, const Shapes& s, size_t first, int64_t rank) {
  const size_t count = s.size() - first;
  const bool vector_form = count == 1 && s[first]->IsArray() && s[first]->rank() == 1 && rank != 1;
  if (vector_form) {
    if (s[first]->dimensions(0) != rank)
      Fail(op, s, "the start index vector needs one entry per operand dimension");
  } else if (static_cast<int64_t>(count) != rank) {
    Fail(op, s,
         "needs " + std::to_string(rank) + " start indices (one per operand dimension), has " +
             std::to_string(count));
  }
  for (size_t i = first; i < s.size(); ++i) {
    RequireIntegral(op, s, i, "start indices");
    if (!vector_form) RequireScalar(op, s, i, "a start index");
    if (s[i]->element_type() != s[first]->element_type())
      Fail(op, s, "start indices must share one element type");
  }
}

const Window& RequireWindow(HloOpcode op, const Shapes& s, const AttributeMap& a, int64_t rank) {
  const auto* w = a.Find(AttrKey::kWindow);
  if (!w) Fail(op, s, "needs window=");
  const Window& window = std::get<Window>(*w);
  if (static_cast<int64_t>(window.dimensions.size()) != rank)
    Fail(op, s, "the window needs one dimension per operand dimension");
  return window;
}

std::vector<int64_t> WindowedDims(HloOpcode op, const Shapes& s, const Shape& x,
                                  const Window& window) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.rank(); ++i)
    dims.push_back(WindowedSize(op, s, x.dimensions(i), window.dimensions[i]));
  return dims;
}

}  // namespace

std::optional<Shape> InferGather(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  RequireArrays(op, s);
  RequireIntegral(op, s, 1, "start indices");
  const Shape& operand = *s[0];
  const Shape& indices = *s[1];
  const auto offset_dims = RequireInts(op, s, a, AttrKey::kOffsetDims);
  const auto collapsed = RequireInts(op, s, a, AttrKey::kCollapsedSliceDims);
  const auto start_index_map = RequireInts(op, s, a, AttrKey::kStartIndexMap);
  const auto slice_sizes = RequireInts(op, s, a, AttrKey::kSliceSizes);
  const auto operand_batching = IntsOr(a, AttrKey::kOperandBatchingDims);
  const auto indices_batching = IntsOr(a, AttrKey::kStartIndicesBatchingDims);
  const int64_t ivd = RequireInt(op, s, a, AttrKey::kIndexVectorDim);
  const IndexBatch batch = SplitIndices(op, s, indices, ivd);

  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank())
    Fail(op, s, "slice_sizes must have one entry per operand dimension");
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i))
      Fail(op, s,
           "slice size " + std::to_string(slice_sizes[i]) + " does not fit dimension " +
               std::to_string(i));
  }
  CheckDimList(op, s, collapsed, operand.rank(), "collapsed_slice_dim", /*sorted=*/true);
  CheckBatching(op, s, operand, indices, operand_batching, indices_batching, ivd,
                "operand_batching_dim", "start_indices_batching_dim");
  CheckDisjoint(op, s, collapsed, operand_batching,
                "collapsed_slice_dims and operand_batching_dims");
  for (int64_t d : collapsed) {
    if (slice_sizes[d] > 1) Fail(op, s, "a collapsed slice dimension must have size 0 or 1");
  }
  for (int64_t d : operand_batching) {
    if (slice_sizes[d] > 1) Fail(op, s, "a batching dimension must have slice size 0 or 1");
  }
  if (static_cast<int64_t>(start_index_map.size()) != batch.vector_size)
    Fail(op, s,
         "start_index_map needs one entry per index vector element (" +
             std::to_string(batch.vector_size) + ")");
  CheckDimList(op, s, start_index_map, operand.rank(), "start_index_map entry");
  CheckDisjoint(op, s, start_index_map, operand_batching,
                "start_index_map and operand_batching_dims");

  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!Contains(collapsed, i) && !Contains(operand_batching, i))
      offsets.push_back(slice_sizes[i]);
  }
  if (offsets.size() != offset_dims.size())
    Fail(op, s, "offset_dims does not match the uncollapsed slice dimensions");
  const int64_t rank = static_cast<int64_t>(batch.dims.size() + offsets.size());
  CheckDimList(op, s, offset_dims, rank, "offset_dim", /*sorted=*/true);
  std::vector<int64_t> out(static_cast<size_t>(rank));
  size_t bi = 0, oi = 0;
  for (int64_t i = 0; i < rank; ++i)
    out[i] = Contains(offset_dims, i) ? offsets[oi++] : batch.dims[bi++];
  return Shape(operand.element_type(), out);
}

std::optional<Shape> InferScatter(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  if (s.size() < 3 || (s.size() - 1) % 2 != 0)
    Fail(op, s, "needs operands, indices and as many updates");
  RequireArrays(op, s);
  const size_t n = (s.size() - 1) / 2;
  const Shape& operand = *s[0];
  const Shape& indices = *s[n];
  const Shape& updates = *s[n + 1];
  RequireIntegral(op, s, n, "scatter indices");
  for (size_t i = 0; i < n; ++i) {
    RequireSameDims(op, s, 0, i);
    RequireSameDims(op, s, n + 1, n + 1 + i);
    if (s[n + 1 + i]->element_type() != s[i]->element_type())
      Fail(op, s, "updates " + std::to_string(i) + " must have its operand's element type");
  }
  const auto window_dims = RequireInts(op, s, a, AttrKey::kUpdateWindowDims);
  const auto inserted = RequireInts(op, s, a, AttrKey::kInsertedWindowDims);
  const auto to_operand = RequireInts(op, s, a, AttrKey::kScatterDimsToOperandDims);
  const auto input_batching = IntsOr(a, AttrKey::kInputBatchingDims);
  const auto indices_batching = IntsOr(a, AttrKey::kScatterIndicesBatchingDims);
  const int64_t ivd = RequireInt(op, s, a, AttrKey::kIndexVectorDim);
  const IndexBatch batch = SplitIndices(op, s, indices, ivd);

  CheckDimList(op, s, window_dims, updates.rank(), "update_window_dim", /*sorted=*/true);
  CheckDimList(op, s, inserted, operand.rank(), "inserted_window_dim", /*sorted=*/true);
  CheckBatching(op, s, operand, indices, input_batching, indices_batching, ivd,
                "input_batching_dim", "scatter_indices_batching_dim");
  CheckDisjoint(op, s, inserted, input_batching, "inserted_window_dims and input_batching_dims");
  if (static_cast<int64_t>(to_operand.size()) != batch.vector_size)
    Fail(op, s,
         "scatter_dims_to_operand_dims needs one entry per index vector element (" +
             std::to_string(batch.vector_size) + ")");
  CheckDimList(op, s, to_operand, operand.rank(), "scatter_dims_to_operand_dims entry");
  CheckDisjoint(op, s, to_operand, input_batching,
                "scatter_dims_to_operand_dims and input_batching_dims");
  if (static_cast<int64_t>(window_dims.size() + inserted.size() + input_batching.size()) !=
      operand.rank()) {
    Fail(op, s,
         "update_window_dims, inserted_window_dims and input_batching_dims must cover the "
         "operand's " +
             std::to_string(operand.rank()) + " dimensions");
  }
  if (updates.rank() != static_cast<int64_t>(window_dims.size() + batch.dims.size()))
    Fail(op, s, "updates must have rank " + std::to_string(window_dims.size() + batch.dims.size()));
  // Window dims walk the operand dims that are neither inserted nor batching.
  size_t w = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(inserted, d) || Contains(input_batching, d)) continue;
    const int64_t size = updates.dimensions(window_dims[w++]);
    if (size > operand.dimensions(d))
      Fail(op, s,
           "an update window of size " + std::to_string(size) + " exceeds operand dimension " +
               std::to_string(d));
  }
  size_t b = 0;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (Contains(window_dims, d)) continue;
    if (updates.dimensions(d) != batch.dims[b++])
      Fail(op, s,
           "update scatter dimension " + std::to_string(d) +
               " differs from the matching indices dimension");
  }
  if (n == 1) return operand;
  std::vector<Shape> outs;
  for (size_t i = 0; i < n; ++i) outs.push_back(*s[i]);
  return Shape::Tuple(std::move(outs));
}

std::optional<Shape> InferDynamicSlice(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  if (s.empty()) Fail(op, s, "needs an operand");
  RequireArray(op, s, 0);
  CheckStartIndices(op, s, 1, s[0]->rank());
  auto sizes = RequireInts(op, s, a, AttrKey::kDynamicSliceSizes);
  if (static_cast<int64_t>(sizes.size()) != s[0]->rank())
    Fail(op, s, "dynamic_slice_sizes needs one entry per dimension");
  for (int64_t i = 0; i < s[0]->rank(); ++i) {
    if (sizes[i] < 0 || sizes[i] > s[0]->dimensions(i))
      Fail(op, s,
           "slice size " + std::to_string(sizes[i]) + " does not fit dimension " +
               std::to_string(i));
  }
  return Shape(s[0]->element_type(), sizes);
}

std::optional<Shape> InferDynamicUpdateSlice(HloOpcode op, const Shapes& s) {
  if (s.size() < 2) Fail(op, s, "needs an operand and an update");
  RequireArray(op, s, 0);
  RequireArray(op, s, 1);
  const Shape& x = *s[0];
  const Shape& u = *s[1];
  if (u.rank() != x.rank() || u.element_type() != x.element_type())
    Fail(op, s, "the update must have the operand's rank and element type");
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (u.dimensions(i) > x.dimensions(i))
      Fail(op, s, "the update is larger than the operand in dimension " + std::to_string(i));
  }
  CheckStartIndices(op, s, 2, x.rank());
  return x;
}

std::optional<Shape> InferReduceWindow(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  if (s.size() % 2 != 0 || s.empty()) Fail(op, s, "needs inputs followed by as many init values");
  RequireArrays(op, s);
  const size_t n = s.size() / 2;
  const Window& window = RequireWindow(op, s, a, s[0]->rank());
  const std::vector<int64_t> dims = WindowedDims(op, s, *s[0], window);
  std::vector<Shape> outs;
  for (size_t i = 0; i < n; ++i) {
    RequireSameDims(op, s, 0, i);
    RequireScalar(op, s, n + i, "an init value");
    if (s[i]->element_type() != s[n + i]->element_type())
      Fail(op, s, "each input must have its init value's element type");
    outs.emplace_back(s[n + i]->element_type(), dims);
  }
  return n == 1 ? outs[0] : Shape::Tuple(std::move(outs));
}

std::optional<Shape> InferSelectAndScatter(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  RequireArrays(op, s);
  const Shape& operand = *s[0];
  const Shape& source = *s[1];
  const Window& window = RequireWindow(op, s, a, operand.rank());
  if (WindowedDims(op, s, operand, window) != source.dimensions())
    Fail(op, s, "the source must have the shape of the operand's windowed output");
  RequireScalar(op, s, 2, "the init value");
  if (s[2]->element_type() != source.element_type())
    Fail(op, s, "the init value must have the source's element type");
  if (source.element_type() != operand.element_type())
    Fail(op, s, "the source must have the operand's element type");
  return operand;
}

}  // namespace uir::hlo::infer
