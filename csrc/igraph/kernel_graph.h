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
  kCollective,  // runs through the run's communicator (runtime/collectives.h)
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
// then the second block. The target plans the GEMMs themselves from the
// two dots (codegen/dot_chain_thunk.h).
struct DotChainPlan {
  int64_t batch = 1, rows = 0, block_rows = 0, n = 0;
  int64_t element_bytes = 4;
  // The two dots, in the fusion's computation.
  const hlo::HloInstruction* first = nullptr;
  const hlo::HloInstruction* second = nullptr;
  // The node inputs holding the operands, and the epilogue's scalars.
  int64_t a = 0, b = 0, c = 0;
  std::vector<int64_t> scalars;
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
  // kLibrary, a dot chain: how it runs (the iGraphs are its epilogue's).
  std::shared_ptr<const DotChainPlan> chain;
  // kKernel: inputs after the operands' that are windows of an operand,
  // placed on each run (dynamic-slices of fusion parameters).
  std::shared_ptr<const DynamicWindows> windows;
  // kCopy of a dynamic-slice or -update-slice: the copy, described.
  std::shared_ptr<const DynamicCopyPlan> dynamic_copy;
  // What the evaluator runs where no kernel does (a fallback, a library op
  // before its epilogue, a library or async op without a runtime kernel),
  // and what the reference run (Interpret) runs for a library node and a
  // dot chain.
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

// The kernels a target's runtime runs straight on buffers (its library),
// as the lowering asks of them: a lone op the library runs becomes a
// library node, and a dot chain runs block by block only where the library
// runs both dots as GEMMs. The target's code generator answers
// (codegen::CpuLibrary); its thunk emitter then plans each call.
class LibraryKernels {
 public:
  virtual ~LibraryKernels() = default;
  // Whether the library runs `node`, a lone gather, scatter, variadic
  // reduce, reduce-window, fft, rng-bit-generator or rng, on its tensors.
  virtual bool Runs(const KernelNode& node) const = 0;
  // Whether it runs `dot` as a GEMM from `lhs` and `rhs` into `out`.
  virtual bool RunsGemm(const hlo::HloInstruction& dot, const DramTensor& lhs,
                        const DramTensor& rhs, const DramTensor& out) const = 0;
};

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
  // its buffer assignment, which must outlive the graph, as must module)
  // for a target with `hardware` and `library`.
  static KernelGraph Lower(const hlo::HloModule& module,
                           const buffers::BufferAssignment& assignment,
                           const HardwareModel& hardware, const LibraryKernels& library);

  // Runs the graph on `args` (one per entry parameter): allocations as
  // buffer assignment lays them out, iGraphs on the interpreter, control
  // flow in place, every other node (library nodes and dot chains
  // included) on the evaluator: the reference the target's thunks are
  // checked against. Returns the entry root's value.
  hlo::Literal Interpret(const std::vector<hlo::Literal>& args) const;
  // Interpret with every iGraph run through `code` (which must have code
  // for each; a GPU simulator, say).
  hlo::Literal InterpretWith(const std::vector<hlo::Literal>& args, const KernelCode& code) const {
    return RunWith(args, &code);
  }

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
  // Runs a node as a compiled executable's host thunk does, from what the
  // lowering prepared (its iGraphs through `code` where it has them, else
  // on the interpreter; its dynamic copy; its evaluator step), without
  // looking at the module's instructions. A library node runs its library
  // op on the evaluator, then its epilogue.
  static void RunPrepared(const KernelNode& node, uint8_t* const* allocations,
                          const KernelCode* code);
  // A library node's epilogue alone, once its library op (a thunk of the
  // target's) has written the node's first output.
  static void RunEpilogue(const KernelNode& node, uint8_t* const* allocations,
                          const KernelCode* code);

  // Every iGraph of this graph and its sub-graphs, in node order.
  std::vector<const IGraph*> AllIGraphs() const;

 private:
  void LowerComputation(const hlo::HloComputation& computation, const LibraryKernels& library);
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

// Whether every result of `node` is an empty array and running it has no
// other effect (no state, no control flow, no custom call): no thunk.
bool NothingToRun(const KernelNode& node);

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
