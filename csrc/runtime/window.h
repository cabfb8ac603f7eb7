// The library reduce-window: each output element folds a window of the
// input with one binary op (add, multiply, maximum, minimum, and, or),
// described by numbers only (the Kernel Graph plans it from a reduce-window
// whose reducer is that one op on its two parameters). Cumulative windows
// (cumsum, cumprod, cummax, ... forward or reversed) run as a scan, O(n).
#ifndef UIR_RUNTIME_WINDOW_H_
#define UIR_RUNTIME_WINDOW_H_

#include <array>
#include <cstdint>
#include <string>

#include "support/primitive_type.h"

namespace uir::runtime {

enum class FoldOp : uint8_t { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr };
std::string_view FoldOpName(FoldOp op);

// out[o...] = init folded with in[i...] over the window positions k...
// (row-major order), where p_d = o_d * stride_d - pad_low_d +
// k_d * window_dilation_d counts in the input dilated by base_dilation_d: a
// position between input elements or outside the input is skipped, as
// XLA:CPU and the evaluator skip it. Arrays are addressed by element strides, one
// per logical dimension, so any layout works. Maximum and minimum of floats
// propagate NaN from either side, as HLO's do.
struct WindowPlan {
  static constexpr int kMaxRank = 8;
  using Dims = std::array<int64_t, kMaxRank>;
  PrimitiveType type = PrimitiveType::kF32;  // the arrays' element type
  FoldOp op = FoldOp::kAdd;
  int rank = 0;
  Dims in_size{}, out_size{}, window{}, stride{}, pad_low{}, base_dilation{}, window_dilation{};
  Dims in_stride{}, out_stride{};  // element strides

  // One dimension `d` with every window [0, o] (or [o, n) when `reverse`)
  // and every other dimension's window one element: a cumulative op along
  // d. -1 when the plan is not of that form.
  int ScanDim(bool* reverse) const;
  int64_t InputElements() const;
  int64_t OutputElements() const;
  // Why the plan cannot run (a type or op it has no loop for, sizes,
  // strides), or "".
  std::string Invalid() const;
  // "f32 max [1x64x64x1] window 1x2x2x1 stride 1x2x2x1 -> [1x32x32x1]",
  // with "scan along 1" or "reverse scan along 1" for cumulative plans.
  std::string ToString() const;
};

// Whether the plan can run on elements of `type` (the narrow floats run
// widened to f32 and are rounded once at the end).
bool WindowTypeSupported(PrimitiveType type, FoldOp op);

// Runs `plan`: rows of the output over the worker threads when it is large.
void RunWindow(const WindowPlan& plan, const void* in, const void* init, void* out);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_WINDOW_H_
