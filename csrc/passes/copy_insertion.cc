#include "passes/copy_insertion.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "analysis/in_place.h"
#include "hlo/builder.h"
#include "passes/dataflow_order.h"
#include "passes/fusion/priority_fusion.h"

namespace uir::passes {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

bool IsView(const HloInstruction& i) {
  return i.opcode() == HloOpcode::kBitcast || i.opcode() == HloOpcode::kGetTupleElement;
}

using Work = std::vector<std::pair<HloInstruction*, std::vector<int64_t>>>;

// `tuple` holds `v` (at `path` inside it) as one or more of its elements:
// queues the tuple with the path to each.
void IntoTuple(HloInstruction* tuple, const HloInstruction* v, const std::vector<int64_t>& path,
               Work& work) {
  for (int64_t k = 0; k < tuple->operand_count(); ++k) {
    if (tuple->operand(k) != v) continue;
    std::vector<int64_t> inner = {k};
    inner.insert(inner.end(), path.begin(), path.end());
    work.push_back({tuple, std::move(inner)});
  }
}

// The instructions that read `value`'s buffer (or, with `at`, its element
// at that index), following it through views
// (bitcasts), into tuples and out of them again (get-tuple-element of the
// element that holds it). A tuple holding it that is its computation's root
// counts as a reader (the value is live out).
std::vector<HloInstruction*> Readers(HloInstruction* value, std::vector<int64_t> at = {}) {
  std::vector<HloInstruction*> out;
  // (instruction, where the value sits inside its result)
  Work work = {{value, std::move(at)}};
  std::unordered_set<HloInstruction*> seen;
  auto add = [&](HloInstruction* u) {
    if (std::find(out.begin(), out.end(), u) == out.end()) out.push_back(u);
  };
  for (size_t step = 0; step < work.size() && step < 100000; ++step) {
    auto [v, path] = work[step];
    for (HloInstruction* u : v->users()) {
      switch (u->opcode()) {
        case HloOpcode::kBitcast:
          if (seen.insert(u).second) work.push_back({u, path});
          break;
        case HloOpcode::kTuple:
          if (u == u->parent()->root()) add(u);
          IntoTuple(u, v, path, work);
          break;
        case HloOpcode::kGetTupleElement:
          if (path.empty()) {
            add(u);  // reads an element of the value itself (a tuple value)
          } else if (u->attributes().Get<int64_t>(AttrKey::kIndex) == path[0]) {
            work.push_back({u, std::vector<int64_t>(path.begin() + 1, path.end())});
          }
          break;
        default:
          add(u);
      }
    }
  }
  return out;
}

// The values that live in the buffer of `value`'s element `at` (`value`
// included when `at` is empty): views of it (bitcasts, get-tuple-elements
// of tuples holding it), the results of ops that update it in place, and
// the results of while loops whose state it starts. Each is read from that
// buffer, so a write of something else into the buffer comes after all
// their readers.
std::vector<HloInstruction*> HeldValues(HloInstruction* value, std::vector<int64_t> at = {}) {
  std::vector<HloInstruction*> out;
  Work work = {{value, std::move(at)}};
  auto add = [&](HloInstruction* v) {
    if (std::find(out.begin(), out.end(), v) != out.end()) return false;
    out.push_back(v);
    return true;
  };
  for (size_t step = 0; step < work.size() && step < 100000; ++step) {
    auto [v, path] = work[step];
    if (path.empty() && !add(v)) continue;
    for (HloInstruction* u : v->users()) {
      switch (u->opcode()) {
        case HloOpcode::kBitcast:
        case HloOpcode::kOptimizationBarrier:
          work.push_back({u, path});
          break;
        case HloOpcode::kTuple:
          IntoTuple(u, v, path, work);
          break;
        case HloOpcode::kGetTupleElement:
          if (!path.empty() && u->attributes().Get<int64_t>(AttrKey::kIndex) == path[0])
            work.push_back({u, std::vector<int64_t>(path.begin() + 1, path.end())});
          break;
        case HloOpcode::kWhile:
          // The loop runs in the buffers of its initial state.
          work.push_back({u, path});
          break;
        default:
          if (!path.empty()) break;
          for (const analysis::InPlacePair& p : analysis::InPlacePairs(*u)) {
            if (p.operand_index.empty() && u->operand(p.operand) == v)
              work.push_back({u, p.output_index});
          }
      }
    }
  }
  return out;
}

// The value a view chain starts from: through bitcasts, and through
// get-tuple-element of a tuple to the element.
// An opt-barrier passes its operand on unchanged (the same buffers).
const HloInstruction* ThroughBarriers(const HloInstruction* x) {
  while (x->opcode() == HloOpcode::kOptimizationBarrier) x = x->operand(0);
  return x;
}

const HloInstruction* Base(const HloInstruction* x) {
  for (;;) {
    x = ThroughBarriers(x);
    if (x->opcode() == HloOpcode::kBitcast) {
      x = x->operand(0);
    } else if (x->opcode() == HloOpcode::kGetTupleElement &&
               ThroughBarriers(x->operand(0))->opcode() == HloOpcode::kTuple) {
      x = ThroughBarriers(x->operand(0))->operand(x->attributes().Get<int64_t>(AttrKey::kIndex));
    } else {
      return x;
    }
  }
}

// Where a value comes from: through bitcasts, get-tuple-elements and the
// tuples they take apart, the instruction that defines it and the index
// (`at`) of the value in its result.
// From element `at` of x (`at` is updated along the way).
const HloInstruction* OriginFrom(const HloInstruction* x, std::vector<int64_t>& at) {
  for (;;) {
    if (x->opcode() == HloOpcode::kOptimizationBarrier) {
      x = x->operand(0);
    } else if (x->opcode() == HloOpcode::kBitcast) {
      x = x->operand(0);
    } else if (x->opcode() == HloOpcode::kGetTupleElement) {
      at.insert(at.begin(), x->attributes().Get<int64_t>(AttrKey::kIndex));
      x = x->operand(0);
    } else if (x->opcode() == HloOpcode::kTuple && !at.empty()) {
      x = x->operand(at.front());
      at.erase(at.begin());
    } else {
      return x;
    }
  }
}

const HloInstruction* Origin(const HloInstruction* x, std::vector<int64_t>& at) {
  at.clear();
  return OriginFrom(x, at);
}

// Never written in place: constants and the entry's parameters (and views
// of them).
bool ReadOnly(const HloInstruction* x, const HloComputation* entry) {
  std::vector<int64_t> at;
  x = Origin(x, at);
  return x->opcode() == HloOpcode::kConstant ||
         (x->opcode() == HloOpcode::kParameter && x->parent() == entry);
}

// The values tuple elements hold, compared by where they come from (the
// same value reached through different tuples and get-tuple-elements is
// one value, which two elements cannot both own).
class SeenValues {
 public:
  // Whether `x`'s value was seen before; remembers it.
  bool Repeated(const HloInstruction* x) {
    std::vector<int64_t> at;
    const HloInstruction* origin = Origin(x, at);
    auto key = std::make_pair(origin, std::move(at));
    if (std::find(seen_.begin(), seen_.end(), key) != seen_.end()) return true;
    seen_.push_back(std::move(key));
    return false;
  }

 private:
  std::vector<std::pair<const HloInstruction*, std::vector<int64_t>>> seen_;
};

// A value that cannot become a computation's result buffer as it is: a
// constant, a parameter (its caller's buffer) or a view of another value.
bool NeedsOwnBuffer(const HloInstruction* base) {
  return base->opcode() == HloOpcode::kConstant || base->opcode() == HloOpcode::kParameter ||
         IsView(*base);
}

HloInstruction* AddCopy(HloInstruction* x) {
  hlo::ComputationBuilder b(x->parent());
  return b.Add(HloOpcode::kCopy, {x}, {}, x->shape());
}

using analysis::InPlaceOperands;

// `i` overwrites one of `views` (the old value) in place.
bool WritesInPlace(const HloInstruction& i, const std::vector<HloInstruction*>& views) {
  for (int64_t k : InPlaceOperands(i)) {
    const HloInstruction* x = Base(i.operand(k));
    if (std::find(views.begin(), views.end(), x) != views.end()) return true;
  }
  return false;
}

class Inserter {
 public:
  Inserter(HloComputation& c, const HloComputation* entry) : c_(c), entry_(entry), order_(c) {}

  // The computation is a while loop's body: its root's elements become
  // the state's buffers.
  void SetLoopBody() { loop_body_ = true; }

  // `writer` overwrites `value`'s buffer: copy it unless that is safe.
  bool Unsafe(HloInstruction* value, const HloInstruction* writer,
              const HloInstruction* except = nullptr) {
    if (ReadOnly(value, entry_)) return true;
    if (!loop_body_ && &c_ != entry_) {
      // A conditional branch's or a called computation's parameter is its
      // caller's operand buffer (an entry parameter, perhaps): never
      // written in place.
      std::vector<int64_t> at;
      const HloInstruction* origin = Origin(value, at);
      if (origin->opcode() == HloOpcode::kParameter && origin->parent() == &c_) return true;
    }
    if (loop_body_ && writer->opcode() != HloOpcode::kWhile) {
      // An update in place of state element k must end as the body's
      // result k: a value left in slot k's buffer but bound for another
      // slot would be overwritten there by slot k's own result.
      std::vector<int64_t> at;
      const HloInstruction* origin = Origin(value, at);
      if (origin == c_.parameter(0) && at.size() == 1 && !EndsInSlot(writer, at[0])) return true;
    }
    const HloInstruction* base = Base(value);
    if (base == c_.root() || value == c_.root()) return true;
    // An element of a tuple-shaped result (a loop's, a parameter's): every
    // reader of that element, through any get-tuple-element of it.
    std::vector<int64_t> at;
    base = Origin(base, at);
    if (!at.empty() && base == c_.root()) return true;
    for (HloInstruction* r : Readers(const_cast<HloInstruction*>(base), at)) {
      if (r == writer || r == except) continue;
      if (r == c_.root()) return true;  // live out
      if (!order_.After(writer, r)) return true;
    }
    return false;
  }

  bool InPlaceOps() {
    bool changed = false;
    for (HloInstruction* i : c_.MakeInstructionPostOrder()) {
      for (int64_t k : InPlaceOperands(*i)) {
        HloInstruction* x = i->operand(k);
        if (!Unsafe(x, i)) continue;
        i->ReplaceOperand(k, AddCopy(x));
        changed = true;
      }
      if (i->opcode() == HloOpcode::kWhile) changed |= LoopInit(i);
    }
    return changed;
  }

  // Whether `writer` is one of the in-place updates that produce the
  // body's result element k.
  bool EndsInSlot(const HloInstruction* writer, int64_t k) {
    const HloInstruction* root = c_.root();
    if (root->opcode() != HloOpcode::kTuple || k >= root->operand_count()) return false;
    std::vector<int64_t> at;
    const HloInstruction* x = Origin(root->operand(k), at);
    for (int steps = 0; x != nullptr && steps < 100000; ++steps) {
      if (x == writer) return true;
      const HloInstruction* next = nullptr;
      std::vector<int64_t> next_at;
      for (const analysis::InPlacePair& p : analysis::InPlacePairs(*x)) {
        if (!p.operand_index.empty() || p.output_index != at) continue;
        next = Origin(x->operand(p.operand), next_at);
        break;
      }
      x = next;
      at = next_at;
    }
    return false;
  }

  // The initial state becomes the loop's buffers.
  bool LoopInit(HloInstruction* w) {
    HloInstruction* init = w->operand(0);
    bool changed = false;
    if (init->opcode() == HloOpcode::kTuple && init->users().size() > 1) {
      // A state tuple something else reads too (CSE merges the equal
      // initial states of two loops): each loop writes its state in place,
      // so this one starts from a tuple of copies of its own.
      std::vector<HloInstruction*> elements;
      for (HloInstruction* v : init->operands())
        elements.push_back(v->shape().IsArray() ? AddCopy(v) : v);
      w->ReplaceOperand(
          0, c_.AddInstruction(init->CloneWithNewOperands(init->shape(), elements, "own")));
      return true;
    }
    if (init->opcode() != HloOpcode::kTuple) {
      if (!Unsafe(init, w)) return false;
      w->ReplaceOperand(0, AddCopy(init));
      return true;
    }
    SeenValues seen;
    for (int64_t k = 0; k < init->operand_count(); ++k) {
      HloInstruction* v = init->operand(k);
      if (!v->shape().IsArray()) continue;
      const bool repeated = seen.Repeated(v);
      if (!repeated && ReadOnly(v, entry_) && PassedThrough(*w, k)) continue;
      if (repeated || Unsafe(v, w, init)) {
        init->ReplaceOperand(k, AddCopy(v));
        changed = true;
      }
    }
    return changed;
  }

  // Whether loop `w` leaves its state element k as it found it (the body's
  // result k is its parameter's element k) and nothing reads element k of
  // the loop's result. Nothing then writes the element's buffer, so a
  // read-only value (an entry parameter, a constant) can start the loop
  // where it is, uncopied: the values a loop body reads but never changes
  // (weights, inputs, a scan's stacked carries) are not duplicated.
  static bool PassedThrough(const HloInstruction& w, int64_t k) {
    const HloComputation* body = w.attributes().Get<HloComputation*>(AttrKey::kBody);
    const HloInstruction* root = body->root();
    if (root->opcode() != HloOpcode::kTuple || k >= root->operand_count()) return false;
    const HloInstruction* r = root->operand(k);
    if (r->opcode() != HloOpcode::kGetTupleElement || r->operand(0) != body->parameter(0) ||
        r->attributes().Get<int64_t>(AttrKey::kIndex) != k)
      return false;
    for (const HloInstruction* u : w.users()) {
      if (u->opcode() != HloOpcode::kGetTupleElement) return false;
      if (u->attributes().Get<int64_t>(AttrKey::kIndex) == k) return false;
    }
    return true;
  }

  // Readers of the old value (`old`: views of it) that could still run
  // after `out` is written over it: each reader not ordered before `out`,
  // and the instruction producing `out` itself unless it reads the old
  // value element by element or updates it in place.
  std::vector<HloInstruction*> LateReaders(HloInstruction* out,
                                           const std::vector<HloInstruction*>& old) {
    std::vector<int64_t> at;
    const HloInstruction* producer = Origin(out, at);
    // A producer updating a value in place (a scatter into a scatter into
    // a copy, a custom call over one of its operands) shares that value's
    // buffer: the buffer is written from the chain's first writer on, so
    // the old value's readers must come before it.
    auto is_old = [&](const HloInstruction* x, const std::vector<int64_t>& x_at) {
      for (const HloInstruction* v : old) {
        std::vector<int64_t> v_at;
        if (Origin(v, v_at) == x && v_at == x_at) return true;
      }
      return false;
    };
    std::vector<const HloInstruction*> chain;
    const HloInstruction* x = producer;
    std::vector<int64_t> x_at = at;
    for (;;) {
      const HloInstruction* next = nullptr;
      std::vector<int64_t> next_at;
      for (const analysis::InPlacePair& p : analysis::InPlacePairs(*x)) {
        if (!p.operand_index.empty() || p.output_index != x_at) continue;
        next = Origin(x->operand(p.operand), next_at);
        break;
      }
      if (next == nullptr || is_old(next, next_at)) break;
      chain.push_back(next);
      x = next;
      x_at = next_at;
    }
    // A copy of the old value writes the bytes the buffer holds already:
    // the first real write is the chain's next op.
    const HloInstruction* first_writer = chain.empty() ? nullptr : chain.back();
    if (first_writer != nullptr && first_writer->opcode() == HloOpcode::kCopy) {
      std::vector<int64_t> copied_at;
      const HloInstruction* copied = Origin(first_writer->operand(0), copied_at);
      if (is_old(copied, copied_at))
        first_writer = chain.size() >= 2 ? chain[chain.size() - 2] : nullptr;
    }
    std::vector<HloInstruction*> late;
    for (HloInstruction* view : old) {
      for (HloInstruction* r : Readers(view)) {
        if (std::find(late.begin(), late.end(), r) != late.end()) continue;
        if (std::find(chain.begin(), chain.end(), r) != chain.end()) {
          // The chain's earliest op may read the old value as it writes
          // (a copy of it, or element by element); the others read it
          // after the buffer has changed.
          bool in_step = r == chain.back();
          if (in_step && r->opcode() != HloOpcode::kCopy && !hlo::IsElementwise(r->opcode())) {
            for (int64_t k = 0; k < r->operand_count(); ++k) {
              if (r->operand(k) == view && !analysis::CanShareOperandBuffer(*r, k)) in_step = false;
            }
          }
          if (!in_step) late.push_back(r);
          continue;
        }
        if (first_writer != nullptr && r != producer && r != c_.root() &&
            !order_.After(first_writer, r)) {
          late.push_back(r);
          continue;
        }
        if (r == producer) {
          bool in_step = (at.empty() && hlo::IsElementwise(r->opcode())) || WritesInPlace(*r, old);
          if (!in_step && at.empty()) {
            // A loop fusion reading the old value only element by element
            // (in_place.h) may write over it.
            in_step = true;
            for (int64_t k = 0; k < r->operand_count(); ++k) {
              if (r->operand(k) == view && !analysis::CanShareOperandBuffer(*r, k)) in_step = false;
            }
          }
          if (!in_step) late.push_back(r);
        } else if (r != c_.root() && !order_.After(out, r)) {
          late.push_back(r);
        }
      }
    }
    return late;
  }

  // A copy of `out` to write over the old value, ordered after `late`.
  HloInstruction* OrderedCopyOf(HloInstruction* out, const std::vector<HloInstruction*>& late) {
    HloInstruction* copy = AddCopy(out);
    for (HloInstruction* r : late)
      if (!order_.After(copy, r)) r->AddControlDependencyTo(copy);
    return copy;
  }

  // `out` (an element of the root) is written into the buffer `old`
  // (a parameter, or an element of one): a copy ordered after every reader
  // of `old` that may otherwise come later.
  bool OrderedCopy(HloInstruction* root, int64_t k, const std::vector<HloInstruction*>& old) {
    HloInstruction* out = root->operand(k);
    const std::vector<HloInstruction*> late = LateReaders(out, old);
    if (late.empty()) return false;
    root->ReplaceOperand(k, OrderedCopyOf(out, late));
    return true;
  }

  // A loop body: each result element becomes the state element's buffer.
  // The body's moves between slots form a parallel assignment: every
  // slot's write must follow every read of what its buffer held (the old
  // element, and values updated in place from it), including the reads
  // of the copies that move it to another slot. So the copies are made
  // first, then ordered; a cycle of moves (a swap, a rotation) is broken
  // by a second copy of one slot's value, through a temporary.
  bool LoopBody() {
    HloInstruction* root = c_.root();
    HloInstruction* param = c_.parameter(0);
    if (root->opcode() != HloOpcode::kTuple) return false;
    const int64_t n = root->operand_count();
    // State index -> the get-tuple-elements reading it.
    std::unordered_map<int64_t, std::vector<HloInstruction*>> element;
    for (HloInstruction* u : param->users()) {
      if (u->opcode() == HloOpcode::kGetTupleElement)
        element[u->attributes().Get<int64_t>(AttrKey::kIndex)].push_back(u);
    }
    auto keeps = [&](int64_t k) {
      auto it = element.find(k);
      return it != element.end() &&
             std::find(it->second.begin(), it->second.end(), root->operand(k)) != it->second.end();
    };
    std::vector<std::vector<HloInstruction*>> held(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      if (!root->operand(k)->shape().IsArray()) continue;
      held[k] = HeldValues(param, {k});
    }
    auto held_elsewhere = [&](const HloInstruction* x, int64_t k) {
      for (int64_t j = 0; j < n; ++j) {
        if (j != k && std::find(held[j].begin(), held[j].end(), x) != held[j].end()) return true;
      }
      return false;
    };
    bool changed = false;
    // A slot that keeps its value writes nothing; it owns that value.
    SeenValues seen;
    for (int64_t k = 0; k < n; ++k) {
      if (root->operand(k)->shape().IsArray() && keeps(k)) seen.Repeated(root->operand(k));
    }
    // Phase 1: every other slot gets a value of its own.
    std::vector<bool> moved(static_cast<size_t>(n), false);
    for (int64_t k = 0; k < n; ++k) {
      HloInstruction* r = root->operand(k);
      if (!r->shape().IsArray() || keeps(k)) continue;
      const bool repeated = seen.Repeated(r);
      if (repeated || NeedsOwnBuffer(Base(r)) || held_elsewhere(r, k)) {
        root->ReplaceOperand(k, AddCopy(r));
        moved[k] = true;
        changed = true;
      }
    }
    // Phase 2: each write after the reads of its slot's old values.
    for (int64_t k = 0; k < n; ++k) {
      HloInstruction* out = root->operand(k);
      if (!out->shape().IsArray() || keeps(k) || held[k].empty()) continue;
      std::vector<HloInstruction*> late = LateReaders(out, held[k]);
      if (moved[k] && out->shape() == out->operand(0)->shape()) {
        // A copy of the slot's own old value reads each element as it
        // writes it.
        late.erase(std::remove(late.begin(), late.end(), out), late.end());
      }
      if (late.empty()) continue;
      changed = true;
      if (moved[k] && OrderAfter(out, late)) continue;
      root->ReplaceOperand(k, OrderedCopyOf(out, late));
    }
    return changed;
  }

  // Orders `x` after each of `readers` with control edges, unless one of
  // them depends on `x` (the edge would close a cycle): then adds none.
  bool OrderAfter(HloInstruction* x, const std::vector<HloInstruction*>& readers) {
    for (HloInstruction* r : readers) {
      if (r == x || order_.After(r, x)) return false;
    }
    for (HloInstruction* r : readers) {
      if (!order_.After(x, r)) r->AddControlDependencyTo(x);
    }
    // The new edges can make an instruction depend on one placed after it.
    order_.Renumber();
    return true;
  }

  // A conditional branch: its result becomes the conditional's buffers,
  // so it must not be a constant, a parameter (the operand's buffer) or
  // one value in two places.
  bool BranchResult() {
    HloInstruction* root = c_.root();
    bool changed = false;
    if (root->opcode() != HloOpcode::kTuple && root->shape().IsTuple()) {
      // A tuple-shaped root that is not a tuple (the branch's parameter,
      // say): spell it out element by element so each can get its copy.
      root = SpellOutRoot();
      changed = true;
    }
    if (root->opcode() != HloOpcode::kTuple) {
      const HloInstruction* base = Base(root);
      if (root->shape().IsArray() && NeedsOwnBuffer(base)) {
        c_.set_root(AddCopy(root));
        return true;
      }
      return false;
    }
    SeenValues seen;
    for (int64_t k = 0; k < root->operand_count(); ++k) {
      HloInstruction* r = root->operand(k);
      if (!r->shape().IsArray()) continue;
      const bool repeated = seen.Repeated(r);
      const HloInstruction* base = Base(r);
      if (repeated || NeedsOwnBuffer(base)) {
        root->ReplaceOperand(k, AddCopy(r));
        changed = true;
      }
    }
    return changed;
  }

  // Entry outputs: no parameter, constant or repeated value; aliased ones
  // written only after the parameter's readers.
  bool EntryOutputs(const hlo::ModuleConfig& config) {
    bool changed = false;
    HloInstruction* root = c_.root();
    if (root->opcode() != HloOpcode::kTuple && root->shape().IsTuple() && NeedsSpelling(root)) {
      // A tuple-shaped root that is not a tuple (an opt-barrier passing on
      // a constant, say) whose elements need copies: spell it out element
      // by element so each can get its own.
      root = SpellOutRoot();
      changed = true;
    }
    if (root->opcode() != HloOpcode::kTuple) {
      if (root->shape().IsArray() && ReadOnly(root, entry_)) {
        c_.set_root(AddCopy(root));
        changed = true;
      }
    } else {
      SeenValues seen;
      for (int64_t k = 0; k < root->operand_count(); ++k) {
        HloInstruction* v = root->operand(k);
        if (!v->shape().IsArray()) continue;
        const bool repeated = seen.Repeated(v);
        const bool aliased_pass_through = Aliased(config, k, v);
        if (!aliased_pass_through && (repeated || ReadOnly(v, entry_))) {
          root->ReplaceOperand(k, AddCopy(v));
          changed = true;
        }
      }
    }
    for (const hlo::InputOutputAlias& a : config.input_output_alias) {
      if (a.output_index.empty() && root->opcode() != HloOpcode::kTuple)
        changed |= AliasedArrayRoot(a);
      if (a.output_index.size() != 1 || root->opcode() != HloOpcode::kTuple ||
          !a.parameter_index.empty() || a.parameter >= c_.num_parameters())
        continue;
      const int64_t k = a.output_index[0];
      if (k >= root->operand_count()) continue;
      HloInstruction* param = c_.parameter(a.parameter);
      if (Base(root->operand(k)) == param) continue;
      changed |= OrderedCopy(root, k, {param});
    }
    return changed;
  }

 private:
  // Replaces the tuple-shaped root by a tuple of its elements (each a
  // get-tuple-element of it), so each element can get a copy of its own;
  // returns the new root.
  HloInstruction* SpellOutRoot() {
    HloInstruction* root = c_.root();
    hlo::ComputationBuilder b(&c_);
    std::vector<HloInstruction*> elements;
    for (int64_t k = 0; k < static_cast<int64_t>(root->shape().tuple_shapes().size()); ++k) {
      elements.push_back(b.GetTupleElement(root, k));
    }
    HloInstruction* spelled = b.Tuple(elements);
    c_.set_root(spelled);
    return spelled;
  }

  // Whether a tuple-shaped root's array elements include a read-only value
  // (a constant, a parameter) or one value twice.
  bool NeedsSpelling(const HloInstruction* root) const {
    std::vector<std::pair<const HloInstruction*, std::vector<int64_t>>> seen;
    for (int64_t k = 0; k < static_cast<int64_t>(root->shape().tuple_shapes().size()); ++k) {
      if (!root->shape().tuple_shapes(k).IsArray()) continue;
      std::vector<int64_t> at = {k};
      const HloInstruction* origin = OriginFrom(root, at);
      if (at.empty() && (origin->opcode() == HloOpcode::kConstant ||
                         (origin->opcode() == HloOpcode::kParameter && origin->parent() == entry_)))
        return true;
      auto key = std::make_pair(origin, at);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) return true;
      seen.push_back(std::move(key));
    }
    return false;
  }

  // The entry's one array result is written over parameter `a.parameter`:
  // safe if every other reader of it comes first and the result reads it
  // element by element (or updates it in place); else a copy computes
  // into a temporary first, ordered after those readers.
  bool AliasedArrayRoot(const hlo::InputOutputAlias& a) {
    HloInstruction* root = c_.root();
    if (!a.parameter_index.empty() || a.parameter >= c_.num_parameters() ||
        !root->shape().IsArray())
      return false;
    HloInstruction* param = c_.parameter(a.parameter);
    if (Base(root) == param) return false;
    const std::vector<HloInstruction*> late = LateReaders(root, {param});
    if (late.empty()) return false;
    c_.set_root(OrderedCopyOf(root, late));
    return true;
  }

  // The output is the very parameter it is aliased with: no copy.
  bool Aliased(const hlo::ModuleConfig& config, int64_t k, const HloInstruction* v) const {
    for (const hlo::InputOutputAlias& a : config.input_output_alias) {
      if (a.output_index.size() == 1 && a.output_index[0] == k && a.parameter_index.empty() &&
          v->opcode() == HloOpcode::kParameter && v->parameter_number() == a.parameter)
        return true;
    }
    return false;
  }

  HloComputation& c_;
  const HloComputation* entry_;
  DataflowOrder order_;
  bool loop_body_ = false;
};

// Same-layout copies with no control edges: removed (insertion puts back
// the ones that are needed).
bool RemoveCopies(HloComputation& c) {
  bool changed = false;
  for (HloInstruction* i : c.MakeInstructionPostOrder()) {
    if (i->opcode() != HloOpcode::kCopy || i->shape() != i->operand(0)->shape() ||
        !i->control_predecessors().empty() || !i->control_successors().empty())
      continue;
    if (i == c.root()) {
      c.set_root(i->operand(0));
    } else {
      i->ReplaceAllUsesWith(i->operand(0));
    }
    c.RemoveInstruction(i);
    changed = true;
  }
  return changed;
}

}  // namespace

bool CopyInsertion::Run(hlo::HloModule& module) {
  const uint64_t before = module.Fingerprint();
  std::unordered_set<const HloComputation*> bodies;
  std::unordered_set<const HloComputation*> branches;
  for (const auto& c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile)
        bodies.insert(i->attributes().Get<HloComputation*>(AttrKey::kBody));
      if (i->opcode() == HloOpcode::kConditional)
        for (const HloComputation* b : i->called_computations()) branches.insert(b);
    }
  }
  for (HloComputation* c : FusionTargets(module)) {
    RemoveCopies(*c);
    Inserter inserter(*c, module.entry());
    if (bodies.count(c)) inserter.SetLoopBody();
    inserter.InPlaceOps();
    if (bodies.count(c)) inserter.LoopBody();
    if (branches.count(c)) inserter.BranchResult();
    if (c == module.entry()) inserter.EntryOutputs(module.config());
  }
  return module.Fingerprint() != before;
}

}  // namespace uir::passes
