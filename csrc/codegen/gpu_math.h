// The GPU's forms of the functions the CPU backend takes from the C library
// (sin, cos, tan, cbrt, erf, the hyperbolic and inverse functions, atan2,
// pow): arithmetic and uir's own exp and log only, so LLVM's NVPTX back end
// lowers them. For codegen's .cc files only.
#ifndef UIR_CODEGEN_GPU_MATH_H_
#define UIR_CODEGEN_GPU_MATH_H_

#include "hlo/opcode.h"
#include "llvm/IR/IRBuilder.h"

namespace uir::codegen {

// Whether `op` is one of them.
bool HasGpuMath(hlo::HloOpcode op);
// `op` of x (and y, for atan2 and pow), f32 in and out; nullptr when `op`
// is not one of them. Throws UnimplementedError for f64.
llvm::Value* EmitGpuMath(llvm::IRBuilder<>& b, hlo::HloOpcode op, llvm::Value* x,
                         llvm::Value* y = nullptr);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_GPU_MATH_H_
