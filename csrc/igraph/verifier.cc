// The iGraph verifier: shapes against each iOp, memory levels, sync on one
// iPointer, bounds of every slice for every (parallel_id, loop_id) proved
// from the affine offsets, reg and sram capacity, group sizes.
#include "igraph/verifier.h"

#include <algorithm>
#include <sstream>

#include "igraph/kernel_plan.h"
#include "support/error.h"

namespace uir::igraph {
namespace {

std::string ShapeText(const ISlice& s) {
  return "(" + std::to_string(s.shape[0]) + ", " + std::to_string(s.shape[1]) + ")";
}

class Verifier {
 public:
  explicit Verifier(const IGraph& g) : g_(g) {}

  void Run() {
    const HardwareModel& hw = g_.hardware();
    if (hw.num_group < 1 || hw.num_unit < 1) Fail("numGroup and numUnit must be positive");
    for (const IndexVar& v : g_.vars()) {
      if (v.extent < 1)
        Fail("index variable '" + v.name + "' has extent " + std::to_string(v.extent));
    }
    std::vector<int64_t> dram_ids;
    for (const IPointer& p : g_.pointers()) {
      if (p.size < 1) Fail("iPointer '" + p.name + "' has size " + std::to_string(p.size));
      if (p.level == Level::kDram) {
        if (std::find(dram_ids.begin(), dram_ids.end(), p.id) != dram_ids.end()) {
          Fail("two dram iPointers have id " + std::to_string(p.id));
        }
        dram_ids.push_back(p.id);
      }
    }
    for (Level level : {Level::kReg, Level::kSram}) {
      const int64_t used = g_.BytesAt(level);
      const int64_t cap = level == Level::kReg ? hw.reg_bytes : hw.sram_bytes;
      if (used > cap) {
        Fail(std::string(LevelName(level)) + " iPointers take " + std::to_string(used) +
             " bytes, more than the hardware model's " + std::to_string(cap) +
             (level == Level::kReg ? " per unit" : " per group"));
      }
    }
    for (Section s : {Section::kPrologue, Section::kBody, Section::kEpilogue}) {
      for (const IOp& op : g_.ops(s)) Check(s, op);
    }
    if (const std::string why = PlanProblem(g_); !why.empty()) Fail("plan: " + why);
    // Slices no iOp uses are checked too.
    for (const ISlice& s : g_.slices()) {
      std::string why = OutOfBounds(s);
      if (!why.empty()) Fail("iSlice '" + s.name + "' " + why);
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw UserError(ErrorKind::kVerify,
                    "iGraph " + g_.name() + ": verification failed: " + message);
  }
  [[noreturn]] void FailOp(const IOp& op, const std::string& message) const {
    std::ostringstream os;
    os << "iGraph " << g_.name() << ": verification failed at ";
    if (op.line > 0) os << "line " << op.line << ": ";
    os << "`" << OpToText(g_, op) << "`: " << message;
    throw UserError(ErrorKind::kVerify, os.str());
  }

  // Empty if every element of `s` lies in its pointer for every value of
  // the index variables, else why not. The extremes of an affine function
  // over a box are reached at its corners, one variable at a time.
  std::string OutOfBounds(const ISlice& s) const {
    const IPointer& p = g_.pointers()[s.pointer];
    int64_t lo = s.offset.constant, hi = s.offset.constant;
    auto widen = [&](int64_t coefficient, int64_t extent) {
      const int64_t span = coefficient * (extent - 1);
      lo += std::min<int64_t>(0, span);
      hi += std::max<int64_t>(0, span);
    };
    for (const auto& [var, c] : s.offset.terms) widen(c, g_.vars()[var].extent);
    widen(s.stride[0], s.shape[0]);
    widen(s.stride[1], s.shape[1]);
    if (lo >= 0 && hi < p.size) return "";
    return "reaches elements [" + std::to_string(lo) + ", " + std::to_string(hi) +
           "] of iPointer '" + p.name + "' of size " + std::to_string(p.size);
  }

  const ISlice& S(int i) const { return g_.slices()[i]; }
  const IPointer& P(int i) const { return g_.PointerOf(i); }

  void SameShape(const IOp& op, int a, int b) const {
    if (S(a).shape != S(b).shape) {
      FailOp(op, "'" + S(a).name + "' is " + ShapeText(S(a)) + " but '" + S(b).name + "' is " +
                     ShapeText(S(b)));
    }
  }
  void Dtype(const IOp& op, int slice, PrimitiveType want) const {
    if (P(slice).dtype != want) {
      FailOp(op, "'" + S(slice).name + "' holds " + DtypeText(P(slice).dtype) + ", not " +
                     DtypeText(want));
    }
  }
  void Compute(const IOp& op, int slice) const {
    if (P(slice).level == Level::kDram) {
      FailOp(op, "'" + S(slice).name + "' is in dram; compute iOps work on reg and sram");
    }
  }
  // Every element of a written slice is a distinct address.
  void Injective(const IOp& op, int slice) const {
    const ISlice& s = S(slice);
    const int64_t r = s.shape[0], c = s.shape[1];
    const int64_t sr = std::abs(s.stride[0]), sc = std::abs(s.stride[1]);
    bool ok = (c == 1 || sc != 0) && (r == 1 || sr != 0);
    // Rows (or columns) whose address ranges do not overlap: a row spans
    // sc * (c - 1) past its start.
    if (ok && r > 1 && c > 1) ok = sr > sc * (c - 1) || sc > sr * (r - 1);
    if (!ok) FailOp(op, "'" + s.name + "' is written but some of its elements share an address");
  }
  void NoLoopVars(const IOp& op, Section section, const Affine& a, const std::string& what) const {
    if (section == Section::kBody) return;
    for (const auto& [var, c] : a.terms) {
      if (!g_.vars()[var].parallel) {
        FailOp(op, what + " uses loop variable '" + g_.vars()[var].name + "' in the " +
                       std::string(SectionName(section)));
      }
    }
  }

  void Check(Section section, const IOp& op) const {
    const int outs = OpOutputs(op.kind), ins = OpInputs(op.kind);
    if ((outs >= 0 && static_cast<int>(op.outputs.size()) != outs) ||
        (ins >= 0 && static_cast<int>(op.inputs.size()) != ins) || op.outputs.empty() ||
        (ins < 0 && op.inputs.empty())) {
      FailOp(op, "wrong number of slices");
    }
    std::vector<int> used = op.outputs;
    used.insert(used.end(), op.inputs.begin(), op.inputs.end());
    if (op.buffer >= 0) used.push_back(op.buffer);
    for (int s : used) {
      NoLoopVars(op, section, S(s).offset, "'" + S(s).name + "'");
      std::string why = OutOfBounds(S(s));
      if (!why.empty()) FailOp(op, "'" + S(s).name + "' " + why);
    }
    if (op.kind != OpKind::kIdentity && op.kind != OpKind::kSync) Injective(op, op.outputs[0]);
    const int t = op.outputs[0];
    switch (op.kind) {
      case OpKind::kMove:
        if (P(t).level != op.to || P(op.inputs[0]).level != op.from) {
          FailOp(op, "moves from " + std::string(LevelName(P(op.inputs[0]).level)) + " to " +
                         std::string(LevelName(P(t).level)) + ", not as its name says");
        }
        Dtype(op, t, op.dtype);
        Dtype(op, op.inputs[0], op.dtype);
        SameShape(op, t, op.inputs[0]);
        return;
      case OpKind::kSync:
        if (S(t).pointer != S(op.inputs[0]).pointer) {
          FailOp(op, "sync needs one iPointer on both sides, got '" + P(t).name + "' and '" +
                         P(op.inputs[0]).name + "'");
        }
        if (op.to == Level::kReg) FailOp(op, "reg is private to a unit; sync is sram or dram");
        if (P(t).level != op.to) {
          FailOp(op, "syncs at " + std::string(LevelName(op.to)) + " but '" + P(t).name +
                         "' is in " + std::string(LevelName(P(t).level)));
        }
        SameShape(op, t, op.inputs[0]);
        return;
      case OpKind::kUnary:
      case OpKind::kBinary:
      case OpKind::kTernary:
      case OpKind::kCompare:
      case OpKind::kConvert: {
        Compute(op, t);
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          const int in = op.inputs[i];
          Compute(op, in);
          SameShape(op, t, in);
          const bool pred_input = op.kind == OpKind::kTernary && op.fn == Fn::kSelect && i == 0;
          Dtype(op, in, pred_input ? PrimitiveType::kPred : op.dtype);
        }
        PrimitiveType out = op.dtype;
        if (op.kind == OpKind::kCompare) out = PrimitiveType::kPred;
        if (op.kind == OpKind::kConvert) {
          out = op.to_dtype;
          if (op.fn == Fn::kBitcast &&
              (BitWidth(op.dtype) != BitWidth(op.to_dtype) || op.dtype == PrimitiveType::kPred ||
               op.to_dtype == PrimitiveType::kPred)) {
            FailOp(op, "bitcast converts between types of one width (not pred)");
          }
        }
        Dtype(op, t, out);
        if (op.kind == OpKind::kUnary) {
          const bool scalar = FnIs(op.fn, kScalarFn);
          if (scalar != (op.params.size() == 1)) {
            FailOp(op, scalar ? "needs one scalar parameter" : "takes no parameters");
          }
        }
        return;
      }
      case OpKind::kFill:
        Compute(op, t);
        Dtype(op, t, op.dtype);
        if (op.params.size() != 1) FailOp(op, "needs one value");
        return;
      case OpKind::kIota:
        Compute(op, t);
        Dtype(op, t, op.dtype);
        NoLoopVars(op, section, op.iota_base, "the iota base");
        return;
      case OpKind::kBroadcast:
      case OpKind::kReduce: {
        const int s = op.inputs[0];
        Compute(op, t);
        Compute(op, s);
        Dtype(op, t, op.dtype);
        Dtype(op, s, op.dtype);
        const ISlice& big = op.kind == OpKind::kReduce ? S(s) : S(t);
        const ISlice& small = op.kind == OpKind::kReduce ? S(t) : S(s);
        const std::array<int64_t, 2> want = op.axis == Axis::kRow
                                                ? std::array<int64_t, 2>{big.shape[0], 1}
                                                : std::array<int64_t, 2>{1, big.shape[1]};
        if (small.shape != want) {
          FailOp(op, std::string(OpKindName(op.kind)) + "." + std::string(AxisName(op.axis)) +
                         " maps " + ShapeText(big) + " to (" + std::to_string(want[0]) + ", " +
                         std::to_string(want[1]) + "), but '" + small.name + "' is " +
                         ShapeText(small));
        }
        if (op.kind == OpKind::kReduce && (op.fn == Fn::kAnd || op.fn == Fn::kOr) &&
            IsFloat(op.dtype)) {
          FailOp(op, "'" + std::string(FnName(op.fn)) + "' reduces integers and pred only");
        }
        if (op.scope == Scope::kGroup) {
          if (op.buffer < 0 || P(op.buffer).level != Level::kSram) {
            FailOp(op,
                   "a group-scope " + std::string(OpKindName(op.kind)) + " needs an sram buffer");
          }
          if (op.group_size < 1 || g_.hardware().num_unit % op.group_size != 0) {
            FailOp(op, "groupSize " + std::to_string(op.group_size) + " does not divide numUnit " +
                           std::to_string(g_.hardware().num_unit));
          }
          if (g_.num_parallel() % g_.hardware().num_unit != 0) {
            FailOp(op, "group scope needs whole groups: numParallel " +
                           std::to_string(g_.num_parallel()) + " is not a multiple of numUnit " +
                           std::to_string(g_.hardware().num_unit));
          }
          if (S(op.buffer).elements() < small.elements() * op.group_size) {
            FailOp(op, "buffer '" + S(op.buffer).name + "' holds " +
                           std::to_string(S(op.buffer).elements()) + " elements; the group needs " +
                           std::to_string(small.elements() * op.group_size));
          }
        }
        return;
      }
      case OpKind::kIdentity:
        CheckIdentity(op);
        return;
    }
  }

  // Both sides must name the same bytes: one iPointer, contiguous slices
  // that tile the same interval in the same order.
  void CheckIdentity(const IOp& op) const {
    auto interval = [&](const std::vector<int>& side, Affine* start, int64_t* length) {
      for (size_t i = 0; i < side.size(); ++i) {
        const ISlice& s = S(side[i]);
        if (s.pointer != S(op.outputs[0]).pointer) {
          FailOp(op, "identity needs one iPointer on both sides");
        }
        if (s.stride[1] != 1 || (s.shape[0] > 1 && s.stride[0] != s.shape[1])) {
          FailOp(op, "'" + s.name + "' is not contiguous");
        }
        Affine expected = *start;
        expected.constant += *length;
        if (i > 0 && !(s.offset == expected)) {
          FailOp(op, "'" + s.name + "' does not follow the slice before it");
        }
        if (i == 0) *start = s.offset;
        *length += s.elements();
      }
    };
    Affine out_start, in_start;
    int64_t out_len = 0, in_len = 0;
    interval(op.outputs, &out_start, &out_len);
    interval(op.inputs, &in_start, &in_len);
    if (!(out_start == in_start) || out_len != in_len) {
      FailOp(op, "the outputs and the inputs are not the same memory");
    }
  }

  const IGraph& g_;
};

}  // namespace

void Verify(const IGraph& graph) { Verifier(graph).Run(); }

}  // namespace uir::igraph
