// What a reduction is: one description of each reduction kind (its HLO
// opcode, its name in the iGraph's text, its identity), read by the
// evaluator, the passes, the iGraph and the emitter (reduction_kind.def).
#ifndef UIR_HLO_REDUCTION_KIND_H_
#define UIR_HLO_REDUCTION_KIND_H_

#include <optional>
#include <span>
#include <string_view>

#include "hlo/literal.h"
#include "hlo/opcode.h"

namespace uir::hlo {

class HloComputation;

enum class ReductionKind {
#define UIR_REDUCTION(kind, opcode, name) kind,
#include "hlo/reduction_kind.def"
#undef UIR_REDUCTION
};

struct ReductionRow {
  ReductionKind kind;
  HloOpcode opcode;
  std::string_view name;
};

// Every kind, in reduction_kind.def's order.
std::span<const ReductionRow> ReductionKinds();

// The kind of a binary opcode or of a name; nullopt when there is none.
std::optional<ReductionKind> ReductionKindOf(HloOpcode opcode);
std::optional<ReductionKind> ReductionKindNamed(std::string_view name);
HloOpcode ReductionOpcode(ReductionKind kind);
std::string_view ReductionName(ReductionKind kind);

// The kind a reducer computation applies: its root is one of the kinds'
// opcodes over its two distinct parameters.
std::optional<ReductionKind> ReducerKind(const HloComputation& reducer);

// The identity of `kind` for elements of `type`, as a scalar literal;
// nullopt for types the kind does not reduce (complex max/min, and/or/xor
// of floats).
std::optional<Literal> ReductionIdentity(ReductionKind kind, PrimitiveType type);
// Whether `scalar` (a one-element literal) is bit for bit that identity.
bool IsReductionIdentity(ReductionKind kind, const Literal& scalar);

}  // namespace uir::hlo

#endif  // UIR_HLO_REDUCTION_KIND_H_
