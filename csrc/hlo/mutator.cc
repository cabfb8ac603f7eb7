// Structure-aware mutations of HLO modules (mutator.h).
#include "hlo/mutator.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "hlo/computation.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "support/primitive_type.h"

namespace uir::hlo {
namespace {

constexpr PrimitiveType kTypes[] = {
    PrimitiveType::kPred, PrimitiveType::kS8,  PrimitiveType::kS32,   PrimitiveType::kS64,
    PrimitiveType::kU8,   PrimitiveType::kU32, PrimitiveType::kU64,   PrimitiveType::kF16,
    PrimitiveType::kBF16, PrimitiveType::kF32, PrimitiveType::kF64,   PrimitiveType::kC64,
    PrimitiveType::kS4,   PrimitiveType::kU4,  PrimitiveType::kF8E5M2};

int64_t InterestingInt(std::mt19937_64& rng, int64_t near) {
  switch (rng() % 8) {
    case 0:
      return -1;
    case 1:
      return 0;
    case 2:
      return near + 1;
    case 3:
      return near - 1;
    case 4:
      return static_cast<int64_t>(rng() % 5);
    case 5:
      return int64_t{1} << (rng() % 63);
    case 6:
      return -static_cast<int64_t>(rng() % 100000);
    default:
      return static_cast<int64_t>(rng() % 9);
  }
}

Shape* RandomArray(Shape& s, std::mt19937_64& rng) {
  if (s.IsTuple() || s.IsBuffer()) {
    if (s.tuple_shapes().empty()) return nullptr;
    return RandomArray(s.mutable_tuple_shapes()[rng() % s.tuple_shapes().size()], rng);
  }
  return s.IsArray() ? &s : nullptr;
}

void MutateShape(Shape& s, std::mt19937_64& rng) {
  Shape* a = RandomArray(s, rng);
  if (a == nullptr) return;
  switch (rng() % 7) {
    case 5: {  // a dimension becomes dynamic (<=N), or static again
      if (a->rank() == 0) break;
      const int64_t i = static_cast<int64_t>(rng() % a->rank());
      a->set_dynamic_dimension(i, !a->is_dynamic_dimension(i));
      break;
    }
    case 0:
    case 1: {  // one dimension
      if (a->rank() == 0) break;
      std::vector<int64_t> dims = a->dimensions();
      const int64_t i = static_cast<int64_t>(rng() % dims.size());
      dims[i] = std::max<int64_t>(0, InterestingInt(rng, dims[i]) % 9);
      a->set_dimensions(dims);
      a->clear_layout();
      break;
    }
    case 2: {  // rank
      std::vector<int64_t> dims = a->dimensions();
      if (!dims.empty() && rng() % 2) {
        dims.erase(dims.begin() + static_cast<int64_t>(rng() % dims.size()));
      } else {
        dims.insert(dims.begin() + static_cast<int64_t>(rng() % (dims.size() + 1)),
                    static_cast<int64_t>(rng() % 4));
      }
      a->set_dimensions(dims);
      a->clear_layout();
      break;
    }
    case 3:
      a->set_element_type(kTypes[rng() % std::size(kTypes)]);
      break;
    case 4: {  // a layout, a permutation of the dims
      Layout l = Shape::DefaultLayout(a->rank());
      std::shuffle(l.minor_to_major.begin(), l.minor_to_major.end(), rng);
      a->set_layout(l);
      break;
    }
    default:  // nesting
      s = Shape::Tuple({s});
      break;
  }
}

void MutateAttribute(HloInstruction& inst, std::mt19937_64& rng) {
  auto& entries = inst.attributes().entries();
  if (entries.empty()) return;
  const AttrKey key = entries[rng() % entries.size()].first;
  AttrValue* v = inst.mutable_attributes().FindMutable(key);
  if (auto* i = std::get_if<int64_t>(v)) {
    *i = InterestingInt(rng, *i);
  } else if (auto* list = std::get_if<std::vector<int64_t>>(v)) {
    if (list->empty() || rng() % 4 == 0) {
      list->push_back(InterestingInt(rng, 0));
    } else if (rng() % 4 == 0) {
      list->erase(list->begin() + static_cast<int64_t>(rng() % list->size()));
    } else {
      int64_t& x = (*list)[rng() % list->size()];
      x = InterestingInt(rng, x);
    }
  } else if (auto* b = std::get_if<bool>(v)) {
    *b = !*b;
  } else if (auto* w = std::get_if<Window>(v)) {
    if (!w->dimensions.empty()) {
      auto& d = w->dimensions[rng() % w->dimensions.size()];
      int64_t* fields[] = {&d.size,         &d.stride,        &d.padding_low,
                           &d.padding_high, &d.base_dilation, &d.window_dilation};
      int64_t* f = fields[rng() % std::size(fields)];
      *f = InterestingInt(rng, *f);
    }
  } else if (rng() % 4 == 0) {
    inst.mutable_attributes().Erase(key);
  }
}

}  // namespace

bool MutateModule(HloModule& m, std::mt19937_64& rng) {
  std::vector<HloInstruction*> all;
  for (const auto& c : m.computations())
    for (HloInstruction* inst : c->instructions()) all.push_back(inst);
  if (all.empty()) return false;
  HloInstruction* inst = all[rng() % all.size()];
  switch (rng() % 4) {
    case 0:
      MutateShape(inst->mutable_shape(), rng);
      return true;
    case 1:
      MutateAttribute(*inst, rng);
      return true;
    case 2: {  // an operand from earlier in post order, so no cycle forms
      if (inst->operand_count() == 0) return false;
      std::vector<HloInstruction*> earlier;
      for (HloInstruction* x : inst->parent()->MakeInstructionPostOrder()) {
        if (x == inst) break;
        earlier.push_back(x);
      }
      if (earlier.empty()) return false;
      inst->ReplaceOperand(static_cast<int64_t>(rng() % inst->operand_count()),
                           earlier[rng() % earlier.size()]);
      return true;
    }
    default: {  // a parameter's shape, with every reader's declared shape left as is
      auto params = m.entry()->parameters();
      if (params.empty()) return false;
      MutateShape(params[rng() % params.size()]->mutable_shape(), rng);
      return true;
    }
  }
}

std::string MutateText(std::string_view text, uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed);
  auto m = ParseModule(text);
  for (int k = 0; k < rounds; ++k) MutateModule(*m, rng);
  return PrintModule(*m);
}

}  // namespace uir::hlo
