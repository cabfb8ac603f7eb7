// HLO opcodes (from opcode.def) and their properties.
#ifndef UIR_HLO_OPCODE_H_
#define UIR_HLO_OPCODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace uir::hlo {

enum class HloOpcode : uint8_t {
#define UIR_OPCODE(e, name, arity, category, props) e,
#include "hlo/opcode.def"
#undef UIR_OPCODE
};

inline constexpr int kNumOpcodes = 0
#define UIR_OPCODE(e, name, arity, category, props) +1
#include "hlo/opcode.def"
#undef UIR_OPCODE
    ;

inline constexpr int kVariadic = -1;

enum class OpcodeCategory : uint8_t { kUnary, kBinary, kTernary, kOwnAsync, kOther };

// XLA's text spelling ("add", "get-tuple-element", ...).
std::string_view OpcodeName(HloOpcode opcode);
std::optional<HloOpcode> OpcodeFromName(std::string_view name);
// The fixed operand count, or kVariadic.
int OpcodeArity(HloOpcode opcode);
OpcodeCategory OpcodeCategoryOf(HloOpcode opcode);
// Elementwise unary, binary or ternary ops (convert and compare included).
bool IsElementwise(HloOpcode opcode);
// Ops that have their own -start/-done opcodes (copy, all-reduce, ...): the
// generic async-start must not wrap them.
bool HasOwnAsyncPair(HloOpcode opcode);
// True for those ops and their own -start/-update/-done opcodes (copy-start,
// all-reduce-done, send-done, ...): none of them may be wrapped either.
bool IsOwnAsyncFamily(HloOpcode opcode);
bool IsAsyncOpcode(HloOpcode opcode);  // async-start, async-update, async-done
// The property columns of opcode.def. Side effects of custom-call and of ops
// that call computations depend on the instruction: see
// HloInstruction::HasSideEffect.
bool HasSideEffectOpcode(HloOpcode opcode);
bool IsCommutative(HloOpcode opcode);
bool IsAssociative(HloOpcode opcode);

}  // namespace uir::hlo

#endif  // UIR_HLO_OPCODE_H_
