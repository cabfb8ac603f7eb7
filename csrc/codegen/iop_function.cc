// What the CPU and GPU iGraph emitters share: one elementwise iOp's
// function of its inputs, affine offsets at the index variables' values,
// and a reduction's start value (emitter.h).
#include <optional>
#include <string>
#include <vector>

#include "codegen/emitter.h"
#include "hlo/reduction_kind.h"
#include "llvm/IR/IRBuilder.h"
#include "support/error.h"

namespace uir::codegen {

using hlo::HloOpcode;
using igraph::Affine;
using igraph::IGraph;
using igraph::IOp;
using igraph::OpKind;

llvm::Value* AffineAt(llvm::IRBuilder<>& b, const Affine& a,
                      const std::vector<llvm::Value*>& vars) {
  llvm::Value* v = b.getInt64(a.constant);
  for (const auto& [var, c] : a.terms) {
    v = b.CreateAdd(v, b.CreateMul(vars.at(static_cast<size_t>(var)), b.getInt64(c)));
  }
  return v;
}

void SetIndexDigits(llvm::IRBuilder<>& b, const IGraph& g, llvm::Value* id, bool parallel,
                    std::vector<llvm::Value*>& vars) {
  llvm::Value* rest = id;
  for (int v = static_cast<int>(g.vars().size()) - 1; v >= 0; --v) {
    const igraph::IndexVar& var = g.vars()[static_cast<size_t>(v)];
    if (var.parallel != parallel) continue;
    if (var.extent == 1) {
      vars[static_cast<size_t>(v)] = b.getInt64(0);
      continue;
    }
    vars[static_cast<size_t>(v)] = b.CreateURem(rest, b.getInt64(var.extent));
    rest = b.CreateUDiv(rest, b.getInt64(var.extent));
  }
}

llvm::Value* ReductionStart(ScalarEmitter& s, llvm::IRBuilder<>& b, igraph::Fn fn,
                            PrimitiveType t) {
  llvm::Type* ct = s.ComputeType(t);
  // Floats compute wider than narrow storage: their identity in f64.
  const std::optional<hlo::ReductionKind> kind = hlo::ReductionKindOf(igraph::FnOpcode(fn));
  const std::optional<hlo::Literal> id =
      kind ? hlo::ReductionIdentity(*kind, IsFloat(t) ? PrimitiveType::kF64 : t) : std::nullopt;
  if (!id) {
    Unsupported("reduce." + std::string(igraph::FnName(fn)) + " on " +
                std::string(PrimitiveTypeName(t)));
  }
  if (t == PrimitiveType::kPred) return b.getInt1(id->GetInt64(0) != 0);
  if (IsFloat(t)) return llvm::ConstantFP::get(ct, id->GetDouble(0));
  return IsSigned(t) ? llvm::ConstantInt::getSigned(ct, id->GetInt64(0))
                     : llvm::ConstantInt::get(ct, id->GetUint64(0));
}

llvm::Value* EmitIOpFunction(ScalarEmitter& s, llvm::IRBuilder<>& b, const IOp& op,
                             const std::vector<llvm::Value*>& x, llvm::Value* iota_base,
                             llvm::Value* i, llvm::Value* j) {
  switch (op.kind) {
    case OpKind::kUnary:
      if (igraph::FnIs(op.fn, igraph::kScalarFn)) {
        return s.Binary(igraph::FnOpcode(op.fn), op.dtype, x[0],
                        s.Constant(op.params.at(0), op.dtype));
      }
      return s.Unary(igraph::FnOpcode(op.fn), op.dtype, x[0]);
    case OpKind::kBinary:
      return s.Binary(igraph::FnOpcode(op.fn), op.dtype, x[0], x[1]);
    case OpKind::kTernary:
      if (op.fn == igraph::Fn::kSelect) return b.CreateSelect(x[0], x[1], x[2]);
      // clamp(lo, x, hi) = min(max(x, lo), hi)
      return s.Binary(HloOpcode::kMinimum, op.dtype,
                      s.Binary(HloOpcode::kMaximum, op.dtype, x[1], x[0]), x[2]);
    case OpKind::kCompare:
      return s.Compare(igraph::FnName(op.fn), op.dtype, x[0], x[1]);
    case OpKind::kConvert:
      if (op.fn == igraph::Fn::kBitcast) return s.BitcastConvert(op.dtype, op.to_dtype, x[0]);
      return s.Convert(op.dtype, op.to_dtype, x[0]);
    case OpKind::kFill:
      return s.Constant(op.params.at(0), op.dtype);
    case OpKind::kIota: {
      llvm::Value* v = iota_base;
      v = b.CreateAdd(v, b.CreateMul(i, b.getInt64(op.iota_step[0])));
      v = b.CreateAdd(v, b.CreateMul(j, b.getInt64(op.iota_step[1])));
      return s.Convert(PrimitiveType::kS64, op.dtype, v);
    }
    default:
      Unsupported(std::string(OpKindName(op.kind)));
  }
}

}  // namespace uir::codegen
