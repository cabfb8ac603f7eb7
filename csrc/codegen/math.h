// Vectorizable elementwise math for the emitters: polynomial forms of exp,
// expm1, log, log1p, tanh and logistic built from arithmetic, compares,
// selects and bit casts only, so the loop vectorizer turns them into vector
// code at the host's width. Scalar float or double in, same type out.
// Accuracy (tests/codegen/test_math_ulps.py measures it against float64 or
// mpmath-free long double references over the whole range): see README.md.
// For codegen's .cc files only.
#ifndef UIR_CODEGEN_MATH_H_
#define UIR_CODEGEN_MATH_H_

#include "llvm/IR/IRBuilder.h"

namespace uir::codegen {

// A module flag: when set (to 1), exp scales by powers of two with
// AVX-512's vscalef, through helper functions the loop vectorizer replaces
// with vector variants, inlined after vectorization (InlineLateHelpers).
inline constexpr const char* kScalefModuleFlag = "uir.x86-scalef";
// A module flag: when set, heavy column loops prefetch their dram inputs
// ahead (EmitPrefetch).
inline constexpr const char* kPrefetchModuleFlag = "uir.prefetch";
// The function attribute of such helpers.
inline constexpr const char* kLateInlineAttribute = "uir-late-inline";

llvm::Value* EmitExp(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitExpm1(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitLog(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitLog1p(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitTanh(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitLogistic(llvm::IRBuilder<>& b, llvm::Value* x);

bool UsesPrefetch(const llvm::Module& m);
// In a loop over consecutive elements of `element_bytes` each, at element
// `p`: a prefetch of the cache line `ahead` bytes further, through a
// helper whose vector variants take the first lane's address (a linear
// parameter) and prefetch each line the vector's span covers, so a
// vectorized loop prefetches once per line, not per element.
void EmitPrefetch(llvm::IRBuilder<>& b, llvm::Value* p, int element_bytes, int64_t ahead);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_MATH_H_
