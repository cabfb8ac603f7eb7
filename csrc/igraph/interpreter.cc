// Executes iGraphs on buffers: slices are gathered into 2-D literals, the
// evaluator's elementwise semantics compute on them, results are scattered
// back.
#include "igraph/interpreter.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "eval/elementwise.h"
#include "eval/kernels.h"
#include "eval/typed.h"
#include "igraph/verifier.h"
#include "support/error.h"
#include "support/float_format.h"

namespace uir::igraph {
namespace {

using hlo::HloOpcode;
using hlo::Literal;

// A compare function's direction (FnDirection).
eval::Direction DirectionOf(std::string_view name) {
  using D = eval::Direction;
  if (name == "eq") return D::kEq;
  if (name == "ne") return D::kNe;
  if (name == "lt") return D::kLt;
  if (name == "le") return D::kLe;
  if (name == "gt") return D::kGt;
  return D::kGe;
}

// Folds rows (axis row: (r, c) -> (r, 1)) or columns ((r, c) -> (1, c)) of
// `x` in order, starting from the first element.
Literal Fold(HloOpcode op, Axis axis, const Literal& x, std::string_view what) {
  const PrimitiveType t = x.shape().element_type();
  const int64_t r = x.shape().dimensions()[0], c = x.shape().dimensions()[1];
  if (IsNarrowFloat(t)) {
    // Round after every step, as the reducer computation in the narrow
    // type does: fold column by column (or row by row).
    const int64_t n = axis == Axis::kRow ? c : r, m = axis == Axis::kRow ? r : c;
    const int64_t size = StorageBytes(t);
    auto part = [&](int64_t k) {
      Literal out = eval::MakeLiteral(
          t, axis == Axis::kRow ? std::vector<int64_t>{r, 1} : std::vector<int64_t>{1, c});
      for (int64_t i = 0; i < m; ++i) {
        const int64_t at = axis == Axis::kRow ? i * c + k : k * c + i;
        std::memcpy(out.mutable_bytes().data() + i * size, x.bytes().data() + at * size,
                    static_cast<size_t>(size));
      }
      return out;
    };
    Literal acc = part(0);
    for (int64_t k = 1; k < n; ++k) acc = eval::ApplyBinary(op, acc, part(k), what);
    return acc;
  }
  Literal out = eval::MakeLiteral(
      t, axis == Axis::kRow ? std::vector<int64_t>{r, 1} : std::vector<int64_t>{1, c});
  bool ok = eval::DispatchNative(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = eval::Data<T>(x);
    T* o = eval::MutableData<T>(out);
    if (axis == Axis::kRow) {
      for (int64_t i = 0; i < r; ++i) {
        o[i] = in[i * c];
        if (!eval::FoldKernel<T>(op, o + i, in + i * c + 1, c - 1)) return false;
      }
    } else {
      std::unique_ptr<T[]> column(new T[static_cast<size_t>(r)]);
      for (int64_t j = 0; j < c; ++j) {
        for (int64_t i = 0; i < r; ++i) column[i] = in[i * c + j];
        o[j] = column[0];
        if (!eval::FoldKernel<T>(op, o + j, column.get() + 1, r - 1)) return false;
      }
    }
    return true;
  });
  if (!ok) {
    throw UnimplementedError("the interpreter cannot reduce " + std::string(what) + " on " +
                             DtypeText(t));
  }
  eval::NormalizeSubByte(out);
  return out;
}

// Combines two equally shaped literals elementwise with a reduction's op.
Literal Combine(HloOpcode op, const Literal& a, const Literal& b) {
  return eval::ApplyBinary(op, a, b, "reduce");
}

class Interpreter {
 public:
  Interpreter(const IGraph& g, const DramBuffers& dram) : g_(g) {
    for (size_t i = 0; i < g.pointers().size(); ++i) {
      const IPointer& p = g.pointers()[i];
      if (p.level != Level::kDram) continue;
      auto it = dram.find(p.id);
      if (it == dram.end()) {
        throw UserError(ErrorKind::kShape, "iGraph " + g.name() +
                                               ": no buffer for dram iPointer '" + p.name +
                                               "' (id " + std::to_string(p.id) + ")");
      }
      const int64_t need = p.size * StorageBytes(p.dtype);
      if (static_cast<int64_t>(it->second.size()) < need) {
        throw UserError(ErrorKind::kShape, "iGraph " + g.name() + ": the buffer for '" + p.name +
                                               "' has " + std::to_string(it->second.size()) +
                                               " bytes; it needs " + std::to_string(need));
      }
      dram_[i] = it->second.data();
    }
  }

  void Run() {
    const int64_t units = g_.num_parallel();
    bool global = false;
    for (Section s : {Section::kPrologue, Section::kBody, Section::kEpilogue}) {
      for (const IOp& op : g_.ops(s)) {
        if (op.kind == OpKind::kSync && op.to == Level::kDram) global = true;
      }
    }
    const int64_t per_group = global ? units : g_.hardware().num_unit;
    for (int64_t first = 0; first < units; first += per_group) {
      RunUnits(first, std::min(units, first + per_group));
    }
  }

 private:
  struct Unit {
    int64_t pid = 0;
    std::vector<int64_t> values;  // of every index variable
  };

  void RunUnits(int64_t first, int64_t last) {
    const int64_t num_unit = g_.hardware().num_unit;
    units_.clear();
    for (int64_t pid = first; pid < last; ++pid) {
      Unit u;
      u.pid = pid;
      u.values.assign(g_.vars().size(), 0);
      int64_t rest = pid;
      for (int v = static_cast<int>(g_.vars().size()) - 1; v >= 0; --v) {
        if (!g_.vars()[v].parallel) continue;
        u.values[v] = rest % g_.vars()[v].extent;
        rest /= g_.vars()[v].extent;
      }
      units_.push_back(std::move(u));
    }
    // Private storage: reg per unit, sram per group.
    local_.assign(g_.pointers().size(), {});
    for (size_t i = 0; i < g_.pointers().size(); ++i) {
      const IPointer& p = g_.pointers()[i];
      if (p.level == Level::kDram) continue;
      const int64_t copies =
          p.level == Level::kReg ? last - first : (last - 1) / num_unit - first / num_unit + 1;
      local_[i].assign(static_cast<size_t>(copies * p.size * StorageBytes(p.dtype)), 0);
    }
    first_ = first;
    RunSection(Section::kPrologue);
    for (int64_t lid = 0; lid < g_.num_loop(); ++lid) {
      int64_t rest = lid;
      for (int v = static_cast<int>(g_.vars().size()) - 1; v >= 0; --v) {
        if (g_.vars()[v].parallel) continue;
        for (Unit& u : units_) u.values[v] = rest % g_.vars()[v].extent;
        rest /= g_.vars()[v].extent;
      }
      RunSection(Section::kBody);
    }
    RunSection(Section::kEpilogue);
  }

  void RunSection(Section s) {
    for (const IOp& op : g_.ops(s)) {
      if ((op.kind == OpKind::kReduce || op.kind == OpKind::kBroadcast) &&
          op.scope == Scope::kGroup) {
        RunGroupOp(op);
        continue;
      }
      for (const Unit& u : units_) RunOp(op, u);
    }
  }

  // The address of element 0 of slice `s` for unit `u`, and its storage.
  uint8_t* Base(int s, const Unit& u) {
    const ISlice& slice = g_.slices()[s];
    const IPointer& p = g_.pointers()[slice.pointer];
    if (p.level == Level::kDram) return dram_.at(slice.pointer);
    const int64_t bytes = p.size * StorageBytes(p.dtype);
    const int64_t copy = p.level == Level::kReg
                             ? u.pid - first_
                             : u.pid / g_.hardware().num_unit - first_ / g_.hardware().num_unit;
    return local_[slice.pointer].data() + copy * bytes;
  }
  int64_t Offset(const Affine& a, const Unit& u) const {
    int64_t off = a.constant;
    for (const auto& [var, c] : a.terms) off += c * u.values[var];
    return off;
  }

  Literal Gather(int s, const Unit& u) {
    const ISlice& slice = g_.slices()[s];
    const PrimitiveType t = g_.PointerOf(s).dtype;
    const int64_t size = StorageBytes(t);
    Literal out = eval::MakeLiteral(t, {slice.shape[0], slice.shape[1]});
    const uint8_t* base = Base(s, u);
    const int64_t off = Offset(slice.offset, u);
    uint8_t* dst = out.mutable_bytes().data();
    for (int64_t i = 0; i < slice.shape[0]; ++i) {
      for (int64_t j = 0; j < slice.shape[1]; ++j) {
        const int64_t at = off + i * slice.stride[0] + j * slice.stride[1];
        std::memcpy(dst + (i * slice.shape[1] + j) * size, base + at * size, size);
      }
    }
    return out;
  }
  void Scatter(int s, const Unit& u, const Literal& value) {
    const ISlice& slice = g_.slices()[s];
    const int64_t size = StorageBytes(g_.PointerOf(s).dtype);
    uint8_t* base = Base(s, u);
    const int64_t off = Offset(slice.offset, u);
    const uint8_t* src = value.bytes().data();
    for (int64_t i = 0; i < slice.shape[0]; ++i) {
      for (int64_t j = 0; j < slice.shape[1]; ++j) {
        const int64_t at = off + i * slice.stride[0] + j * slice.stride[1];
        std::memcpy(base + at * size, src + (i * slice.shape[1] + j) * size, size);
      }
    }
  }

  Literal Full(const ISlice& shape_of, const Literal& scalar) {
    Literal out =
        eval::MakeLiteral(scalar.shape().element_type(), {shape_of.shape[0], shape_of.shape[1]});
    const size_t size = static_cast<size_t>(StorageBytes(scalar.shape().element_type()));
    for (int64_t i = 0; i < out.element_count(); ++i) {
      std::memcpy(out.mutable_bytes().data() + i * size, scalar.bytes().data(), size);
    }
    return out;
  }

  // Broadcast of `small` ((r, 1) or (1, c)) to `big`'s shape along `axis`.
  Literal Broadcast(Axis axis, const Literal& small, const ISlice& big) {
    const PrimitiveType t = small.shape().element_type();
    const int64_t r = big.shape[0], c = big.shape[1];
    const size_t size = static_cast<size_t>(StorageBytes(t));
    Literal out = eval::MakeLiteral(t, {r, c});
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < c; ++j) {
        const int64_t from = axis == Axis::kRow ? i : j;
        std::memcpy(out.mutable_bytes().data() + (i * c + j) * size,
                    small.bytes().data() + from * size, size);
      }
    }
    return out;
  }

  void RunOp(const IOp& op, const Unit& u) {
    const int t = op.outputs.empty() ? -1 : op.outputs[0];
    const std::string what = std::string(OpKindName(op.kind)) + "." + std::string(FnName(op.fn));
    switch (op.kind) {
      case OpKind::kMove:
        Scatter(t, u, Gather(op.inputs[0], u));
        return;
      case OpKind::kSync:
      case OpKind::kIdentity:
        return;  // lockstep already orders every write before later reads
      case OpKind::kUnary: {
        Literal x = Gather(op.inputs[0], u);
        if (FnIs(op.fn, kScalarFn)) {
          Scatter(t, u,
                  eval::ApplyBinary(FnOpcode(op.fn), x, Full(g_.slices()[t], op.params[0]), what));
        } else {
          Scatter(t, u, eval::ApplyUnary(FnOpcode(op.fn), x, what));
        }
        return;
      }
      case OpKind::kBinary:
        Scatter(t, u,
                eval::ApplyBinary(FnOpcode(op.fn), Gather(op.inputs[0], u), Gather(op.inputs[1], u),
                                  what));
        return;
      case OpKind::kTernary: {
        Literal a = Gather(op.inputs[0], u), b = Gather(op.inputs[1], u),
                c = Gather(op.inputs[2], u);
        if (op.fn == Fn::kSelect) {
          Scatter(t, u, eval::ApplySelect(a, b, c));
        } else {  // clamp(lo, x, hi)
          Scatter(t, u,
                  eval::ApplyBinary(HloOpcode::kMinimum,
                                    eval::ApplyBinary(HloOpcode::kMaximum, b, a, what), c, what));
        }
        return;
      }
      case OpKind::kCompare:
        Scatter(t, u,
                eval::ApplyCompare(DirectionOf(FnDirection(op.fn)), Gather(op.inputs[0], u),
                                   Gather(op.inputs[1], u), FnIsTotalOrder(op.fn)));
        return;
      case OpKind::kConvert: {
        if (op.fn != Fn::kBitcast) {
          Scatter(t, u, eval::Convert(Gather(op.inputs[0], u), op.to_dtype));
          return;
        }
        const Literal x = Gather(op.inputs[0], u);
        Literal bits = eval::MakeLiteral(op.to_dtype, x.shape().dimensions());
        bits.mutable_bytes() = std::vector<uint8_t>(x.bytes().begin(), x.bytes().end());
        Scatter(t, u, bits);
        return;
      }
      case OpKind::kFill:
        Scatter(t, u, Full(g_.slices()[t], op.params[0]));
        return;
      case OpKind::kIota: {
        const ISlice& s = g_.slices()[t];
        Literal idx = eval::MakeLiteral(PrimitiveType::kS64, {s.shape[0], s.shape[1]});
        const int64_t base = Offset(op.iota_base, u);
        int64_t* v = eval::MutableData<int64_t>(idx);
        for (int64_t i = 0; i < s.shape[0]; ++i) {
          for (int64_t j = 0; j < s.shape[1]; ++j) {
            v[i * s.shape[1] + j] = base + i * op.iota_step[0] + j * op.iota_step[1];
          }
        }
        Scatter(t, u, eval::Convert(idx, op.dtype));
        return;
      }
      case OpKind::kBroadcast:
        Scatter(t, u, Broadcast(op.axis, Gather(op.inputs[0], u), g_.slices()[t]));
        return;
      case OpKind::kReduce:
        Scatter(t, u, Fold(FnOpcode(op.fn), op.axis, Gather(op.inputs[0], u), what));
        return;
    }
  }

  // Group scope: units are split into groups of groupSize consecutive
  // parallel ids; the leader (pid % groupSize == 0) holds a reduction's
  // result and is the source of a broadcast. Partial values pass through
  // the sram buffer, slot k for the group's k-th unit.
  void RunGroupOp(const IOp& op) {
    const int t = op.outputs[0], s = op.inputs[0];
    for (size_t at = 0; at < units_.size(); at += static_cast<size_t>(op.group_size)) {
      const Unit& leader = units_[at];
      const int64_t n = std::min<int64_t>(op.group_size, static_cast<int64_t>(units_.size() - at));
      const ISlice& buffer = g_.slices()[op.buffer];
      const int64_t slot =
          op.kind == OpKind::kReduce ? g_.slices()[t].elements() : g_.slices()[s].elements();
      auto write_slot = [&](int64_t k, const Literal& v) {
        ISlice view = buffer;
        view.offset.constant += k * slot;
        view.shape = {1, slot};
        view.stride = {slot, 1};
        WriteRaw(view, leader, v);
      };
      auto read_slot = [&](int64_t k, const std::vector<int64_t>& dims) {
        ISlice view = buffer;
        view.offset.constant += k * slot;
        view.shape = {1, slot};
        view.stride = {slot, 1};
        return eval::Reshaped(ReadRaw(view, leader), dims);
      };
      if (op.kind == OpKind::kReduce) {
        const HloOpcode rop = FnOpcode(op.fn);
        const ISlice& ts = g_.slices()[t];
        for (int64_t k = 0; k < n; ++k) {
          write_slot(k, Fold(rop, op.axis, Gather(s, units_[at + k]), "reduce"));
        }
        Literal acc = read_slot(0, {ts.shape[0], ts.shape[1]});
        for (int64_t k = 1; k < n; ++k) {
          acc = Combine(rop, acc, read_slot(k, {ts.shape[0], ts.shape[1]}));
        }
        Scatter(t, leader, acc);
      } else {
        const ISlice& ss = g_.slices()[s];
        write_slot(0, Gather(s, leader));
        Literal v = read_slot(0, {ss.shape[0], ss.shape[1]});
        for (int64_t k = 0; k < n; ++k) {
          Scatter(t, units_[at + k], Broadcast(op.axis, v, g_.slices()[t]));
        }
      }
    }
  }

  Literal ReadRaw(const ISlice& view, const Unit& u) {
    const IPointer& p = g_.pointers()[view.pointer];
    const int64_t size = StorageBytes(p.dtype);
    const int64_t copy = u.pid / g_.hardware().num_unit - first_ / g_.hardware().num_unit;
    const uint8_t* base = local_[view.pointer].data() + copy * p.size * size;
    Literal out = eval::MakeLiteral(p.dtype, {view.shape[1]});
    std::memcpy(out.mutable_bytes().data(), base + Offset(view.offset, u) * size,
                static_cast<size_t>(view.shape[1] * size));
    return out;
  }
  void WriteRaw(const ISlice& view, const Unit& u, const Literal& v) {
    const IPointer& p = g_.pointers()[view.pointer];
    const int64_t size = StorageBytes(p.dtype);
    const int64_t copy = u.pid / g_.hardware().num_unit - first_ / g_.hardware().num_unit;
    uint8_t* base = local_[view.pointer].data() + copy * p.size * size;
    std::memcpy(base + Offset(view.offset, u) * size, v.bytes().data(),
                static_cast<size_t>(view.shape[1] * size));
  }

  const IGraph& g_;
  std::unordered_map<size_t, uint8_t*> dram_;
  std::vector<std::vector<uint8_t>> local_;
  std::vector<Unit> units_;
  int64_t first_ = 0;
};

}  // namespace

void Interpret(const IGraph& graph, const DramBuffers& dram) {
  // Every access is proved in bounds before anything runs.
  Verify(graph);
  Interpreter(graph, dram).Run();
}

}  // namespace uir::igraph
