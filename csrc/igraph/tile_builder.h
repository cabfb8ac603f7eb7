// Internal to the lowering (tile_program.cc, tile_builder.cc,
// tile_values.cc): the builder that walks a fused computation from its
// outputs back to its loads, turning every index-only op into arithmetic
// on linear functions of the iteration indices.
#ifndef UIR_IGRAPH_TILE_BUILDER_H_
#define UIR_IGRAPH_TILE_BUILDER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hlo/computation.h"
#include "igraph/tile_program.h"

namespace uir::igraph::detail {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;
using IndexMap = std::vector<Linear>;  // one function per dim of a value

// Row-major element strides of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
bool IsRowMajor(const hlo::Shape& shape);
inline Linear Zero(size_t dims) { return Linear{std::vector<int64_t>(dims, 0), 0}; }
// sum(strides[k] * map[k]): the linear position an index map reaches.
Linear Combine(const IndexMap& map, const std::vector<int64_t>& strides, size_t dims);
// The digits of `l` in the mixed radix `sizes` (major first) as linear
// functions of indices with `extents`, when no carry can pass between
// digits for any index value.
std::optional<IndexMap> Unravel(const Linear& l, const std::vector<int64_t>& sizes,
                                const std::vector<int64_t>& extents);

// Thrown when a piecewise access (concatenate, pad) needs the iteration
// box cut along `dim` before `points` (box-relative indices).
struct SplitRequest {
  size_t dim;
  std::vector<int64_t> points;
};

// Thrown when `inst` must be computed into scratch memory first.
struct MaterializeRequest {
  const HloInstruction* inst;
};

using Scratch = std::vector<const HloInstruction*>;

// What building one tile program came to: the program, a cut of the
// iteration box it needs first (with the whole space's extents), a value
// to compute into scratch memory first, or a refusal with its reason.
// Builder::Run returns it; the requests above only unwind the builder's
// recursion to Run.
struct BuildOutcome {
  enum class Kind : uint8_t { kProgram, kSplit, kMaterialize, kRefusal };
  Kind kind = Kind::kProgram;
  SplitRequest split{};
  std::vector<int64_t> full_extents;      // kSplit
  const HloInstruction* value = nullptr;  // kMaterialize
  std::string reason;                     // kRefusal
};

// A pad with interior padding goes to scratch in two programs: the padding
// value everywhere, then the operand's elements at their strided places.
enum class PadPart : uint8_t { kNone, kFill, kCopy };

class Builder {
 public:
  // `lo` and `extents` restrict the iteration space to a box (empty: all).
  // `scratch` values are read from scratch memory; with `sub_root` the
  // program computes that scratch value instead of the fusion's outputs.
  Builder(const HloInstruction& fusion, TileProgram& p, std::vector<int64_t> lo,
          std::vector<int64_t> extents, const Scratch& scratch, const HloInstruction* sub_root,
          PadPart pad_part = PadPart::kNone)
      : fusion_(fusion),
        p_(p),
        lo_(std::move(lo)),
        box_(std::move(extents)),
        scratch_(scratch),
        sub_root_(sub_root),
        pad_part_(pad_part) {
    if (fusion.opcode() == HloOpcode::kFusion) {
      computation_ = fusion.called_computations().at(0);
      root_ = sub_root != nullptr ? sub_root : computation_->root();
    } else {
      root_ = &fusion;
    }
    p_.name = sub_root != nullptr ? fusion.name() + ".scratch." + sub_root->name() : fusion.name();
  }

  // Builds the program into the TileProgram given at construction.
  BuildOutcome Run();

  const std::vector<int64_t>& full_extents() const { return full_; }

 private:
  [[noreturn]] void Fail(const std::string& why) const { throw why; }

  // Inputs: fusion parameters, or the operands of a single instruction.
  bool IsLeaf(const HloInstruction* inst, int64_t* index) const;

  std::vector<const HloInstruction*> Outputs() const {
    if (sub_root_ != nullptr) return {sub_root_};
    if (root_->opcode() == HloOpcode::kTuple && computation_ != nullptr) {
      return {root_->operands().begin(), root_->operands().end()};
    }
    return {root_};
  }

  size_t Dims() const { return p_.extents.size(); }

  void Build();

  void InteriorPad();

  void ApplyBox();

  IndexMap Identity() const;

  // Range of `l` over the box.
  std::pair<int64_t, int64_t> Range(const Linear& l) const;

  // The piece of [lo, hi) boundaries `bounds` cut `l` into: the index of
  // the piece `l` stays in over the whole box, or a SplitRequest.
  size_t Piece(const HloInstruction* inst, const Linear& l, const std::vector<int64_t>& bounds);

  static std::vector<int64_t> ReduceDims(const HloInstruction& r) {
    return r.attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
  }

  // The instructions the outputs are computed from, operands first.
  std::vector<const HloInstruction*> Reachable() const;

  const HloInstruction* FirstReduce() const {
    for (const HloInstruction* inst : Reachable()) {
      if (inst->opcode() == HloOpcode::kReduce) return inst;
    }
    return nullptr;
  }

  // Reduced values: reductions and what is computed from them without a
  // broadcast back; indexed by the kept dims only.
  bool IsReduced(const HloInstruction* inst);

  // Maps of the values computed from reduction operands, walking forward
  // from each reduction's operand (indexed by the iteration space itself).
  void ForwardMaps();

  std::optional<IndexMap> Forward(const HloInstruction* inst, const std::vector<int64_t>& red);

  // The index of `shape` whose linear position (physical or row-major) is `l`.
  std::optional<IndexMap> UnravelInto(const Linear& l, const Shape& shape, bool physical);

  static bool IsElementwise(const HloInstruction& inst);

  int Push(TileOp op) {
    p_.ops.push_back(std::move(op));
    return static_cast<int>(p_.ops.size()) - 1;
  }

  // The deepest chain of operands a tile program is built through.
  static constexpr int kMaxDepth = 200;
  int depth_ = 0;
  int Value(const HloInstruction* inst, const IndexMap& map, bool reduced);
  // `inst`'s value with part_ set to `part` while it is built.
  int PartOf(const HloInstruction* inst, const IndexMap& map, bool reduced, int part);

  // Complex values are built as two real ones, their parts: part_ is the
  // one being built (0 real, 1 imaginary; -1 for a value of a real type).
  // Complex tensors are read and written as arrays of twice as many reals.
  int part_ = -1;
  // The real type of a part of `t` (f32 for c64, f64 for c128), else `t`.
  static PrimitiveType PartType(PrimitiveType t);
  // `t` as the real array it is read as, when complex.
  static void AsParts(TileTensor& t);
  // The access of part_ of an element of `shape` at linear position `l`.
  Linear Parted(Linear l, const Shape& shape) const;
  // Elementwise arithmetic on complex values, or real results read from
  // complex operands, in terms of the parts.
  int ComplexElementwise(const HloInstruction* inst, const IndexMap& map, bool reduced);
  int Op(HloOpcode opcode, PrimitiveType dtype, std::vector<int> operands, bool reduced,
         const std::string& source, const std::string& direction = "");

  int Compute(const HloInstruction* inst, const IndexMap& map, bool reduced);

  int Reduce(const HloInstruction* inst, const IndexMap& map, TileOp op);

  const HloInstruction& fusion_;
  TileProgram& p_;
  std::vector<int64_t> lo_, box_, full_;
  const Scratch& scratch_;
  const HloInstruction* sub_root_ = nullptr;
  PadPart pad_part_ = PadPart::kNone;
  const HloComputation* computation_ = nullptr;
  const HloInstruction* root_ = nullptr;
  int64_t constants_ = 0;
  std::map<const HloInstruction*, bool> reduced_;
  std::map<const HloInstruction*, IndexMap> forward_;
  std::map<std::tuple<const HloInstruction*, std::vector<int64_t>, bool>, int> memo_;
};

}  // namespace uir::igraph::detail

#endif  // UIR_IGRAPH_TILE_BUILDER_H_
