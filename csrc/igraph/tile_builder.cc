// The tile-program builder: iteration spaces, boxes and pieces, forward
// index maps of reductions, the index arithmetic of reshapes.
#include "igraph/tile_builder.h"

#include <algorithm>
#include <set>

namespace uir::igraph::detail {

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
  // An array of no elements: no index reaches it, any map will do.
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return digits;
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

BuildOutcome Builder::Run() {
  BuildOutcome out;
  try {
    Build();
  } catch (const SplitRequest& split) {
    out.kind = BuildOutcome::Kind::kSplit;
    out.split = split;
    out.full_extents = full_;
  } catch (const MaterializeRequest& request) {
    out.kind = BuildOutcome::Kind::kMaterialize;
    out.value = request.inst;
  } catch (const std::string& why) {
    out.kind = BuildOutcome::Kind::kRefusal;
    out.reason = why;
  }
  return out;
}

bool Builder::IsLeaf(const HloInstruction* inst, int64_t* index) const {
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

void Builder::Build() {
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
    AsParts(t);
    p_.tensors.push_back(std::move(t));
  }
  for (size_t k = 0; k < scratch_.size(); ++k) {
    TileTensor t;
    t.kind = TileTensor::Kind::kScratch;
    t.index = static_cast<int64_t>(k);
    t.name = scratch_[k]->name();
    t.dtype = scratch_[k]->shape().element_type();
    t.elements = scratch_[k]->shape().element_count();
    AsParts(t);
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
      AsParts(t);
      p_.tensors.push_back(std::move(t));
      tensor = static_cast<int>(p_.tensors.size()) - 1;
    }
    // A complex output: its two parts, each stored where it lies.
    const bool complex = IsComplex(o->shape().element_type());
    for (int part = complex ? 0 : -1; part < (complex ? 2 : 0); ++part) {
      const int value = PartOf(o, maps[k], reduced, part);
      part_ = part;
      TileOp store;
      store.kind = TileOp::Kind::kStore;
      store.reduced = reduced;
      store.dtype = PartType(o->shape().element_type());
      store.tensor = tensor;
      store.access = Parted(Combine(maps[k], PhysicalStrides(o->shape()), Dims()), o->shape());
      store.operands = {value};
      store.source = o->name();
      p_.ops.push_back(std::move(store));
      part_ = -1;
    }
  }
}

void Builder::InteriorPad() {
  const HloInstruction* pad = sub_root_ != nullptr ? sub_root_ : root_;
  if (IsComplex(pad->shape().element_type())) Fail("complex values (%" + pad->name() + ")");
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

void Builder::ApplyBox() {
  full_ = p_.extents;
  if (lo_.empty()) {
    lo_.assign(Dims(), 0);
    box_ = p_.extents;
  }
  p_.extents = box_;
}

IndexMap Builder::Identity() const {
  IndexMap m(Dims(), Zero(Dims()));
  for (size_t d = 0; d < Dims(); ++d) {
    m[d].coefficient[d] = p_.extents[d] > 1 ? 1 : 0;  // a size-1 dim is always 0
    m[d].constant = lo_[d];
  }
  return m;
}

std::pair<int64_t, int64_t> Builder::Range(const Linear& l) const {
  int64_t lo = l.constant, hi = l.constant;
  for (size_t d = 0; d < Dims(); ++d) {
    const int64_t span = l.coefficient[d] * (p_.extents[d] - 1);
    lo += std::min<int64_t>(0, span);
    hi += std::max<int64_t>(0, span);
  }
  return {lo, hi};
}

size_t Builder::Piece(const HloInstruction* inst, const Linear& l,
                      const std::vector<int64_t>& bounds) {
  const auto [lo, hi] = Range(l);
  size_t piece = 0;
  while (piece < bounds.size() && bounds[piece] <= lo) ++piece;
  if (piece == bounds.size() || bounds[piece] > hi) return piece;
  int dim = -1;
  for (size_t d = 0; d < Dims(); ++d) {
    if (l.coefficient[d] != 0 && p_.extents[d] > 1) {
      if (dim >= 0) {
        // Its pieces are not boxes of this iteration space (a reshape
        // folds several dims into its index): it is computed first, in
        // its own, into scratch memory.
        if (computation_ != nullptr && inst != sub_root_) throw MaterializeRequest{inst};
        Fail("%" + inst->name() + " is indexed by more than one dim");
      }
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

std::vector<const HloInstruction*> Builder::Reachable() const {
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

bool Builder::IsReduced(const HloInstruction* inst) {
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

void Builder::ForwardMaps() {
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

std::optional<IndexMap> Builder::Forward(const HloInstruction* inst,
                                         const std::vector<int64_t>& red) {
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

std::optional<IndexMap> Builder::UnravelInto(const Linear& l, const Shape& shape, bool physical) {
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

}  // namespace uir::igraph::detail
