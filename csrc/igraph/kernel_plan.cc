// The plan steps (kernel_plan.h) and the check of a plan.
#include "igraph/kernel_plan.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "support/error.h"

namespace uir::igraph {
namespace {

bool SameGeometry(const ISlice& a, const ISlice& b) {
  return a.pointer == b.pointer && a.offset == b.offset && a.shape == b.shape &&
         a.stride == b.stride;
}

RowDataflow NoRows(std::string why) {
  RowDataflow d;
  d.why_not = std::move(why);
  return d;
}

bool IsDram(const IGraph& g, int slice) { return g.PointerOf(slice).level == Level::kDram; }

// Whether iOp `op` runs in a column loop of a row form (syncs and
// identities do no work there).
bool Works(const IOp& op) { return op.kind != OpKind::kSync && op.kind != OpKind::kIdentity; }

// The columns a working iOp's loop runs over.
int64_t Width(const IGraph& g, const IOp& op) {
  return op.kind == OpKind::kReduce ? g.slices()[op.inputs[0]].shape[1]
                                    : g.slices()[op.outputs[0]].shape[1];
}

int64_t RowBufferBytes(const IGraph& g, const IOp& op) {
  const ISlice& out = g.slices()[op.outputs[0]];
  const int64_t bytes = out.shape[1] * StorageBytes(g.pointers()[out.pointer].dtype);
  return (bytes + 63) / 64 * 64;
}

// The first column loop that stores to dram (the number of loops if none).
int FirstStoreLoop(const IGraph& g) {
  int first = static_cast<int>(g.plan().loops.size());
  for (const IOp& op : g.ops(Section::kBody)) {
    if (op.plan.loop >= 0 && IsDram(g, op.outputs[0])) first = std::min(first, op.plan.loop);
  }
  return first;
}

// A move from dram of one dtype on both sides, whose every reader runs no
// later than `first_store` (FirstStoreLoop): its readers may read its input
// again (nothing can have written over it yet).
bool MayReread(const IGraph& g, const RowDataflow& rows, int first_store, size_t k) {
  const std::vector<IOp>& ops = g.ops(Section::kBody);
  const IOp& op = ops[k];
  if (op.kind != OpKind::kMove || rows.source[k].at(0) != -1) return false;
  if (g.PointerOf(op.inputs[0]).dtype != g.PointerOf(op.outputs[0]).dtype) return false;
  for (size_t r = k + 1; r < ops.size(); ++r) {
    for (int src : rows.source[r]) {
      if (src == static_cast<int>(k) && ops[r].plan.loop > first_store) return false;
    }
  }
  return true;
}

// --- rows ---------------------------------------------------------------------

// The decisions of these steps are the CPU backend's (its loop forms,
// prefetches and register blocks); an iGraph for another target keeps the
// loops form, untouched, until that target has steps of its own.
constexpr std::string_view kCpuOnly = "the plan steps are the CPU backend's: none for a gpu yet";

void PlanRowsStep(IGraph& g) {
  KernelPlan& plan = g.mutable_plan();
  if (g.hardware().target != "cpu") {
    plan.form = BodyForm::kLoops;
    plan.why = std::string(kCpuOnly);
    return;
  }
  const RowDataflow rows = AnalyseRows(g);
  if (!rows.ok) {
    plan.form = BodyForm::kLoops;
    plan.why = rows.why_not;
    return;
  }
  std::vector<IOp>& ops = g.mutable_ops(Section::kBody);
  plan.form = BodyForm::kRows;
  plan.rows = rows.rows;
  // Column loops: consecutive iOps of one width, none reading a reduction
  // (complete only after the loop) or broadcasting a value of its own loop.
  int current = -1;
  for (size_t k = 0; k < ops.size(); ++k) {
    IOp& op = ops[k];
    if (!Works(op)) continue;
    const int64_t w = Width(g, op);
    bool fresh = current < 0 || plan.loops[current] != w;
    for (int src : rows.source[k]) {
      if (src < 0 || ops[src].plan.loop != current) continue;
      if (ops[src].kind == OpKind::kReduce || op.kind == OpKind::kBroadcast) fresh = true;
    }
    if (fresh) {
      plan.loops.push_back(w);
      current = static_cast<int>(plan.loops.size()) - 1;
    }
    op.plan.loop = current;
  }
  // Values a later loop reads: reread from dram where that is safe, else
  // stored to a row buffer of their own.
  std::vector<bool> needed(ops.size(), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    for (int src : rows.source[k]) {
      if (src >= 0 && ops[src].plan.loop != ops[k].plan.loop) needed[src] = true;
    }
  }
  const int first_store = FirstStoreLoop(g);
  for (size_t k = 0; k < ops.size(); ++k) {
    if (needed[k]) ops[k].plan.reread = MayReread(g, rows, first_store, k);
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!needed[k] || ops[k].plan.reread) continue;
    ops[k].plan.row_buffer = plan.row_scratch;
    plan.row_scratch += RowBufferBytes(g, ops[k]);
  }
}

// --- coalesce -----------------------------------------------------------------

// The one parallel variable of extent > 1 that spans every parallel id,
// or -1.
int SoleParallelVar(const IGraph& g) {
  int pv = -1;
  for (size_t v = 0; v < g.vars().size(); ++v) {
    if (!g.vars()[v].parallel || g.vars()[v].extent == 1) continue;
    if (pv >= 0) return -1;
    pv = static_cast<int>(v);
  }
  return pv >= 0 && g.vars()[pv].extent == g.num_parallel() ? pv : -1;
}

// Empty when a row form's body may coalesce: one row and one column loop
// of width W over elementwise iOps whose dram slices start at W * pid
// (+ a constant) with unit stride, pid the sole parallel variable.
std::string WhyNotCoalesced(const IGraph& g) {
  const KernelPlan& plan = g.plan();
  if (plan.rows != 1 || plan.loops.size() != 1) return "more than one row or column loop";
  const int pv = SoleParallelVar(g);
  if (pv < 0) return "not one parallel variable over every parallel id";
  const int64_t w = plan.loops[0];
  auto tiled = [&](const ISlice& sl) {
    return sl.shape[0] == 1 && sl.shape[1] == w && sl.stride[1] == 1 &&
           sl.offset.terms.size() == 1 && sl.offset.terms[0].first == pv &&
           sl.offset.terms[0].second == w;
  };
  for (const IOp& op : g.ops(Section::kBody)) {
    if (op.kind == OpKind::kReduce || op.kind == OpKind::kBroadcast) {
      return "a reduction or broadcast";
    }
    if (op.kind == OpKind::kIota &&
        !(op.iota_base.terms.size() == 1 && op.iota_base.terms[0].first == pv &&
          op.iota_base.terms[0].second == w * op.iota_step[1])) {
      return "an iota that does not continue across parallel ids";
    }
    for (const std::vector<int>* side : {&op.inputs, &op.outputs}) {
      for (int sl : *side) {
        if (IsDram(g, sl) && !tiled(g.slices()[sl])) {
          return "dram slice '" + g.slices()[sl].name + "' does not tile the parallel ids";
        }
      }
    }
  }
  return "";
}

void CoalesceStep(IGraph& g) {
  if (g.plan().form == BodyForm::kRows && WhyNotCoalesced(g).empty()) {
    g.mutable_plan().form = BodyForm::kCoalesced;
  }
}

// --- prefetch -----------------------------------------------------------------

// Bytes ahead a heavy column loop prefetches its contiguous dram inputs.
// Measured on tanh over 16M elements: 1 KiB ahead 8.0 -> 4.0 ms, 4 KiB
// 3.3 ms, 8 KiB no better.
constexpr int64_t kPrefetchAhead = 4096;

// Arithmetic that costs more per element than streaming its inputs from
// memory (polynomial math, divisions): a loop of it keeps too few
// cache-line reads in flight for the hardware prefetcher.
bool Heavy(const IOp& op) {
  if (!IsFloat(op.dtype)) return false;
  if (op.kind == OpKind::kUnary && FnIs(op.fn, kUnaryFn)) {
    switch (FnOpcode(op.fn)) {
      case hlo::HloOpcode::kExp:
      case hlo::HloOpcode::kExpm1:
      case hlo::HloOpcode::kLog:
      case hlo::HloOpcode::kLog1p:
      case hlo::HloOpcode::kTanh:
      case hlo::HloOpcode::kLogistic:
      case hlo::HloOpcode::kRsqrt:
        return true;
      default:
        return false;
    }
  }
  return op.kind == OpKind::kBinary && FnOpcode(op.fn) == hlo::HloOpcode::kDivide;
}

// A heavy column loop prefetches each contiguous dram input it reads
// kPrefetchAhead bytes ahead, and each row it reads again from cache (a
// reread move's input: softmax's exp after its max) at the next row, so
// that row is in cache when the next row's first loop starts. One entry
// per iPointer and loop, on the first iOp reading it.
void PrefetchStep(IGraph& g) {
  if (!g.plan().row_form()) return;
  const RowDataflow rows = AnalyseRows(g);
  std::vector<IOp>& ops = g.mutable_ops(Section::kBody);
  for (int loop = 0; loop < static_cast<int>(g.plan().loops.size()); ++loop) {
    bool heavy = false;
    for (const IOp& op : ops) heavy = heavy || (op.plan.loop == loop && Heavy(op));
    if (!heavy) continue;
    std::set<int> done;
    for (size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].plan.loop != loop) continue;
      for (size_t n = 0; n < ops[k].inputs.size(); ++n) {
        Prefetch p{ops[k].inputs[n], 0, kPrefetchAhead};
        const int src = rows.source[k][n];
        if (src >= 0) {
          if (!ops[src].plan.reread) continue;
          p = Prefetch{ops[src].inputs[0], 1, 0};
        }
        const ISlice& sl = g.slices()[p.slice];
        if (sl.stride[1] != 1 || BitWidth(g.PointerOf(p.slice).dtype) % 8 != 0) continue;
        if (!done.insert(sl.pointer).second) continue;
        ops[k].plan.prefetch.push_back(p);
      }
    }
  }
}

// --- interleave ---------------------------------------------------------------

// Vectors a heavy column loop runs side by side, by its width. Polynomial
// math is a long chain of dependent operations per vector: one vector at
// a time, the core's scheduler fills with a few vectors' chains and the
// loads behind them wait. Measured on tanh(a*b+c) and exp(a*b+c) over 16M
// floats (AVX2, a Zen 4, beside a*b+c in one process): one vector 1.14x to
// 1.18x of a*b+c's time, two 1.04x to 1.13x, four 1.00x to 1.11x; over 1M
// floats in cache exp went from 0.385 to 0.312 ms with four.
constexpr int64_t kInterleaveLong = 4, kInterleaveShort = 2;
constexpr int64_t kLongLoop = 512, kShortLoop = 128;

void InterleaveStep(IGraph& g) {
  KernelPlan& plan = g.mutable_plan();
  if (!plan.row_form()) return;
  std::vector<int64_t> count(plan.loops.size(), 1);
  bool any = false;
  for (const IOp& op : g.ops(Section::kBody)) {
    if (!Heavy(op) || op.plan.loop < 0) continue;
    const auto loop = static_cast<size_t>(op.plan.loop);
    // A coalesced loop runs over a range of parallel ids: long.
    const int64_t width = plan.form == BodyForm::kCoalesced ? std::max(plan.loops[loop], kLongLoop)
                                                            : plan.loops[loop];
    const int64_t n = width >= kLongLoop    ? kInterleaveLong
                      : width >= kShortLoop ? kInterleaveShort
                                            : 1;
    count[loop] = std::max(count[loop], n);
    any = any || n > 1;
  }
  if (any) plan.interleave = std::move(count);
}

// --- transpose ----------------------------------------------------------------

// Bytes of the vectors a block transpose loads and stores: a block is
// (32 / element bytes) rows of such vectors.
constexpr int64_t kTransposeVectorBytes = 32;

// Whether move `op` reads memory down its columns (a transposed slice).
bool ReadsByColumns(const IGraph& g, const IOp& op) {
  const ISlice& os = g.slices()[op.outputs[0]];
  const ISlice& is = g.slices()[op.inputs[0]];
  return op.kind == OpKind::kMove && os.shape[0] > 1 && os.shape[1] > 1 &&
         std::abs(is.stride[0]) < std::abs(is.stride[1]);
}

// Empty when move `op` may transpose in `block` x `block` register tiles:
// elements of 4 or 8 bytes alike on both sides, the input's columns and
// the output's rows contiguous, at least one whole block.
std::string WhyNoBlocks(const IGraph& g, const IOp& op, int64_t block) {
  const ISlice& os = g.slices()[op.outputs[0]];
  const ISlice& is = g.slices()[op.inputs[0]];
  const PrimitiveType t = g.PointerOf(op.inputs[0]).dtype;
  const int64_t bytes = StorageBytes(t);
  if ((bytes != 4 && bytes != 8) || g.PointerOf(op.outputs[0]).dtype != t) {
    return "elements not of 4 or 8 bytes alike on both sides";
  }
  if (block < 2 || (block & (block - 1)) != 0 || block * bytes > 64) {
    return "a block of " + std::to_string(block) + " is not a power of two of at most 64 bytes";
  }
  if (is.stride[0] != 1 || os.stride[1] != 1) return "the input's columns or output's rows apart";
  if (os.shape[0] < block || os.shape[1] < block) return "no whole block";
  return "";
}

void TransposeStep(IGraph& g) {
  if (g.plan().form != BodyForm::kLoops || g.hardware().target != "cpu") return;
  for (Section s : {Section::kPrologue, Section::kBody, Section::kEpilogue}) {
    for (IOp& op : g.mutable_ops(s)) {
      if (op.kind != OpKind::kMove || !ReadsByColumns(g, op)) continue;
      op.plan.by_columns = true;
      const int64_t block = kTransposeVectorBytes / StorageBytes(g.PointerOf(op.inputs[0]).dtype);
      if (WhyNoBlocks(g, op, block).empty()) op.plan.block = block;
    }
  }
}

}  // namespace

RowDataflow AnalyseRows(const IGraph& g) {
  if (g.num_loop() != 1 || !g.ops(Section::kPrologue).empty() ||
      !g.ops(Section::kEpilogue).empty()) {
    return NoRows("a loop over loop ids, a prologue or an epilogue");
  }
  const std::vector<IOp>& ops = g.ops(Section::kBody);
  if (ops.empty()) return NoRows("no iOps");
  RowDataflow d;
  d.rows = -1;
  std::map<int, int> last_write;              // local iPointer -> iOp
  std::map<int, const ISlice*> dram_written;  // dram iPointer -> the slice written
  d.source.resize(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    const IOp& op = ops[k];
    switch (op.kind) {
      case OpKind::kSync:
        if (op.to == Level::kDram) return NoRows("a dram sync");
        continue;
      case OpKind::kIdentity: {
        // A view of a local slice in its own iPointer is no work: readers
        // of the view meet the iOp that wrote the slice (and must read it
        // as written). A view across iPointers or of dram memory is not
        // row-local.
        bool local_view = op.inputs.size() == op.outputs.size();
        for (size_t i = 0; local_view && i < op.inputs.size(); ++i) {
          const ISlice& in = g.slices()[op.inputs[i]];
          local_view = in.pointer == g.slices()[op.outputs[i]].pointer &&
                       g.pointers()[in.pointer].level != Level::kDram;
        }
        if (!local_view) return NoRows("an identity (a view of other memory)");
        continue;
      }
      case OpKind::kBroadcast:
      case OpKind::kReduce:
        if (op.axis != Axis::kRow) return NoRows("a column broadcast or reduction");
        if (op.scope == Scope::kGroup && op.group_size > 1) return NoRows("group scope");
        break;
      default:
        break;
    }
    auto check_rows = [&](const ISlice& s) {
      if (d.rows < 0) d.rows = s.shape[0];
      return s.shape[0] == d.rows;
    };
    for (int in : op.inputs) {
      const ISlice& s = g.slices()[in];
      if (!check_rows(s)) return NoRows("slices of different row counts");
      const bool dram = g.pointers()[s.pointer].level == Level::kDram;
      if (dram && s.shape[0] > 1 && s.shape[1] > 1 && s.stride[0] != 0 &&
          std::abs(s.stride[1]) > std::abs(s.stride[0])) {
        // A transposed read: along a row it jumps through memory; the
        // loops form reads it down its columns instead. (Row stride 0,
        // one row read for every row, as a bias is, reads along rows.)
        return NoRows("a dram slice read across its rows (a transpose)");
      }
      if (dram) {
        d.source[k].push_back(-1);
        continue;
      }
      auto w = last_write.find(s.pointer);
      if (w == last_write.end()) return NoRows("a local slice read before it is written");
      const ISlice& written = g.slices()[ops[w->second].outputs[0]];
      if (!SameGeometry(written, s)) return NoRows("a local slice read other than as written");
      d.source[k].push_back(w->second);
    }
    const ISlice& out = g.slices()[op.outputs[0]];
    if (!check_rows(out)) return NoRows("slices of different row counts");
    if (g.pointers()[out.pointer].level == Level::kDram) {
      auto [it, fresh] = dram_written.emplace(out.pointer, &out);
      if (!fresh && !SameGeometry(*it->second, out)) return NoRows("a dram iPointer written twice");
    } else {
      last_write[out.pointer] = static_cast<int>(k);
    }
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    for (int in : ops[k].inputs) {
      const ISlice& s = g.slices()[in];
      auto it = dram_written.find(s.pointer);
      if (it != dram_written.end() && !SameGeometry(*it->second, s)) {
        return NoRows("a dram iPointer read elsewhere than it is written");
      }
    }
  }
  d.ok = true;
  return d;
}

const std::vector<PlanStep>& PlanSteps() {
  static const std::vector<PlanStep> steps = {
      {"rows",
       "whether the body runs row by row; its column loops, row buffers and rereads of dram "
       "inputs",
       PlanRowsStep},
      {"coalesce", "whether a one-row body's parallel ids run as one long column loop",
       CoalesceStep},
      {"prefetch", "which inputs column loops heavy in arithmetic prefetch, and how far ahead",
       PrefetchStep},
      {"interleave", "how many vectors column loops heavy in arithmetic run side by side",
       InterleaveStep},
      {"transpose",
       "which moves read down their columns, and which of those transpose in register blocks",
       TransposeStep},
  };
  return steps;
}

void PlanKernel(IGraph& graph, std::string_view until) {
  bool known = until.empty();
  for (const PlanStep& step : PlanSteps()) known = known || step.name == until;
  if (!known) {
    std::string names;
    for (const PlanStep& step : PlanSteps())
      names += (names.empty() ? "" : ", ") + std::string(step.name);
    throw UserError(ErrorKind::kVerify,
                    "no plan step '" + std::string(until) + "' (the steps: " + names + ")");
  }
  if (graph.planned()) {
    throw UserError(ErrorKind::kVerify, "iGraph " + graph.name() + " is planned already");
  }
  for (const PlanStep& step : PlanSteps()) {
    step.run(graph);
    if (step.name == until) break;
  }
}

std::string PlanProblem(const IGraph& g) {
  const KernelPlan& plan = g.plan();
  const auto sections = {Section::kPrologue, Section::kBody, Section::kEpilogue};
  const bool row_form = plan.row_form();
  // Entries that belong to the other forms.
  for (Section s : sections) {
    for (const IOp& op : g.ops(s)) {
      const std::string at = "iOp `" + OpToText(g, op) + "`: ";
      const OpPlan& p = op.plan;
      if (plan.form == BodyForm::kNone && !p.empty()) return at + "a plan in an unplanned iGraph";
      if (!row_form && (p.loop >= 0 || p.row_buffer >= 0 || p.reread || !p.prefetch.empty())) {
        return at + "loop, buffer, reread and prefetch belong to the row forms";
      }
      if (row_form && (p.by_columns || p.block != 0)) {
        return at + "order and block belong to the loops form";
      }
      if ((p.by_columns || p.block != 0) && op.kind != OpKind::kMove) {
        return at + "order and block apply to moves";
      }
      if (p.block != 0) {
        const std::string why = WhyNoBlocks(g, op, p.block);
        if (!why.empty()) return at + "no block transpose: " + why;
      }
    }
  }
  if (plan.form == BodyForm::kNone) {
    return plan.why.empty() && plan.rows == 0 && plan.loops.empty() && plan.interleave.empty() &&
                   plan.row_scratch == 0
               ? ""
               : "an unplanned iGraph with plan fields";
  }
  if (!row_form) return plan.interleave.empty() ? "" : "interleave belongs to the row forms";
  if (!plan.interleave.empty() && plan.interleave.size() != plan.loops.size()) {
    return "interleave has " + std::to_string(plan.interleave.size()) + " counts for " +
           std::to_string(plan.loops.size()) + " loops";
  }

  const RowDataflow rows = AnalyseRows(g);
  if (!rows.ok) return "the body has no row form: " + rows.why_not;
  if (plan.rows != rows.rows) {
    return "rows=" + std::to_string(plan.rows) + " but the slices have " +
           std::to_string(rows.rows);
  }
  const std::vector<IOp>& ops = g.ops(Section::kBody);
  const int first_store = FirstStoreLoop(g);
  int previous = -1;
  for (size_t k = 0; k < ops.size(); ++k) {
    const IOp& op = ops[k];
    const std::string at = "iOp `" + OpToText(g, op) + "`: ";
    const OpPlan& p = op.plan;
    if (!Works(op)) {
      if (!p.empty()) return at + "a sync or identity runs in no loop";
      continue;
    }
    if (p.loop < 0) return at + "runs in no column loop (every iOp of a row form needs loop=)";
    if (p.loop != previous && p.loop != previous + 1) {
      return at + "loop=" + std::to_string(p.loop) + " after loop " + std::to_string(previous) +
             " (loops run in order, each once)";
    }
    if (p.loop >= static_cast<int>(plan.loops.size())) {
      return at + "loop=" + std::to_string(p.loop) + " but the plan has " +
             std::to_string(plan.loops.size()) + " loops";
    }
    previous = p.loop;
    if (Width(g, op) != plan.loops[p.loop]) {
      return at + "its slices are " + std::to_string(Width(g, op)) + " wide, loop " +
             std::to_string(p.loop) + " " + std::to_string(plan.loops[p.loop]);
    }
    for (size_t n = 0; n < op.inputs.size(); ++n) {
      const int src = rows.source[k][n];
      if (src < 0) continue;
      const IOp& writer = ops[src];
      if (writer.plan.loop == p.loop) {
        if (writer.kind == OpKind::kReduce) {
          return at + "reads a reduction in its own loop (complete only after it)";
        }
        if (op.kind == OpKind::kBroadcast) return at + "broadcasts a value of its own loop";
      } else if (writer.plan.row_buffer < 0 && !writer.plan.reread) {
        return at + "reads a value of an earlier loop that has no row buffer and is not reread";
      }
    }
    if (p.reread && !MayReread(g, rows, first_store, k)) {
      return at + "reread, but it is not a move from dram read before the first store";
    }
    if (p.row_buffer >= 0 &&
        (p.row_buffer % 64 != 0 || p.row_buffer + RowBufferBytes(g, op) > plan.row_scratch)) {
      return at + "row buffer at " + std::to_string(p.row_buffer) +
             " is not 64-byte aligned inside the " + std::to_string(plan.row_scratch) +
             " bytes of row scratch";
    }
    for (const Prefetch& f : p.prefetch) {
      const ISlice& sl = g.slices()[f.slice];
      if (!IsDram(g, f.slice) || sl.stride[1] != 1 || BitWidth(g.PointerOf(f.slice).dtype) % 8) {
        return at + "prefetches '" + sl.name + "', not a dram slice of whole bytes along rows";
      }
      if (f.rows < 0 || f.bytes < 0) return at + "prefetches behind";
    }
  }
  // Row buffers apart.
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const IOp& op : ops) {
    if (op.plan.row_buffer >= 0) {
      spans.emplace_back(op.plan.row_buffer, op.plan.row_buffer + RowBufferBytes(g, op));
    }
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first < spans[i - 1].second) {
      return "row buffers at " + std::to_string(spans[i - 1].first) + " and " +
             std::to_string(spans[i].first) + " overlap";
    }
  }
  if (previous + 1 != static_cast<int>(plan.loops.size())) {
    return "the plan has " + std::to_string(plan.loops.size()) + " loops, the iOps use " +
           std::to_string(previous + 1);
  }
  if (plan.form == BodyForm::kCoalesced) {
    const std::string why = WhyNotCoalesced(g);
    if (!why.empty()) return "coalesced, but " + why;
  }
  return "";
}

int64_t KernelScratchBytes(const IGraph& graph) {
  if (!graph.planned()) {
    IGraph planned = graph;
    PlanKernel(planned);
    return KernelScratchBytes(planned);
  }
  int64_t total = 0;
  for (const IPointer& p : graph.pointers()) {
    if (p.level == Level::kDram) continue;
    total += (p.size * StorageBytes(p.dtype) + 63) / 64 * 64;
  }
  if (graph.plan().row_form()) total += graph.plan().row_scratch;
  return total;
}

}  // namespace uir::igraph
