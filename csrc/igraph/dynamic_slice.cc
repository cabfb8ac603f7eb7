// Dynamic-slice windows of fusion parameters, and lone dynamic slices and
// updates as copies.
#include "igraph/dynamic_slice.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "hlo/computation.h"
#include "igraph/tile_program.h"
#include "support/error.h"

namespace uir::igraph {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

bool RowMajor(const Shape& shape) { return shape.IsArray() && IsRowMajor(shape); }

bool IndexType(PrimitiveType t) { return IsInteger(t) || t == PrimitiveType::kPred; }

// A value of `t` held in an int64: the low bits, sign- or zero-extended.
int64_t Wrap(int64_t v, PrimitiveType t) {
  if (t == PrimitiveType::kPred) return v != 0 ? 1 : 0;
  const int bits = BitWidth(t);
  if (bits >= 64) return v;
  const auto u = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  if (IsSigned(t) && (u >> (bits - 1)) != 0) {
    return static_cast<int64_t>(u | ~((uint64_t{1} << bits) - 1));
  }
  return static_cast<int64_t>(u);
}

int64_t ReadScalar(const uint8_t* at, PrimitiveType t) {
  uint64_t raw = 0;
  std::memcpy(&raw, at, static_cast<size_t>(StorageBytes(t)));
  return Wrap(static_cast<int64_t>(raw), t);
}

// The index program of scalar integer expressions over a fusion's scalar
// parameters and constants.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::vector<IndexStep>& steps) : steps_(steps) {}

  // The step computing `x`, or -1 when it is not such an expression.
  int Build(const HloInstruction* x) {
    auto found = built_.find(x);
    if (found != built_.end()) return found->second;
    const int step = Make(x);
    built_[x] = step;
    return step;
  }

 private:
  int Push(IndexStep s) {
    steps_.push_back(std::move(s));
    return static_cast<int>(steps_.size()) - 1;
  }

  int Make(const HloInstruction* x) {
    const Shape& s = x->shape();
    if (!s.IsArray() || s.element_count() != 1 || !IndexType(s.element_type())) return -1;
    IndexStep step;
    step.type = s.element_type();
    switch (x->opcode()) {
      case HloOpcode::kParameter:
        step.kind = IndexStep::Kind::kInput;
        step.input = x->parameter_number();
        return Push(step);
      case HloOpcode::kConstant:
        if (!x->has_literal()) return -1;
        step.kind = IndexStep::Kind::kConstant;
        step.constant = Wrap(x->literal().GetInt64(0), step.type);
        return Push(step);
      case HloOpcode::kSlice: {
        // One element of an index array parameter, at a fixed place.
        const HloInstruction* from = x->operand(0);
        if (from->opcode() != HloOpcode::kParameter || !RowMajor(from->shape()) ||
            from->shape().element_type() != step.type) {
          return -1;
        }
        const auto& ranges =
            x->attributes().Get<std::vector<hlo::SliceRange>>(hlo::AttrKey::kSlice);
        if (static_cast<int64_t>(ranges.size()) != from->shape().rank()) return -1;
        int64_t element = 0;
        for (int64_t d = 0; d < from->shape().rank(); ++d) {
          element = element * from->shape().dimensions(d) + ranges[static_cast<size_t>(d)].start;
        }
        step.kind = IndexStep::Kind::kInput;
        step.input = from->parameter_number();
        step.element = element;
        return Push(step);
      }
      case HloOpcode::kBitcast:
      case HloOpcode::kReshape:
      case HloOpcode::kCopy:
      case HloOpcode::kBroadcast:
        if (x->operand(0)->shape().element_type() != step.type) return -1;
        return Build(x->operand(0));
      case HloOpcode::kConvert:
      case HloOpcode::kNegate:
      case HloOpcode::kNot:
      case HloOpcode::kAbs: {
        const int a = Build(x->operand(0));
        if (a < 0) return -1;
        step.kind = IndexStep::Kind::kUnary;
        step.opcode = x->opcode();
        step.operands = {a};
        return Push(step);
      }
      case HloOpcode::kAdd:
      case HloOpcode::kSubtract:
      case HloOpcode::kMultiply:
      case HloOpcode::kMaximum:
      case HloOpcode::kMinimum:
      case HloOpcode::kAnd:
      case HloOpcode::kOr:
      case HloOpcode::kXor:
      case HloOpcode::kDivide:
      case HloOpcode::kRemainder: {
        const int a = Build(x->operand(0)), b = Build(x->operand(1));
        if (a < 0 || b < 0) return -1;
        step.kind = IndexStep::Kind::kBinary;
        step.opcode = x->opcode();
        step.operands = {a, b};
        return Push(step);
      }
      case HloOpcode::kSelect:
      case HloOpcode::kClamp: {
        const int a = Build(x->operand(0)), b = Build(x->operand(1)), c = Build(x->operand(2));
        if (a < 0 || b < 0 || c < 0) return -1;
        step.kind =
            x->opcode() == HloOpcode::kSelect ? IndexStep::Kind::kSelect : IndexStep::Kind::kClamp;
        step.operands = {a, b, c};
        return Push(step);
      }
      case HloOpcode::kCompare: {
        const auto type =
            x->attributes().GetEnumOr<hlo::ComparisonType>(hlo::AttrKey::kCompareType);
        if (type == hlo::ComparisonType::kTotalOrder) return -1;
        const int a = Build(x->operand(0)), b = Build(x->operand(1));
        if (a < 0 || b < 0) return -1;
        step.kind = IndexStep::Kind::kCompare;
        step.direction =
            x->attributes().GetEnum<hlo::ComparisonDirection>(hlo::AttrKey::kDirection);
        step.type = x->operand(0)->shape().element_type();
        step.operands = {a, b};
        return Push(step);
      }
      default:
        return -1;
    }
  }

  std::vector<IndexStep>& steps_;
  std::unordered_map<const HloInstruction*, int> built_;
};

int64_t Evaluate(const std::vector<IndexStep>& steps, size_t upto, const InputMemory& at,
                 std::vector<int64_t>& values) {
  for (size_t k = values.size(); k <= upto; ++k) {
    const IndexStep& s = steps[k];
    auto v = [&](size_t i) { return values[static_cast<size_t>(s.operands[i])]; };
    auto type_of = [&](size_t i) { return steps[static_cast<size_t>(s.operands[i])].type; };
    int64_t r = 0;
    switch (s.kind) {
      case IndexStep::Kind::kInput:  // of the step's type: the parameter's
        r = ReadScalar(at(s.input) + s.element * StorageBytes(s.type), s.type);
        break;
      case IndexStep::Kind::kConstant:
        r = s.constant;
        break;
      case IndexStep::Kind::kUnary:
        switch (s.opcode) {
          case HloOpcode::kNegate:
            r = static_cast<int64_t>(0 - static_cast<uint64_t>(v(0)));
            break;
          case HloOpcode::kNot:
            r = s.type == PrimitiveType::kPred ? !v(0) : ~v(0);
            break;
          case HloOpcode::kAbs:
            r = v(0) < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(v(0))) : v(0);
            break;
          default:  // convert: the value, wrapped below (pred: nonzero)
            r = v(0);
        }
        break;
      case IndexStep::Kind::kBinary: {
        const int64_t a = v(0), b = v(1);
        const bool u = IsUnsigned(s.type);
        switch (s.opcode) {
          case HloOpcode::kAdd:
            r = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
            break;
          case HloOpcode::kSubtract:
            r = static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
            break;
          case HloOpcode::kMultiply:
            r = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
            break;
          case HloOpcode::kMaximum:
            r = u ? static_cast<int64_t>(std::max<uint64_t>(a, b)) : std::max(a, b);
            break;
          case HloOpcode::kMinimum:
            r = u ? static_cast<int64_t>(std::min<uint64_t>(a, b)) : std::min(a, b);
            break;
          case HloOpcode::kAnd:
            r = a & b;
            break;
          case HloOpcode::kOr:
            r = a | b;
            break;
          case HloOpcode::kDivide:
          case HloOpcode::kRemainder: {
            // XLA's: x / 0 = -1 (all ones), x % 0 = x; MIN / -1 = MIN, MIN % -1 = 0.
            const bool divide = s.opcode == HloOpcode::kDivide;
            if (b == 0) {
              r = divide ? -1 : a;
            } else if (u) {
              const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
              r = static_cast<int64_t>(divide ? ua / ub : ua % ub);
            } else if (b == -1) {  // a / -1 wraps for MIN (in the type's width, below)
              r = divide ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : 0;
            } else {
              r = divide ? a / b : a % b;
            }
            break;
          }
          default:
            r = a ^ b;
        }
        break;
      }
      case IndexStep::Kind::kSelect:
        r = v(0) != 0 ? v(1) : v(2);
        break;
      case IndexStep::Kind::kClamp: {  // clamp(lo, x, hi) = min(max(x, lo), hi)
        const bool u = IsUnsigned(s.type);
        auto less = [&](int64_t a, int64_t b) {
          return u ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
        };
        r = v(1);
        if (less(r, v(0))) r = v(0);
        if (less(v(2), r)) r = v(2);
        break;
      }
      case IndexStep::Kind::kCompare: {
        const int64_t a = v(0), b = v(1);
        const bool u = IsUnsigned(type_of(0));
        auto lt = [&](int64_t x, int64_t y) {
          return u ? static_cast<uint64_t>(x) < static_cast<uint64_t>(y) : x < y;
        };
        switch (s.direction) {
          case hlo::ComparisonDirection::kEq:
            r = a == b;
            break;
          case hlo::ComparisonDirection::kNe:
            r = a != b;
            break;
          case hlo::ComparisonDirection::kLt:
            r = lt(a, b);
            break;
          case hlo::ComparisonDirection::kLe:
            r = !lt(b, a);
            break;
          case hlo::ComparisonDirection::kGt:
            r = lt(b, a);
            break;
          case hlo::ComparisonDirection::kGe:
            r = !lt(a, b);
            break;
        }
        values.push_back(r);
        continue;  // a pred
      }
    }
    values.push_back(Wrap(r, s.type));
  }
  return values[upto];
}

// Start index `v` of type `t` clamped to [0, limit], as XLA clamps them.
int64_t ClampStart(int64_t v, PrimitiveType t, int64_t limit) {
  if (IsUnsigned(t) && v < 0) return limit;  // a u64 above INT64_MAX
  return std::clamp<int64_t>(v, 0, std::max<int64_t>(limit, 0));
}

}  // namespace

std::vector<int64_t> RowMajorByteStrides(const Shape& s) {
  std::vector<int64_t> strides(static_cast<size_t>(s.rank()));
  int64_t stride = StorageBytes(s.element_type());
  for (int64_t d = s.rank() - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= s.dimensions(d);
  }
  return strides;
}

std::shared_ptr<const DynamicWindows> WindowDynamicSlices(const HloInstruction& fusion) {
  if (fusion.opcode() != HloOpcode::kFusion) return nullptr;
  for (const HloInstruction* o : fusion.operands()) {
    if (!o->shape().IsArray()) return nullptr;
  }
  const HloComputation& f = *fusion.called_computations().at(0);
  auto out = std::make_shared<DynamicWindows>();
  ProgramBuilder builder(out->steps);
  // Qualifying dynamic-slices, by the parameter they read.
  std::unordered_map<const HloInstruction*, std::vector<int>> starts;
  for (const HloInstruction* x : f.instructions()) {
    if (x->opcode() != HloOpcode::kDynamicSlice) continue;
    const HloInstruction* p = x->operand(0);
    const Shape& s = p->shape();
    if (p->opcode() != HloOpcode::kParameter || !RowMajor(s) || !RowMajor(x->shape()) ||
        x->operand_count() != s.rank() + 1 ||
        !hlo::IsContiguousBlock(s.dimensions(), x->shape().dimensions())) {
      continue;
    }
    std::vector<int> st;
    for (int64_t d = 0; d < s.rank(); ++d) {
      const int step = builder.Build(x->operand(d + 1));
      if (step < 0) break;
      st.push_back(step);
    }
    if (static_cast<int64_t>(st.size()) == s.rank()) starts[x] = std::move(st);
  }
  // A parameter read elsewhere in the fusion too (a slice beside the
  // dynamic-slice, after multi-output fusion) stays a parameter for those
  // reads; its dynamic-slices still become windows.
  // A root dynamic-update-slice of a parameter used nowhere else.
  const HloInstruction* root = f.root();
  if (root->opcode() == HloOpcode::kDynamicUpdateSlice) {
    const HloInstruction* p = root->operand(0);
    const HloInstruction* u = root->operand(1);
    const Shape& s = p->shape();
    if (p->opcode() == HloOpcode::kParameter && p->users().size() == 1 && RowMajor(s) &&
        RowMajor(root->shape()) && RowMajor(u->shape()) && root->operand_count() == s.rank() + 2) {
      DynamicUpdate up;
      for (int64_t d = 0; d < s.rank(); ++d) {
        const int step = builder.Build(root->operand(d + 2));
        if (step < 0) break;
        up.starts.push_back(step);
      }
      if (static_cast<int64_t>(up.starts.size()) == s.rank()) {
        up.source = p->parameter_number();
        up.dims = s.dimensions();
        up.sizes = u->shape().dimensions();
        up.strides = RowMajorByteStrides(s);
        up.contiguous = hlo::IsContiguousBlock(up.dims, up.sizes);
        up.name = root->name();
        out->update = std::move(up);
      }
    }
  }
  if (starts.empty() && !out->update) return nullptr;
  // The rewritten fused computation: each windowed slice a new parameter.
  out->module = std::make_shared<hlo::HloModule>("windows." + fusion.name());
  auto fused = std::make_unique<HloComputation>(f.name() + ".windows");
  auto entry = std::make_unique<HloComputation>("entry");
  std::unordered_map<const HloInstruction*, HloInstruction*> clones;
  std::vector<HloInstruction*> outer;
  for (int64_t i = 0; i < fusion.operand_count(); ++i) {
    auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, fusion.operand(i)->shape(),
                                                  "arg" + std::to_string(i));
    param->set_parameter_number(i);
    outer.push_back(entry->AddInstruction(std::move(param)));
  }
  int64_t next = fusion.operand_count();
  for (const HloInstruction* x : f.MakeInstructionPostOrder()) {
    if (out->update && x == root) continue;  // the node writes the update
    auto window = starts.find(x);
    if (window != starts.end()) {
      DynamicWindow w;
      w.input = next;
      w.source = x->operand(0)->parameter_number();
      w.starts = window->second;
      w.dims = x->operand(0)->shape().dimensions();
      w.sizes = x->shape().dimensions();
      w.strides = RowMajorByteStrides(x->operand(0)->shape());
      w.name = x->name();
      out->windows.push_back(std::move(w));
      auto inner = std::make_unique<HloInstruction>(HloOpcode::kParameter, x->shape(), x->name());
      inner->set_parameter_number(next);
      clones[x] = fused->AddInstruction(std::move(inner));
      auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, x->shape(),
                                                    "window" + std::to_string(next));
      param->set_parameter_number(next);
      outer.push_back(entry->AddInstruction(std::move(param)));
      ++next;
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* o : x->operands()) operands.push_back(clones.at(o));
    clones[x] = fused->AddInstruction(x->CloneWithNewOperands(x->shape(), operands));
  }
  const HloInstruction* result = out->update ? root->operand(1) : root;
  fused->set_root(clones.at(result));
  std::unique_ptr<HloInstruction> call = fusion.CloneWithNewOperands(result->shape(), outer);
  call->mutable_attributes().Set(hlo::AttrKey::kCalls,
                                 out->module->AddComputation(std::move(fused)));
  out->fusion = entry->AddInstruction(std::move(call));
  entry->set_root(const_cast<HloInstruction*>(out->fusion));
  out->module->set_entry(out->module->AddComputation(std::move(entry)));
  return out;
}

namespace {

// The byte offset of a block of `sizes` in an array of `dims` (row-major
// `strides`) at the start indices the steps `starts` compute, clamped.
int64_t BlockOffset(const std::vector<IndexStep>& steps, const std::vector<int>& starts,
                    const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes,
                    const std::vector<int64_t>& strides, const InputMemory& at) {
  // Reused by the thread: native loops ask for offsets on every iteration
  // (nothing here waits or calls back in, so one buffer per thread holds).
  thread_local std::vector<int64_t> values;
  values.clear();
  int64_t offset = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    const auto step = static_cast<size_t>(starts[k]);
    const int64_t v = Evaluate(steps, step, at, values);
    offset += ClampStart(v, steps[step].type, dims[k] - sizes[k]) * strides[k];
  }
  return offset;
}

}  // namespace

int64_t WindowOffset(const DynamicWindows& d, const DynamicWindow& w, const InputMemory& at) {
  return BlockOffset(d.steps, w.starts, w.dims, w.sizes, w.strides, at);
}

int64_t UpdateOffset(const DynamicWindows& d, const InputMemory& at) {
  const DynamicUpdate& u = *d.update;
  return BlockOffset(d.steps, u.starts, u.dims, u.sizes, u.strides, at);
}

bool IsDynamicCopy(const HloInstruction& inst) {
  const bool update = inst.opcode() == HloOpcode::kDynamicUpdateSlice;
  if (inst.opcode() != HloOpcode::kDynamicSlice && !update) return false;
  const int64_t first_index = update ? 2 : 1;
  const Shape& operand = inst.operand(0)->shape();
  if (!RowMajor(operand) || !RowMajor(inst.shape()) ||
      (update && !RowMajor(inst.operand(1)->shape())) ||
      inst.operand_count() != first_index + operand.rank()) {
    return false;
  }
  for (int64_t k = first_index; k < inst.operand_count(); ++k) {
    const Shape& s = inst.operand(k)->shape();
    if (!s.IsArray() || s.rank() != 0 || !IsInteger(s.element_type())) return false;
  }
  return true;
}

DynamicCopyPlan PlanDynamicCopy(const HloInstruction& inst) {
  DynamicCopyPlan plan;
  plan.update = inst.opcode() == HloOpcode::kDynamicUpdateSlice;
  const Shape& whole = inst.operand(0)->shape();
  const Shape& block = plan.update ? inst.operand(1)->shape() : inst.shape();
  plan.whole = whole.dimensions();
  plan.block = block.dimensions();
  plan.element_bytes = StorageBytes(whole.element_type());
  const int64_t first_index = plan.update ? 2 : 1;
  for (int64_t d = 0; d < whole.rank(); ++d) {
    plan.index_types.push_back(inst.operand(first_index + d)->shape().element_type());
  }
  return plan;
}

void RunDynamicCopy(const DynamicCopyPlan& plan, const std::vector<const uint8_t*>& in,
                    uint8_t* out) {
  const auto rank = static_cast<int64_t>(plan.whole.size());
  const size_t first_index = plan.update ? 2 : 1;
  const int64_t element = plan.element_bytes;
  int64_t base = 0;
  int64_t stride = element;  // row-major, from the last dim
  int64_t count = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    const auto k = static_cast<size_t>(d);
    const PrimitiveType t = plan.index_types[k];
    const int64_t v = ReadScalar(in.at(first_index + k), t);
    base += ClampStart(v, t, plan.whole[k] - plan.block[k]) * stride;
    stride *= plan.whole[k];
    count *= plan.whole[k];
  }
  if (plan.update && out != in[0]) {
    std::memmove(out, in[0], static_cast<size_t>(count * element));
  }
  if (plan.update) {
    CopyBlock(plan.whole, plan.block, element, base, out, const_cast<uint8_t*>(in[1]),
              /*into_whole=*/true);
  } else {
    CopyBlock(plan.whole, plan.block, element, base, const_cast<uint8_t*>(in[0]), out,
              /*into_whole=*/false);
  }
}

void CopyBlock(const std::vector<int64_t>& whole_dims, const std::vector<int64_t>& block_dims,
               int64_t element, int64_t offset, uint8_t* whole, uint8_t* block, bool into_whole) {
  const auto rank = static_cast<int64_t>(whole_dims.size());
  int64_t count = 1;
  for (int64_t d : block_dims) count *= d;
  if (count == 0) return;
  // Reused by the thread (native loops copy on every iteration).
  thread_local std::vector<int64_t> strides, at;
  strides.assign(whole_dims.size(), 0);
  int64_t stride = element;
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= whole_dims[static_cast<size_t>(d)];
  }
  // Row by row: the last dimension is contiguous in both.
  const int64_t row = rank == 0 ? element : block_dims.back() * element;
  const int64_t rows = rank == 0 ? 1 : count / block_dims.back();
  at.assign(static_cast<size_t>(std::max<int64_t>(rank - 1, 0)), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t whole_offset = offset;
    for (size_t d = 0; d < at.size(); ++d) whole_offset += at[d] * strides[d];
    uint8_t* w = whole + whole_offset;
    uint8_t* b = block + r * row;
    if (into_whole) {
      std::memmove(w, b, static_cast<size_t>(row));
    } else {
      std::memmove(b, w, static_cast<size_t>(row));
    }
    for (int64_t d = static_cast<int64_t>(at.size()) - 1; d >= 0; --d) {
      if (++at[static_cast<size_t>(d)] < block_dims[static_cast<size_t>(d)]) break;
      at[static_cast<size_t>(d)] = 0;
    }
  }
}

}  // namespace uir::igraph
