// The iGraph's text form, in the seed's notation: a header with the
// hardware model and parallel description, iPointer and iSlice
// declarations, then one iOp per line in its section.
#include <sstream>
#include <string>
#include <vector>

#include "igraph/igraph.h"

namespace uir::igraph {

std::string AffineToText(const IGraph& graph, const Affine& affine) {
  std::ostringstream os;
  bool first = true;
  for (const auto& [var, coefficient] : affine.terms) {
    int64_t c = coefficient;
    if (!first) {
      os << (c < 0 ? " - " : " + ");
      c = c < 0 ? -c : c;
    } else if (c < 0) {
      os << "-";
      c = -c;
    }
    if (c != 1) os << c << "*";
    os << graph.vars()[var].name;
    first = false;
  }
  if (first) {
    os << affine.constant;
  } else if (affine.constant != 0) {
    os << (affine.constant < 0 ? " - " : " + ")
       << (affine.constant < 0 ? -affine.constant : affine.constant);
  }
  return os.str();
}

namespace {

std::string Names(const IGraph& g, const std::vector<int>& slices) {
  if (slices.size() == 1) return g.slices()[slices[0]].name;
  std::string out = "[";
  for (size_t i = 0; i < slices.size(); ++i) {
    if (i > 0) out += ", ";
    out += g.slices()[slices[i]].name;
  }
  return out + "]";
}

std::string GroupParams(const IGraph& g, const IOp& op) {
  if (op.scope != Scope::kGroup) return "";
  return ", [buffer=" + g.slices()[op.buffer].name +
         ", groupSize=" + std::to_string(op.group_size) + "]";
}

// ` {loop=0, buffer=64, reread, prefetch=[x+4096B, y+1row], order=cols,
// block=8}`: the iOp's plan entries that are not the default.
std::string PlanText(const IGraph& g, const OpPlan& plan) {
  if (plan.empty()) return "";
  std::vector<std::string> entries;
  if (plan.loop >= 0) entries.push_back("loop=" + std::to_string(plan.loop));
  if (plan.row_buffer >= 0) entries.push_back("buffer=" + std::to_string(plan.row_buffer));
  if (plan.reread) entries.push_back("reread");
  if (!plan.prefetch.empty()) {
    std::string list = "prefetch=[";
    for (size_t i = 0; i < plan.prefetch.size(); ++i) {
      const Prefetch& p = plan.prefetch[i];
      list += (i > 0 ? ", " : "") + g.slices()[p.slice].name;
      if (p.rows != 0) list += "+" + std::to_string(p.rows) + "row";
      if (p.bytes != 0 || p.rows == 0) list += "+" + std::to_string(p.bytes) + "B";
    }
    entries.push_back(list + "]");
  }
  if (plan.by_columns) entries.push_back("order=cols");
  if (plan.block != 0) entries.push_back("block=" + std::to_string(plan.block));
  std::string out = " {";
  for (size_t i = 0; i < entries.size(); ++i) out += (i > 0 ? ", " : "") + entries[i];
  return out + "}";
}

// A double-quoted string with `"` and `\` escaped.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string OpToText(const IGraph& g, const IOp& op) {
  std::ostringstream os;
  const std::string dtype = DtypeText(op.dtype);
  os << OpKindName(op.kind);
  switch (op.kind) {
    case OpKind::kMove:
      os << "." << LevelName(op.from) << "." << LevelName(op.to) << "." << dtype;
      break;
    case OpKind::kSync:
      os << "." << LevelName(op.to);
      break;
    case OpKind::kUnary:
    case OpKind::kBinary:
    case OpKind::kTernary:
    case OpKind::kCompare:
      os << "." << FnName(op.fn) << "." << dtype;
      break;
    case OpKind::kConvert:
      if (op.fn != Fn::kNone) os << "." << FnName(op.fn);
      os << "." << dtype << "." << DtypeText(op.to_dtype);
      break;
    case OpKind::kFill:
    case OpKind::kIota:
      os << "." << dtype;
      break;
    case OpKind::kBroadcast:
      os << "." << AxisName(op.axis) << "." << ScopeName(op.scope) << "." << dtype;
      break;
    case OpKind::kReduce:
      os << "." << FnName(op.fn) << "." << AxisName(op.axis) << "." << ScopeName(op.scope) << "."
         << dtype;
      break;
    case OpKind::kIdentity:
      break;
  }
  os << " " << Names(g, op.outputs);
  for (int in : op.inputs) os << ", " << g.slices()[in].name;
  if (op.kind == OpKind::kIdentity) {
    os.str("");
    os << "identity " << Names(g, op.outputs) << ", " << Names(g, op.inputs);
  }
  if (!op.params.empty()) {
    os << ", [";
    for (size_t i = 0; i < op.params.size(); ++i) {
      os << (i > 0 ? ", " : "") << op.params[i].ElementToString(0);
    }
    os << "]";
  }
  if (op.kind == OpKind::kIota) {
    os << ", [base=" << AffineToText(g, op.iota_base) << ", step=(" << op.iota_step[0] << ", "
       << op.iota_step[1] << ")]";
  }
  os << GroupParams(g, op);
  os << PlanText(g, op.plan);
  return os.str();
}

std::string ToText(const IGraph& g) {
  std::ostringstream os;
  const HardwareModel& hw = g.hardware();
  os << "igraph " << g.name() << " {\n";
  os << "  hardware " << hw.target << " (numGroup=" << hw.num_group << ", numUnit=" << hw.num_unit
     << ") reg=" << hw.reg_bytes << " sram=" << hw.sram_bytes << " vector=" << hw.vector_bytes
     << "\n";
  os << "  parallel (numParallel=" << g.num_parallel() << ", numLoop=" << g.num_loop() << ")";
  for (bool parallel : {true, false}) {
    os << " [";
    bool first = true;
    for (const IndexVar& v : g.vars()) {
      if (v.parallel != parallel) continue;
      os << (first ? "" : ", ") << v.name << "=" << v.extent;
      first = false;
    }
    os << "]";
  }
  os << "\n";
  const KernelPlan& plan = g.plan();
  if (g.planned()) {
    os << "  plan " << BodyFormName(plan.form) << " (";
    if (plan.form == BodyForm::kLoops) {
      os << "why=" << Quoted(plan.why);
    } else {
      os << "rows=" << plan.rows << ", loops=[";
      for (size_t i = 0; i < plan.loops.size(); ++i) os << (i > 0 ? ", " : "") << plan.loops[i];
      os << "]";
      if (!plan.interleave.empty()) {
        os << ", interleave=[";
        for (size_t i = 0; i < plan.interleave.size(); ++i) {
          os << (i > 0 ? ", " : "") << plan.interleave[i];
        }
        os << "]";
      }
      os << ", scratch=" << plan.row_scratch;
    }
    os << ")\n";
  }
  for (const IPointer& p : g.pointers()) {
    os << "  " << p.name << " = iPointer(" << p.id << ", " << LevelName(p.level) << ", "
       << DtypeText(p.dtype) << ", " << p.size << ")\n";
  }
  for (const ISlice& s : g.slices()) {
    os << "  " << s.name << " = iSlice(" << g.pointers()[s.pointer].name << ", "
       << AffineToText(g, s.offset) << ", (" << s.shape[0] << ", " << s.shape[1] << "), ("
       << s.stride[0] << ", " << s.stride[1] << "))\n";
  }
  for (Section s : {Section::kPrologue, Section::kBody, Section::kEpilogue}) {
    if (g.ops(s).empty() && s != Section::kBody) continue;
    os << SectionName(s) << ":\n";
    for (const IOp& op : g.ops(s)) os << "  " << OpToText(g, op) << "\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace uir::igraph
