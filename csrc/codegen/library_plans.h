// The CPU runtime's library as the compiler sees it: which nodes of a
// Kernel Graph the runtime's own kernels run straight on their buffers
// (runtime/gemm.h, dot.h, conv.h, window.h, arg_reduce.h, sort.h, gather.h,
// scatter.h, fft.h, rng_bits.h), each node's plan for its kernel, and the
// answers the Kernel Graph's lowering asks of the library (CpuLibrary).
// Reducers and sort comparators are recognised by evaluating them on every
// class of input, not by their spelling.
#ifndef UIR_CODEGEN_LIBRARY_PLANS_H_
#define UIR_CODEGEN_LIBRARY_PLANS_H_

#include <optional>
#include <string>
#include <vector>

#include "buffers/buffer_assignment.h"
#include "hlo/computation.h"
#include "igraph/kernel_graph.h"
#include "runtime/arg_reduce.h"
#include "runtime/conv.h"
#include "runtime/dot.h"
#include "runtime/fft.h"
#include "runtime/gather.h"
#include "runtime/gemm.h"
#include "runtime/rng_bits.h"
#include "runtime/scatter.h"
#include "runtime/sort.h"
#include "runtime/window.h"

namespace uir::codegen {

// The CPU runtime's library, as the Kernel Graph's lowering asks of it: a
// lone op runs there when its plan below exists, a dot as a GEMM when
// PlanGemm plans it.
const igraph::LibraryKernels& CpuLibrary();

// The BLAS product of a lone dot node, or of a library node's dot (whose
// epilogue then finishes the output in place), on the node's tensors;
// nullopt when BLAS cannot run it there (PlanGemm). Operands and result of
// one narrow float type (bf16, f16, f8) run in f32.
struct NodeGemm {
  runtime::GemmPlan plan;
  igraph::DramTensor lhs, rhs, out;
  PrimitiveType storage = PrimitiveType::kF32;  // GemmThunk's
};
std::optional<NodeGemm> GemmOf(const igraph::KernelNode& node);

// Any other dot (a lone one, or a library node's before its epilogue) as
// the runtime's general dot runs it (runtime/dot.h): batch, free and
// contracting dimensions in any order and layout, integer, complex and
// mixed element types; nullopt for types it has no loop for.
struct NodeDot {
  runtime::DotPlan plan;
  igraph::DramTensor lhs, rhs, out;
};
std::optional<NodeDot> DotOf(const igraph::KernelNode& node);

// The convolution of a lone convolution node, or of a library node's
// convolution (whose epilogue then finishes the output in place), as the
// runtime runs it on the node's tensors: one float type throughout (f32,
// f64, or a narrow float run in f32), up to three spatial dimensions, no
// batch groups; nullopt otherwise.
struct NodeConv {
  runtime::ConvPlan plan;
  igraph::DramTensor input, kernel, out;
  PrimitiveType storage = PrimitiveType::kF32;  // ConvThunk's: the result's type
  PrimitiveType input_type = PrimitiveType::kF32, kernel_type = PrimitiveType::kF32;
};
std::optional<NodeConv> ConvOf(const igraph::KernelNode& node);

// The reduce-window of a lone reduce-window node as the runtime runs it on
// the node's tensors (runtime/window.h): one operand whose reducer is one
// add, multiply, maximum, minimum, and or or of its two parameters, on an
// element type the runtime has loops for, any layout; nullopt otherwise.
struct NodeWindow {
  runtime::WindowPlan plan;
  igraph::DramTensor input, init, out;
};
std::optional<NodeWindow> WindowOf(const igraph::KernelNode& node);
// The fft of a lone fft node as the runtime runs it (runtime/fft.h): FFT,
// IFFT, RFFT or IRFFT over one to three innermost dimensions of row-major
// c64/c128 (f32/f64 for the real side) arrays; nullopt otherwise.
struct NodeFft {
  runtime::FftPlan plan;
  igraph::DramTensor input, out;
};
std::optional<NodeFft> FftOf(const igraph::KernelNode& node);
// The rng-bit-generator of a lone node as the runtime runs it
// (runtime/rng_bits.h): a u64 state of two or more words, a row-major
// array of 8-, 16-, 32- or 64-bit integers; nullopt otherwise.
struct NodeRngBits {
  runtime::RngBitsPlan plan;
  igraph::DramTensor state_in, state_out, bits;
};
std::optional<NodeRngBits> RngBitsOf(const igraph::KernelNode& node);
// An rng node as the runtime draws it (runtime/rng_bits.h): scalar bounds
// of the result's type, a row-major result, keyed by the node's name.
struct NodeRng {
  runtime::RngPlan plan;
  igraph::DramTensor a, b, out;
};
std::optional<NodeRng> RngOf(const igraph::KernelNode& node);
// The argmax or argmin of a lone variadic reduce node as the runtime runs
// it (runtime/arg_reduce.h): values and an iota along the one reduced
// dimension, reduced by a computation that picks, between the accumulated
// pair and the next, the NaN, else the extreme value, else on equal values
// the lower index (what JAX's argmax and argmin lower to; checked on every
// class of inputs, not by the computation's spelling).
struct NodeArgReduce {
  runtime::ArgReducePlan plan;
  igraph::DramTensor values, init_value, init_index, out_value, out_index;
};
std::optional<NodeArgReduce> ArgReduceOf(const igraph::KernelNode& node);

// The sort of a lone sort node as the runtime runs it (runtime/sort.h):
// any number of operands along one dimension, keyed by the operands whose
// pairs the comparator reads (a complex one as its real, then imaginary
// part), each ordered ascending or descending (by total order, or with
// -0 = +0 and NaNs equal, as JAX's comparators do, or, a lone float key,
// by a plain LT or GT, NaNs then placed as in that canonical order), one
// after another (lexicographically); checked on every class of key values
// and on mixed pairs, not by the comparator's spelling.
struct NodeSort {
  runtime::SortPlan plan;
  std::vector<igraph::DramTensor> inputs, outputs;
};
std::optional<NodeSort> SortOf(const igraph::KernelNode& node);

// The topk of a lone topk node as the runtime runs it (runtime/sort.h):
// along the last dimension of row-major arrays.
struct NodeTopK {
  runtime::TopKPlan plan;
  igraph::DramTensor input, values, indices;
};
std::optional<NodeTopK> TopKOf(const igraph::KernelNode& node);

// The gather of a lone gather node as the runtime runs it
// (runtime/gather.h): XLA's general form on any layout, elements of whole
// bytes; nullopt otherwise.
struct NodeGather {
  runtime::GatherPlan plan;
  igraph::DramTensor operand, indices, out;
};
std::optional<NodeGather> GatherOf(const igraph::KernelNode& node);

// The scatter of a lone scatter node as the runtime runs it
// (runtime/scatter.h): one operand, combined by one fold op or replaced,
// XLA's general form on any layout; nullopt otherwise.
struct NodeScatter {
  runtime::ScatterPlan plan;
  igraph::DramTensor operand, indices, updates, out;
};
std::optional<NodeScatter> ScatterOf(const igraph::KernelNode& node);

// The fold op of a reducer computation that is one binary op of its two
// parameters.
std::optional<runtime::FoldOp> FoldOpOf(const hlo::HloComputation& reducer);

// The GEMM `dot` is on these tensors, when its operands and result are
// f32 or f64 row-major arrays, batch dimensions lead in the same order
// everywhere, and each operand has one contracting dimension and at most
// one free one.
bool PlanGemm(const hlo::HloInstruction& dot, const igraph::DramTensor& lhs,
              const igraph::DramTensor& rhs, const igraph::DramTensor& out,
              runtime::GemmPlan* plan);

// What of `node` runs on the evaluator when a host thunk runs it
// (igraph::KernelGraph::RunPrepared), as a reason ("sort", "dot before its
// epilogue", a fallback node's reason); "" when it all runs as code of the
// runtime's own (compiled iGraphs, BLAS, the runtime's library loops,
// copies, control flow in place).
std::string EvaluatorWork(const igraph::KernelNode& node, const buffers::BufferAssignment& ba);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_LIBRARY_PLANS_H_
