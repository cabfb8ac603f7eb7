// The built-in custom-call targets, on call frames.
#include "runtime/builtin_targets.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numeric>

#include "runtime/lapack_targets.h"
#include "runtime/sort.h"
#include "support/custom_call.h"
#include "support/error.h"
#include "support/float_format.h"

namespace uir::runtime {
namespace {

// Copies every array of `from` into `to` (they may overlap: a value passed
// through in place).
void CopyTree(const CallBuffer& from, const CallBuffer& to) {
  if (from.IsArray()) {
    if (from.data != to.data && from.Bytes() > 0) {
      std::memmove(to.data, from.data, static_cast<size_t>(from.Bytes()));
    }
    return;
  }
  for (size_t i = 0; i < from.elements.size(); ++i) CopyTree(from.elements[i], to.elements[i]);
}

void ZeroTree(const CallBuffer& b) {
  if (b.IsArray() && b.Bytes() > 0) std::memset(b.data, 0, static_cast<size_t>(b.Bytes()));
  for (const CallBuffer& e : b.elements) ZeroTree(e);
}

// Sharding annotations, host offloading marks and bounds: on one host the
// value passes through unchanged.
void PassThrough(const CallFrame& f) {
  if (f.operands.empty() || !f.operands[0].SameShape(f.result)) {
    throw CustomCallError(f.target,
                          "expects one operand of the result's shape " + f.result.ToString());
  }
  CopyTree(f.operands[0], f.result);
}

// A buffer the program fills before reading; zeros are as good as any.
void AllocateBuffer(const CallFrame& f) { ZeroTree(f.result); }

// SliceToDynamic(array, sizes...) marks dimensions dynamic: evaluated at
// their bound, the data passes through.
void SliceToDynamic(const CallFrame& f) {
  if (f.operands.empty() || !f.result.IsArray() || !f.operands[0].SameShape(f.result))
    throw CustomCallError(f.target, "expects an operand of the result's shape");
  CopyTree(f.operands[0], f.result);
}

void StoreInteger(const CallBuffer& b, int64_t v) {
  switch (StorageBytes(b.type)) {
    case 1: {
      const auto x = static_cast<int8_t>(v);
      std::memcpy(b.data, &x, 1);
      break;
    }
    case 2: {
      const auto x = static_cast<int16_t>(v);
      std::memcpy(b.data, &x, 2);
      break;
    }
    case 4: {
      const auto x = static_cast<int32_t>(v);
      std::memcpy(b.data, &x, 4);
      break;
    }
    default:
      std::memcpy(b.data, &v, 8);
  }
}

// PadToStatic(array) -> (array, s32 size of each dimension).
void PadToStatic(const CallFrame& f) {
  if (f.operands.size() != 1 || !f.operands[0].IsArray() || !f.result.IsTuple() ||
      f.result.elements.size() != f.operands[0].dims.size() + 1) {
    throw CustomCallError(f.target, "expects one array operand and a (array, sizes...) result");
  }
  const auto& parts = f.result.elements;
  for (size_t d = 1; d < parts.size(); ++d) {
    if (!parts[d].IsArray() || !parts[d].dims.empty() || !IsInteger(parts[d].type))
      throw CustomCallError(f.target, "the sizes in the result must be integer scalars");
  }
  if (!f.operands[0].SameShape(parts[0]))
    throw CustomCallError(f.target, "the array in the result must be the operand's shape");
  CopyTree(f.operands[0], parts[0]);
  for (size_t d = 0; d < f.operands[0].dims.size(); ++d)
    StoreInteger(parts[d + 1], f.operands[0].dims[d]);
}

// TopK(x[..., n]) -> (values[..., k], s32 indices[..., k]): the k largest
// along the last dimension, largest first in the total order of the values
// (XLA:CPU's comparator: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN),
// ties in index order.
void TopK(const CallFrame& f) {
  if (f.operands.size() != 1 || !f.operands[0].IsArray() || !f.result.IsTuple() ||
      f.result.elements.size() != 2 || f.operands[0].dims.empty()) {
    throw CustomCallError(f.target, "expects x[..., n] and a (values, indices) result");
  }
  const CallBuffer& x = f.operands[0];
  const CallBuffer& values = f.result.elements[0];
  const CallBuffer& indices = f.result.elements[1];
  const int64_t n = x.dims.back();
  const int64_t k = values.dims.empty() ? 1 : values.dims.back();
  // values and indices are x's shape with k in the last dimension.
  std::vector<int64_t> want = x.dims;
  want.back() = k;
  if (!values.IsArray() || !indices.IsArray() || values.dims != want || indices.dims != want ||
      !IsInteger(indices.type)) {
    throw CustomCallError(f.target,
                          "the result must be (values, integer indices), each of x's shape with "
                          "k in the last dimension");
  }
  if (k > n || values.type != x.type) {
    throw CustomCallError(f.target, "k = " + std::to_string(k) + " of " + std::to_string(n) +
                                        " elements, or wrong types");
  }
  TopKPlan plan;
  plan.type = x.type;
  plan.rows = n == 0 ? 0 : x.ElementCount() / n;
  plan.n = n;
  plan.k = k;
  plan.largest = true;
  const bool direct = indices.type == PrimitiveType::kS32 || indices.type == PrimitiveType::kS64 ||
                      indices.type == PrimitiveType::kU32 || indices.type == PrimitiveType::kU64;
  plan.index_type = direct ? indices.type : PrimitiveType::kS64;
  if (const std::string invalid = plan.Invalid(); !invalid.empty()) {
    throw CustomCallError(f.target, "cannot order " + invalid);
  }
  if (direct) {
    RunTopK(plan, x.data, values.data, indices.data);
    return;
  }
  // Indices of another integer type: found as s64, then stored one by one.
  std::vector<int64_t> found(static_cast<size_t>(plan.rows * k));
  RunTopK(plan, x.data, values.data, found.data());
  const int index_size = StorageBytes(indices.type);
  for (size_t i = 0; i < found.size(); ++i) {
    CallBuffer at = indices;
    at.data = static_cast<uint8_t*>(indices.data) + static_cast<int64_t>(i) * index_size;
    StoreInteger(at, found[i]);
  }
}

}  // namespace

void RegisterBuiltinTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* name :
         {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice",
          "Pin", "Unpin", "annotate_device_placement", "SetBound", "LayoutConstraint"}) {
      RegisterCustomCallTarget(name, PassThrough);
    }
    RegisterCustomCallTarget("AllocateBuffer", AllocateBuffer);
    RegisterCustomCallTarget("SliceToDynamic", SliceToDynamic);
    RegisterCustomCallTarget("PadToStatic", PadToStatic);
    RegisterCustomCallTarget("TopK", TopK);
    for (auto& [name, fn] : LapackTargets()) RegisterCustomCallTarget(name, std::move(fn));
  });
}

}  // namespace uir::runtime
