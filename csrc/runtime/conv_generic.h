// Convolutions of the element types BLAS does not take, on the same plan
// as the BLAS convolution (runtime/conv.h): integers of every width
// (wrapping as the result's type wraps), pred (whether any product is
// true), complex numbers, and operands of another type than the result's
// (int8 operands summed into int32, bf16 into f32).
#ifndef UIR_RUNTIME_CONV_GENERIC_H_
#define UIR_RUNTIME_CONV_GENERIC_H_

#include "runtime/conv.h"
#include "support/primitive_type.h"

namespace uir::runtime {

// Whether RunConvGeneric takes these operand and result types: as a dot's
// (runtime/dot.h, DotTypesSupported).
bool ConvTypesSupported(PrimitiveType input, PrimitiveType kernel, PrimitiveType out);

// Runs `plan` on operands and a result of the given types (plan.f64 is
// not read). Each operand is widened once into the result's compute type
// (unsigned 64-bit words for integers and pred, f32 for f32 and narrower
// floats, f64, complex of the result's precision); each output element is
// the sum over its window, in window then feature order, the output
// elements spread over the worker threads.
void RunConvGeneric(const ConvPlan& plan, PrimitiveType input_type, PrimitiveType kernel_type,
                    PrimitiveType out_type, const void* input, const void* kernel, void* out);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CONV_GENERIC_H_
