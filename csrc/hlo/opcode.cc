// Lookups over opcode.def.
#include "hlo/opcode.h"

#include <algorithm>
#include <array>

#include "support/error.h"

namespace uir::hlo {
namespace {

constexpr int kSideEffect = 1;
constexpr int kCommutative = 2;
constexpr int kAssociative = 4;

struct OpcodeInfo {
  std::string_view name;
  int arity;
  OpcodeCategory category;
  int properties;
};

constexpr std::array<OpcodeInfo, kNumOpcodes> kOpcodes = {{
#define UIR_OPCODE(e, name, arity, category, props) {name, arity, OpcodeCategory::category, props},
#include "hlo/opcode.def"
#undef UIR_OPCODE
}};

// opcode.def is sorted by name, so lookups can bisect; checked at compile time.
constexpr bool SortedByName() {
  for (size_t i = 1; i < kOpcodes.size(); ++i) {
    if (!(kOpcodes[i - 1].name < kOpcodes[i].name)) return false;
  }
  return true;
}
static_assert(SortedByName(), "opcode.def must be sorted by text name");

const OpcodeInfo& Info(HloOpcode opcode) {
  auto index = static_cast<size_t>(opcode);
  UIR_CHECK(index < kOpcodes.size()) << "bad HloOpcode " << index;
  return kOpcodes[index];
}

}  // namespace

std::string_view OpcodeName(HloOpcode opcode) { return Info(opcode).name; }

std::optional<HloOpcode> OpcodeFromName(std::string_view name) {
  auto it =
      std::lower_bound(kOpcodes.begin(), kOpcodes.end(), name,
                       [](const OpcodeInfo& info, std::string_view n) { return info.name < n; });
  if (it == kOpcodes.end() || it->name != name) return std::nullopt;
  return static_cast<HloOpcode>(it - kOpcodes.begin());
}

int OpcodeArity(HloOpcode opcode) { return Info(opcode).arity; }
OpcodeCategory OpcodeCategoryOf(HloOpcode opcode) { return Info(opcode).category; }

bool IsElementwise(HloOpcode opcode) {
  OpcodeCategory c = Info(opcode).category;
  return c == OpcodeCategory::kUnary || c == OpcodeCategory::kBinary ||
         c == OpcodeCategory::kTernary;
}

bool HasOwnAsyncPair(HloOpcode opcode) {
  return Info(opcode).category == OpcodeCategory::kOwnAsync;
}

bool IsOwnAsyncFamily(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecvDone:
      return true;
    default:
      return HasOwnAsyncPair(opcode);
  }
}

bool IsAsyncOpcode(HloOpcode opcode) {
  return opcode == HloOpcode::kAsyncStart || opcode == HloOpcode::kAsyncUpdate ||
         opcode == HloOpcode::kAsyncDone;
}

bool HasSideEffectOpcode(HloOpcode opcode) { return Info(opcode).properties & kSideEffect; }
bool IsCommutative(HloOpcode opcode) { return Info(opcode).properties & kCommutative; }
bool IsAssociative(HloOpcode opcode) { return Info(opcode).properties & kAssociative; }

}  // namespace uir::hlo
