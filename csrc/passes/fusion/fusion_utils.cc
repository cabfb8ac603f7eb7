#include "passes/fusion/fusion_utils.h"

#include <algorithm>
#include <unordered_map>

#include "hlo/builder.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fusion/fusion_analysis.h"
#include "support/error.h"

namespace uir::passes::fusion {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

HloInstruction* AddParameter(HloComputation* c, const hlo::Shape& shape) {
  const int64_t n = c->num_parameters();
  auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, shape,
                                                c->UniqueName("param_" + std::to_string(n)));
  param->set_parameter_number(n);
  return c->AddInstruction(std::move(param));
}

HloInstruction* AddClone(HloComputation* c, const HloInstruction& original,
                         const std::vector<HloInstruction*>& operands) {
  auto clone = original.CloneWithNewOperands(original.shape(), operands);
  clone->set_name(c->UniqueName(original.name()));
  return c->AddInstruction(std::move(clone));
}

}  // namespace

HloInstruction* WrapInFusion(HloInstruction* instruction, hlo::FusionKind kind) {
  HloComputation* parent = instruction->parent();
  hlo::HloModule* module = parent->parent();
  UIR_CHECK(module != nullptr) << "fusing %" << instruction->name() << " outside a module";
  HloComputation* fused = module->AddComputation(
      std::make_unique<HloComputation>(module->UniqueComputationName("fused_computation")));
  std::vector<HloInstruction*> outer;
  std::vector<HloInstruction*> operands;
  for (HloInstruction* o : instruction->operands()) {
    auto it = std::find(outer.begin(), outer.end(), o);
    if (it != outer.end()) {
      operands.push_back(fused->parameter(it - outer.begin()));
      continue;
    }
    outer.push_back(o);
    operands.push_back(AddParameter(fused, o->shape()));
  }
  fused->set_root(AddClone(fused, *instruction, operands));

  auto fusion = std::make_unique<HloInstruction>(HloOpcode::kFusion, instruction->shape(),
                                                 parent->UniqueName("fusion"));
  for (HloInstruction* o : outer) fusion->AppendOperand(o);
  fusion->mutable_attributes().SetEnum(AttrKey::kKind, kind);
  fusion->mutable_attributes().Set(AttrKey::kCalls, fused);
  HloInstruction* result = parent->AddInstruction(std::move(fusion));
  parent->ReplaceInstruction(instruction, result);
  return result;
}

namespace {

// The kind only grows: kLoop < kInput < kOutput.
void RaiseKind(HloInstruction* fusion, const HloInstruction& added_from) {
  using hlo::FusionKind;
  const auto rank = [](FusionKind kind) {
    return kind == FusionKind::kOutput ? 2 : kind == FusionKind::kInput ? 1 : 0;
  };
  FusionKind added = FusionKind::kLoop;
  if (added_from.opcode() == HloOpcode::kFusion) {
    added = added_from.attributes().GetEnum<FusionKind>(AttrKey::kKind);
  } else if (added_from.opcode() == HloOpcode::kReduce) {
    added = FusionKind::kInput;
  } else if (added_from.opcode() == HloOpcode::kDot ||
             added_from.opcode() == HloOpcode::kConvolution) {
    added = FusionKind::kOutput;
  }
  if (rank(added) > rank(fusion->attributes().GetEnum<FusionKind>(AttrKey::kKind)))
    fusion->mutable_attributes().SetEnum(AttrKey::kKind, added);
}

// The parameter of `fusion` that reads `outer`, made if there is none.
HloInstruction* ParameterFor(HloInstruction* fusion, HloInstruction* outer) {
  HloComputation* fused = FusedComputation(*fusion);
  for (int64_t i = 0; i < fusion->operand_count(); ++i) {
    if (fusion->operand(i) == outer) return fused->parameter(i);
  }
  fusion->AppendOperand(outer);
  return AddParameter(fused, outer->shape());
}

// Clones `body` (a plain instruction, or a fusion whose computation is
// inlined) into `into`, its operands given by `operand_for`; returns the
// clone of its result.
template <typename OperandFor>
HloInstruction* CloneBody(HloComputation* into, const HloInstruction& body,
                          OperandFor operand_for) {
  if (body.opcode() != HloOpcode::kFusion) {
    std::vector<HloInstruction*> operands;
    for (HloInstruction* o : body.operands()) operands.push_back(operand_for(o));
    return AddClone(into, body, operands);
  }
  const HloComputation* inner = FusedComputation(body);
  std::unordered_map<const HloInstruction*, HloInstruction*> map;
  for (int64_t k = 0; k < inner->num_parameters(); ++k)
    map[inner->parameter(k)] = operand_for(body.operand(k));
  for (const HloInstruction* n : inner->MakeInstructionPostOrder()) {
    if (n->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* o : n->operands()) operands.push_back(map.at(o));
    map[n] = AddClone(into, *n, operands);
  }
  return map.at(inner->root());
}

}  // namespace

HloInstruction* FuseConsumerIntoProducer(HloInstruction* producer, HloInstruction* consumer) {
  UIR_CHECK(producer->opcode() == HloOpcode::kFusion && producer->user_count() == 1 &&
            producer->users()[0] == consumer)
      << "%" << consumer->name() << " is not the only user of fusion %" << producer->name();
  HloComputation* fused = FusedComputation(*producer);
  HloInstruction* old_root = fused->root();
  HloInstruction* root = CloneBody(fused, *consumer, [&](HloInstruction* o) {
    return o == producer ? old_root : ParameterFor(producer, o);
  });
  fused->set_root(root);
  producer->mutable_shape() = consumer->shape();
  RaiseKind(producer, *consumer);
  consumer->ReplaceAllUsesWith(producer);
  consumer->parent()->RemoveInstruction(consumer);
  return producer;
}

namespace {

// Makes `value` (an instruction of `fusion`'s computation) one more output of
// `fusion`: the root becomes (or grows) a tuple, the fusion takes its shape,
// and former readers of a single-output fusion read element 0. Returns a
// get-tuple-element of the new output.
HloInstruction* AddOutput(HloInstruction* fusion, HloInstruction* value) {
  HloComputation* fused = FusedComputation(*fusion);
  HloComputation* parent = fusion->parent();
  HloInstruction* old_root = fused->root();
  const bool was_tuple = old_root->opcode() == HloOpcode::kTuple;
  const std::vector<HloInstruction*> readers = fusion->users();
  const bool was_root = parent->root() == fusion;

  std::vector<HloInstruction*> outputs;
  if (was_tuple) {
    outputs = old_root->operands();
  } else {
    outputs.push_back(old_root);
  }
  const int64_t index = static_cast<int64_t>(outputs.size());
  outputs.push_back(value);
  hlo::ComputationBuilder inside(fused);
  HloInstruction* tuple = inside.Tuple(outputs);
  fused->set_root(tuple);
  if (was_tuple) fused->RemoveInstruction(old_root);
  fusion->mutable_shape() = tuple->shape();

  hlo::ComputationBuilder outside(parent);
  if (!was_tuple) {
    HloInstruction* first = outside.GetTupleElement(fusion, 0);
    for (HloInstruction* u : readers) u->ReplaceUsesOfOperand(fusion, first);
    if (was_root) parent->set_root(first);
  }
  return outside.GetTupleElement(fusion, index);
}

}  // namespace

HloInstruction* MergeSibling(HloInstruction* a, HloInstruction* b) {
  UIR_CHECK(a->opcode() == HloOpcode::kFusion) << "%" << a->name() << " is not a fusion";
  HloInstruction* b_root =
      CloneBody(FusedComputation(*a), *b, [&](HloInstruction* o) { return ParameterFor(a, o); });
  HloInstruction* b_value = AddOutput(a, b_root);
  RaiseKind(a, *b);
  b->ReplaceAllUsesWith(b_value);
  b->parent()->RemoveInstruction(b);
  return a;
}

HloInstruction* FuseProducerAsOutput(HloInstruction* fusion, HloInstruction* producer) {
  UIR_CHECK(fusion->opcode() == HloOpcode::kFusion) << "%" << fusion->name() << " is not a fusion";
  UIR_CHECK(producer->shape().IsArray()) << "%" << producer->name() << " has more than one output";
  HloInstruction* value = FuseProducerInto(fusion, producer);
  HloInstruction* read = AddOutput(fusion, value);
  producer->ReplaceAllUsesWith(read);
  producer->parent()->RemoveInstruction(producer);
  return fusion;
}

HloInstruction* FuseProducerInto(HloInstruction* fusion, HloInstruction* producer) {
  HloComputation* fused = FusedComputation(*fusion);
  std::vector<int64_t> reading;
  for (int64_t i = 0; i < fusion->operand_count(); ++i) {
    if (fusion->operand(i) == producer) reading.push_back(i);
  }
  UIR_CHECK(!reading.empty()) << "%" << producer->name() << " is no operand of %" << fusion->name();
  HloInstruction* result =
      CloneBody(fused, *producer, [&](HloInstruction* o) { return ParameterFor(fusion, o); });
  for (int64_t i : reading) fused->parameter(i)->ReplaceAllUsesWith(result);
  for (auto it = reading.rbegin(); it != reading.rend(); ++it) {
    fused->RemoveParameter(*it);
    fusion->RemoveOperand(*it);
  }
  RaiseKind(fusion, *producer);
  return result;
}

void TidyFusedComputation(const HloInstruction& fusion) {
  HloComputation* fused = FusedComputation(fusion);
  if (CseComputation(*fused)) RemoveDeadInstructions(*fused);
  for (int64_t k = 0; k < fused->num_parameters(); ++k) {
    HloInstruction* param = fused->parameter(k);
    const std::string want = "param_" + std::to_string(k);
    if (param->name().rfind(want + ".", 0) != 0 && param->name() != want)
      param->set_name(fused->UniqueName(want));
  }
}

std::unordered_set<const HloComputation*> FusedComputations(const hlo::HloModule& module) {
  std::unordered_set<const HloComputation*> out;
  for (const auto& c : module.computations()) {
    for (const HloInstruction* i : c->instructions())
      if (i->opcode() == HloOpcode::kFusion) out.insert(FusedComputation(*i));
  }
  return out;
}

void UpdateFusionKind(HloInstruction* fusion) {
  fusion->mutable_attributes().SetEnum(AttrKey::kKind, FusionSummary::Of(*fusion).Kind());
}

}  // namespace uir::passes::fusion
