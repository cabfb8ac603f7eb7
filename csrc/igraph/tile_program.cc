// Tile programs: building them piece by piece (tile_builder.h does the
// walking), collapsing dims, printing.
#include "igraph/tile_program.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "igraph/tile_builder.h"

namespace uir::igraph {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

bool TileProgram::has_reduce() const {
  return std::any_of(ops.begin(), ops.end(),
                     [](const TileOp& op) { return op.kind == TileOp::Kind::kReduce; });
}

bool TileProgram::needs_whole_rows() const {
  return std::any_of(ops.begin(), ops.end(),
                     [](const TileOp& op) { return op.kind == TileOp::Kind::kBroadcast; });
}

std::vector<int64_t> PhysicalStrides(const Shape& shape) {
  const int64_t rank = shape.rank();
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  std::vector<int64_t> minor_to_major;
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major.size()) == rank) {
    minor_to_major = shape.layout().minor_to_major;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d) minor_to_major.push_back(d);
  }
  int64_t stride = 1;
  for (int64_t d : minor_to_major) {
    strides[d] = stride;
    stride *= shape.dimensions(d);
  }
  return strides;
}

bool IsRowMajor(const Shape& shape) {
  const std::vector<int64_t> strides = PhysicalStrides(shape);
  int64_t expected = 1;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    if (shape.dimensions(d) != 1 && strides[d] != expected) return false;
    expected *= shape.dimensions(d);
  }
  return true;
}

namespace {

using namespace detail;  // NOLINT(build/namespaces): the builder's types

// The pieces of the program computing `sub_root` (the fusion's outputs when
// null), appended to `programs`: the iteration box cut where a piecewise
// access asks, box by box. Returns kProgram, a kRefusal, or the
// kMaterialize a piece asked for.
BuildOutcome BuildPieces(const HloInstruction& fusion, const Scratch& scratch,
                         const HloInstruction* sub_root, std::vector<TileProgram>* programs,
                         PadPart pad_part = PadPart::kNone) {
  struct Box {
    std::vector<int64_t> lo, extents;
  };
  std::vector<TileProgram> pieces;
  std::vector<Box> work{Box{}};
  while (!work.empty()) {
    if (programs->size() + pieces.size() + work.size() > kMaxPieces) {
      BuildOutcome refused;
      refused.kind = BuildOutcome::Kind::kRefusal;
      refused.reason = "more than " + std::to_string(kMaxPieces) + " pieces";
      return refused;
    }
    Box box = std::move(work.back());
    work.pop_back();
    TileProgram p;
    Builder b(fusion, p, box.lo, box.extents, scratch, sub_root, pad_part);
    BuildOutcome outcome = b.Run();
    if (outcome.kind != BuildOutcome::Kind::kSplit) {
      if (outcome.kind != BuildOutcome::Kind::kProgram) return outcome;
      if (!box.lo.empty()) p.name += ".piece" + std::to_string(pieces.size());
      pieces.push_back(std::move(p));
      continue;
    }
    if (box.lo.empty()) {  // the whole space, whose extents the builder learnt
      box.lo.assign(outcome.full_extents.size(), 0);
      box.extents = outcome.full_extents;
    }
    const SplitRequest& split = outcome.split;
    std::vector<int64_t> cuts = split.points;
    cuts.push_back(box.extents[split.dim]);
    for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
      const int64_t end = *it;
      const int64_t begin = std::next(it) == cuts.rend() ? 0 : *std::next(it);
      Box piece = box;
      piece.lo[split.dim] += begin;
      piece.extents[split.dim] = end - begin;
      if (end > begin) work.push_back(std::move(piece));
    }
  }
  for (TileProgram& p : pieces) programs->push_back(std::move(p));
  return BuildOutcome{};
}

}  // namespace

bool BuildTileProgram(const HloInstruction& fusion, std::vector<TileProgram>* programs,
                      std::string* reason, std::vector<const HloInstruction*>* scratch_out,
                      const HloInstruction* library) {
  // A library result is read like scratch memory, and written by the library.
  Scratch scratch;
  if (library != nullptr) scratch.push_back(library);
  auto interior = [](const HloInstruction* s) {
    if (s->opcode() != HloOpcode::kPad) return false;
    for (const auto& d : s->attributes().Get<hlo::PaddingConfig>(hlo::AttrKey::kPadding)) {
      if (d.interior != 0) return true;
    }
    return false;
  };
  // One outcome: done (true), refused (false, with the reason), or a
  // value to materialize first (nullopt).
  auto settle = [&](const BuildOutcome& o) -> std::optional<bool> {
    if (o.kind == BuildOutcome::Kind::kRefusal) {
      *reason = o.reason;
      return false;
    }
    return o.kind == BuildOutcome::Kind::kProgram ? std::optional<bool>(true) : std::nullopt;
  };
  if (interior(&fusion)) {
    programs->clear();
    for (const PadPart part : {PadPart::kFill, PadPart::kCopy}) {
      const BuildOutcome o = BuildPieces(fusion, scratch, nullptr, programs, part);
      if (o.kind == BuildOutcome::Kind::kMaterialize) {
        *reason = "%" + o.value->name() + " cannot be computed apart";
        return false;
      }
      if (!*settle(o)) return false;
    }
    return true;
  }
  // Programs for the scratch values (operands before users), then for the
  // outputs; a value a piece asks to materialize joins the scratch values
  // and everything is built again (at most 8 of them).
  while (true) {
    programs->clear();
    BuildOutcome o;
    for (const HloInstruction* s : scratch) {
      if (s == library) continue;
      if (interior(s)) {
        o = BuildPieces(fusion, scratch, s, programs, PadPart::kFill);
        if (o.kind == BuildOutcome::Kind::kProgram) {
          o = BuildPieces(fusion, scratch, s, programs, PadPart::kCopy);
        }
      } else {
        o = BuildPieces(fusion, scratch, s, programs);
      }
      if (o.kind != BuildOutcome::Kind::kProgram) break;
    }
    if (o.kind == BuildOutcome::Kind::kProgram) o = BuildPieces(fusion, scratch, nullptr, programs);
    if (const std::optional<bool> done = settle(o)) {
      if (*done && scratch_out != nullptr) *scratch_out = scratch;
      return *done;
    }
    if (std::find(scratch.begin(), scratch.end(), o.value) != scratch.end() ||
        scratch.size() >= 8) {
      *reason = "%" + o.value->name() + " cannot be computed apart";
      return false;
    }
    scratch.push_back(o.value);
    // Operands before users: a scratch value may read an earlier one.
    const auto order = fusion.called_computations().at(0)->MakeInstructionPostOrder();
    std::sort(scratch.begin(), scratch.end(),
              [&](const HloInstruction* a, const HloInstruction* b) {
                return std::find(order.begin(), order.end(), a) <
                       std::find(order.begin(), order.end(), b);
              });
  }
}

void CollapseDims(TileProgram& p) {
  auto linears = [&]() {
    std::vector<Linear*> out;
    for (TileOp& op : p.ops) {
      if (op.kind == TileOp::Kind::kLoad || op.kind == TileOp::Kind::kStore ||
          op.kind == TileOp::Kind::kIota) {
        out.push_back(&op.access);
      }
    }
    return out;
  };
  auto erase_dim = [&](size_t d) {
    for (Linear* l : linears()) l->coefficient.erase(l->coefficient.begin() + d);
    p.extents.erase(p.extents.begin() + d);
    p.reduced_dim.erase(p.reduced_dim.begin() + d);
  };
  for (size_t d = p.extents.size(); d-- > 0;) {
    if (p.extents[d] == 1) erase_dim(d);
  }
  bool merged = true;
  while (merged) {
    merged = false;
    for (size_t d = 0; d + 1 < p.extents.size(); ++d) {
      if (p.reduced_dim[d] != p.reduced_dim[d + 1]) continue;
      bool ok = true;
      for (Linear* l : linears()) {
        if (l->coefficient[d] != l->coefficient[d + 1] * p.extents[d + 1]) ok = false;
      }
      if (!ok) continue;
      p.extents[d + 1] *= p.extents[d];
      erase_dim(d);
      merged = true;
      break;
    }
  }
  if (p.extents.empty()) {
    p.extents = {1};
    p.reduced_dim = {false};
    for (Linear* l : linears()) l->coefficient = {0};
  }
}

std::string TileProgramToText(const TileProgram& p) {
  std::ostringstream os;
  os << "tile program " << p.name << " over [";
  for (size_t d = 0; d < p.extents.size(); ++d) {
    os << (d ? ", " : "") << p.extents[d] << (p.reduced_dim[d] ? "r" : "");
  }
  os << "]\n";
  auto lin = [&](const Linear& l) {
    std::ostringstream s;
    for (size_t d = 0; d < l.coefficient.size(); ++d) {
      if (l.coefficient[d] != 0) s << l.coefficient[d] << "*i" << d << " + ";
    }
    s << l.constant;
    return s.str();
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const TileOp& op = p.ops[i];
    os << "  t" << i << (op.reduced ? " (reduced)" : "") << " = ";
    switch (op.kind) {
      case TileOp::Kind::kLoad:
        os << "load " << p.tensors[op.tensor].name << "[" << lin(op.access) << "]";
        break;
      case TileOp::Kind::kStore:
        os << "store " << p.tensors[op.tensor].name << "[" << lin(op.access) << "]";
        break;
      case TileOp::Kind::kFill:
        os << "fill " << op.literal.ElementToString(0);
        break;
      case TileOp::Kind::kIota:
        os << "iota " << lin(op.access);
        break;
      case TileOp::Kind::kElementwise:
        os << hlo::OpcodeName(op.opcode);
        break;
      case TileOp::Kind::kReduce:
        os << "reduce " << hlo::OpcodeName(op.opcode);
        break;
      case TileOp::Kind::kBroadcast:
        os << "broadcast";
        break;
      case TileOp::Kind::kIdentity:
        os << "identity";
        break;
    }
    for (int o : op.operands) os << " t" << o;
    os << "\n";
  }
  return os.str();
}

}  // namespace uir::igraph
