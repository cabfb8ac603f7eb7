// The plans of sort and topk nodes (runtime/sort.h) for the Kernel Graph's
// lowering and the thunk emitter (library_plans.h): a sort's comparator is
// recognised by evaluating it on every class of key values; which of its
// results are read, and how far, from its users.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "codegen/library_plans.h"
#include "codegen/plan_scalars.h"
#include "igraph/tile_program.h"

namespace uir::codegen {

using hlo::HloInstruction;
using hlo::HloOpcode;
using igraph::KernelNode;
using igraph::PhysicalStrides;

namespace {

// The parameters `inst` reads, transitively.
void ParamsRead(const HloInstruction* inst, std::set<int64_t>& out) {
  if (inst->opcode() == HloOpcode::kParameter) {
    out.insert(inst->parameter_number());
    return;
  }
  for (const HloInstruction* o : inst->operands()) ParamsRead(o, out);
}

// Values of each class a key of type `t` can take: zeros of both signs,
// infinities, NaNs of both signs and finite values of floats; the
// extremes and small values of integers.
std::vector<double> RepresentativeKeys(PrimitiveType t) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  if (IsFloat(t)) return {-nan, -inf, -2.5, -1, -0.0, 0.0, 1, 2.5, inf, nan};
  if (t == PrimitiveType::kPred) return {0, 1};
  if (IsSigned(t)) {
    const double big = std::ldexp(1.0, std::min(BitWidth(t) - 1, 52));
    return {-big, -3, -1, 0, 1, 3, big - 1};
  }
  const double big = std::ldexp(1.0, std::min(BitWidth(t), 52));
  return {0, 1, 3, big - 1};
}

// A key value's rank in a candidate order: equal ranks are equal keys.
double KeyRank(double v, bool floats, bool canonical) {
  if (!floats) return v;
  if (canonical && std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();  // every NaN +NaN
  if (canonical && v == 0) v = 0.0;                                              // -0 as +0
  return static_cast<double>(TotalOrderKey(v));
}

// A key of a sort comparator: an operand, or one part of a complex one.
struct KeySlot {
  int operand = 0;
  int part = -1;
  PrimitiveType type;  // the key's (part's) type
  std::vector<double> values;
};

// The comparator on the pair (lhs, rhs), each a value per slot; false
// where it does not evaluate.
bool Compare(const hlo::HloComputation& comparator, const std::vector<KeySlot>& slots,
             const std::vector<double>& lhs, const std::vector<double>& rhs, bool* result) {
  std::vector<Scalar> params(static_cast<size_t>(comparator.num_parameters()));
  for (size_t k = 0; k < slots.size(); ++k) {
    for (int side = 0; side < 2; ++side) {
      Scalar& x = params.at(static_cast<size_t>(2 * slots[k].operand + side));
      (slots[k].part == 1 ? x.imag : x.number) = side == 0 ? lhs[k] : rhs[k];
      x.truth = x.number != 0;
    }
  }
  std::map<const HloInstruction*, std::vector<Scalar>> memo;
  std::vector<Scalar> out;
  if (!EvalPick(comparator.root(), params, memo, out) || out.size() != 1) return false;
  *result = out[0].truth;
  return true;
}

// The order a sort comparator defines on the keys it reads, where it is
// one the runtime sorts by: with one key, its value on every pair of
// representative keys is that of ascending or descending order, by total
// order or with -0 = +0 and NaNs equal (or, for one float key, a plain LT
// or GT whose NaNs HLO leaves unplaced); with several, each key alone
// (the others equal) orders so, one key decides before another wherever
// they disagree, and the lexicographic order so found agrees with the
// comparator on thousands of mixed pairs.
bool KeyOrdersOf(const hlo::HloComputation& comparator, const std::vector<KeySlot>& slots,
                 runtime::SortPlan& plan) {
  if (comparator.root()->shape().element_type() != PrimitiveType::kPred) return false;
  const size_t nk = slots.size();
  std::vector<runtime::SortKey> keys(nk);
  std::vector<double> same(nk, 1.0);  // every other key at 1: equal on both sides
  for (size_t s = 0; s < nk; ++s) {
    const std::vector<double>& values = slots[s].values;
    const bool floats = IsFloat(slots[s].type);
    std::vector<std::vector<bool>> table(values.size(), std::vector<bool>(values.size()));
    for (size_t i = 0; i < values.size(); ++i) {
      for (size_t j = 0; j < values.size(); ++j) {
        std::vector<double> lhs = same, rhs = same;
        lhs[s] = values[i];
        rhs[s] = values[j];
        bool r = false;
        if (!Compare(comparator, slots, lhs, rhs, &r)) return false;
        table[i][j] = r;
      }
    }
    // Last, a float comparison that is no order where NaNs are (a plain
    // `compare` LT or GT: a NaN is neither before nor after anything, so
    // HLO fixes no place for it): ordered as it orders every other pair,
    // NaNs where the canonical order puts them. Only a lone key may.
    bool found = false;
    for (const auto& [canonical, skip_nan] :
         {std::pair{true, false}, {false, false}, {true, true}}) {
      if (found || (!floats && (!canonical || skip_nan)) || (skip_nan && nk > 1)) break;
      for (bool descending : {false, true}) {
        bool match = true;
        for (size_t i = 0; i < values.size() && match; ++i) {
          for (size_t j = 0; j < values.size() && match; ++j) {
            if (skip_nan && (std::isnan(values[i]) || std::isnan(values[j]))) continue;
            const double a = KeyRank(values[i], floats, canonical);
            const double b = KeyRank(values[j], floats, canonical);
            match = table[i][j] == (descending ? b < a : a < b);
          }
        }
        if (match) {
          keys[s] = {slots[s].operand, slots[s].part, slots[s].type, descending,
                     floats && canonical};
          found = true;
          break;
        }
      }
    }
    if (!found) return false;
  }
  if (nk == 1) {
    plan.keys = keys;
    return true;
  }
  // Two values of each key, the first before the second in its order.
  auto rank = [&](size_t s, double v) {
    const double r = KeyRank(v, IsFloat(slots[s].type), keys[s].canonical);
    return keys[s].descending ? -r : r;
  };
  std::vector<double> first(nk, 0.0), second(nk, 1.0);
  for (size_t s = 0; s < nk; ++s) {
    if (rank(s, 1.0) < rank(s, 0.0)) std::swap(first[s], second[s]);
  }
  // Which key decides first: where i says lhs first and j says rhs first.
  std::vector<int> wins(nk, 0);
  std::vector<std::vector<bool>> beats(nk, std::vector<bool>(nk, false));
  for (size_t i = 0; i < nk; ++i) {
    for (size_t j = 0; j < nk; ++j) {
      if (i == j) continue;
      std::vector<double> lhs = same, rhs = same;
      lhs[i] = first[i];
      rhs[i] = second[i];
      lhs[j] = second[j];
      rhs[j] = first[j];
      bool r = false;
      if (!Compare(comparator, slots, lhs, rhs, &r)) return false;
      beats[i][j] = r;
      wins[i] += r ? 1 : 0;
    }
  }
  std::vector<size_t> priority(nk);
  for (size_t s = 0; s < nk; ++s) priority[s] = s;
  std::stable_sort(priority.begin(), priority.end(),
                   [&](size_t a, size_t b) { return wins[a] > wins[b]; });
  for (size_t a = 0; a < nk; ++a) {
    for (size_t b = a + 1; b < nk; ++b) {
      if (!beats[priority[a]][priority[b]] || beats[priority[b]][priority[a]]) return false;
    }
  }
  // The lexicographic order against the comparator on mixed pairs, half
  // of each key's values equal on both sides.
  uint64_t state = 0x9e3779b97f4a7c15u;
  auto next = [&](uint64_t bound) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state % bound;
  };
  for (int sample = 0; sample < 4000; ++sample) {
    std::vector<double> lhs(nk), rhs(nk);
    for (size_t s = 0; s < nk; ++s) {
      const std::vector<double>& values = slots[s].values;
      lhs[s] = values[next(values.size())];
      rhs[s] = next(2) == 0 ? lhs[s] : values[next(values.size())];
    }
    bool model = false;
    for (size_t s : priority) {
      const double a = rank(s, lhs[s]), b = rank(s, rhs[s]);
      if (a != b) {
        model = a < b;
        break;
      }
    }
    bool r = false;
    if (!Compare(comparator, slots, lhs, rhs, &r) || r != model) return false;
  }
  for (size_t s : priority) plan.keys.push_back(keys[s]);
  return true;
}

// How many leading positions along `dim` of `value` its users read: when
// each is a slice from position 0 with stride 1 along it, or a fusion whose
// parameter for it is read only so, the largest of their limits; else 0
// (all).
int64_t LeadingPositionsRead(const HloInstruction& value, int dim) {
  if (&value == value.parent()->root()) return 0;
  int64_t keep = 0;
  for (const HloInstruction* u : value.users()) {
    if (u->opcode() == HloOpcode::kSlice) {
      const auto& ranges = u->attributes().Get<std::vector<hlo::SliceRange>>(hlo::AttrKey::kSlice);
      const hlo::SliceRange& along = ranges.at(static_cast<size_t>(dim));
      if (along.start != 0 || along.stride != 1) return 0;
      keep = std::max(keep, along.limit);
    } else if (u->opcode() == HloOpcode::kFusion) {
      const hlo::HloComputation& fused = *u->called_computations().at(0);
      for (int64_t j = 0; j < u->operand_count(); ++j) {
        if (u->operand(j) != &value) continue;
        const int64_t inner = LeadingPositionsRead(*fused.parameter(j), dim);
        if (inner == 0) return 0;
        keep = std::max(keep, inner);
      }
    } else {
      return 0;
    }
  }
  return keep;
}

// How many leading positions along `dim` of a sort's results are read (a
// top-k): LeadingPositionsRead of each result; 0 for all.
int64_t KeptPositions(const HloInstruction& sort, int dim) {
  if (&sort == sort.parent()->root()) return 0;
  if (!sort.shape().IsTuple()) return LeadingPositionsRead(sort, dim);
  int64_t keep = 0;
  for (const HloInstruction* u : sort.users()) {
    if (u->opcode() != HloOpcode::kGetTupleElement) return 0;
    const int64_t read = LeadingPositionsRead(*u, dim);
    if (read == 0) return 0;
    keep = std::max(keep, read);
  }
  return keep;
}

// Which results of a tuple-shaped sort nobody reads: those no
// get-tuple-element takes, when every user is one (and the sort is not
// its computation's result).
std::vector<bool> UnreadResults(const HloInstruction& sort) {
  const size_t count = sort.shape().IsTuple() ? sort.shape().tuple_shapes().size() : 1;
  std::vector<bool> unread(count, false);
  if (!sort.shape().IsTuple() || &sort == sort.parent()->root()) return unread;
  std::vector<bool> taken(count, false);
  for (const HloInstruction* u : sort.users()) {
    if (u->opcode() != HloOpcode::kGetTupleElement) return unread;
    const auto index = static_cast<size_t>(u->attributes().Get<int64_t>(hlo::AttrKey::kIndex));
    if (index < count) taken[index] = true;
  }
  for (size_t k = 0; k < count; ++k) unread[k] = !taken[k];
  return unread;
}

}  // namespace

std::optional<NodeSort> SortOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kSort || !n.igraphs.empty() ||
      n.inputs.size() != static_cast<size_t>(inst->operand_count()) ||
      n.outputs.size() != n.inputs.size() || n.inputs.empty()) {
    return std::nullopt;
  }
  NodeSort out;
  out.inputs = n.inputs;
  out.outputs = n.outputs;
  runtime::SortPlan& p = out.plan;
  // The keys: the operands whose pairs the comparator reads, each whole or
  // (complex) as its two parts.
  const hlo::HloComputation& comparator =
      *inst->attributes().Get<hlo::HloComputation*>(hlo::AttrKey::kToApply);
  std::set<int64_t> read;
  ParamsRead(comparator.root(), read);
  std::vector<KeySlot> slots;
  for (int64_t r : read) {
    const int64_t o = r / 2;
    if (o >= static_cast<int64_t>(n.inputs.size()) || !read.contains(2 * o) ||
        !read.contains(2 * o + 1)) {
      return std::nullopt;
    }
    if (r % 2 == 1) continue;
    const PrimitiveType t = n.inputs[static_cast<size_t>(o)].shape.element_type();
    if (IsComplex(t)) {
      const PrimitiveType part =
          t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
      for (int k = 0; k < 2; ++k) slots.push_back({static_cast<int>(o), k, part, {}});
    } else {
      slots.push_back({static_cast<int>(o), -1, t, {}});
    }
  }
  if (slots.empty()) return std::nullopt;
  for (KeySlot& slot : slots) {
    if (!runtime::SortKeySupported(slot.type)) return std::nullopt;
    slot.values = RepresentativeKeys(slot.type);
  }
  const hlo::Shape& key = n.inputs[static_cast<size_t>(slots[0].operand)].shape;
  p.rank = static_cast<int>(key.rank());
  const auto& dims = inst->attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
  if (dims.size() != 1 || p.rank > runtime::SortPlan::kMaxRank) return std::nullopt;
  p.dim = static_cast<int>(dims[0]);
  for (int d = 0; d < p.rank; ++d)
    p.size[static_cast<size_t>(d)] = key.dimensions()[static_cast<size_t>(d)];
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const hlo::Shape& in = n.inputs[k].shape;
    const hlo::Shape& o = n.outputs[k].shape;
    const PrimitiveType t = in.element_type();
    // Elements move as bytes: any type (pred and sub-byte types take a
    // byte each).
    if (in.dimensions() != key.dimensions() || o.dimensions() != key.dimensions() ||
        o.element_type() != t) {
      return std::nullopt;
    }
    runtime::SortPlan::Operand op;
    op.element_bytes = StorageBytes(t);
    const std::vector<int64_t> is = PhysicalStrides(in), os = PhysicalStrides(o);
    for (int d = 0; d < p.rank; ++d) {
      op.in_stride[static_cast<size_t>(d)] = is[static_cast<size_t>(d)];
      op.out_stride[static_cast<size_t>(d)] = os[static_cast<size_t>(d)];
    }
    p.operands.push_back(op);
  }
  p.keep = KeptPositions(*inst, p.dim);
  const std::vector<bool> unread = UnreadResults(*inst);
  for (size_t k = 0; k < p.operands.size() && k < unread.size(); ++k)
    p.operands[k].unread = unread[k];
  if (!KeyOrdersOf(comparator, slots, p) || !p.Invalid().empty()) return std::nullopt;
  return out;
}

std::optional<NodeTopK> TopKOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kTopK || !n.igraphs.empty() ||
      n.inputs.size() != 1 || n.outputs.size() != 2) {
    return std::nullopt;
  }
  NodeTopK t{{}, n.inputs[0], n.outputs[0], n.outputs[1]};
  const hlo::Shape& x = t.input.shape;
  if (x.rank() < 1 || !igraph::IsRowMajorTensor(t.input) || !igraph::IsRowMajorTensor(t.values) ||
      !igraph::IsRowMajorTensor(t.indices)) {
    return std::nullopt;
  }
  runtime::TopKPlan& p = t.plan;
  p.type = x.element_type();
  p.index_type = t.indices.shape.element_type();
  p.n = x.dimensions().back();
  p.k = inst->attributes().Get<int64_t>(hlo::AttrKey::kK);
  p.largest = inst->attributes().GetOr<bool>(hlo::AttrKey::kLargest).value_or(true);
  p.rows = 1;
  for (size_t d = 0; d + 1 < x.dimensions().size(); ++d) p.rows *= x.dimensions()[d];
  if (t.values.shape.element_type() != p.type || t.values.shape.element_count() != p.rows * p.k ||
      t.indices.shape.element_count() != p.rows * p.k || !p.Invalid().empty()) {
    return std::nullopt;
  }
  return t;
}

}  // namespace uir::codegen
