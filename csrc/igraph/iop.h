// The iOps: their kinds (from iop.def), the functions they apply (from
// functions.def), and one iOp as the iGraph holds it.
#ifndef UIR_IGRAPH_IOP_H_
#define UIR_IGRAPH_IOP_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "support/primitive_type.h"

namespace uir::igraph {

// Memory levels, fastest first.
enum class Level : uint8_t { kReg, kSram, kDram };
std::string_view LevelName(Level level);

// constant + sum(coefficient * variable), variables by index into the
// iGraph's vars(); terms are sorted by variable and have non-zero
// coefficients.
struct Affine {
  int64_t constant = 0;
  std::vector<std::pair<int, int64_t>> terms;

  static Affine Constant(int64_t c) { return Affine{c, {}}; }
  void Add(int var, int64_t coefficient);  // keeps the invariant
  Affine& operator+=(const Affine& other);
  Affine Scaled(int64_t factor) const;
  int64_t CoefficientOf(int var) const;
  bool operator==(const Affine&) const = default;
};

enum class OpKind : uint8_t {
#define UIR_IOP(e, name, outputs, inputs, doc) e,
#include "igraph/iop.def"
#undef UIR_IOP
};
std::string_view OpKindName(OpKind kind);
bool OpKindFromName(std::string_view name, OpKind* kind);
// Slice counts of each kind; -1 means one or more.
int OpOutputs(OpKind kind);
int OpInputs(OpKind kind);

enum class Axis : uint8_t { kRow, kCol };
enum class Scope : uint8_t { kUnit, kGroup };
std::string_view AxisName(Axis axis);
std::string_view ScopeName(Scope scope);

// The functions of functions.def: what unary, binary, ternary, compare,
// reduce and convert iOps apply, one enum value each.
enum class Fn : uint8_t {
  kNone,
#define UIR_IFN(e, name, opcode, classes) e,
#include "igraph/functions.def"
#undef UIR_IFN
};
// The iOps a function applies to (functions.def's classes).
enum FnClass : uint8_t {
  kUnaryFn = 1,
  kScalarFn = 2,  // the seed's scalar forms of unary: t = x <op> param
  kBinaryFn = 4,
  kTernaryFn = 8,
  kCompareFn = 16,
  kReduceFn = 32,
  kConvertFn = 64,
};
std::string_view FnName(Fn fn);  // "" for kNone
// The function of `name` in class `cls` (nullopt when there is none).
std::optional<Fn> FnNamed(std::string_view name, FnClass cls);
bool FnIs(Fn fn, FnClass cls);
// The HLO opcode whose semantics `fn` has (kCompare for directions).
hlo::HloOpcode FnOpcode(Fn fn);
// The function of class `cls` applying `opcode`, or kNone.
Fn FnFor(FnClass cls, hlo::HloOpcode opcode);
// A compare function's direction ("eq", ... "ge") and whether it compares
// floats in XLA's total order.
std::string_view FnDirection(Fn fn);
bool FnIsTotalOrder(Fn fn);

// A prefetch an iOp's column loop issues: the element of `slice` `rows`
// rows further down and `bytes` bytes further along than the element the
// loop is at (kernel_plan.h's prefetch step).
struct Prefetch {
  int slice = 0;
  int64_t rows = 0;
  int64_t bytes = 0;
  bool operator==(const Prefetch&) const = default;
};

// What the plan steps (kernel_plan.h) decided about one iOp; printed after
// it as `{loop=0, buffer=64, reread, prefetch=[x+4096B], order=cols,
// block=8}`, each entry only when it is not the default.
struct OpPlan {
  int loop = -1;                   // row forms: the column loop it runs in (-1: none)
  int64_t row_buffer = -1;         // row forms: byte offset of the row buffer it stores to
  bool reread = false;             // row forms: a move whose readers read its dram input again
  std::vector<Prefetch> prefetch;  // row forms: issued in its column loop
  bool by_columns = false;         // loops form: a move looping over rows innermost
  int64_t block = 0;               // loops form: a move transposed in block x block register tiles
  bool empty() const { return *this == OpPlan{}; }
  bool operator==(const OpPlan&) const = default;
};

// One iOp. Which fields apply depends on `kind`:
//  move       from/to levels (of the slices) and dtype
//  sync       scope level (sram or dram)
//  unary      function, dtype; params: the scalar of adds/muls/...
//  binary     function, dtype        ternary  function, dtype (of the result)
//  compare    function (direction), dtype (of the inputs; the output is pred)
//  convert    dtype (input) and to_dtype (output); function "bitcast": the
//             same bits read as to_dtype (both of one width)
//  fill       dtype; params: the value
//  iota       dtype; iota_base (affine in the index variables), iota_step
//  broadcast  axis, scope, dtype; group scope: buffer, group_size
//  reduce     function (add, mul, max, min, and, or, xor), axis, scope, dtype;
//             group scope: buffer, group_size
//  identity   outputs and inputs name the same bytes
struct IOp {
  OpKind kind = OpKind::kMove;
  Fn fn = Fn::kNone;
  PrimitiveType dtype = PrimitiveType::kF32;
  PrimitiveType to_dtype = PrimitiveType::kF32;
  Level from = Level::kDram, to = Level::kDram;
  Axis axis = Axis::kRow;
  Scope scope = Scope::kUnit;
  std::vector<int> outputs;  // slice indices
  std::vector<int> inputs;
  std::vector<hlo::Literal> params;
  int buffer = -1;  // sram slice for group scope
  int64_t group_size = 0;
  Affine iota_base;
  std::array<int64_t, 2> iota_step{0, 0};
  OpPlan plan;       // how it runs (kernel_plan.h); part of equality
  int64_t line = 0;  // source line when parsed; not part of equality

  bool operator==(const IOp& other) const;
};

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_IOP_H_
