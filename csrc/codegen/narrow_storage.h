// The narrow floats of a byte or less (the f8, f6 and f4 families, one per
// byte) in kernels: read through a table of their values, written by
// rounding the f32 bits, bit for bit as EncodeNarrowFloat. Scalar in,
// scalar out, so the loop vectorizer widens them. For codegen's .cc files
// only.
#ifndef UIR_CODEGEN_NARROW_STORAGE_H_
#define UIR_CODEGEN_NARROW_STORAGE_H_

#include "llvm/IR/IRBuilder.h"
#include "support/primitive_type.h"

namespace uir::codegen {

// Whether `t` is one of them (not e8m0, which has no sign and no zero).
bool IsByteFloat(PrimitiveType t);

// The f32 value of the byte `raw` (an i8) of type `t`: a load from a
// constant table of the type's values, one per module.
llvm::Value* EmitDecodeByteFloat(llvm::IRBuilder<>& b, PrimitiveType t, llvm::Value* raw);

// The f32 `v` rounded to the nearest value of `t` (ties to even), as an
// i32 holding its encoding: out of range to infinity where `t` has one,
// else NaN where it has one, else the largest finite value of that sign.
llvm::Value* EmitEncodeByteFloat(llvm::IRBuilder<>& b, PrimitiveType t, llvm::Value* v);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_NARROW_STORAGE_H_
