// Builds tile programs from fused computations: index maps walk from each
// output back to the loads, turning every index-only op into arithmetic on
// linear functions of the iteration indices.
#include "igraph/tile_program.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "eval/context.h"
#include "hlo/computation.h"
#include "hlo/opcode.h"
#include "igraph/iop.h"

namespace uir::igraph {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;
using IndexMap = std::vector<Linear>;  // one function per dim of a value

bool TileProgram::has_reduce() const {
  return std::any_of(ops.begin(), ops.end(),
                     [](const TileOp& op) { return op.kind == TileOp::Kind::kReduce; });
}

bool TileProgram::needs_whole_rows() const {
  return std::any_of(ops.begin(), ops.end(),
                     [](const TileOp& op) { return op.kind == TileOp::Kind::kBroadcast; });
}

std::vector<int64_t> PhysicalStrides(const Shape& shape) {
  const int64_t rank = shape.rank();
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  std::vector<int64_t> minor_to_major;
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major.size()) == rank) {
    minor_to_major = shape.layout().minor_to_major;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d) minor_to_major.push_back(d);
  }
  int64_t stride = 1;
  for (int64_t d : minor_to_major) {
    strides[d] = stride;
    stride *= shape.dimensions(d);
  }
  return strides;
}

namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

bool IsRowMajor(const Shape& shape) {
  return PhysicalStrides(shape) == RowMajorStrides(shape.dimensions());
}

Linear Zero(size_t dims) { return Linear{std::vector<int64_t>(dims, 0), 0}; }

Linear Combine(const IndexMap& map, const std::vector<int64_t>& strides, size_t dims) {
  Linear out = Zero(dims);
  for (size_t k = 0; k < map.size(); ++k) {
    for (size_t d = 0; d < dims; ++d) out.coefficient[d] += strides[k] * map[k].coefficient[d];
    out.constant += strides[k] * map[k].constant;
  }
  return out;
}

// The digits of `l` in the mixed radix `sizes` (major first) as linear
// functions, when no carry can pass between digits for any index value.
std::optional<IndexMap> Unravel(const Linear& l, const std::vector<int64_t>& sizes,
                                const std::vector<int64_t>& extents) {
  const size_t k = sizes.size();
  std::vector<int64_t> place(k, 1);
  for (int64_t q = static_cast<int64_t>(k) - 2; q >= 0; --q) place[q] = place[q + 1] * sizes[q + 1];
  IndexMap digits(k, Zero(extents.size()));
  if (k == 0) return digits;
  if (l.constant < 0) return std::nullopt;
  int64_t rest = l.constant;
  for (size_t q = 0; q < k; ++q) {
    digits[q].constant = rest / place[q];
    rest %= place[q];
  }
  if (digits[0].constant >= sizes[0]) return std::nullopt;
  for (size_t d = 0; d < extents.size(); ++d) {
    const int64_t c = l.coefficient[d];
    if (c == 0 || extents[d] == 1) continue;
    const int64_t mag = c < 0 ? -c : c;
    size_t q = k - 1;
    for (size_t i = 0; i < k; ++i) {
      if (place[i] <= mag && mag % place[i] == 0) {
        q = i;
        break;
      }
    }
    digits[q].coefficient[d] = c / place[q];
  }
  for (size_t q = 0; q < k; ++q) {
    int64_t lo = digits[q].constant, hi = digits[q].constant;
    for (size_t d = 0; d < extents.size(); ++d) {
      const int64_t span = digits[q].coefficient[d] * (extents[d] - 1);
      lo += std::min<int64_t>(0, span);
      hi += std::max<int64_t>(0, span);
    }
    if (lo < 0 || hi >= sizes[q]) return std::nullopt;
  }
  return digits;
}

// Thrown when a piecewise access (concatenate, pad) needs the iteration
// box cut along `dim` before `points` (box-relative indices).
struct SplitRequest {
  size_t dim;
  std::vector<int64_t> points;
};

// Thrown when `inst` must be computed into scratch memory first.
struct MaterializeRequest {
  const HloInstruction* inst;
};

using Scratch = std::vector<const HloInstruction*>;

// A pad with interior padding goes to scratch in two programs: the padding
// value everywhere, then the operand's elements at their strided places.
enum class PadPart : uint8_t { kNone, kFill, kCopy };

class Builder {
 public:
  // `lo` and `extents` restrict the iteration space to a box (empty: all).
  // `scratch` values are read from scratch memory; with `sub_root` the
  // program computes that scratch value instead of the fusion's outputs.
  Builder(const HloInstruction& fusion, TileProgram& p, std::vector<int64_t> lo,
          std::vector<int64_t> extents, const Scratch& scratch, const HloInstruction* sub_root,
          PadPart pad_part = PadPart::kNone)
      : fusion_(fusion),
        p_(p),
        lo_(std::move(lo)),
        box_(std::move(extents)),
        scratch_(scratch),
        sub_root_(sub_root),
        pad_part_(pad_part) {
    if (fusion.opcode() == HloOpcode::kFusion) {
      computation_ = fusion.called_computations().at(0);
      root_ = sub_root != nullptr ? sub_root : computation_->root();
    } else {
      root_ = &fusion;
    }
    p_.name = sub_root != nullptr ? fusion.name() + ".scratch." + sub_root->name() : fusion.name();
  }

  // Throws SplitRequest when the box must be cut first.
  bool Run(std::string* reason) {
    try {
      Build();
      return true;
    } catch (const std::string& why) {
      *reason = why;
      return false;
    }
  }

  const std::vector<int64_t>& full_extents() const { return full_; }

 private:
  [[noreturn]] void Fail(const std::string& why) const { throw why; }

  // Inputs: fusion parameters, or the operands of a single instruction.
  bool IsLeaf(const HloInstruction* inst, int64_t* index) const {
    for (size_t k = 0; k < scratch_.size(); ++k) {
      if (scratch_[k] == inst && inst != sub_root_) {
        *index = fusion_.operand_count() + static_cast<int64_t>(k);
        return true;
      }
    }
    if (computation_ != nullptr) {
      if (inst->opcode() != HloOpcode::kParameter) return false;
      *index = inst->parameter_number();
      return true;
    }
    if (inst == root_) return false;
    for (int64_t i = 0; i < root_->operand_count(); ++i) {
      if (root_->operand(i) == inst) {
        *index = i;
        return true;
      }
    }
    return false;
  }

  std::vector<const HloInstruction*> Outputs() const {
    if (sub_root_ != nullptr) return {sub_root_};
    if (root_->opcode() == HloOpcode::kTuple && computation_ != nullptr) {
      return {root_->operands().begin(), root_->operands().end()};
    }
    return {root_};
  }

  size_t Dims() const { return p_.extents.size(); }

  void Build() {
    const std::vector<const HloInstruction*> outputs = Outputs();
    for (const HloInstruction* o : outputs) {
      if (!o->shape().IsArray()) Fail("output %" + o->name() + " is not an array");
    }
    // Inputs first, so that dram ids follow operand order.
    for (int64_t i = 0; i < fusion_.operand_count(); ++i) {
      const Shape& s = fusion_.operand(i)->shape();
      if (!s.IsArray()) Fail("operand " + std::to_string(i) + " is not an array");
      TileTensor t;
      t.kind = TileTensor::Kind::kInput;
      t.index = i;
      t.id = i;
      t.name = fusion_.operand(i)->name();
      t.dtype = s.element_type();
      t.elements = s.element_count();
      p_.tensors.push_back(std::move(t));
    }
    for (size_t k = 0; k < scratch_.size(); ++k) {
      TileTensor t;
      t.kind = TileTensor::Kind::kScratch;
      t.index = static_cast<int64_t>(k);
      t.name = scratch_[k]->name();
      t.dtype = scratch_[k]->shape().element_type();
      t.elements = scratch_[k]->shape().element_count();
      p_.tensors.push_back(std::move(t));
    }
    if (pad_part_ != PadPart::kNone) {
      InteriorPad();
      return;
    }
    const HloInstruction* reduce = FirstReduce();
    std::vector<IndexMap> maps;
    if (reduce == nullptr) {
      const Shape& shape = outputs[0]->shape();
      p_.extents = shape.dimensions();
      p_.reduced_dim.assign(Dims(), false);
      ApplyBox();
      for (const HloInstruction* o : outputs) {
        if (o->shape().dimensions() != shape.dimensions()) {
          Fail("outputs of different shapes (%" + o->name() + ")");
        }
        maps.push_back(Identity());
      }
    } else {
      p_.extents = reduce->operand(0)->shape().dimensions();
      p_.reduced_dim.assign(Dims(), false);
      for (int64_t d : ReduceDims(*reduce)) p_.reduced_dim[d] = true;
      ApplyBox();
      ForwardMaps();
      for (const HloInstruction* o : outputs) {
        auto it = forward_.find(o);
        if (it != forward_.end()) {
          maps.push_back(it->second);
          continue;
        }
        // Not computed from a reduction's operand: an output of the
        // iteration space's shape (or of the kept dims') is indexed by it.
        std::vector<int64_t> kept;
        IndexMap kept_map;
        const IndexMap identity = Identity();
        for (size_t d = 0; d < Dims(); ++d) {
          if (p_.reduced_dim[d]) continue;
          kept.push_back(full_[d]);
          kept_map.push_back(identity[d]);
        }
        if (o->shape().dimensions() == full_) {
          maps.push_back(identity);
        } else if (o->shape().dimensions() == kept) {
          maps.push_back(kept_map);
        } else {
          Fail("output %" + o->name() + " is not indexed by the reduction's iteration space");
        }
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const HloInstruction* o = outputs[k];
      // An output indexed by the kept dims only is stored once per row.
      bool reduced = IsReduced(o);
      if (!reduced && reduce != nullptr) {
        reduced = true;
        for (const Linear& l : maps[k]) {
          for (size_t d = 0; d < Dims(); ++d) {
            if (p_.reduced_dim[d] && l.coefficient[d] != 0) reduced = false;
          }
        }
      }
      const int value = Value(o, maps[k], reduced);
      int tensor = -1;
      if (sub_root_ != nullptr) {
        const auto at = std::find(scratch_.begin(), scratch_.end(), sub_root_);
        tensor = static_cast<int>(fusion_.operand_count() + (at - scratch_.begin()));
      } else {
        TileTensor t;
        t.kind = TileTensor::Kind::kOutput;
        t.index = static_cast<int64_t>(k);
        t.name = outputs.size() == 1 ? "out" : "out." + std::to_string(k);
        t.dtype = o->shape().element_type();
        t.elements = o->shape().element_count();
        p_.tensors.push_back(std::move(t));
        tensor = static_cast<int>(p_.tensors.size()) - 1;
      }
      TileOp store;
      store.kind = TileOp::Kind::kStore;
      store.reduced = reduced;
      store.dtype = o->shape().element_type();
      store.tensor = tensor;
      store.access = Combine(maps[k], PhysicalStrides(o->shape()), Dims());
      store.operands = {value};
      store.source = o->name();
      p_.ops.push_back(std::move(store));
    }
  }

  void InteriorPad() {
    const HloInstruction* pad = sub_root_ != nullptr ? sub_root_ : root_;
    const auto& config = pad->attributes().Get<hlo::PaddingConfig>(hlo::AttrKey::kPadding);
    const bool fill = pad_part_ == PadPart::kFill;
    p_.extents = fill ? pad->shape().dimensions() : pad->operand(0)->shape().dimensions();
    p_.reduced_dim.assign(Dims(), false);
    ApplyBox();
    IndexMap out = Identity();
    if (!fill) {
      for (size_t k = 0; k < Dims(); ++k) {
        if (config[k].low < 0 || config[k].high < 0) {
          Fail("negative padding with interior padding (%" + pad->name() + ")");
        }
        out[k] = Combine({out[k]}, {config[k].interior + 1}, Dims());
        out[k].constant += config[k].low;
      }
    }
    const int value =
        fill ? Value(pad->operand(1), {}, false) : Value(pad->operand(0), Identity(), false);
    TileOp store;
    store.kind = TileOp::Kind::kStore;
    store.dtype = pad->shape().element_type();
    if (sub_root_ != nullptr) {
      const auto at = std::find(scratch_.begin(), scratch_.end(), pad);
      store.tensor = static_cast<int>(fusion_.operand_count() + (at - scratch_.begin()));
    } else {  // a lone pad instruction: straight to its output
      TileTensor t;
      t.kind = TileTensor::Kind::kOutput;
      t.name = "out";
      t.dtype = pad->shape().element_type();
      t.elements = pad->shape().element_count();
      p_.tensors.push_back(std::move(t));
      store.tensor = static_cast<int>(p_.tensors.size()) - 1;
    }
    store.access = Combine(out, PhysicalStrides(pad->shape()), Dims());
    store.operands = {value};
    store.source = pad->name();
    p_.ops.push_back(std::move(store));
    p_.name += fill ? ".fill" : ".copy";
  }

  void ApplyBox() {
    full_ = p_.extents;
    if (lo_.empty()) {
      lo_.assign(Dims(), 0);
      box_ = p_.extents;
    }
    p_.extents = box_;
  }

  IndexMap Identity() const {
    IndexMap m(Dims(), Zero(Dims()));
    for (size_t d = 0; d < Dims(); ++d) {
      m[d].coefficient[d] = p_.extents[d] > 1 ? 1 : 0;  // a size-1 dim is always 0
      m[d].constant = lo_[d];
    }
    return m;
  }

  // Range of `l` over the box.
  std::pair<int64_t, int64_t> Range(const Linear& l) const {
    int64_t lo = l.constant, hi = l.constant;
    for (size_t d = 0; d < Dims(); ++d) {
      const int64_t span = l.coefficient[d] * (p_.extents[d] - 1);
      lo += std::min<int64_t>(0, span);
      hi += std::max<int64_t>(0, span);
    }
    return {lo, hi};
  }

  // The piece of [lo, hi) boundaries `bounds` cut `l` into: the index of
  // the piece `l` stays in over the whole box, or a SplitRequest.
  size_t Piece(const HloInstruction* inst, const Linear& l, const std::vector<int64_t>& bounds) {
    const auto [lo, hi] = Range(l);
    size_t piece = 0;
    while (piece < bounds.size() && bounds[piece] <= lo) ++piece;
    if (piece == bounds.size() || bounds[piece] > hi) return piece;
    int dim = -1;
    for (size_t d = 0; d < Dims(); ++d) {
      if (l.coefficient[d] != 0 && p_.extents[d] > 1) {
        if (dim >= 0) Fail("%" + inst->name() + " is indexed by more than one dim");
        dim = static_cast<int>(d);
      }
    }
    if (dim < 0) Fail("%" + inst->name() + " cannot be split");
    if (p_.reduced_dim[dim]) {
      // Its rows must stay whole: compute it into scratch memory first.
      if (IsReduced(inst)) Fail("%" + inst->name() + " splits a reduced dim");
      throw MaterializeRequest{inst};
    }
    const int64_t c = l.coefficient[dim];
    SplitRequest split{static_cast<size_t>(dim), {}};
    for (int64_t b : bounds) {
      if (b <= lo || b > hi) continue;
      // First box index where l crosses b.
      int64_t at = c > 0 ? (b - l.constant + c - 1) / c : (l.constant - b) / -c + 1;
      if (at > 0 && at < p_.extents[dim]) split.points.push_back(at);
    }
    std::sort(split.points.begin(), split.points.end());
    throw split;
  }

  static std::vector<int64_t> ReduceDims(const HloInstruction& r) {
    return r.attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
  }

  // The instructions the outputs are computed from, operands first.
  std::vector<const HloInstruction*> Reachable() const {
    std::vector<const HloInstruction*> order;
    std::set<const HloInstruction*> seen;
    std::vector<std::pair<const HloInstruction*, size_t>> stack{{root_, 0}};
    seen.insert(root_);
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      int64_t leaf;
      const bool stop = inst != root_ && IsLeaf(inst, &leaf);
      if (!stop && next < static_cast<size_t>(inst->operand_count())) {
        const HloInstruction* o = inst->operand(static_cast<int64_t>(next++));
        if (seen.insert(o).second) stack.push_back({o, 0});
        continue;
      }
      order.push_back(inst);
      stack.pop_back();
    }
    return order;
  }

  const HloInstruction* FirstReduce() const {
    for (const HloInstruction* inst : Reachable()) {
      if (inst->opcode() == HloOpcode::kReduce) return inst;
    }
    return nullptr;
  }

  // Reduced values: reductions and what is computed from them without a
  // broadcast back; indexed by the kept dims only.
  bool IsReduced(const HloInstruction* inst) {
    auto it = reduced_.find(inst);
    if (it != reduced_.end()) return it->second;
    bool r = false;
    int64_t leaf;
    if (inst->opcode() == HloOpcode::kReduce) {
      r = true;
    } else if (inst->opcode() != HloOpcode::kBroadcast && !IsLeaf(inst, &leaf)) {
      for (const HloInstruction* o : inst->operands()) r = r || IsReduced(o);
    }
    reduced_[inst] = r;
    return r;
  }

  // Maps of the values computed from reduction operands, walking forward
  // from each reduction's operand (indexed by the iteration space itself).
  void ForwardMaps() {
    std::vector<int64_t> reduced_iter;
    for (size_t d = 0; d < Dims(); ++d) {
      if (p_.reduced_dim[d]) reduced_iter.push_back(static_cast<int64_t>(d));
    }
    const std::vector<const HloInstruction*> order = Reachable();
    if (computation_ == nullptr) forward_[root_->operand(0)] = Identity();
    for (const HloInstruction* inst : order) {
      if (inst->opcode() != HloOpcode::kReduce) continue;
      if (inst->operand_count() != 2) Fail("variadic reduce %" + inst->name());
      if (inst->operand(0)->shape().dimensions() != full_) {
        Fail("reductions of different shapes (%" + inst->name() + ")");
      }
      std::vector<bool> dims(Dims(), false);
      for (int64_t d : ReduceDims(*inst)) dims[d] = true;
      if (dims != p_.reduced_dim) Fail("reductions over different dims (%" + inst->name() + ")");
      forward_[inst->operand(0)] = Identity();
    }
    for (const HloInstruction* inst : order) {
      if (forward_.count(inst)) continue;
      std::optional<IndexMap> m = Forward(inst, reduced_iter);
      if (m) forward_[inst] = *m;
    }
  }

  std::optional<IndexMap> Forward(const HloInstruction* inst, const std::vector<int64_t>& red) {
    auto mapped = [&](int64_t i) -> const IndexMap* {
      auto it = forward_.find(inst->operand(i));
      return it == forward_.end() ? nullptr : &it->second;
    };
    const HloOpcode op = inst->opcode();
    const Shape& shape = inst->shape();
    if (!shape.IsArray()) return std::nullopt;
    if (IsElementwise(*inst)) {
      const IndexMap* found = nullptr;
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        const IndexMap* m = mapped(i);
        if (m == nullptr || inst->operand(i)->shape().rank() != shape.rank()) continue;
        if (found != nullptr && !(*found == *m))
          Fail("operands of %" + inst->name() + " are indexed differently");
        found = m;
      }
      if (found == nullptr) return std::nullopt;
      return *found;
    }
    const IndexMap* m = inst->operand_count() > 0 ? mapped(0) : nullptr;
    if (m == nullptr) return std::nullopt;
    const auto& a = inst->attributes();
    switch (op) {
      case HloOpcode::kBroadcast: {
        const auto dims = a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
        IndexMap out(static_cast<size_t>(shape.rank()));
        std::vector<bool> set(out.size(), false);
        for (size_t k = 0; k < dims.size(); ++k) {
          out[dims[k]] = (*m)[k];
          set[dims[k]] = true;
        }
        size_t next = 0;
        for (size_t d = 0; d < out.size(); ++d) {
          if (set[d]) continue;
          if (next >= red.size() || shape.dimensions(d) != full_[red[next]]) {
            return std::nullopt;
          }
          out[d] = Zero(Dims());
          out[d].coefficient[red[next]] = p_.extents[red[next]] > 1 ? 1 : 0;
          ++next;
        }
        if (next != red.size()) return std::nullopt;
        return out;
      }
      case HloOpcode::kReduce: {
        std::vector<bool> dims(static_cast<size_t>(inst->operand(0)->shape().rank()), false);
        for (int64_t d : ReduceDims(*inst)) dims[d] = true;
        IndexMap out;
        for (size_t d = 0; d < dims.size(); ++d) {
          if (!dims[d]) out.push_back((*m)[d]);
        }
        return out;
      }
      case HloOpcode::kTranspose: {
        const auto perm = a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
        IndexMap out(perm.size());
        for (size_t k = 0; k < perm.size(); ++k) out[k] = (*m)[perm[k]];
        return out;
      }
      case HloOpcode::kBitcast:
      case HloOpcode::kReshape: {
        const Shape& in = inst->operand(0)->shape();
        const bool physical = op == HloOpcode::kBitcast;
        Linear l =
            Combine(*m, physical ? PhysicalStrides(in) : RowMajorStrides(in.dimensions()), Dims());
        return UnravelInto(l, shape, physical);
      }
      default:
        return std::nullopt;
    }
  }

  // The index of `shape` whose linear position (physical or row-major) is `l`.
  std::optional<IndexMap> UnravelInto(const Linear& l, const Shape& shape, bool physical) {
    std::vector<int64_t> order;  // logical dims, major first
    if (physical) {
      std::vector<int64_t> strides = PhysicalStrides(shape);
      for (int64_t d = 0; d < shape.rank(); ++d) order.push_back(d);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t x, int64_t y) { return strides[x] > strides[y]; });
    } else {
      for (int64_t d = 0; d < shape.rank(); ++d) order.push_back(d);
    }
    std::vector<int64_t> sizes;
    for (int64_t d : order) sizes.push_back(shape.dimensions(d));
    std::optional<IndexMap> digits = Unravel(l, sizes, p_.extents);
    if (!digits) return std::nullopt;
    IndexMap out(static_cast<size_t>(shape.rank()));
    for (size_t q = 0; q < order.size(); ++q) out[order[q]] = (*digits)[q];
    return out;
  }

  static bool IsElementwise(const HloInstruction& inst) {
    switch (inst.opcode()) {
      case HloOpcode::kConvert:
      case HloOpcode::kCompare:
      case HloOpcode::kSelect:
      case HloOpcode::kClamp:
      case HloOpcode::kCopy:
      case HloOpcode::kIsFinite:
        return true;
      default:
        break;
    }
    const hlo::OpcodeCategory c = hlo::OpcodeCategoryOf(inst.opcode());
    return c == hlo::OpcodeCategory::kUnary || c == hlo::OpcodeCategory::kBinary ||
           c == hlo::OpcodeCategory::kTernary;
  }

  int Push(TileOp op) {
    p_.ops.push_back(std::move(op));
    return static_cast<int>(p_.ops.size()) - 1;
  }

  int Value(const HloInstruction* inst, const IndexMap& map, bool reduced) {
    std::vector<int64_t> key;
    for (const Linear& l : map) {
      key.insert(key.end(), l.coefficient.begin(), l.coefficient.end());
      key.push_back(l.constant);
    }
    auto memo_key = std::make_tuple(inst, key, reduced);
    auto it = memo_.find(memo_key);
    if (it != memo_.end()) return it->second;
    const int v = Compute(inst, map, reduced);
    memo_[memo_key] = v;
    return v;
  }

  int Compute(const HloInstruction* inst, const IndexMap& map, bool reduced) {
    const Shape& shape = inst->shape();
    const size_t n = Dims();
    if (!shape.IsArray()) Fail("%" + inst->name() + " is not an array");
    if (hlo::IsComplex(shape.element_type())) Fail("complex values (%" + inst->name() + ")");
    TileOp op;
    op.reduced = reduced;
    op.dtype = shape.element_type();
    op.source = inst->name();
    int64_t leaf;
    if (IsLeaf(inst, &leaf)) {
      op.kind = TileOp::Kind::kLoad;
      op.tensor = static_cast<int>(leaf);
      op.access = Combine(map, PhysicalStrides(shape), n);
      return Push(std::move(op));
    }
    if (!reduced && IsReduced(inst)) {
      // A reduced value read by full rows without a broadcast (a reshape
      // that restores a size-1 reduced dim): fine if its index does not
      // move along the reduced dims; it is then broadcast along them.
      for (const Linear& l : map) {
        for (size_t d = 0; d < n; ++d) {
          if (p_.reduced_dim[d] && l.coefficient[d] != 0) {
            Fail("%" + inst->name() + " mixes a reduced value into full rows without a broadcast");
          }
        }
      }
      op.kind = TileOp::Kind::kBroadcast;
      op.operands = {Value(inst, map, true)};
      return Push(std::move(op));
    }
    const HloOpcode code = inst->opcode();
    const auto& a = inst->attributes();
    auto operand_map_same = [&](int64_t i) {
      return inst->operand(i)->shape().rank() == 0 ? IndexMap{} : map;
    };
    switch (code) {
      case HloOpcode::kConstant: {
        const hlo::Literal& lit = inst->literal();
        if (shape.element_count() == 1) {
          op.kind = TileOp::Kind::kFill;
          op.literal = hlo::Literal(Shape(shape.element_type(), {}));
          op.literal.mutable_bytes() = std::vector<uint8_t>(lit.bytes().begin(), lit.bytes().end());
          return Push(std::move(op));
        }
        TileTensor t;
        t.kind = TileTensor::Kind::kConstant;
        t.index = constants_++;
        t.name = inst->name();
        t.dtype = shape.element_type();
        t.elements = shape.element_count();
        t.literal = lit;
        p_.tensors.push_back(std::move(t));
        op.kind = TileOp::Kind::kLoad;
        op.tensor = static_cast<int>(p_.tensors.size()) - 1;
        op.access = Combine(map, RowMajorStrides(shape.dimensions()), n);
        return Push(std::move(op));
      }
      case HloOpcode::kIota: {
        op.kind = TileOp::Kind::kIota;
        op.access = map.at(static_cast<size_t>(a.Get<int64_t>(hlo::AttrKey::kIotaDimension)));
        return Push(std::move(op));
      }
      case HloOpcode::kCopy:
        return Value(inst->operand(0), map, reduced);
      case HloOpcode::kBroadcast: {
        const auto dims = a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
        const HloInstruction* o = inst->operand(0);
        IndexMap om;
        for (size_t k = 0; k < dims.size(); ++k) {
          // A size-1 operand dim spread over a larger one always reads index 0.
          const bool degenerate =
              o->shape().dimensions(static_cast<int64_t>(k)) == 1 && shape.dimensions(dims[k]) != 1;
          om.push_back(degenerate ? Zero(n) : map[dims[k]]);
        }
        if (!reduced && IsReduced(o)) {
          for (const Linear& l : om) {
            for (size_t d = 0; d < n; ++d) {
              if (p_.reduced_dim[d] && l.coefficient[d] != 0) {
                Fail("%" + inst->name() + " broadcasts a reduced value other than along its rows");
              }
            }
          }
          op.kind = TileOp::Kind::kBroadcast;
          op.operands = {Value(o, om, true)};
          return Push(std::move(op));
        }
        return Value(o, om, reduced);
      }
      case HloOpcode::kTranspose: {
        const auto perm = a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
        IndexMap om(perm.size());
        for (size_t k = 0; k < perm.size(); ++k) om[perm[k]] = map[k];
        return Value(inst->operand(0), om, reduced);
      }
      case HloOpcode::kSlice: {
        const auto& ranges = a.Get<std::vector<hlo::SliceRange>>(hlo::AttrKey::kSlice);
        IndexMap om(map.size());
        for (size_t k = 0; k < map.size(); ++k) {
          om[k] = Combine({map[k]}, {ranges[k].stride}, n);
          om[k].constant += ranges[k].start;
        }
        return Value(inst->operand(0), om, reduced);
      }
      case HloOpcode::kReverse: {
        const auto dims = a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
        IndexMap om = map;
        for (int64_t d : dims) {
          om[d] = Combine({map[d]}, {-1}, n);
          om[d].constant += shape.dimensions(d) - 1;
        }
        return Value(inst->operand(0), om, reduced);
      }
      case HloOpcode::kBitcast:
      case HloOpcode::kReshape: {
        const HloInstruction* o = inst->operand(0);
        const bool physical = code == HloOpcode::kBitcast;
        Linear l = Combine(
            map, physical ? PhysicalStrides(shape) : RowMajorStrides(shape.dimensions()), n);
        int64_t o_leaf;
        if (IsLeaf(o, &o_leaf) && (physical || IsRowMajor(o->shape()))) {
          op.kind = TileOp::Kind::kLoad;
          op.tensor = static_cast<int>(o_leaf);
          op.access = l;
          return Push(std::move(op));
        }
        std::optional<IndexMap> om = UnravelInto(l, o->shape(), physical);
        if (!om) {
          // Not linear in this iteration space: the operand is computed in
          // its own, into scratch memory, and read back linearly.
          if (IsLeaf(o, &o_leaf) || computation_ == nullptr) {
            Fail("%" + inst->name() + " reshapes with an index pattern that is not linear");
          }
          throw MaterializeRequest{o};
        }
        // The tile holds the same elements under the new shape.
        op.kind = TileOp::Kind::kIdentity;
        op.operands = {Value(o, *om, reduced)};
        return Push(std::move(op));
      }
      case HloOpcode::kConcatenate: {
        const size_t k =
            static_cast<size_t>(a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions).at(0));
        std::vector<int64_t> bounds;
        int64_t at = 0;
        for (const HloInstruction* o : inst->operands()) {
          at += o->shape().dimensions(static_cast<int64_t>(k));
          bounds.push_back(at);
        }
        bounds.pop_back();
        const size_t piece = Piece(inst, map[k], bounds);
        IndexMap om = map;
        om[k].constant -= piece == 0 ? 0 : bounds[piece - 1];
        return Value(inst->operand(static_cast<int64_t>(piece)), om, reduced);
      }
      case HloOpcode::kPad: {
        const auto& config = a.Get<hlo::PaddingConfig>(hlo::AttrKey::kPadding);
        const Shape& in = inst->operand(0)->shape();
        IndexMap om = map;
        bool padding = false;
        for (size_t k = 0; k < map.size(); ++k) {
          if (config[k].interior != 0) {
            if (computation_ == nullptr) Fail("interior padding (%" + inst->name() + ")");
            throw MaterializeRequest{inst};
          }
          const int64_t start = config[k].low,
                        end = config[k].low + in.dimensions(static_cast<int64_t>(k));
          const size_t piece = Piece(inst, map[k], {start, end});
          if (piece != 1) padding = true;
          om[k].constant -= start;
        }
        if (padding) return Value(inst->operand(1), {}, reduced);
        return Value(inst->operand(0), om, reduced);
      }
      case HloOpcode::kReduce:
        return Reduce(inst, map, std::move(op));
      default:
        break;
    }
    if (!IsElementwise(*inst))
      Fail(std::string(hlo::OpcodeName(code)) + " (%" + inst->name() + ")");
    op.kind = TileOp::Kind::kElementwise;
    op.opcode = code;
    if (code == HloOpcode::kCompare) {
      const auto type = a.GetEnumOr<hlo::ComparisonType>(hlo::AttrKey::kCompareType);
      if (type == hlo::ComparisonType::kTotalOrder &&
          hlo::IsFloat(inst->operand(0)->shape().element_type())) {
        Fail("total-order comparison (%" + inst->name() + ")");
      }
      static const char* kNames[] = {"eq", "ne", "ge", "gt", "le", "lt"};
      op.direction =
          kNames[static_cast<int>(a.GetEnum<hlo::ComparisonDirection>(hlo::AttrKey::kDirection))];
    } else if (code != HloOpcode::kConvert && code != HloOpcode::kSelect &&
               code != HloOpcode::kClamp && code != HloOpcode::kIsFinite) {
      const hlo::OpcodeCategory c = hlo::OpcodeCategoryOf(code);
      FunctionClass cls =
          c == hlo::OpcodeCategory::kUnary ? FunctionClass::kUnary : FunctionClass::kBinary;
      if (FunctionName(cls, code).empty())
        Fail(std::string(hlo::OpcodeName(code)) + " (%" + inst->name() + ")");
    }
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      op.operands.push_back(Value(inst->operand(i), operand_map_same(i), reduced));
    }
    return Push(std::move(op));
  }

  int Reduce(const HloInstruction* inst, const IndexMap& map, TileOp op) {
    const HloComputation* f = inst->attributes().Get<HloComputation*>(hlo::AttrKey::kToApply);
    std::optional<HloOpcode> reducer = eval::SimpleReducer(*f);
    if (!reducer) Fail("reducer %" + f->name() + " is not add, mul, max, min, and or or");
    const HloInstruction* o = inst->operand(0);
    if (o->shape().dimensions() != full_) Fail("reductions of different shapes");
    IndexMap om(Dims());
    size_t kept = 0;
    for (size_t d = 0; d < Dims(); ++d) {
      if (p_.reduced_dim[d]) {
        om[d] = Zero(Dims());
        om[d].coefficient[d] = p_.extents[d] > 1 ? 1 : 0;
      } else {
        om[d] = map.at(kept++);
      }
    }
    op.kind = TileOp::Kind::kReduce;
    op.reduced = true;
    op.opcode = *reducer;
    op.operands = {Value(o, om, false), Value(inst->operand(1), {}, true)};
    return Push(std::move(op));
  }

  const HloInstruction& fusion_;
  TileProgram& p_;
  std::vector<int64_t> lo_, box_, full_;
  const Scratch& scratch_;
  const HloInstruction* sub_root_ = nullptr;
  PadPart pad_part_ = PadPart::kNone;
  const HloComputation* computation_ = nullptr;
  const HloInstruction* root_ = nullptr;
  int64_t constants_ = 0;
  std::map<const HloInstruction*, bool> reduced_;
  std::map<const HloInstruction*, IndexMap> forward_;
  std::map<std::tuple<const HloInstruction*, std::vector<int64_t>, bool>, int> memo_;
};

}  // namespace

namespace {

// The pieces of the program computing `sub_root` (the fusion's outputs when
// null), appended to `programs`. Throws MaterializeRequest.
bool BuildPieces(const HloInstruction& fusion, const Scratch& scratch,
                 const HloInstruction* sub_root, std::vector<TileProgram>* programs,
                 std::string* reason, PadPart pad_part = PadPart::kNone) {
  struct Box {
    std::vector<int64_t> lo, extents;
  };
  std::vector<TileProgram> pieces;
  std::vector<Box> work{Box{}};
  while (!work.empty()) {
    if (programs->size() + pieces.size() + work.size() > kMaxPieces) {
      *reason = "more than " + std::to_string(kMaxPieces) + " pieces";
      return false;
    }
    Box box = std::move(work.back());
    work.pop_back();
    TileProgram p;
    try {
      Builder b(fusion, p, box.lo, box.extents, scratch, sub_root, pad_part);
      if (!b.Run(reason)) return false;
      if (!box.lo.empty()) p.name += ".piece" + std::to_string(pieces.size());
    } catch (const SplitRequest& split) {
      if (box.lo.empty()) {
        // The whole space: the builder learnt its extents before splitting.
        TileProgram probe_program;
        Builder probe(fusion, probe_program, {}, {}, scratch, sub_root, pad_part);
        try {
          probe.Run(reason);
        } catch (const SplitRequest&) {
        }
        box.lo.assign(probe.full_extents().size(), 0);
        box.extents = probe.full_extents();
      }
      std::vector<int64_t> cuts = split.points;
      cuts.push_back(box.extents[split.dim]);
      for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
        const int64_t end = *it;
        const int64_t begin = std::next(it) == cuts.rend() ? 0 : *std::next(it);
        Box piece = box;
        piece.lo[split.dim] += begin;
        piece.extents[split.dim] = end - begin;
        if (end > begin) work.push_back(std::move(piece));
      }
      continue;
    }
    pieces.push_back(std::move(p));
  }
  for (TileProgram& p : pieces) programs->push_back(std::move(p));
  return true;
}

}  // namespace

bool BuildTileProgram(const HloInstruction& fusion, std::vector<TileProgram>* programs,
                      std::string* reason, std::vector<const HloInstruction*>* scratch_out,
                      const HloInstruction* library) {
  // A library result is read like scratch memory, and written by the library.
  Scratch scratch;
  if (library != nullptr) scratch.push_back(library);
  auto interior = [](const HloInstruction* s) {
    if (s->opcode() != HloOpcode::kPad) return false;
    for (const auto& d : s->attributes().Get<hlo::PaddingConfig>(hlo::AttrKey::kPadding)) {
      if (d.interior != 0) return true;
    }
    return false;
  };
  if (interior(&fusion)) {
    programs->clear();
    return BuildPieces(fusion, scratch, nullptr, programs, reason, PadPart::kFill) &&
           BuildPieces(fusion, scratch, nullptr, programs, reason, PadPart::kCopy);
  }
  while (true) {
    programs->clear();
    try {
      for (const HloInstruction* s : scratch) {
        if (s == library) continue;
        if (interior(s)) {
          if (!BuildPieces(fusion, scratch, s, programs, reason, PadPart::kFill) ||
              !BuildPieces(fusion, scratch, s, programs, reason, PadPart::kCopy)) {
            return false;
          }
        } else if (!BuildPieces(fusion, scratch, s, programs, reason)) {
          return false;
        }
      }
      if (!BuildPieces(fusion, scratch, nullptr, programs, reason)) return false;
      if (scratch_out != nullptr) *scratch_out = scratch;
      return true;
    } catch (const MaterializeRequest& request) {
      if (std::find(scratch.begin(), scratch.end(), request.inst) != scratch.end() ||
          scratch.size() >= 8) {
        *reason = "%" + request.inst->name() + " cannot be computed apart";
        return false;
      }
      scratch.push_back(request.inst);
      // Operands before users: a scratch value may read an earlier one.
      const auto order = fusion.called_computations().at(0)->MakeInstructionPostOrder();
      std::sort(scratch.begin(), scratch.end(),
                [&](const HloInstruction* a, const HloInstruction* b) {
                  return std::find(order.begin(), order.end(), a) <
                         std::find(order.begin(), order.end(), b);
                });
    }
  }
}

void CollapseDims(TileProgram& p) {
  auto linears = [&]() {
    std::vector<Linear*> out;
    for (TileOp& op : p.ops) {
      if (op.kind == TileOp::Kind::kLoad || op.kind == TileOp::Kind::kStore ||
          op.kind == TileOp::Kind::kIota) {
        out.push_back(&op.access);
      }
    }
    return out;
  };
  auto erase_dim = [&](size_t d) {
    for (Linear* l : linears()) l->coefficient.erase(l->coefficient.begin() + d);
    p.extents.erase(p.extents.begin() + d);
    p.reduced_dim.erase(p.reduced_dim.begin() + d);
  };
  for (size_t d = p.extents.size(); d-- > 0;) {
    if (p.extents[d] == 1) erase_dim(d);
  }
  bool merged = true;
  while (merged) {
    merged = false;
    for (size_t d = 0; d + 1 < p.extents.size(); ++d) {
      if (p.reduced_dim[d] != p.reduced_dim[d + 1]) continue;
      bool ok = true;
      for (Linear* l : linears()) {
        if (l->coefficient[d] != l->coefficient[d + 1] * p.extents[d + 1]) ok = false;
      }
      if (!ok) continue;
      p.extents[d + 1] *= p.extents[d];
      erase_dim(d);
      merged = true;
      break;
    }
  }
}

std::string TileProgramToText(const TileProgram& p) {
  std::ostringstream os;
  os << "tile program " << p.name << " over [";
  for (size_t d = 0; d < p.extents.size(); ++d) {
    os << (d ? ", " : "") << p.extents[d] << (p.reduced_dim[d] ? "r" : "");
  }
  os << "]\n";
  auto lin = [&](const Linear& l) {
    std::ostringstream s;
    for (size_t d = 0; d < l.coefficient.size(); ++d) {
      if (l.coefficient[d] != 0) s << l.coefficient[d] << "*i" << d << " + ";
    }
    s << l.constant;
    return s.str();
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const TileOp& op = p.ops[i];
    os << "  t" << i << (op.reduced ? " (reduced)" : "") << " = ";
    switch (op.kind) {
      case TileOp::Kind::kLoad:
        os << "load " << p.tensors[op.tensor].name << "[" << lin(op.access) << "]";
        break;
      case TileOp::Kind::kStore:
        os << "store " << p.tensors[op.tensor].name << "[" << lin(op.access) << "]";
        break;
      case TileOp::Kind::kFill:
        os << "fill " << op.literal.ElementToString(0);
        break;
      case TileOp::Kind::kIota:
        os << "iota " << lin(op.access);
        break;
      case TileOp::Kind::kElementwise:
        os << hlo::OpcodeName(op.opcode);
        break;
      case TileOp::Kind::kReduce:
        os << "reduce " << hlo::OpcodeName(op.opcode);
        break;
      case TileOp::Kind::kBroadcast:
        os << "broadcast";
        break;
      case TileOp::Kind::kIdentity:
        os << "identity";
        break;
    }
    for (int o : op.operands) os << " t" << o;
    os << "\n";
  }
  return os.str();
}

}  // namespace uir::igraph
