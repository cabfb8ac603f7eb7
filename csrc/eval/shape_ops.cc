// Data movement: every op computes, for each output element, the linear index
// of the input element it copies, then copies bytes.
#include "eval/shape_ops.h"

#include <algorithm>
#include <cstring>

#include "eval/typed.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

size_t ElementBytes(const Literal& l) {
  return static_cast<size_t>(StorageBytes(l.shape().element_type()));
}

void CopyElement(const Literal& from, int64_t i, Literal& to, int64_t j, size_t size) {
  std::memcpy(to.mutable_bytes().data() + j * size, from.bytes().data() + i * size, size);
}

Literal Output(const HloInstruction& inst) {
  return MakeLiteral(inst.shape().element_type(), inst.shape().dimensions());
}

Literal Broadcast(const HloInstruction& inst, const Literal& x) {
  Literal out = Output(inst);
  const auto dims = inst.attributes()
                        .GetOr<std::vector<int64_t>>(AttrKey::kDimensions)
                        .value_or(std::vector<int64_t>{});
  const auto in_strides = Strides(x.shape().dimensions());
  const size_t size = ElementBytes(x);
  ForEachIndex(out.shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
      // A size-1 operand dimension stretches over its output dimension.
      if (x.shape().dimensions(static_cast<int64_t>(i)) != 1) src += idx[dims[i]] * in_strides[i];
    }
    CopyElement(x, src, out, linear, size);
  });
  return out;
}

// x transposed by `perm` (result dim i is x's dim perm[i]) into `out`.
void PermuteInto(const Literal& x, const std::vector<int64_t>& perm, Literal& out) {
  const auto in_strides = Strides(x.shape().dimensions());
  const size_t size = ElementBytes(x);
  ForEachIndex(out.shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i) src += idx[i] * in_strides[perm[i]];
    CopyElement(x, src, out, linear, size);
  });
}

// Dimensions from major to minor in memory under `shape`'s layout (the
// default layout when it has none).
std::vector<int64_t> MajorToMinor(const HloInstruction& inst, const hlo::Shape& shape) {
  std::vector<int64_t> order;
  if (!shape.has_layout()) {
    for (int64_t i = 0; i < shape.rank(); ++i) order.push_back(i);
    return order;
  }
  if (!shape.layout().tiles.empty()) {
    throw UnimplementedError("the evaluator cannot bitcast tiled layouts (%" + inst.name() + ")");
  }
  const auto& m = shape.layout().minor_to_major;
  order.assign(m.rbegin(), m.rend());
  return order;
}

Literal Reinterpret(const HloInstruction& inst, const Literal& x);

// bitcast: the operand's bytes in memory, read under the result's layout.
// Both sides go through their physical (major-to-minor) order.
Literal Bitcast(const HloInstruction& inst, const Literal& x) {
  const hlo::Shape& in_shape = inst.operand(0)->shape();
  const hlo::Shape& out_shape = inst.shape();
  const auto in_order = MajorToMinor(inst, in_shape);
  const auto out_order = MajorToMinor(inst, out_shape);
  auto identity = [](const std::vector<int64_t>& o) {
    for (size_t i = 0; i < o.size(); ++i) {
      if (o[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  if (identity(in_order) && identity(out_order)) return Reinterpret(inst, x);
  std::vector<int64_t> in_phys, out_phys;
  for (int64_t d : in_order) in_phys.push_back(x.shape().dimensions(d));
  for (int64_t d : out_order) out_phys.push_back(out_shape.dimensions(d));
  Literal physical = MakeLiteral(x.shape().element_type(), in_phys);
  PermuteInto(x, in_order, physical);
  // Reinterpret as the result's physical shape, then back to logical order.
  const Literal reread = Reshaped(Reinterpret(inst, physical), out_phys);
  std::vector<int64_t> inverse(out_order.size());
  for (size_t i = 0; i < out_order.size(); ++i) inverse[out_order[i]] = static_cast<int64_t>(i);
  Literal out = Output(inst);
  PermuteInto(reread, inverse, out);
  return out;
}

Literal Transpose(const HloInstruction& inst, const Literal& x) {
  Literal out = Output(inst);
  PermuteInto(x, inst.attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions), out);
  return out;
}

Literal Slice(const HloInstruction& inst, const Literal& x) {
  Literal out = Output(inst);
  const auto& ranges = inst.attributes().Get<std::vector<hlo::SliceRange>>(AttrKey::kSlice);
  const auto in_strides = Strides(x.shape().dimensions());
  const size_t size = ElementBytes(x);
  ForEachIndex(out.shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = 0;
    for (size_t i = 0; i < ranges.size(); ++i)
      src += (ranges[i].start + idx[i] * ranges[i].stride) * in_strides[i];
    CopyElement(x, src, out, linear, size);
  });
  return out;
}

Literal Concatenate(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  Literal out = Output(inst);
  const int64_t d = inst.attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions)[0];
  const auto out_strides = Strides(out.shape().dimensions());
  const size_t size = ElementBytes(out);
  int64_t offset = 0;
  for (const Literal* x : ops) {
    ForEachIndex(x->shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
      int64_t dst = 0;
      for (size_t i = 0; i < idx.size(); ++i)
        dst += (idx[i] + (static_cast<int64_t>(i) == d ? offset : 0)) * out_strides[i];
      CopyElement(*x, linear, out, dst, size);
    });
    offset += x->shape().dimensions(d);
  }
  return out;
}

Literal Pad(const HloInstruction& inst, const Literal& x, const Literal& value) {
  Literal out = Output(inst);
  const auto& padding = inst.attributes().Get<hlo::PaddingConfig>(AttrKey::kPadding);
  const size_t size = ElementBytes(x);
  for (int64_t i = 0; i < out.element_count(); ++i) CopyElement(value, 0, out, i, size);
  const auto out_strides = Strides(out.shape().dimensions());
  const auto& out_dims = out.shape().dimensions();
  ForEachIndex(x.shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t dst = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      // Negative low/high padding crops; elements that land outside vanish.
      const int64_t pos = padding[i].low + idx[i] * (padding[i].interior + 1);
      if (pos < 0 || pos >= out_dims[i]) return;
      dst += pos * out_strides[i];
    }
    CopyElement(x, linear, out, dst, size);
  });
  return out;
}

Literal Reverse(const HloInstruction& inst, const Literal& x) {
  Literal out = Output(inst);
  const auto dims = inst.attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions);
  const auto strides = Strides(x.shape().dimensions());
  const auto& shape = x.shape().dimensions();
  const size_t size = ElementBytes(x);
  ForEachIndex(shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      const bool flip = std::find(dims.begin(), dims.end(), static_cast<int64_t>(i)) != dims.end();
      src += (flip ? shape[i] - 1 - idx[i] : idx[i]) * strides[i];
    }
    CopyElement(x, src, out, linear, size);
  });
  return out;
}

Literal Iota(const HloInstruction& inst) {
  Literal out = Output(inst);
  const int64_t d = inst.attributes().Get<int64_t>(AttrKey::kIotaDimension);
  const bool integral =
      IsInteger(out.shape().element_type()) || out.shape().element_type() == PrimitiveType::kPred;
  ForEachIndex(out.shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    if (integral) {
      out.SetInt64(linear, idx[d]);
    } else {
      out.SetDouble(linear, static_cast<double>(idx[d]));
    }
  });
  return out;
}

// Start indices of dynamic-slice/update-slice, clamped so the window fits.
std::vector<int64_t> ClampedStarts(const std::vector<const Literal*>& ops, size_t first,
                                   const std::vector<int64_t>& operand_dims,
                                   const std::vector<int64_t>& window) {
  std::vector<int64_t> starts(operand_dims.size(), 0);
  const bool vector_form =
      ops.size() == first + 1 && ops[first]->shape().rank() == 1 && operand_dims.size() != 1;
  UIR_CHECK(vector_form || ops.size() == first + operand_dims.size())
      << "dynamic slice with " << ops.size() - first << " start indices for rank "
      << operand_dims.size();
  for (size_t i = 0; i < operand_dims.size(); ++i) {
    UIR_CHECK(window[i] <= operand_dims[i]) << "dynamic slice window exceeds the operand";
    const int64_t s =
        vector_form ? ops[first]->GetInt64(static_cast<int64_t>(i)) : ops[first + i]->GetInt64(0);
    starts[i] = std::clamp<int64_t>(s, 0, operand_dims[i] - window[i]);
  }
  return starts;
}

Literal DynamicSlice(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  Literal out = Output(inst);
  const Literal& x = *ops[0];
  const auto starts = ClampedStarts(ops, 1, x.shape().dimensions(), out.shape().dimensions());
  const auto strides = Strides(x.shape().dimensions());
  const size_t size = ElementBytes(x);
  ForEachIndex(out.shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = 0;
    for (size_t i = 0; i < idx.size(); ++i) src += (starts[i] + idx[i]) * strides[i];
    CopyElement(x, src, out, linear, size);
  });
  return out;
}

Literal DynamicUpdateSlice(const std::vector<const Literal*>& ops) {
  Literal out = *ops[0];
  DynamicUpdateSliceInto(out, ops);
  return out;
}

}  // namespace

void DynamicUpdateSliceInto(Literal& out, const std::vector<const Literal*>& ops) {
  const Literal& update = *ops[1];
  const auto starts = ClampedStarts(ops, 2, out.shape().dimensions(), update.shape().dimensions());
  const auto strides = Strides(out.shape().dimensions());
  const size_t size = ElementBytes(out);
  ForEachIndex(update.shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t dst = 0;
    for (size_t i = 0; i < idx.size(); ++i) dst += (starts[i] + idx[i]) * strides[i];
    CopyElement(update, linear, out, dst, size);
  });
}

namespace {

// bitcast-convert: the same bits read as another type. Sub-byte types
// (stored one element per byte) are packed and unpacked as XLA lays them
// out: element 0 in the lowest bits.
Literal Reinterpret(const HloInstruction& inst, const Literal& x) {
  Literal out = Output(inst);
  const int in_bits = BitWidth(x.shape().element_type());
  const int out_bits = BitWidth(out.shape().element_type());
  if (x.element_count() * in_bits != out.element_count() * out_bits) {
    throw UnimplementedError("the evaluator cannot reinterpret " + x.shape().Describe() + " as " +
                             out.shape().Describe() + " (%" + inst.name() + ")");
  }
  if (in_bits % 8 == 0 && out_bits % 8 == 0) {
    if (!out.bytes().empty())
      std::memcpy(out.mutable_bytes().data(), x.bytes().data(), out.bytes().size());
    return out;
  }
  // Bit by bit, little-endian, through a packed stream.
  std::vector<uint8_t> packed(static_cast<size_t>((x.element_count() * in_bits + 7) / 8), 0);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const uint64_t v = x.GetBits(i);
    for (int b = 0; b < in_bits; ++b) {
      const int64_t bit = i * in_bits + b;
      if ((v >> b) & 1) packed[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
    }
  }
  for (int64_t i = 0; i < out.element_count(); ++i) {
    uint64_t v = 0;
    for (int b = 0; b < out_bits; ++b) {
      const int64_t bit = i * out_bits + b;
      v |= static_cast<uint64_t>((packed[bit / 8] >> (bit % 8)) & 1) << b;
    }
    out.SetBits(i, v);
  }
  NormalizeSubByte(out);  // sign-extends signed sub-byte values
  return out;
}

// gather with XLA's full dimension numbers: every output index splits into
// batch dims (which pick a start-index vector) and offset dims (which walk the
// slice); starts are clamped so the slice stays inside the operand.
Literal Gather(const HloInstruction& inst, const Literal& operand, const Literal& indices) {
  Literal out = Output(inst);
  GatherBuffers(inst, operand.bytes().data(), indices.bytes().data(), out.mutable_bytes().data());
  return out;
}

}  // namespace

Literal EvalShapeOp(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast:
      return Broadcast(inst, *ops[0]);
    case HloOpcode::kBitcast:
      return Bitcast(inst, *ops[0]);
    case HloOpcode::kReshape:
    case HloOpcode::kBitcastConvert:
      return Reinterpret(inst, *ops[0]);
    case HloOpcode::kTranspose:
      return Transpose(inst, *ops[0]);
    case HloOpcode::kSlice:
      return Slice(inst, *ops[0]);
    case HloOpcode::kConcatenate:
      return Concatenate(inst, ops);
    case HloOpcode::kPad:
      return Pad(inst, *ops[0], *ops[1]);
    case HloOpcode::kReverse:
      return Reverse(inst, *ops[0]);
    case HloOpcode::kIota:
      return Iota(inst);
    case HloOpcode::kDynamicSlice:
      return DynamicSlice(inst, ops);
    case HloOpcode::kDynamicUpdateSlice:
      return DynamicUpdateSlice(ops);
    case HloOpcode::kGather:
      return Gather(inst, *ops[0], *ops[1]);
    default:
      break;
  }
  throw InternalError("EvalShapeOp called on " + std::string(hlo::OpcodeName(inst.opcode())));
}

void GatherBuffers(const HloInstruction& inst, const uint8_t* operand, const uint8_t* indices,
                   uint8_t* out) {
  const auto& a = inst.attributes();
  auto ints = [&](AttrKey k) {
    return a.GetOr<std::vector<int64_t>>(k).value_or(std::vector<int64_t>{});
  };
  const auto offset_dims = ints(AttrKey::kOffsetDims);
  const auto collapsed = ints(AttrKey::kCollapsedSliceDims);
  const auto start_index_map = ints(AttrKey::kStartIndexMap);
  const auto operand_batching = ints(AttrKey::kOperandBatchingDims);
  const auto indices_batching = ints(AttrKey::kStartIndicesBatchingDims);
  const auto slice_sizes = ints(AttrKey::kSliceSizes);
  const int64_t index_vector_dim = a.Get<int64_t>(AttrKey::kIndexVectorDim);
  const hlo::Shape& operand_shape = inst.operand(0)->shape();
  const hlo::Shape& indices_shape = inst.operand(1)->shape();
  const auto& od = operand_shape.dimensions();
  const auto& id = indices_shape.dimensions();
  const auto o_strides = Strides(od);
  const auto i_strides = Strides(id);
  const auto size = static_cast<size_t>(StorageBytes(operand_shape.element_type()));
  const PrimitiveType index_type = indices_shape.element_type();
  auto index_at = [&](int64_t pos) { return IndexAt(indices, pos, index_type); };
  const int64_t rank = operand_shape.rank();
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  // A slice of size 0 in any dimension (XLA allows it even for collapsed
  // dimensions) selects no operand element: the result is zeros.
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] == 0) {
      const auto bytes = static_cast<size_t>(inst.shape().element_count()) * size;
      if (bytes > 0) std::memset(out, 0, bytes);  // an empty result may have no memory
      return;
    }
  }
  // Operand dims that offset dims walk, in order.
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!contains(collapsed, d) && !contains(operand_batching, d)) window_dims.push_back(d);
  }
  // Indices dims other than index_vector_dim, in order: the batch dims.
  std::vector<int64_t> batch_index_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(id.size()); ++d) {
    if (d != index_vector_dim) batch_index_dims.push_back(d);
  }
  // Per output dim: the operand dim it offsets, or -1 for a batch dim.
  const auto& out_dims = inst.shape().dimensions();
  std::vector<int64_t> offset_of(out_dims.size(), -1);
  for (size_t i = 0, w = 0; i < out_dims.size(); ++i) {
    if (contains(offset_dims, static_cast<int64_t>(i))) offset_of[i] = window_dims[w++];
  }
  const int64_t index_len =
      index_vector_dim < static_cast<int64_t>(id.size()) ? id[index_vector_dim] : 1;
  std::vector<int64_t> start(static_cast<size_t>(rank)), batch(batch_index_dims.size());
  std::vector<int64_t> offset(static_cast<size_t>(rank));
  ForEachIndex(out_dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
    size_t b = 0;
    std::fill(offset.begin(), offset.end(), 0);
    for (size_t i = 0; i < idx.size(); ++i) {
      if (offset_of[i] >= 0) {
        offset[static_cast<size_t>(offset_of[i])] = idx[i];
      } else {
        batch[b++] = idx[i];
      }
    }
    std::fill(start.begin(), start.end(), 0);
    int64_t base = 0;
    for (size_t i = 0; i < batch_index_dims.size(); ++i)
      base += batch[i] * i_strides[batch_index_dims[i]];
    for (int64_t k = 0; k < index_len && k < static_cast<int64_t>(start_index_map.size()); ++k) {
      const int64_t pos = base + (index_vector_dim < static_cast<int64_t>(id.size())
                                      ? k * i_strides[index_vector_dim]
                                      : 0);
      start[start_index_map[k]] = index_at(pos);
    }
    for (size_t i = 0; i < operand_batching.size(); ++i) {
      // The batch coordinate of the paired indices dim.
      const int64_t idim = indices_batching[i];
      const auto it = std::find(batch_index_dims.begin(), batch_index_dims.end(), idim);
      start[operand_batching[i]] = batch[static_cast<size_t>(it - batch_index_dims.begin())];
    }
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t s = std::clamp<int64_t>(start[d], 0, od[d] - slice_sizes[d]);
      src += (s + offset[d]) * o_strides[d];
    }
    std::memcpy(out + linear * static_cast<int64_t>(size),
                operand + src * static_cast<int64_t>(size), size);
  });
}

}  // namespace uir::eval
