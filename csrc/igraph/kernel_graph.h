// The Kernel Graph: a scheduled, buffer-assigned module as a sequence of
// device kernels whose edges are DRAM tensors (buffer-assignment slices).
#ifndef UIR_IGRAPH_KERNEL_GRAPH_H_
#define UIR_IGRAPH_KERNEL_GRAPH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "buffers/buffer_assignment.h"
#include "hlo/computation.h"
#include "igraph/dynamic_slice.h"
#include "igraph/hardware.h"
#include "igraph/igraph.h"
#include "igraph/interpreter.h"
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
#include "support/custom_call.h"

namespace uir::igraph {

// What a node is:
//  kernel       one iGraph per box of its iteration space (fusions and
//               lone elementwise instructions)
//  copy         a copy, also as iGraphs
//  library      dot, convolution (alone or with their fused epilogue) and
//               the other ops a library does best
//  custom-call, control-flow (while, conditional, call; sub-graphs of their
//  computations), async (start/update/done)
//  fallback     a fusion or op that does not lower yet; runs on the
//               evaluator, and its reason is in the text
enum class NodeKind : uint8_t {
  kKernel,
  kCopy,
  kLibrary,
  kCustomCall,
  kControlFlow,
  kAsync,
  kFallback
};
std::string_view NodeKindName(NodeKind kind);

// A DRAM tensor: an array value and the slice it lives in.
struct DramTensor {
  std::string value;  // the defining instruction, with a tuple index if any
  int64_t allocation = 0;
  int64_t offset = 0;
  int64_t bytes = 0;
  hlo::Shape shape;
};

class KernelGraph;

// Machine code for iGraphs (codegen's executables): the Kernel Graph runs a
// kernel's parts through it, and on the interpreter where it has none.
class KernelCode {
 public:
  virtual ~KernelCode() = default;
  // Runs `graph` on `dram` and returns true, or returns false when it has no
  // code for `graph`.
  virtual bool Run(const IGraph& graph, const DramBuffers& dram) const = 0;
};

// A dot chain (analysis/dot_chain.h) run block of rows by block of rows.
// For each batch and each block of `block_rows` of its `rows` rows, the
// first GEMM writes the block's rows of the [rows, n] intermediate into a
// scratch block; the node's iGraphs (the epilogue lowered for one block:
// `full_parts` of them, then those for a shorter last block) turn that into
// the second GEMM's left operand in a second scratch block; the second GEMM
// writes the block's rows of the output. The iGraphs' dram ids: the first
// block, the epilogue's scalars, its scratch and constants (the node's),
// then the second block.
struct DotChainPlan {
  int64_t batch = 1, rows = 0, block_rows = 0, n = 0;
  int64_t element_bytes = 4;
  runtime::GemmPlan first, second;  // for one block of one batch; m set per block
  // The node inputs holding the operands, and the epilogue's scalars.
  int64_t a = 0, b = 0, c = 0;
  std::vector<int64_t> scalars;
  // Elements from one batch to the next, and from one row to the next.
  int64_t a_batch = 0, b_batch = 0, c_batch = 0, out_batch = 0;
  int64_t a_row = 0, out_row = 0;
  size_t full_parts = 0;
  // The block-shaped epilogue the iGraphs were lowered from.
  std::shared_ptr<const hlo::HloModule> epilogue;
  int64_t BlockBytes() const { return block_rows * n * element_bytes; }
};

// An op no kernel of the runtime runs, prepared for the evaluator when the
// graph is lowered: the op alone in a computation of its own, over
// parameters of its operands' shapes (its called computations stay the
// module's). Running it reads the operands' leaves into literals and
// writes the result's back; nothing walks the module's instructions.
struct EvaluatorStep {
  std::unique_ptr<hlo::HloComputation> computation;
  std::vector<hlo::Shape> operand_shapes;
  // A library op before its epilogue: the node input each operand is.
  std::vector<int64_t> inputs;
  int partitions = 1;
};

struct KernelNode {
  NodeKind kind = NodeKind::kKernel;
  std::string name;  // the HLO instruction
  std::string op;    // its opcode (custom calls: the target)
  const hlo::HloInstruction* instruction = nullptr;
  std::vector<DramTensor> inputs;   // array leaves of the operands, in order
  std::vector<DramTensor> outputs;  // array leaves of the result
  // kKernel, kCopy: the parts, run in order.
  std::vector<IGraph> igraphs;
  // Dram ids: inputs, then scratch (values inside the fusion computed by
  // earlier parts into memory of the node's own: their bytes), then
  // constants, then outputs.
  std::vector<int64_t> scratch_bytes;
  std::vector<hlo::Literal> constants;
  // kLibrary with an epilogue: the library op (inside the fusion) writes its
  // result into the output, which the iGraphs then finish in place; its
  // dram id is the first scratch id.
  const hlo::HloInstruction* library = nullptr;
  // ... and, when that op is a dot BLAS runs, its GEMM (planned once).
  std::optional<runtime::GemmPlan> library_gemm;
  // kLibrary, a dot chain: how it runs (the iGraphs are its epilogue's).
  std::shared_ptr<const DotChainPlan> chain;
  // kKernel: inputs after the operands' that are windows of an operand,
  // placed on each run (dynamic-slices of fusion parameters).
  std::shared_ptr<const DynamicWindows> windows;
  // kCopy of a dynamic-slice or -update-slice: the copy, described.
  std::shared_ptr<const DynamicCopyPlan> dynamic_copy;
  // What the evaluator runs where no kernel does (a fallback, a library op
  // before its epilogue, a library or async op without a runtime kernel).
  std::shared_ptr<const EvaluatorStep> evaluator;
  std::string reason;                  // kFallback: why it did not lower
  std::vector<KernelGraph> subgraphs;  // kControlFlow: one per called computation
};

// One step of lowering a fusion (or a lone elementwise op) to iGraphs and
// what it gave, as text.
struct LoweringStage {
  std::string step;
  std::string text;
};

// The steps that lower `inst` to planned iGraphs for `hardware`, in the
// order the Kernel Graph's lowering runs them, each with its result:
// "tile-programs" (the fusion as tile programs: loads, stores and
// elementwise work over linear accesses), "collapse" (their iteration dims
// merged), "tile" (unplanned iGraphs: the tile shapes, levels and parallel
// description chosen), then "plan.<step>" after each plan step
// (kernel_plan.h). A step that refuses ends the list, its text
// "refused: <reason>".
std::vector<LoweringStage> LoweringStages(const hlo::HloInstruction& inst,
                                          const HardwareModel& hardware);

class KernelGraph {
 public:
  const std::string& name() const { return name_; }
  const std::vector<KernelNode>& nodes() const { return nodes_; }
  const HardwareModel& hardware() const { return hardware_; }
  int64_t CountOf(NodeKind kind) const;  // in this graph and its sub-graphs

  // The text: one line per node with its tensors, each iGraph below its
  // node, fallbacks with their reason, sub-graphs indented.
  std::string ToText() const;

  // Lowers the entry computation of `module` (scheduled; `assignment` is
  // its buffer assignment, which must outlive the graph, as must module).
  static KernelGraph Lower(const hlo::HloModule& module,
                           const buffers::BufferAssignment& assignment,
                           const HardwareModel& hardware);

  // Runs the graph on `args` (one per entry parameter): allocations as
  // buffer assignment lays them out, iGraphs on the interpreter, every
  // other node on the evaluator. Returns the entry root's value.
  hlo::Literal Interpret(const std::vector<hlo::Literal>& args) const;

  // Where the array leaves of entry parameter `i`, and of the entry's
  // result, live.
  std::vector<DramTensor> ParameterLeaves(int64_t i) const;
  std::vector<DramTensor> ResultLeaves() const;
  const buffers::BufferAssignment& assignment() const { return *assignment_; }
  const hlo::HloModule& module() const { return *module_; }
  // On memory the caller laid out (allocations[k] is the base of
  // buffer-assignment allocation k): writes the constants outside fusions
  // (of every computation), which a run needs before its first node.
  void WriteConstants(uint8_t* const* allocations) const;
  // Runs one node of this graph or its sub-graphs there: iGraphs through
  // `code` where it has them (else the interpreter), in-place control flow
  // sub-graph by sub-graph, the rest on the evaluator. Touches only the
  // node's inputs and outputs (and, for control flow, its sub-graphs').
  void RunNodeOn(const KernelNode& node, uint8_t* const* allocations, const KernelCode* code) const;
  // Runs a node as a compiled executable's host thunk does, from what the
  // lowering prepared (its iGraphs, its dot chain, its dynamic copy, its
  // evaluator step), without looking at the module's instructions.
  static void RunPrepared(const KernelNode& node, uint8_t* const* allocations,
                          const KernelCode* code);

  // Every iGraph of this graph and its sub-graphs, in node order.
  std::vector<const IGraph*> AllIGraphs() const;

 private:
  void LowerComputation(const hlo::HloComputation& computation);
  void AppendText(std::string& out, int indent) const;
  hlo::Literal RunWith(const std::vector<hlo::Literal>& args, const KernelCode* code) const;

  std::string name_;
  HardwareModel hardware_;
  const hlo::HloModule* module_ = nullptr;
  const buffers::BufferAssignment* assignment_ = nullptr;
  std::vector<KernelNode> nodes_;
  // The entry graph's: constants outside fusions (in every computation
  // buffer assignment placed) and where they live, written before a run.
  std::vector<std::pair<DramTensor, const hlo::Literal*>> constants_;
};

// A while node the Kernel Graph runs in place: buffer assignment put the
// loop state, the condition's and body's parameters and the body's root in
// one place. Its condition and body sub-graphs, and where the condition's
// result lives; nullopt for any other node.
struct WhileLoop {
  const KernelGraph* condition = nullptr;
  const KernelGraph* body = nullptr;
  DramTensor predicate;
};
std::optional<WhileLoop> InPlaceWhile(const KernelNode& node, const buffers::BufferAssignment& ba);

// A conditional node the Kernel Graph runs in place (every branch's
// parameter and root where the node's operand and result are): its
// selector and its branches' sub-graphs in order; nullopt otherwise.
struct Branches {
  DramTensor selector;
  std::vector<const KernelGraph*> graphs;
};
std::optional<Branches> InPlaceBranches(const KernelNode& node,
                                        const buffers::BufferAssignment& ba);
// A call node's callee when it runs in place; null otherwise.
const KernelGraph* InPlaceCall(const KernelNode& node, const buffers::BufferAssignment& ba);

// A custom-call node's frame with its buffers' data left null (the array
// leaves are node.inputs then node.outputs, in ForEachCallLeaf's order);
// nullopt when a buffer is not row-major or a value is not an array, a
// tuple or a token (the evaluator then runs it).
std::optional<CallFrame> CustomCallFrameOf(const KernelNode& node);
void ForEachCallLeaf(CallFrame& frame, const std::function<void(CallBuffer&)>& fn);

// The BLAS product of a lone dot node, or of a library node's dot (whose
// epilogue then finishes the output in place), on the node's tensors;
// nullopt when BLAS cannot run it there (PlanGemm). Operands and result of
// one narrow float type (bf16, f16, f8) run in f32.
struct NodeGemm {
  runtime::GemmPlan plan;
  DramTensor lhs, rhs, out;
  PrimitiveType storage = PrimitiveType::kF32;  // GemmThunk's
};
std::optional<NodeGemm> GemmOf(const KernelNode& node);

// Any other dot (a lone one, or a library node's before its epilogue) as
// the runtime's general dot runs it (runtime/dot.h): batch, free and
// contracting dimensions in any order and layout, integer, complex and
// mixed element types; nullopt for types it has no loop for.
struct NodeDot {
  runtime::DotPlan plan;
  DramTensor lhs, rhs, out;
};
std::optional<NodeDot> DotOf(const KernelNode& node);

// The convolution of a lone convolution node, or of a library node's
// convolution (whose epilogue then finishes the output in place), as the
// runtime runs it on the node's tensors: one float type throughout (f32,
// f64, or a narrow float run in f32), up to three spatial dimensions, no
// batch groups; nullopt otherwise.
struct NodeConv {
  runtime::ConvPlan plan;
  DramTensor input, kernel, out;
  PrimitiveType storage = PrimitiveType::kF32;  // ConvThunk's: the result's type
  PrimitiveType input_type = PrimitiveType::kF32, kernel_type = PrimitiveType::kF32;
};
std::optional<NodeConv> ConvOf(const KernelNode& node);

// The reduce-window of a lone reduce-window node as the runtime runs it on
// the node's tensors (runtime/window.h): one operand whose reducer is one
// add, multiply, maximum, minimum, and or or of its two parameters, on an
// element type the runtime has loops for, any layout; nullopt otherwise.
struct NodeWindow {
  runtime::WindowPlan plan;
  DramTensor input, init, out;
};
std::optional<NodeWindow> WindowOf(const KernelNode& node);
// The fft of a lone fft node as the runtime runs it (runtime/fft.h): FFT,
// IFFT, RFFT or IRFFT over one to three innermost dimensions of row-major
// c64/c128 (f32/f64 for the real side) arrays; nullopt otherwise.
struct NodeFft {
  runtime::FftPlan plan;
  DramTensor input, out;
};
std::optional<NodeFft> FftOf(const KernelNode& node);
// The rng-bit-generator of a lone node as the runtime runs it
// (runtime/rng_bits.h): a u64 state of two or more words, a row-major
// array of 8-, 16-, 32- or 64-bit integers; nullopt otherwise.
struct NodeRngBits {
  runtime::RngBitsPlan plan;
  DramTensor state_in, state_out, bits;
};
std::optional<NodeRngBits> RngBitsOf(const KernelNode& node);
// An rng node as the runtime draws it (runtime/rng_bits.h): scalar bounds
// of the result's type, a row-major result, keyed by the node's name.
struct NodeRng {
  runtime::RngPlan plan;
  DramTensor a, b, out;
};
std::optional<NodeRng> RngOf(const KernelNode& node);
// The argmax or argmin of a lone variadic reduce node as the runtime runs
// it (runtime/arg_reduce.h): values and an iota along the one reduced
// dimension, reduced by a computation that picks, between the accumulated
// pair and the next, the NaN, else the extreme value, else on equal values
// the lower index (what JAX's argmax and argmin lower to; checked on every
// class of inputs, not by the computation's spelling).
struct NodeArgReduce {
  runtime::ArgReducePlan plan;
  DramTensor values, init_value, init_index, out_value, out_index;
};
std::optional<NodeArgReduce> ArgReduceOf(const KernelNode& node);

// What of `node` runs on the evaluator when a host thunk runs it
// (KernelGraph::RunNodeOn), as a reason ("sort", "gather on the
// evaluator's buffer loops", a fallback node's reason); "" when it all runs
// as code of the runtime's own (compiled iGraphs, BLAS, the runtime's
// reduce-window and arg-reduce loops, copies, control flow in place).
std::string EvaluatorWork(const KernelNode& node, const buffers::BufferAssignment& ba);
// Whether every result of `node` is an empty array and running it has no
// other effect (no state, no control flow, no custom call): no thunk.
bool NothingToRun(const KernelNode& node);

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
  std::vector<DramTensor> inputs, outputs;
};
std::optional<NodeSort> SortOf(const KernelNode& node);

// The gather of a lone gather node as the runtime runs it
// (runtime/gather.h): XLA's general form on any layout, elements of whole
// bytes; nullopt otherwise.
struct NodeGather {
  runtime::GatherPlan plan;
  DramTensor operand, indices, out;
};
std::optional<NodeGather> GatherOf(const KernelNode& node);

// The scatter of a lone scatter node as the runtime runs it
// (runtime/scatter.h): one operand, combined by one fold op or replaced,
// XLA's general form on any layout; nullopt otherwise.
struct NodeScatter {
  runtime::ScatterPlan plan;
  DramTensor operand, indices, updates, out;
};
std::optional<NodeScatter> ScatterOf(const KernelNode& node);

// The fold op of a reducer computation that is one binary op of its two
// parameters.
std::optional<runtime::FoldOp> FoldOpOf(const hlo::HloComputation& reducer);

// The GEMM `dot` is on these tensors, when its operands and result are
// f32 or f64 row-major arrays, batch dimensions lead in the same order
// everywhere, and each operand has one contracting dimension and at most
// one free one.
bool PlanGemm(const hlo::HloInstruction& dot, const DramTensor& lhs, const DramTensor& rhs,
              const DramTensor& out, runtime::GemmPlan* plan);

// Array leaves of `inst`'s result as DRAM tensors, where buffer
// assignment put them.
std::vector<DramTensor> ValueLeaves(const buffers::BufferAssignment& ba,
                                    const hlo::HloInstruction* inst);

// Copies between row-major bytes and a tensor's bytes (at `at`) in its
// layout; the row-major case is one memcpy.
void WriteTensor(uint8_t* at, const DramTensor& t, const uint8_t* row_major);
void ReadTensor(const uint8_t* at, const DramTensor& t, uint8_t* row_major);
bool IsRowMajorTensor(const DramTensor& t);

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_KERNEL_GRAPH_H_
