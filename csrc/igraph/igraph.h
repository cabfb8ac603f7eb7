// The iGraph: one kernel of the Unified IR as an instruction-level dataflow
// graph of iOps over iSlices of iPointers, with the hardware model it is
// written for and its parallel description.
//
// Semantics (the seed's, with the extensions README.md documents):
//
//   for parallel_id in [0, numParallel):      # in parallel
//     prologue(parallel_id)
//     for loop_id in [0, numLoop):            # in series
//       body(parallel_id, loop_id)
//     epilogue(parallel_id)
//
// parallel_id and loop_id are mixed-radix numbers over named index
// variables (`pid=32` alone is the seed's form); a slice offset is an
// affine function of those variables. Prologue and epilogue offsets may
// not use loop variables.
#ifndef UIR_IGRAPH_IGRAPH_H_
#define UIR_IGRAPH_IGRAPH_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "hlo/literal.h"
#include "igraph/hardware.h"
#include "igraph/iop.h"
#include "support/primitive_type.h"

namespace uir::igraph {

// The iGraph spelling of an element type: fp32, fp16, bf16, fp8e4m3fn, ...
// for floats (the seed's names), the HLO name (s32, u8, pred) otherwise.
std::string DtypeText(PrimitiveType type);
bool DtypeFromText(std::string_view name, PrimitiveType* type);

// An index variable: a digit of parallel_id or loop_id.
struct IndexVar {
  std::string name;
  int64_t extent = 1;
  bool parallel = true;
  bool operator==(const IndexVar&) const = default;
};

struct IPointer {
  std::string name;
  int64_t id = 0;
  Level level = Level::kReg;
  PrimitiveType dtype = PrimitiveType::kF32;
  int64_t size = 0;  // elements
  bool operator==(const IPointer&) const = default;
};

// A 2-D view of a pointer: element (i, j) is at offset + i * stride[0] +
// j * stride[1]. A zero stride repeats elements (reads only).
struct ISlice {
  std::string name;
  int pointer = 0;  // index into pointers()
  Affine offset;
  std::array<int64_t, 2> shape{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  int64_t elements() const { return shape[0] * shape[1]; }
  bool operator==(const ISlice&) const = default;
};

enum class Section : uint8_t { kPrologue, kBody, kEpilogue };

// How the body runs, as the plan steps (kernel_plan.h) decided:
//  none       not planned yet (the compiler plans it before emission)
//  loops      the seed's loops: every iOp a loop nest over its slice
//             (the CPU emitter runs consecutive elementwise iOps of one
//             shape in one nest, and folds such a run into a column
//             reduction of its result row by row)
//  rows       row by row: each row of the tile runs through every iOp
//             before the next, iOps of one width share a column loop
//  coalesced  rows over one row, whose parallel ids tile one long vector:
//             a range of them runs as one column loop
enum class BodyForm : uint8_t { kNone, kLoops, kRows, kCoalesced };
std::string_view BodyFormName(BodyForm form);

// The kernel-wide decisions; printed as the header line `plan <form> (...)`.
struct KernelPlan {
  BodyForm form = BodyForm::kNone;
  std::string why;             // loops: why the body has no row form
  int64_t rows = 0;            // row forms: rows of the tile
  std::vector<int64_t> loops;  // row forms: each column loop's width
  // Row forms: per column loop, the vectors its vector loop runs side by
  // side (1: as many as the compiler picks); empty: 1 for every loop.
  std::vector<int64_t> interleave;
  int64_t row_scratch = 0;  // row forms: bytes of row buffers, after the iPointers'
  // The rows or coalesced form: a row loop and column loops, row buffers.
  bool row_form() const { return form == BodyForm::kRows || form == BodyForm::kCoalesced; }
  bool operator==(const KernelPlan&) const = default;
};
std::string_view SectionName(Section section);

class IGraph {
 public:
  IGraph() = default;
  IGraph(std::string name, HardwareModel hardware)
      : name_(std::move(name)), hardware_(std::move(hardware)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const HardwareModel& hardware() const { return hardware_; }
  void set_hardware(HardwareModel hardware) { hardware_ = std::move(hardware); }

  // Parallel variables first, then loop variables, each outermost first.
  const std::vector<IndexVar>& vars() const { return vars_; }
  int AddVar(std::string name, int64_t extent, bool parallel);
  int64_t num_parallel() const;
  int64_t num_loop() const;

  const std::vector<IPointer>& pointers() const { return pointers_; }
  const std::vector<ISlice>& slices() const { return slices_; }
  int AddPointer(IPointer pointer);
  int AddSlice(ISlice slice);
  // A name not yet used by a pointer or slice: `base`, else `base.N`.
  std::string FreshName(std::string_view base) const;
  int FindPointer(std::string_view name) const;  // -1 if none
  int FindSlice(std::string_view name) const;

  const std::vector<IOp>& ops(Section s) const { return sections_[static_cast<int>(s)]; }
  std::vector<IOp>& mutable_ops(Section s) { return sections_[static_cast<int>(s)]; }
  void AddOp(Section s, IOp op) { mutable_ops(s).push_back(std::move(op)); }

  const KernelPlan& plan() const { return plan_; }
  KernelPlan& mutable_plan() { return plan_; }
  bool planned() const { return plan_.form != BodyForm::kNone; }
  // This graph with no plan: the kernel's plan and every iOp's cleared.
  IGraph Unplanned() const;

  // Level, pointer and dtype of slice i.
  const IPointer& PointerOf(int slice) const { return pointers_[slices_[slice].pointer]; }
  // Bytes of reg a unit and of sram a group use (sum of their pointers).
  int64_t BytesAt(Level level) const;
  // Bytes move iOps read from (write to) dram over every parallel and loop
  // id: the kernel's memory traffic. A slice counts its distinct elements
  // (a zero-stride broadcast read counts one row or column).
  int64_t DramBytesRead() const;
  int64_t DramBytesWritten() const;

  // Structural equality (names, numbers, ops in order; not source lines).
  bool operator==(const IGraph& other) const;

 private:
  std::string name_;
  HardwareModel hardware_;
  std::vector<IndexVar> vars_;
  std::vector<IPointer> pointers_;
  std::vector<ISlice> slices_;
  std::array<std::vector<IOp>, 3> sections_;
  KernelPlan plan_;
  // Name -> the first pointer (slice) of that name, and the variables'
  // names: lookups and FreshName in constant time, so a kernel of tens of
  // thousands of slices lowers in linear time.
  std::unordered_map<std::string, int> pointer_index_;
  std::unordered_map<std::string, int> slice_index_;
  std::unordered_set<std::string> var_names_;
  // FreshName's next suffix to try per base (a hint: names are checked).
  mutable std::unordered_map<std::string, int> next_suffix_;
};

// The text form: the seed's notation with a header. Parse(ToText(g)) == g.
std::string ToText(const IGraph& graph);
std::string AffineToText(const IGraph& graph, const Affine& affine);
std::string OpToText(const IGraph& graph, const IOp& op);
// Throws ParseError with line and column.
IGraph Parse(std::string_view text);

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_IGRAPH_H_
