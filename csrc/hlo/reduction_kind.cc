#include "hlo/reduction_kind.h"

#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
#include <limits>

#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "support/float_format.h"

namespace uir::hlo {

namespace {

constexpr std::array kRows = {
#define UIR_REDUCTION(kind, opcode, name) \
  ReductionRow{ReductionKind::kind, HloOpcode::opcode, name},
#include "hlo/reduction_kind.def"
#undef UIR_REDUCTION
};

const ReductionRow& Row(ReductionKind kind) { return kRows[static_cast<size_t>(kind)]; }

}  // namespace

std::span<const ReductionRow> ReductionKinds() { return kRows; }

std::optional<ReductionKind> ReductionKindOf(HloOpcode opcode) {
  for (const ReductionRow& r : kRows) {
    if (r.opcode == opcode) return r.kind;
  }
  return std::nullopt;
}

std::optional<ReductionKind> ReductionKindNamed(std::string_view name) {
  for (const ReductionRow& r : kRows) {
    if (r.name == name) return r.kind;
  }
  return std::nullopt;
}

HloOpcode ReductionOpcode(ReductionKind kind) { return Row(kind).opcode; }

std::string_view ReductionName(ReductionKind kind) { return Row(kind).name; }

std::optional<ReductionKind> ReducerKind(const HloComputation& reducer) {
  const HloInstruction* r = reducer.root();
  if (reducer.num_parameters() != 2 || r->operand_count() != 2) return std::nullopt;
  const HloInstruction* a = r->operand(0);
  const HloInstruction* b = r->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter || a == b) {
    return std::nullopt;
  }
  return ReductionKindOf(r->opcode());
}

std::optional<Literal> ReductionIdentity(ReductionKind kind, PrimitiveType type) {
  Literal out{Shape(type, {})};
  const bool one = kind == ReductionKind::kMultiply || kind == ReductionKind::kAnd ||
                   kind == ReductionKind::kMinimum;
  if (type == PrimitiveType::kPred) {
    out.SetInt64(0, one ? 1 : 0);
    return out;
  }
  if (IsComplex(type)) {
    if (kind != ReductionKind::kAdd && kind != ReductionKind::kMultiply) return std::nullopt;
    // -0 in both parts keeps signed zeros; 1 + 0i multiplies exactly only
    // finite values (inf * 0 is NaN in the product's cross terms).
    out.SetComplex(0, kind == ReductionKind::kAdd ? std::complex<double>(-0.0, -0.0)
                                                  : std::complex<double>(1.0, 0.0));
    return out;
  }
  if (IsFloat(type)) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    // Narrow formats without infinity have no identity for max and min;
    // the "fnuz" ones have no -0 (its encoding is their NaN).
    const NanEncoding nan = IsNarrowFloat(type) ? FormatOf(type).nan : NanEncoding::kIeee;
    switch (kind) {
      case ReductionKind::kAdd:
        out.SetDouble(0, nan == NanEncoding::kNegZero ? 0.0 : -0.0);
        return out;
      case ReductionKind::kMultiply:
        out.SetDouble(0, 1.0);
        return out;
      case ReductionKind::kMaximum:
      case ReductionKind::kMinimum:
        if (nan != NanEncoding::kIeee) return std::nullopt;
        out.SetDouble(0, kind == ReductionKind::kMaximum ? -kInf : kInf);
        return out;
      default:
        return std::nullopt;
    }
  }
  if (!IsInteger(type)) return std::nullopt;
  const int bits = BitWidth(type);
  const bool s = IsSigned(type);
  const uint64_t all = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  switch (kind) {
    case ReductionKind::kAdd:
    case ReductionKind::kOr:
    case ReductionKind::kXor:
      out.SetInt64(0, 0);
      break;
    case ReductionKind::kMultiply:
      out.SetInt64(0, 1);
      break;
    case ReductionKind::kAnd:
      if (s) {
        out.SetInt64(0, -1);
      } else {
        out.SetUint64(0, all);
      }
      break;
    case ReductionKind::kMaximum:
      if (s) {
        out.SetInt64(0, -static_cast<int64_t>(all >> 1) - 1);
      } else {
        out.SetUint64(0, 0);
      }
      break;
    case ReductionKind::kMinimum:
      if (s) {
        out.SetInt64(0, static_cast<int64_t>(all >> 1));
      } else {
        out.SetUint64(0, all);
      }
      break;
  }
  return out;
}

bool IsReductionIdentity(ReductionKind kind, const Literal& scalar) {
  if (!scalar.shape().IsArray() || scalar.element_count() != 1) return false;
  const std::optional<Literal> id = ReductionIdentity(kind, scalar.shape().element_type());
  if (!id) return false;
  const auto a = scalar.bytes();
  const auto b = id->bytes();
  return a.size() >= b.size() && std::equal(b.begin(), b.end(), a.begin());
}

}  // namespace uir::hlo
