// algsimp, shape family: reshape, transpose, broadcast, slice, concatenate,
// pad, convert, copy and reverse that do nothing, chains that compose into
// one op, and dynamic-slices at constant starts (slices).
#include <algorithm>

#include "passes/algsimp/algsimp.h"

namespace uir::passes::algsimp {
namespace {

using hlo::AttributeMap;
using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;

HloInstruction* Same(HloInstruction* x, const HloInstruction* inst) {
  return x != nullptr && x->shape() == inst->shape() ? x : nullptr;
}

const std::vector<int64_t>& Dims(const HloInstruction* i) {
  return i->attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions);
}

bool IsIota(const std::vector<int64_t>& v) {
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

HloInstruction* WithDims(HloOpcode op, HloInstruction* x, std::vector<int64_t> dims,
                         const HloInstruction* like, hlo::ComputationBuilder& b) {
  AttributeMap attrs;
  attrs.Set(AttrKey::kDimensions, std::move(dims));
  return b.Add(op, {x}, std::move(attrs), like->shape());
}

// reshape to the operand's own shape -> operand; reshape(reshape(x)) -> reshape(x).
HloInstruction* Reshape(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kReshape) return nullptr;
  HloInstruction* x = i->operand(0);
  if (HloInstruction* same = Same(x, i)) return same;
  if (x->opcode() == HloOpcode::kReshape) {
    HloInstruction* inner = x->operand(0);
    if (HloInstruction* same = Same(inner, i)) return same;
    return b.Add(HloOpcode::kReshape, {inner}, {}, i->shape());
  }
  return nullptr;
}

// Identity permutation -> operand; transpose(transpose(x)) -> one transpose.
HloInstruction* Transpose(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kTranspose) return nullptr;
  HloInstruction* x = i->operand(0);
  if (IsIota(Dims(i))) return Same(x, i);
  if (x->opcode() != HloOpcode::kTranspose) return nullptr;
  const std::vector<int64_t>& outer = Dims(i);
  const std::vector<int64_t>& inner = Dims(x);
  std::vector<int64_t> composed(outer.size());
  for (size_t k = 0; k < outer.size(); ++k) composed[k] = inner[outer[k]];
  if (IsIota(composed)) return Same(x->operand(0), i);
  return WithDims(HloOpcode::kTranspose, x->operand(0), std::move(composed), i, b);
}

// Broadcast to the same shape in order -> operand; broadcast(broadcast(x)) -> one.
HloInstruction* Broadcast(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kBroadcast) return nullptr;
  HloInstruction* x = i->operand(0);
  if (x->shape().rank() == i->shape().rank() && IsIota(Dims(i))) {
    if (HloInstruction* same = Same(x, i)) return same;
  }
  if (x->opcode() != HloOpcode::kBroadcast) return nullptr;
  const std::vector<int64_t>& outer = Dims(i);
  const std::vector<int64_t>& inner = Dims(x);
  std::vector<int64_t> composed;
  for (int64_t d : inner) composed.push_back(outer[d]);
  return WithDims(HloOpcode::kBroadcast, x->operand(0), std::move(composed), i, b);
}

// A slice of everything -> operand; slice(slice(x)) -> one slice.
HloInstruction* Slice(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kSlice) return nullptr;
  HloInstruction* x = i->operand(0);
  const auto& ranges = i->attributes().Get<std::vector<hlo::SliceRange>>(AttrKey::kSlice);
  bool full = true;
  for (size_t d = 0; d < ranges.size(); ++d) {
    full = full && ranges[d].start == 0 && ranges[d].stride == 1 &&
           ranges[d].limit == x->shape().dimensions(static_cast<int64_t>(d));
  }
  if (full) return Same(x, i);
  if (x->opcode() != HloOpcode::kSlice) return nullptr;
  const auto& inner = x->attributes().Get<std::vector<hlo::SliceRange>>(AttrKey::kSlice);
  std::vector<hlo::SliceRange> composed(ranges.size());
  for (size_t d = 0; d < ranges.size(); ++d) {
    const int64_t count = i->shape().dimensions(static_cast<int64_t>(d));
    hlo::SliceRange& r = composed[d];
    r.stride = inner[d].stride * ranges[d].stride;
    r.start = inner[d].start + ranges[d].start * inner[d].stride;
    r.limit = count == 0 ? r.start : r.start + (count - 1) * r.stride + 1;
  }
  AttributeMap attrs;
  attrs.Set(AttrKey::kSlice, std::move(composed));
  return b.Add(HloOpcode::kSlice, {x->operand(0)}, std::move(attrs), i->shape());
}

// A dynamic-slice whose start indices are all constants -> the slice it
// reads: each start clamped into [0, dimension - size], as it would be.
HloInstruction* ConstantDynamicSlice(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kDynamicSlice) return nullptr;
  HloInstruction* x = i->operand(0);
  if (!x->shape().IsArray() || i->operand_count() != x->shape().rank() + 1) return nullptr;
  std::vector<hlo::SliceRange> ranges;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    const HloInstruction* start = i->operand(d + 1);
    if (start->opcode() != HloOpcode::kConstant || !start->has_literal()) return nullptr;
    const PrimitiveType t = start->shape().element_type();
    const int64_t size = i->shape().dimensions(d);
    const int64_t last = x->shape().dimensions(d) - size;
    int64_t at = 0;
    if (IsUnsigned(t)) {
      at = static_cast<int64_t>(
          std::min<uint64_t>(start->literal().GetUint64(0), static_cast<uint64_t>(last)));
    } else {
      at = std::clamp<int64_t>(start->literal().GetInt64(0), 0, last);
    }
    ranges.push_back({at, at + size, 1});
  }
  AttributeMap attrs;
  attrs.Set(AttrKey::kSlice, std::move(ranges));
  return b.Add(HloOpcode::kSlice, {x}, std::move(attrs), i->shape());
}

// concatenate(x) -> x; empty operands dropped.
HloInstruction* Concatenate(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kConcatenate) return nullptr;
  if (i->operand_count() == 1) return Same(i->operand(0), i);
  std::vector<HloInstruction*> kept;
  for (HloInstruction* o : i->operands()) {
    if (o->shape().element_count() != 0) kept.push_back(o);
  }
  if (kept.empty() || kept.size() == i->operands().size()) return nullptr;
  if (kept.size() == 1) return Same(kept[0], i);
  AttributeMap attrs;
  attrs.Set(AttrKey::kDimensions, Dims(i));
  return b.Add(HloOpcode::kConcatenate, kept, std::move(attrs), i->shape());
}

// Pad by nothing -> operand.
HloInstruction* Pad(HloInstruction* i, hlo::ComputationBuilder&) {
  if (i->opcode() != HloOpcode::kPad) return nullptr;
  for (const hlo::PaddingDim& p : i->attributes().Get<hlo::PaddingConfig>(AttrKey::kPadding)) {
    if (p.low != 0 || p.high != 0 || p.interior != 0) return nullptr;
  }
  return Same(i->operand(0), i);
}

// A pad that both removes (negative low or high) and inserts (interior)
// -> slice(pad) with the removal done by the slice, as kernels write a
// pad's interior only when no edge cuts into it.
HloInstruction* CuttingInteriorPad(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kPad || !i->shape().IsArray()) return nullptr;
  const hlo::PaddingConfig& config = i->attributes().Get<hlo::PaddingConfig>(AttrKey::kPadding);
  bool interior = false, negative = false;
  for (const hlo::PaddingDim& p : config) {
    interior = interior || p.interior > 0;
    negative = negative || p.low < 0 || p.high < 0;
  }
  if (!interior || !negative) return nullptr;
  hlo::PaddingConfig grown = config;
  std::vector<hlo::SliceRange> cut(config.size());
  std::vector<int64_t> dims;
  const hlo::Shape& x = i->operand(0)->shape();
  for (size_t d = 0; d < config.size(); ++d) {
    grown[d].low = std::max<int64_t>(config[d].low, 0);
    grown[d].high = std::max<int64_t>(config[d].high, 0);
    const int64_t n = x.dimensions(static_cast<int64_t>(d));
    dims.push_back(grown[d].low + grown[d].high + n +
                   std::max<int64_t>(n - 1, 0) * grown[d].interior);
    cut[d].start = grown[d].low - config[d].low;
    cut[d].limit = cut[d].start + i->shape().dimensions(static_cast<int64_t>(d));
    cut[d].stride = 1;
  }
  AttributeMap pad_attrs;
  pad_attrs.Set(AttrKey::kPadding, std::move(grown));
  HloInstruction* padded = b.Add(HloOpcode::kPad, {i->operand(0), i->operand(1)},
                                 std::move(pad_attrs), hlo::Shape(i->shape().element_type(), dims));
  AttributeMap slice_attrs;
  slice_attrs.Set(AttrKey::kSlice, std::move(cut));
  return b.Add(HloOpcode::kSlice, {padded}, std::move(slice_attrs), i->shape());
}

// The unsigned integer type of `bits` (8, 16, 32 or 64) bits.
PrimitiveType UnsignedOf(int bits) {
  switch (bits) {
    case 8:
      return PrimitiveType::kU8;
    case 16:
      return PrimitiveType::kU16;
    case 32:
      return PrimitiveType::kU32;
    default:
      return PrimitiveType::kU64;
  }
}

// A bitcast-convert between sub-byte integers and a whole-byte type
// (s4[..., 2] <-> s8[...]; element j of the minor dimension in bits
// [j*w, (j+1)*w), little-endian, as XLA packs them) -> the packing written
// out: converts, masks, shifts and ors (or their inverse and a
// concatenate), which kernels compile.
HloInstruction* SubBytePacking(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kBitcastConvert || !i->shape().IsArray()) return nullptr;
  HloInstruction* x = i->operand(0);
  const hlo::Shape& in = x->shape();
  const hlo::Shape& out = i->shape();
  const bool packing = in.rank() == out.rank() + 1;
  const hlo::Shape& narrow = packing ? in : out;
  const hlo::Shape& wide = packing ? out : in;
  const int w = BitWidth(narrow.element_type());
  const int bits = BitWidth(wide.element_type());
  if (narrow.rank() != wide.rank() + 1 || !IsInteger(narrow.element_type()) || w >= 8 ||
      !IsRegisterBitcast(wide.element_type(), UnsignedOf(bits)) ||
      narrow.dimensions(narrow.rank() - 1) != bits / w) {
    return nullptr;
  }
  const PrimitiveType u = UnsignedOf(bits);
  const std::vector<int64_t>& dims = wide.dimensions();
  auto splat = [&](double v) {
    return b.Broadcast(b.Constant(hlo::ScalarLiteral(u, v)), dims, {});
  };
  const int64_t k = bits / w;
  const int64_t minor = narrow.rank() - 1;
  if (packing) {
    HloInstruction* acc = nullptr;
    for (int64_t j = 0; j < k; ++j) {
      std::vector<hlo::SliceRange> ranges(static_cast<size_t>(narrow.rank()));
      for (int64_t d = 0; d < narrow.rank(); ++d) {
        ranges[static_cast<size_t>(d)] = {d == minor ? j : 0,
                                          d == minor ? j + 1 : narrow.dimensions(d), 1};
      }
      std::vector<int64_t> one = dims;
      one.push_back(1);
      AttributeMap attrs;
      attrs.Set(AttrKey::kSlice, std::move(ranges));
      HloInstruction* part =
          b.Add(HloOpcode::kSlice, {x}, std::move(attrs), hlo::Shape(narrow.element_type(), one));
      HloInstruction* bits_j = b.Binary(HloOpcode::kAnd, b.Convert(b.Reshape(part, dims), u),
                                        splat(static_cast<double>((1u << w) - 1)));
      if (j > 0)
        bits_j = b.Binary(HloOpcode::kShiftLeft, bits_j, splat(static_cast<double>(w * j)));
      acc = acc == nullptr ? bits_j : b.Binary(HloOpcode::kOr, acc, bits_j);
    }
    if (u == out.element_type()) return acc;
    return b.Add(HloOpcode::kBitcastConvert, {acc}, {}, out);
  }
  HloInstruction* v =
      u == in.element_type() ? x : b.Add(HloOpcode::kBitcastConvert, {x}, {}, hlo::Shape(u, dims));
  std::vector<HloInstruction*> parts;
  std::vector<int64_t> one = dims;
  one.push_back(1);
  for (int64_t j = 0; j < k; ++j) {
    HloInstruction* shifted =
        j == 0 ? v : b.Binary(HloOpcode::kShiftRightLogical, v, splat(static_cast<double>(w * j)));
    HloInstruction* low =
        b.Binary(HloOpcode::kAnd, shifted, splat(static_cast<double>((1u << w) - 1)));
    parts.push_back(b.Reshape(b.Convert(low, out.element_type()), one));
  }
  AttributeMap attrs;
  attrs.Set(AttrKey::kDimensions, std::vector<int64_t>{minor});
  return b.Add(HloOpcode::kConcatenate, parts, std::move(attrs), out);
}

// convert to the same type, copy to the same layout -> operand.
HloInstruction* Identity(HloInstruction* i, hlo::ComputationBuilder&) {
  if (i->opcode() != HloOpcode::kConvert && i->opcode() != HloOpcode::kCopy) return nullptr;
  return Same(i->operand(0), i);
}

// Reversing no dimension, or only dimensions of size 1 -> operand.
HloInstruction* Reverse(HloInstruction* i, hlo::ComputationBuilder&) {
  if (i->opcode() != HloOpcode::kReverse) return nullptr;
  for (int64_t d : Dims(i)) {
    if (i->shape().dimensions(d) > 1) return nullptr;
  }
  return Same(i->operand(0), i);
}

}  // namespace

// bitcast(x) with x's shape and layout is x; bitcast(bitcast(x)) is one
// bitcast of x (or x itself when it already has the result's shape).
HloInstruction* Bitcast(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kBitcast) return nullptr;
  HloInstruction* x = i->operand(0);
  if (HloInstruction* same = Same(x, i)) return same;
  if (x->opcode() != HloOpcode::kBitcast) return nullptr;
  if (HloInstruction* same = Same(x->operand(0), i)) return same;
  return b.Add(HloOpcode::kBitcast, {x->operand(0)}, {}, i->shape());
}

const std::vector<Rule>& ShapeRules() {
  static const std::vector<Rule> kRules = {
      Reshape, Transpose, Broadcast,          Slice,          Concatenate,          Pad, Identity,
      Reverse, Bitcast,   CuttingInteriorPad, SubBytePacking, ConstantDynamicSlice,
  };
  return kRules;
}

}  // namespace uir::passes::algsimp
