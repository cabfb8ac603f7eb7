// The scalar arithmetic of iOps in LLVM IR: each element type's storage
// and compute types and the conversions between them, and each function's
// meaning on one element (XLA's semantics: integer division by zero and
// overflow, shifts past the width, NaN-propagating max and min, saturating
// float -> int, narrow floats computed in f32). The kernel emitter
// (emitter.cc) calls it for every element an iOp loads, computes or
// stores; it knows nothing of slices, loops or plans. For codegen's .cc
// files only.
#ifndef UIR_CODEGEN_SCALAR_EMITTER_H_
#define UIR_CODEGEN_SCALAR_EMITTER_H_

#include <string>
#include <string_view>
#include <vector>

#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "support/primitive_type.h"

namespace uir::codegen {

// Throws UnimplementedError: `what` has no machine form.
[[noreturn]] void Unsupported(const std::string& what);

class ScalarEmitter {
 public:
  // Emits at `b`'s insertion point; C library calls are declared in `m`.
  ScalarEmitter(llvm::IRBuilder<>& b, llvm::Module& m) : b_(b), m_(m) {}

  // For a GPU: the C library's functions (sin, atan2, pow, ...) from
  // gpu_math.h instead, which a GPU can run.
  void set_gpu(bool gpu) { gpu_ = gpu; }

  // The type `t` is stored as in memory (sub-byte integers and byte floats:
  // one per byte, in its low bits).
  llvm::Type* StorageType(PrimitiveType t);
  // The type arithmetic happens in: narrow floats widen to float, pred is i1.
  llvm::Type* ComputeType(PrimitiveType t);
  llvm::Value* FromStorage(PrimitiveType t, llvm::Value* raw);
  llvm::Value* ToStorage(PrimitiveType t, llvm::Value* v);
  llvm::Value* Load(PrimitiveType t, llvm::Value* address);
  void Store(PrimitiveType t, llvm::Value* v, llvm::Value* address);
  // A scalar literal as a value of `t`'s compute type.
  llvm::Value* Constant(const hlo::Literal& literal, PrimitiveType t);
  // A reduction step the vectorizer may reorder: reductions have no fixed
  // order in HLO.
  llvm::Value* Reassociable(hlo::HloOpcode op, PrimitiveType t, llvm::Value* a, llvm::Value* x);
  llvm::Value* Unary(hlo::HloOpcode op, PrimitiveType t, llvm::Value* x);
  llvm::Value* Binary(hlo::HloOpcode op, PrimitiveType t, llvm::Value* a, llvm::Value* c);
  llvm::Value* Compare(std::string_view direction, PrimitiveType t, llvm::Value* a, llvm::Value* c);
  // The same bits read as `to` (IsRegisterBitcast: the iGraph builder
  // keeps other bitcast-converts on the evaluator).
  llvm::Value* BitcastConvert(PrimitiveType from, PrimitiveType to, llvm::Value* v);
  // XLA's conversions: float -> int saturates and sends NaN to 0; x -> pred
  // is x != 0; integers extend by the source's signedness.
  llvm::Value* Convert(PrimitiveType from, PrimitiveType to, llvm::Value* v);

 private:
  static bool IsSubByteInteger(PrimitiveType t) { return IsInteger(t) && BitWidth(t) < 8; }
  llvm::Value* Intrinsic(llvm::Intrinsic::ID id, llvm::Value* x);
  llvm::Value* Intrinsic(llvm::Intrinsic::ID id, llvm::Value* x, llvm::Value* y);
  // A call of the C library's `name` (float: `name` + "f").
  llvm::Value* Libm(const std::string& name, std::vector<llvm::Value*> args);
  llvm::Value* IntBinary(hlo::HloOpcode op, PrimitiveType t, llvm::Value* a, llvm::Value* c);

  llvm::IRBuilder<>& b_;
  llvm::Module& m_;
  bool gpu_ = false;
};

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_SCALAR_EMITTER_H_
