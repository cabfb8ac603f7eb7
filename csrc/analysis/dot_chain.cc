#include "analysis/dot_chain.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "hlo/attributes.h"
#include "hlo/opcode.h"

namespace uir::analysis {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

std::vector<int64_t> IntList(const HloInstruction& i, AttrKey key) {
  return i.attributes().GetOr<std::vector<int64_t>>(key).value_or(std::vector<int64_t>{});
}

bool IsGemmType(PrimitiveType t) { return t == PrimitiveType::kF32 || t == PrimitiveType::kF64; }

// A value in the walk: an instruction and the entered fusion whose
// computation holds it (nullptr: `second`'s own computation).
struct At {
  const HloInstruction* inst = nullptr;
  const HloInstruction* fusion = nullptr;
};

class Matcher {
 public:
  Matcher(const HloInstruction& second, const std::function<bool(const HloInstruction&)>& enter)
      : second_(second), enter_(enter) {}

  std::optional<DotChain> Run(std::string* why) {
    try {
      Match();
    } catch (const std::string& reason) {
      if (why != nullptr) *why = reason;
      return std::nullopt;
    }
    return std::move(chain_);
  }

 private:
  [[noreturn]] static void Fail(const std::string& why) { throw why; }

  bool Spreading() const { return static_cast<bool>(enter_); }

  // Follows parameters of entered fusions out to their operands and, when
  // `may_enter`, enters fusions `enter_` accepts.
  At Resolve(At x, bool may_enter) {
    for (;;) {
      if (x.fusion != nullptr && x.inst->opcode() == HloOpcode::kParameter) {
        x = {x.fusion->operand(x.inst->parameter_number()), nullptr};
        continue;
      }
      if (may_enter && Spreading() && x.fusion == nullptr &&
          x.inst->opcode() == HloOpcode::kFusion && enter_(*x.inst)) {
        x = {x.inst->called_computations().at(0)->root(), x.inst};
        continue;
      }
      return x;
    }
  }

  // A leaf: a parameter of the fused computation, or (spread) any value of
  // `second`'s computation.
  bool IsLeaf(const At& x) const {
    if (!Spreading()) return x.inst->opcode() == HloOpcode::kParameter;
    return x.fusion == nullptr;
  }

  void AddSpread(const HloInstruction* inst) {
    if (std::find(spread_.begin(), spread_.end(), inst) == spread_.end()) spread_.push_back(inst);
  }

  const HloInstruction* Leaf(const HloInstruction* operand, const At& user) {
    const At x = Resolve({operand, user.fusion}, /*may_enter=*/false);
    if (!IsLeaf(x)) Fail("%" + x.inst->name() + ", a dot operand, is computed inside the chain");
    return x.inst;
  }

  void Match() {
    if (!IsGemmDot(second_)) Fail("%" + second_.name() + " is not a GEMM-shaped f32/f64 dot");
    dims_ = second_.operand(0)->shape().dimensions();
    const int64_t rank = static_cast<int64_t>(dims_.size());
    if (rank < 2) Fail("the second dot's left operand has rank " + std::to_string(rank));
    row_dims_.assign(dims_.begin(), dims_.end() - 1);
    const auto batch = static_cast<int64_t>(IntList(second_, AttrKey::kLhsBatchDims).size());
    if (rank != batch + 2 || second_.operand(1)->shape().rank() != batch + 2 ||
        IntList(second_, AttrKey::kLhsContractingDims) != std::vector<int64_t>{rank - 1}) {
      Fail("the second dot does not contract the last dimension of a [batch..., M, N] operand");
    }
    chain_.second = &second_;
    At top{&second_, nullptr};
    const At lhs = Resolve({second_.operand(0), nullptr}, /*may_enter=*/true);
    Visit(lhs);
    chain_.c = Leaf(second_.operand(1), top);
    if (chain_.first == nullptr) Fail("no first dot");
    if (chain_.epilogue.empty()) Fail("nothing between the two dots");
    std::reverse(spread_.begin(), spread_.end());
    chain_.spread = std::move(spread_);
  }

  void Visit(const At& x) {
    if (!visited_.emplace(x.inst, true).second) return;
    const HloInstruction& inst = *x.inst;
    if (!inst.shape().IsArray()) Fail("%" + inst.name() + " is not an array");
    const std::vector<int64_t>& dims = inst.shape().dimensions();
    const bool scalar = dims.empty();
    if (scalar && IsLeaf(x)) {
      chain_.scalars.push_back(x.inst);
      return;
    }
    if (dims != dims_ && dims != row_dims_ && !scalar) {
      Fail("%" + inst.name() + " has dimensions unlike the first dot's rows");
    }
    const bool outer = Spreading() && x.fusion == nullptr;
    if (inst.opcode() == HloOpcode::kParameter || (outer && inst.opcode() == HloOpcode::kFusion)) {
      Fail("%" + inst.name() + " (" + std::string(hlo::OpcodeName(inst.opcode())) +
           ") is read by the epilogue but is not a scalar");
    }
    const HloOpcode op = inst.opcode();
    if (op == HloOpcode::kDot) {
      if (dims != dims_) Fail("%" + inst.name() + " is a dot of another shape");
      if (chain_.first != nullptr) Fail("more than one dot before the second");
      if (!IsGemmDot(inst) ||
          inst.operand(0)->shape().rank() != static_cast<int64_t>(dims.size()) ||
          inst.operand(1)->shape().rank() != static_cast<int64_t>(dims.size())) {
        Fail("the first dot %" + inst.name() +
             " is not a [batch..., M, K] x [batch..., K, N] GEMM");
      }
      chain_.first = x.inst;
      chain_.a = Leaf(inst.operand(0), x);
      chain_.b = Leaf(inst.operand(1), x);
    } else if (op == HloOpcode::kConstant) {
      if (!scalar) Fail("%" + inst.name() + " is a constant that is not a scalar");
      chain_.epilogue.push_back(x.inst);
    } else if (hlo::IsElementwise(op)) {
      for (const HloInstruction* o : inst.operands()) {
        const At y = Resolve({o, x.fusion}, /*may_enter=*/true);
        const auto& od = y.inst->shape().dimensions();
        if (od != dims && !od.empty()) Fail("%" + inst.name() + " mixes shapes");
        Visit(y);
      }
      chain_.epilogue.push_back(x.inst);
    } else if (op == HloOpcode::kReduce) {
      const int64_t rank = static_cast<int64_t>(dims_.size());
      if (inst.operand_count() != 2 || dims != row_dims_ ||
          IntList(inst, AttrKey::kDimensions) != std::vector<int64_t>{rank - 1}) {
        Fail("%" + inst.name() + " is not a reduction of rows over their last dimension");
      }
      const At in = Resolve({inst.operand(0), x.fusion}, /*may_enter=*/true);
      const At init = Resolve({inst.operand(1), x.fusion}, /*may_enter=*/true);
      if (in.inst->shape().dimensions() != dims_)
        Fail("%" + inst.name() + " reduces another shape");
      Visit(in);
      Visit(init);
      chain_.epilogue.push_back(x.inst);
    } else if (op == HloOpcode::kBroadcast) {
      const At in = Resolve({inst.operand(0), x.fusion}, /*may_enter=*/true);
      const auto& id = in.inst->shape().dimensions();
      const std::vector<int64_t> bdims = IntList(inst, AttrKey::kDimensions);
      std::vector<int64_t> along_rows(row_dims_.size());
      for (size_t k = 0; k < along_rows.size(); ++k) along_rows[k] = static_cast<int64_t>(k);
      const bool splat = id.empty() && bdims.empty();
      const bool rows = dims == dims_ && id == row_dims_ && bdims == along_rows;
      if (!splat && !rows) Fail("%" + inst.name() + " broadcasts other than along the rows");
      Visit(in);
      chain_.epilogue.push_back(x.inst);
    } else {
      Fail("%" + inst.name() + " (" + std::string(hlo::OpcodeName(op)) +
           ") may depend on its row's position");
    }
    if (outer) AddSpread(x.inst);
    if (x.fusion != nullptr && x.inst == x.fusion->called_computations().at(0)->root()) {
      AddSpread(x.fusion);
    }
  }

  const HloInstruction& second_;
  const std::function<bool(const HloInstruction&)>& enter_;
  std::vector<int64_t> dims_, row_dims_;
  std::unordered_map<const HloInstruction*, bool> visited_;
  std::vector<const HloInstruction*> spread_;
  DotChain chain_;
};

}  // namespace

bool IsGemmDot(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2) return false;
  const PrimitiveType t = dot.shape().element_type();
  if (!dot.shape().IsArray() || !IsGemmType(t)) return false;
  const hlo::Shape& l = dot.operand(0)->shape();
  const hlo::Shape& r = dot.operand(1)->shape();
  if (l.element_type() != t || r.element_type() != t) return false;
  const std::vector<int64_t> lb = IntList(dot, AttrKey::kLhsBatchDims);
  const std::vector<int64_t> rb = IntList(dot, AttrKey::kRhsBatchDims);
  const std::vector<int64_t> lc = IntList(dot, AttrKey::kLhsContractingDims);
  const std::vector<int64_t> rc = IntList(dot, AttrKey::kRhsContractingDims);
  const auto nb = static_cast<int64_t>(lb.size());
  if (lc.size() != 1 || rc.size() != 1 || rb.size() != lb.size()) return false;
  for (int64_t i = 0; i < nb; ++i) {
    if (lb[i] != i || rb[i] != i) return false;
  }
  const int64_t lfree = l.rank() - nb - 1, rfree = r.rank() - nb - 1;
  return lfree >= 0 && lfree <= 1 && rfree >= 0 && rfree <= 1 && lc[0] >= nb && rc[0] >= nb;
}

int64_t DotChainBlockRows(int64_t rows, int64_t row_bytes, int64_t reread_bytes,
                          int64_t fast_bytes) {
  if (rows <= 0 || row_bytes <= 0) return 0;
  auto round_up = [](int64_t r) { return (r + 7) / 8 * 8; };
  int64_t block = std::max<int64_t>(8, fast_bytes / 2 / row_bytes / 8 * 8);
  const bool cached = reread_bytes <= fast_bytes;
  if (!cached) {
    // From memory each time: at most as many blocks as keep the re-reads
    // under half the intermediate's traffic (2 * rows * row_bytes).
    const int64_t max_blocks = rows * row_bytes / reread_bytes;
    if (max_blocks < 2) return 0;
    block = std::max(block, round_up((rows + max_blocks - 1) / max_blocks));
  }
  if (block >= rows) return cached ? rows : 0;
  if (block * row_bytes > 8 * fast_bytes) return 0;
  return block;
}

int64_t DotChainBlockRows(const DotChain& chain, int64_t fast_bytes) {
  const hlo::Shape& mid = chain.first->shape();
  const int64_t e = StorageBytes(mid.element_type());
  const int64_t rank = mid.rank();
  int64_t batch = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) batch *= mid.dimensions(d);
  const int64_t reread = (chain.b->shape().element_count() + chain.c->shape().element_count()) * e /
                         std::max<int64_t>(1, batch);
  return DotChainBlockRows(mid.dimensions(rank - 2), mid.dimensions(rank - 1) * e, reread,
                           fast_bytes);
}

std::optional<DotChain> MatchDotChain(const HloInstruction& second, std::string* why,
                                      const std::function<bool(const HloInstruction&)>& enter) {
  return Matcher(second, enter).Run(why);
}

}  // namespace uir::analysis
