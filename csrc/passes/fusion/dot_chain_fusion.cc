#include "passes/fusion/dot_chain_fusion.h"

#include <algorithm>

#include "analysis/dot_chain.h"
#include "passes/fusion/fusion_utils.h"
#include "passes/fusion/priority_fusion.h"

namespace uir::passes {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

// Cheap to repeat: a copy stays for other readers (broadcasts of scalars,
// scalar constants).
bool Duplicable(const HloInstruction& i) {
  if (i.opcode() == HloOpcode::kConstant) return i.shape().rank() == 0;
  return i.opcode() == HloOpcode::kBroadcast && i.operand(0)->shape().rank() == 0;
}

bool RunOnComputation(HloComputation& c, const MachineModel& machine,
                      std::vector<std::string>& log) {
  bool changed = false;
  const std::vector<HloInstruction*> order = c.MakeInstructionPostOrder();
  for (HloInstruction* second : order) {
    if (second->opcode() != HloOpcode::kDot || second->operand_count() != 2) continue;
    const HloOpcode lhs_op = second->operand(0)->opcode();
    if (lhs_op != HloOpcode::kFusion && !hlo::IsElementwise(lhs_op)) continue;
    std::string why;
    const auto enter = [](const HloInstruction& f) { return f.shape().IsArray(); };
    std::optional<analysis::DotChain> chain = analysis::MatchDotChain(*second, &why, enter);
    if (chain && analysis::DotChainBlockRows(*chain, machine.fast_memory_bytes()) <= 0) {
      why =
          "reading the dots' right operands again for every block of rows costs more than "
          "the intermediate";
      chain.reset();
    }
    if (chain) {
      // Every part must be the chain's alone, so that fusing removes it.
      for (const HloInstruction* part : chain->spread) {
        if (Duplicable(*part)) continue;
        for (const HloInstruction* user : part->users()) {
          const bool inside =
              user == second ||
              std::find(chain->spread.begin(), chain->spread.end(), user) != chain->spread.end();
          if (!inside) {
            why = "%" + part->name() + " is also read by %" + user->name();
            chain.reset();
            break;
          }
        }
        if (!chain) break;
      }
    }
    if (!chain) {
      log.push_back("%" + second->name() + " left alone: " + why);
      continue;
    }
    const std::string name = second->name();
    HloInstruction* fusion = fusion::WrapInFusion(second, hlo::FusionKind::kOutput);
    std::string parts;
    for (const HloInstruction* part : chain->spread) {  // users before operands
      auto* p = const_cast<HloInstruction*>(part);
      parts += (parts.empty() ? "%" : ", %") + p->name();
      fusion::FuseProducerInto(fusion, p);
      if (p->users().empty()) c.RemoveInstruction(p);
    }
    // Scalar constants the epilogue reads join it.
    for (bool again = true; again;) {
      again = false;
      for (HloInstruction* o : fusion->operands()) {
        if (o->opcode() != HloOpcode::kConstant || o->shape().rank() != 0) continue;
        fusion::FuseProducerInto(fusion, o);
        if (o->users().empty()) c.RemoveInstruction(o);
        again = true;
        break;
      }
    }
    fusion::TidyFusedComputation(*fusion);
    log.push_back("%" + name + " fused with " + parts + " into %" + fusion->name());
    changed = true;
  }
  return changed;
}

}  // namespace

bool DotChainFusion::Run(hlo::HloModule& module) {
  decisions_.clear();
  bool changed = false;
  for (HloComputation* c : FusionTargets(module))
    changed |= RunOnComputation(*c, machine_, decisions_);
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
