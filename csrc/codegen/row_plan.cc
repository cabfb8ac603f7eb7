// Planning the row-by-row form of an iGraph body.
#include "codegen/row_plan.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace uir::codegen {
namespace {

using igraph::IGraph;
using igraph::IOp;
using igraph::ISlice;
using igraph::Level;
using igraph::OpKind;
using igraph::Section;

bool SameGeometry(const ISlice& a, const ISlice& b) {
  return a.pointer == b.pointer && a.offset == b.offset && a.shape == b.shape &&
         a.stride == b.stride;
}

RowPlan Fail(std::string why) {
  RowPlan p;
  p.why_not = std::move(why);
  return p;
}

}  // namespace

RowPlan PlanRows(const IGraph& g) {
  if (g.num_loop() != 1 || !g.ops(Section::kPrologue).empty() ||
      !g.ops(Section::kEpilogue).empty()) {
    return Fail("a loop over loop ids, a prologue or an epilogue");
  }
  const std::vector<IOp>& ops = g.ops(Section::kBody);
  if (ops.empty()) return Fail("no iOps");
  RowPlan plan;
  plan.rows = -1;
  std::map<int, int> last_write;              // local iPointer -> iOp
  std::map<int, const ISlice*> dram_written;  // dram iPointer -> the slice written
  plan.source.resize(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    const IOp& op = ops[k];
    switch (op.kind) {
      case OpKind::kSync:
        if (op.to == Level::kDram) return Fail("a dram sync");
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
        if (!local_view) return Fail("an identity (a view of other memory)");
        continue;
      }
      case OpKind::kBroadcast:
      case OpKind::kReduce:
        if (op.axis != igraph::Axis::kRow) return Fail("a column broadcast or reduction");
        if (op.scope == igraph::Scope::kGroup && op.group_size > 1) return Fail("group scope");
        break;
      default:
        break;
    }
    auto check_rows = [&](const ISlice& s) {
      if (plan.rows < 0) plan.rows = s.shape[0];
      return s.shape[0] == plan.rows;
    };
    for (int in : op.inputs) {
      const ISlice& s = g.slices()[in];
      if (!check_rows(s)) return Fail("slices of different row counts");
      if (g.pointers()[s.pointer].level == Level::kDram && s.shape[0] > 1 && s.shape[1] > 1 &&
          s.stride[0] != 0 && std::abs(s.stride[1]) > std::abs(s.stride[0])) {
        // A transposed read: along a row it jumps through memory; the tile
        // form reads it down its columns instead. (Row stride 0, one row
        // read for every row, as a bias is, reads along rows.)
        return Fail("a dram slice read across its rows (a transpose)");
      }
      if (g.pointers()[s.pointer].level == Level::kDram) {
        plan.source[k].push_back(-1);
        continue;
      }
      auto w = last_write.find(s.pointer);
      if (w == last_write.end()) return Fail("a local slice read before it is written");
      const ISlice& written = g.slices()[ops[w->second].outputs[0]];
      if (!SameGeometry(written, s)) return Fail("a local slice read other than as written");
      plan.source[k].push_back(w->second);
    }
    const ISlice& out = g.slices()[op.outputs[0]];
    if (!check_rows(out)) return Fail("slices of different row counts");
    if (g.pointers()[out.pointer].level == Level::kDram) {
      auto [it, fresh] = dram_written.emplace(out.pointer, &out);
      if (!fresh && !SameGeometry(*it->second, out)) return Fail("a dram iPointer written twice");
    } else {
      last_write[out.pointer] = static_cast<int>(k);
    }
  }
  // A written dram iPointer may be read only where it is written (in place).
  for (size_t k = 0; k < ops.size(); ++k) {
    for (int in : ops[k].inputs) {
      const ISlice& s = g.slices()[in];
      auto it = dram_written.find(s.pointer);
      if (it != dram_written.end() && !SameGeometry(*it->second, s)) {
        return Fail("a dram iPointer read elsewhere than it is written");
      }
    }
  }
  // Column loops: consecutive iOps of one width, none reading a reduction
  // (complete only after the loop) or broadcasting a value of its own loop.
  plan.group.assign(ops.size(), -1);
  int current = -1;
  for (size_t k = 0; k < ops.size(); ++k) {
    const IOp& op = ops[k];
    if (op.kind == OpKind::kSync || op.kind == OpKind::kIdentity) continue;
    const int64_t w = op.kind == OpKind::kReduce ? g.slices()[op.inputs[0]].shape[1]
                                                 : g.slices()[op.outputs[0]].shape[1];
    bool fresh = current < 0 || plan.width[current] != w;
    for (int src : plan.source[k]) {
      if (src < 0 || plan.group[src] != current) continue;
      if (ops[src].kind == OpKind::kReduce || op.kind == OpKind::kBroadcast) fresh = true;
    }
    if (fresh) {
      plan.width.push_back(w);
      current = static_cast<int>(plan.width.size()) - 1;
    }
    plan.group[k] = current;
  }
  // Row buffers for values a later loop reads.
  plan.buffer.assign(ops.size(), -1);
  std::vector<bool> needed(ops.size(), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    for (int src : plan.source[k]) {
      if (src >= 0 && plan.group[src] != plan.group[k]) needed[src] = true;
    }
  }
  // Moves from dram read again instead, where no dram store can come
  // between the move and its readers.
  plan.reread.assign(ops.size(), false);
  int first_store = static_cast<int>(plan.width.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    if (plan.group[k] >= 0 &&
        g.pointers()[g.slices()[ops[k].outputs[0]].pointer].level == Level::kDram) {
      first_store = std::min(first_store, plan.group[k]);
    }
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    const IOp& op = ops[k];
    if (!needed[k] || op.kind != OpKind::kMove || plan.source[k].at(0) != -1) continue;
    const ISlice& in = g.slices()[op.inputs[0]];
    const ISlice& out = g.slices()[op.outputs[0]];
    if (g.pointers()[in.pointer].dtype != g.pointers()[out.pointer].dtype) continue;
    bool early = true;
    for (size_t r = k + 1; r < ops.size(); ++r) {
      for (int src : plan.source[r]) {
        if (src == static_cast<int>(k) && plan.group[r] > first_store) early = false;
      }
    }
    plan.reread[k] = early;
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!needed[k] || plan.reread[k]) continue;
    const ISlice& out = g.slices()[ops[k].outputs[0]];
    plan.buffer[k] = plan.scratch_bytes;
    const int64_t bytes = out.shape[1] * StorageBytes(g.pointers()[out.pointer].dtype);
    plan.scratch_bytes += (bytes + 63) / 64 * 64;
  }
  plan.ok = true;
  return plan;
}

}  // namespace uir::codegen
