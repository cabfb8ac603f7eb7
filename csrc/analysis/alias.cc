#include "analysis/alias.h"

#include <numeric>
#include <sstream>

#include "analysis/in_place.h"
#include "hlo/computation.h"

namespace uir::analysis {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool HloBuffer::has_entry_parameter() const {
  for (const HloValue* v : values_) {
    const HloInstruction* i = v->instruction();
    if (i->opcode() == HloOpcode::kParameter && i->parent() == i->parent()->parent()->entry())
      return true;
  }
  return false;
}

bool HloBuffer::has_constant() const {
  for (const HloValue* v : values_)
    if (v->instruction()->opcode() == HloOpcode::kConstant) return true;
  return false;
}

bool HloBuffer::live_out() const {
  for (const HloValue* v : values_)
    if (v->live_out()) return true;
  return false;
}

std::string HloBuffer::ToString() const {
  std::string out = "buffer " + std::to_string(id_) + " (" + std::to_string(bytes_) + " bytes):";
  for (const HloValue* v : values_) out += " " + v->ToShortString();
  return out;
}

namespace {

struct UnionFind {
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int64_t Find(int64_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(int64_t a, int64_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  std::vector<int64_t> parent;
};

}  // namespace

std::unique_ptr<HloAliasAnalysis> HloAliasAnalysis::Run(const hlo::HloModule& module) {
  auto a = std::make_unique<HloAliasAnalysis>();
  a->dataflow_ = HloDataflowAnalysis::Run(module);
  const HloDataflowAnalysis& df = *a->dataflow_;
  UnionFind uf(df.values().size());
  for (const auto& v : df.values()) {
    for (const HloValue* in : v->phi_inputs()) uf.Union(v->id(), in->id());
  }
  for (const hlo::HloComputation* c : df.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      for (const InPlacePair& p : InPlacePairs(*i)) {
        if (p.operand >= i->operand_count()) continue;
        const HloInstruction* x = i->operand(p.operand);
        const InstructionValueSet& in = df.value_set(x);
        const InstructionValueSet& out = df.value_set(i);
        // Only indices both sides have (a malformed alias is the verifier's).
        const HloValue* from = nullptr;
        const HloValue* to = nullptr;
        for (size_t n = 0; n < in.indices().size(); ++n)
          if (in.indices()[n] == p.operand_index) from = in.values()[n];
        for (size_t n = 0; n < out.indices().size(); ++n)
          if (out.indices()[n] == p.output_index) to = out.values()[n];
        if (from != nullptr && to != nullptr) uf.Union(from->id(), to->id());
      }
    }
  }
  const hlo::HloComputation* entry = module.entry();
  for (const hlo::InputOutputAlias& alias : module.config().input_output_alias) {
    if (alias.parameter < 0 || alias.parameter >= entry->num_parameters()) continue;
    const InstructionValueSet& in = df.value_set(entry->parameter(alias.parameter));
    const InstructionValueSet& out = df.value_set(entry->root());
    const HloValue* from = nullptr;
    const HloValue* to = nullptr;
    for (size_t n = 0; n < in.indices().size(); ++n)
      if (in.indices()[n] == alias.parameter_index) from = in.values()[n];
    for (size_t n = 0; n < out.indices().size(); ++n)
      if (out.indices()[n] == alias.output_index) to = out.values()[n];
    if (from != nullptr && to != nullptr) uf.Union(from->id(), to->id());
  }
  // Buffers numbered in order of their first value.
  std::vector<int64_t> number(df.values().size(), -1);
  a->buffer_of_.resize(df.values().size());
  for (const auto& v : df.values()) {
    const int64_t root = uf.Find(v->id());
    if (number[root] < 0) {
      number[root] = static_cast<int64_t>(a->buffers_.size());
      a->buffers_.emplace_back();
      a->buffers_.back().id_ = number[root];
    }
    HloBuffer& b = a->buffers_[number[root]];
    b.values_.push_back(v.get());
    b.bytes_ = std::max(b.bytes_, v->bytes());
    a->buffer_of_[v->id()] = number[root];
  }
  return a;
}

std::string HloAliasAnalysis::ToString() const {
  std::ostringstream os;
  os << "HloAliasAnalysis, module " << dataflow_->module().name() << ": " << buffers_.size()
     << " buffers\n";
  for (const HloBuffer& b : buffers_) {
    if (b.values().size() > 1) os << "  " << b.ToString() << "\n";
  }
  return os.str();
}

}  // namespace uir::analysis
