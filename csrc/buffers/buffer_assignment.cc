#include "buffers/buffer_assignment.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "analysis/in_place.h"
#include "buffers/heap_simulator.h"
#include "hlo/computation.h"
#include "support/error.h"

namespace uir::buffers {

using analysis::BufferKind;
using analysis::HloBuffer;
using analysis::HloValue;
using analysis::LiveRange;
using hlo::HloInstruction;
using hlo::HloOpcode;

std::string Allocation::Describe() const {
  std::string out = "allocation " + std::to_string(index) + ": size " + std::to_string(size);
  switch (kind) {
    case BufferKind::kParameter:
      out += ", parameter " + std::to_string(parameter_number) + " at ShapeIndex " +
             analysis::IndexToString(parameter_index);
      break;
    case BufferKind::kConstant:
      out += ", constant";
      break;
    case BufferKind::kOutput:
      break;
    case BufferKind::kTemporary:
      out += ", preallocated-temp";
      break;
  }
  if (live_out) out += ", maybe-live-out";
  return out;
}

namespace {

bool IsEntryParameter(const HloValue& v) {
  const HloInstruction* i = v.instruction();
  return i->opcode() == HloOpcode::kParameter && i->parent() == i->parent()->parent()->entry();
}

// Whether every value of `b` other than the parameter `p` is a while
// loop's phi that is not live out: loops that read the parameter's buffer
// and never write it (a write would define a value that is no phi).
bool OnlyLoopViews(const HloBuffer& b, const HloValue* p) {
  for (const HloValue* v : b.values()) {
    if (v == p) continue;
    if (!v->is_phi() || v->live_out() || v->instruction()->opcode() != HloOpcode::kWhile)
      return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<BufferAssignment> BufferAssignment::Run(const hlo::HloModule& module) {
  if (!module.has_schedule()) {
    throw UserError(ErrorKind::kVerify, "module " + module.name() +
                                            " is not scheduled; buffer assignment needs an order "
                                            "(uir.schedule.run)");
  }
  std::unique_ptr<BufferAssignment> ba(new BufferAssignment(module));
  ba->Assign();
  return ba;
}

void BufferAssignment::Assign() {
  alias_ = analysis::HloAliasAnalysis::Run(module_);
  liveness_ = analysis::HloLiveRange::Run(*alias_, analysis::SequencesOf(module_));
  const auto& buffers = alias_->buffers();
  slices_.assign(buffers.size(), Slice{-1, 0, 0});

  auto needs_copy = [](const HloBuffer& b, const std::string& what) {
    std::string values;
    for (const HloValue* v : b.values()) values += " " + v->ToShortString();
    throw UserError(ErrorKind::kVerify, what + " would share a buffer with other values (" +
                                            values.substr(1) +
                                            "); run copy-insertion before buffer assignment");
  };
  std::vector<Allocation> params, constants, outputs;
  std::vector<const HloBuffer*> temporaries;
  for (const HloBuffer& b : buffers) {
    switch (analysis::KindOf(b)) {
      case BufferKind::kParameter: {
        const HloValue* p = nullptr;
        for (const HloValue* v : b.values()) {
          if (IsEntryParameter(*v)) {
            if (p != nullptr) needs_copy(b, "parameter " + p->ToShortString());
            p = v;
          } else if (v->instruction()->opcode() == HloOpcode::kConstant) {
            needs_copy(b, "parameter " + v->ToShortString());
          }
        }
        // Writing into the caller's array is allowed only where the module
        // says so (input_output_alias); anything else needs a copy first.
        // A loop's state element the body passes through unchanged is
        // only read: its values in the buffer are the loops' phis and
        // nothing else, and the loop may read the parameter in place.
        if (b.values().size() > 1 && !OnlyLoopViews(b, p)) {
          bool donated = false;
          for (const hlo::InputOutputAlias& x : module_.config().input_output_alias)
            donated |= x.parameter == p->instruction()->parameter_number() &&
                       x.parameter_index == p->index();
          if (!donated) needs_copy(b, "parameter " + p->ToShortString());
        }
        Allocation a;
        a.kind = BufferKind::kParameter;
        a.size = b.bytes();
        a.parameter_number = p->instruction()->parameter_number();
        a.parameter_index = p->index();
        a.live_out = b.live_out();
        a.buffers = {&b};
        params.push_back(std::move(a));
        break;
      }
      case BufferKind::kConstant:
        for (const HloValue* v : b.values()) {
          if (v->is_phi() && !v->live_out()) continue;  // a loop reading it in place
          if (v->instruction()->opcode() != HloOpcode::kConstant || v->live_out())
            needs_copy(b, "constant " + b.values().front()->ToShortString());
        }
        {
          Allocation a;
          a.kind = BufferKind::kConstant;
          a.size = b.bytes();
          a.buffers = {&b};
          constants.push_back(std::move(a));
        }
        break;
      case BufferKind::kOutput: {
        Allocation a;
        a.kind = BufferKind::kOutput;
        a.size = b.bytes();
        a.live_out = true;
        a.buffers = {&b};
        outputs.push_back(std::move(a));
        break;
      }
      case BufferKind::kTemporary:
        temporaries.push_back(&b);
        break;
    }
  }
  std::stable_sort(params.begin(), params.end(), [](const Allocation& x, const Allocation& y) {
    return std::tie(x.parameter_number, x.parameter_index) <
           std::tie(y.parameter_number, y.parameter_index);
  });
  for (auto* group : {&params, &constants, &outputs}) {
    for (Allocation& a : *group) {
      a.index = static_cast<int64_t>(allocations_.size());
      slices_[a.buffers[0]->id()] = {a.index, 0, a.size};
      allocations_.push_back(std::move(a));
    }
  }
  if (temporaries.empty()) return;

  const std::vector<analysis::TemporaryGroup> groups = analysis::GroupTemporaries(*liveness_);
  peak_ = analysis::PeakOf(groups);
  std::vector<analysis::TemporaryGroup> rounded = groups;
  for (analysis::TemporaryGroup& g : rounded)
    g.bytes = (g.bytes + kAlignment - 1) / kAlignment * kAlignment;
  aligned_peak_bytes_ = analysis::PeakOf(rounded).bytes;
  std::vector<HeapItem> items;
  items.reserve(groups.size());
  for (const analysis::TemporaryGroup& g : groups) items.push_back({g.bytes, g.range});
  const HeapResult heap = PackHeap(items, kAlignment);
  Allocation arena;
  arena.kind = BufferKind::kTemporary;
  arena.index = static_cast<int64_t>(allocations_.size());
  arena.size = heap.heap_bytes;
  arena.buffers = temporaries;
  arena_ = arena.index;
  for (const HloBuffer* b : temporaries) slices_[b->id()] = {arena_, 0, b->bytes()};
  for (size_t k = 0; k < groups.size(); ++k) {
    for (const HloBuffer* b : groups[k].buffers) slices_[b->id()].offset = heap.offsets[k];
  }
  allocations_.push_back(std::move(arena));
}

void BufferAssignment::SetOffset(const HloBuffer& buffer, int64_t offset) {
  slices_[buffer.id()].offset = offset;
}

// --- The checker ------------------------------------------------------------

namespace {

struct Placed {
  const HloValue* value;
  Slice slice;
  LiveRange range;
  int64_t buffer;
};

}  // namespace

std::vector<std::string> BufferAssignment::Check() const {
  std::vector<std::string> problems;
  const analysis::HloDataflowAnalysis& df = alias_->dataflow();
  const analysis::HloLiveRange& lr = *liveness_;
  auto bytes_text = [](const Slice& s) {
    return "[" + std::to_string(s.offset) + ", " + std::to_string(s.offset + s.size) + ")";
  };
  std::vector<std::vector<Placed>> by_allocation(allocations_.size());
  for (const auto& vp : df.values()) {
    const HloValue& v = *vp;
    const HloBuffer& b = alias_->BufferOf(v);
    const Slice& s = slices_[b.id()];
    if (s.allocation < 0 || s.allocation >= static_cast<int64_t>(allocations_.size())) {
      problems.push_back(v.ToShortString() + " has no slice");
      continue;
    }
    const Allocation& a = allocations_[s.allocation];
    if (s.size < v.bytes()) {
      problems.push_back(v.ToShortString() + " needs " + std::to_string(v.bytes()) +
                         " bytes but its slice holds " + std::to_string(s.size));
    }
    if (s.offset % kAlignment != 0) {
      problems.push_back(v.ToShortString() + " is at offset " + std::to_string(s.offset) +
                         ", not a multiple of " + std::to_string(kAlignment));
    }
    if (s.offset < 0 || s.offset + s.size > a.size) {
      problems.push_back(v.ToShortString() + "'s slice " + bytes_text(s) + " leaves allocation " +
                         std::to_string(a.index) + " (" + std::to_string(a.size) + " bytes)");
    }
    if (IsEntryParameter(v) && (a.kind != BufferKind::kParameter ||
                                a.parameter_number != v.instruction()->parameter_number() ||
                                a.parameter_index != v.index())) {
      problems.push_back(v.ToShortString() + " is not in its parameter's allocation");
    }
    if (v.instruction()->opcode() == HloOpcode::kConstant && a.kind != BufferKind::kConstant)
      problems.push_back(v.ToShortString() + " is not in a constant allocation");
    if (v.live_out() && !a.live_out)
      problems.push_back(v.ToShortString() + " is an output but its allocation is not live out");
    if (s.size > 0) by_allocation[s.allocation].push_back({&v, s, lr.value_range(v), b.id()});
  }

  // May `later` be written over `earlier` in place (identical slices, at
  // `earlier`'s last use, by an op allowed to)?
  auto in_place = [&](const Placed& earlier, const Placed& later) {
    if (earlier.slice.offset != later.slice.offset || earlier.slice.size != later.slice.size)
      return false;
    const HloInstruction* i = later.value->instruction();
    if (!later.value->index().empty() || later.value->is_phi()) return false;
    if (later.range.start != lr.time_out(i) || earlier.range.end != lr.time_in(i)) return false;
    for (int64_t k = 0; k < i->operand_count(); ++k) {
      if (alias_->BufferAt(i->operand(k), {}).id() == earlier.buffer &&
          analysis::CanShareOperandBuffer(*i, k))
        return true;
    }
    return false;
  };

  // Values of different buffers whose bytes overlap: never live together.
  for (std::vector<Placed>& placed : by_allocation) {
    std::sort(placed.begin(), placed.end(), [](const Placed& x, const Placed& y) {
      return x.range.start != y.range.start ? x.range.start < y.range.start
                                            : x.value->id() < y.value->id();
    });
    std::vector<const Placed*> active;
    for (const Placed& p : placed) {
      std::erase_if(active, [&](const Placed* q) { return q->range.end < p.range.start; });
      for (const Placed* q : active) {
        if (q->buffer == p.buffer) continue;
        const bool bytes_overlap = q->slice.offset < p.slice.offset + p.slice.size &&
                                   p.slice.offset < q->slice.offset + q->slice.size;
        if (!bytes_overlap || in_place(*q, p)) continue;
        problems.push_back(q->value->ToShortString() + " " + bytes_text(q->slice) + " and " +
                           p.value->ToShortString() + " " + bytes_text(p.slice) +
                           " share bytes of allocation " + std::to_string(p.slice.allocation) +
                           " and are both live at time " + std::to_string(p.range.start));
      }
      active.push_back(&p);
    }
  }

  // Values of one buffer follow each other: each starts once the previous
  // ones are dead, or replaces the previous one in place.
  for (const HloBuffer& b : alias_->buffers()) {
    std::vector<const HloValue*> values;
    for (const HloValue* v : b.values())
      if (!v->is_phi()) values.push_back(v);
    if (values.size() < 2) continue;
    std::sort(values.begin(), values.end(), [&](const HloValue* x, const HloValue* y) {
      return lr.value_range(*x).start < lr.value_range(*y).start;
    });
    const HloValue* last = values[0];
    for (size_t k = 1; k < values.size(); ++k) {
      const HloValue* v = values[k];
      const LiveRange& r = lr.value_range(*v);
      const LiveRange& prev = lr.value_range(*last);
      bool ok = r.start > prev.end;
      if (!ok && r.start == prev.end) {
        const HloInstruction* i = v->instruction();
        for (const analysis::InPlacePair& pair : analysis::InPlacePairs(*i)) {
          if (pair.operand < i->operand_count() &&
              &alias_->BufferAt(i->operand(pair.operand), pair.operand_index) == &b)
            ok = true;
        }
        // An elementwise result written over its operand (an aliased output).
        for (int64_t k = 0; k < i->operand_count() && v->index().empty(); ++k) {
          if (&alias_->BufferAt(i->operand(k), {}) == &b && analysis::CanShareOperandBuffer(*i, k))
            ok = true;
        }
      }
      if (!ok) {
        problems.push_back(last->ToShortString() + " and " + v->ToShortString() +
                           " must share buffer " + std::to_string(b.id()) +
                           " but are both live at time " + std::to_string(r.start) +
                           " (a copy is missing)");
      }
      if (r.end >= prev.end) last = v;
    }
  }
  return problems;
}

// --- The report -----------------------------------------------------------------

std::string BufferAssignment::ToText() const {
  std::ostringstream os;
  const analysis::HloLiveRange& lr = *liveness_;
  os << "BufferAssignment for module " << module_.name() << ":\n";
  int64_t by_kind[4] = {0, 0, 0, 0};
  for (const Allocation& a : allocations_) {
    by_kind[static_cast<int>(a.kind)] += a.size;
    os << a.Describe() << ":\n";
    std::vector<const HloBuffer*> order = a.buffers;
    std::stable_sort(order.begin(), order.end(), [&](const HloBuffer* x, const HloBuffer* y) {
      return slices_[x->id()].offset < slices_[y->id()].offset;
    });
    for (const HloBuffer* b : order) {
      const Slice& s = slices_[b->id()];
      for (const HloValue* v : b->values()) {
        const LiveRange& r = lr.value_range(*v);
        os << " value: <" << v->id() << " " << v->ToShortString() << "> (size=" << v->bytes()
           << ",offset=" << s.offset << "): " << v->shape().ToString() << " live " << r.start << "-"
           << r.end << "\n";
      }
    }
  }
  int64_t total = 0;
  for (const Allocation& a : allocations_) total += a.size;
  os << "\nTotal bytes used: " << total << " (" << allocations_.size() << " allocations)\n";
  os << "\nUsed values:\n";
  for (const auto& v : alias_->dataflow().values()) {
    os << "<" << v->id() << " " << v->ToShortString() << ">\n positions:\n";
    for (const analysis::HloPosition& p : v->positions()) os << "  " << p.ToString() << "\n";
    os << " uses:\n";
    for (const analysis::HloUse& u : v->uses()) os << "  " << u.ToString() << "\n";
  }
  os << "\nHloLiveRange (start, end):\n";
  for (const auto& v : alias_->dataflow().values()) {
    const LiveRange& r = lr.value_range(*v);
    os << "  " << v->ToShortString() << ": " << r.start << "-" << r.end << "\n";
  }
  os << "\nBufferAssignment stats:\n";
  auto row = [&](const char* name, int64_t bytes) {
    os << std::setw(34) << name << ": " << bytes << "B\n";
  };
  row("parameter allocation", by_kind[static_cast<int>(BufferKind::kParameter)]);
  row("constant allocation", by_kind[static_cast<int>(BufferKind::kConstant)]);
  row("maybe_live_out allocation", by_kind[static_cast<int>(BufferKind::kOutput)]);
  row("preallocated temp allocation", by_kind[static_cast<int>(BufferKind::kTemporary)]);
  row("peak live temporary bytes", peak_.bytes);
  row("aligned peak", aligned_peak_bytes_);
  row("total allocation", total);
  return os.str();
}

}  // namespace uir::buffers
