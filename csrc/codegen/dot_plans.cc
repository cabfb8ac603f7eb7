// The library nodes the runtime's products run: a dot as a GEMM on BLAS
// (runtime/gemm.h) or as the general dot (runtime/dot.h), a convolution
// (runtime/conv.h), alone or before a fused epilogue.
#include <algorithm>
#include <utility>

#include "codegen/library_plans.h"
#include "igraph/tile_program.h"
#include "runtime/conv_generic.h"
#include "support/float_format.h"

namespace uir::codegen {

using hlo::HloInstruction;
using hlo::HloOpcode;
using igraph::DramTensor;
using igraph::IsRowMajor;
using igraph::KernelNode;
using igraph::NodeKind;
using igraph::PhysicalStrides;

namespace {

// A dot's batch and contracting dimensions: lhs batch, rhs batch, lhs
// contracting, rhs contracting.
struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};
DotDims DotDimsOf(const HloInstruction& dot) {
  const auto& a = dot.attributes();
  auto list = [&](hlo::AttrKey key) {
    return a.GetOr<std::vector<int64_t>>(key).value_or(std::vector<int64_t>{});
  };
  return {list(hlo::AttrKey::kLhsBatchDims), list(hlo::AttrKey::kRhsBatchDims),
          list(hlo::AttrKey::kLhsContractingDims), list(hlo::AttrKey::kRhsContractingDims)};
}

}  // namespace

bool PlanGemm(const HloInstruction& dot, const DramTensor& lhs, const DramTensor& rhs,
              const DramTensor& out, runtime::GemmPlan* plan) {
  const PrimitiveType t = out.shape.element_type();
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) return false;
  if (lhs.shape.element_type() != t || rhs.shape.element_type() != t) return false;
  if (!IsRowMajor(lhs.shape) || !IsRowMajor(rhs.shape) || !IsRowMajor(out.shape)) return false;
  const auto [lb, rb, lc, rc] = DotDimsOf(dot);
  const int64_t nb = static_cast<int64_t>(lb.size());
  if (lc.size() != 1 || rc.size() != 1 || rb.size() != lb.size()) return false;
  for (int64_t i = 0; i < nb; ++i) {
    if (lb[i] != i || rb[i] != i) return false;
  }
  const hlo::Shape& L = lhs.shape;
  const hlo::Shape& R = rhs.shape;
  const int64_t lfree = L.rank() - nb - 1, rfree = R.rank() - nb - 1;
  if (lfree < 0 || lfree > 1 || rfree < 0 || rfree > 1) return false;
  if (lc[0] < nb || rc[0] < nb) return false;
  plan->f64 = t == PrimitiveType::kF64;
  plan->batch = 1;
  for (int64_t i = 0; i < nb; ++i) plan->batch *= L.dimensions(i);
  plan->k = L.dimensions(lc[0]);
  plan->m = lfree ? L.dimensions(lc[0] == nb ? nb + 1 : nb) : 1;
  plan->n = rfree ? R.dimensions(rc[0] == nb ? nb + 1 : nb) : 1;
  plan->trans_a = lfree && lc[0] == nb;
  plan->trans_b = rfree && rc[0] == nb + 1;
  plan->a_batch_stride = plan->m * plan->k;
  plan->b_batch_stride = plan->k * plan->n;
  plan->c_batch_stride = plan->m * plan->n;
  // An empty product (a zero extent) is no gemm: a kernel writes its zeros.
  if (plan->batch < 1 || plan->m < 1 || plan->n < 1 || plan->k < 1) return false;
  return out.shape.element_count() == plan->batch * plan->m * plan->n;
}

namespace {

// A library node's two-operand op of `opcode` (alone, or inside a fusion
// whose parameters are its operands) and the tensors of its operands and
// result.
struct LibraryOp {
  const HloInstruction* op = nullptr;
  DramTensor lhs, rhs, out;
};
std::optional<LibraryOp> LibraryOpOf(const KernelNode& n, HloOpcode opcode) {
  if (n.kind != NodeKind::kLibrary || n.chain != nullptr || n.outputs.empty()) return std::nullopt;
  LibraryOp l;
  l.out = n.outputs[0];
  if (n.library != nullptr && n.library->opcode() == opcode) {
    l.op = n.library;
    const auto lhs = static_cast<size_t>(l.op->operand(0)->parameter_number());
    const auto rhs = static_cast<size_t>(l.op->operand(1)->parameter_number());
    if (lhs >= n.inputs.size() || rhs >= n.inputs.size()) return std::nullopt;
    l.lhs = n.inputs[lhs];
    l.rhs = n.inputs[rhs];
    return l;
  }
  if (n.library == nullptr && n.instruction != nullptr && n.igraphs.empty() &&
      n.instruction->opcode() == opcode && n.inputs.size() == 2 && n.outputs.size() == 1) {
    l.op = n.instruction;
    l.lhs = n.inputs[0];
    l.rhs = n.inputs[1];
    return l;
  }
  return std::nullopt;
}

}  // namespace

std::optional<NodeGemm> GemmOf(const KernelNode& n) {
  const std::optional<LibraryOp> dot = LibraryOpOf(n, HloOpcode::kDot);
  if (!dot) return std::nullopt;
  NodeGemm g{{}, dot->lhs, dot->rhs, dot->out, dot->out.shape.element_type()};
  if (!IsNarrowFloat(g.storage)) {
    if (!PlanGemm(*dot->op, g.lhs, g.rhs, g.out, &g.plan)) return std::nullopt;
    return g;
  }
  // One narrow type throughout: planned as the f32 product it runs as.
  auto wide = [&](DramTensor t) {
    if (t.shape.element_type() != g.storage) return std::optional<DramTensor>();
    t.shape.set_element_type(PrimitiveType::kF32);
    return std::optional<DramTensor>(std::move(t));
  };
  const auto lhs = wide(g.lhs), rhs = wide(g.rhs), out = wide(g.out);
  if (!lhs || !rhs || !out || !PlanGemm(*dot->op, *lhs, *rhs, *out, &g.plan)) return std::nullopt;
  if (g.plan.lda != 0 || g.plan.ldb != 0 || g.plan.ldc != 0) return std::nullopt;
  return g;
}

std::optional<NodeDot> DotOf(const KernelNode& n) {
  const std::optional<LibraryOp> dot = LibraryOpOf(n, HloOpcode::kDot);
  if (!dot) return std::nullopt;
  NodeDot d{{}, dot->lhs, dot->rhs, dot->out};
  runtime::DotPlan& p = d.plan;
  const hlo::Shape &L = d.lhs.shape, &R = d.rhs.shape, &O = d.out.shape;
  // One element per byte (or more): packed sub-byte arrays are not read.
  for (const DramTensor* t : {&d.lhs, &d.rhs, &d.out}) {
    if (t->bytes != t->shape.element_count() * StorageBytes(t->shape.element_type())) {
      return std::nullopt;
    }
  }
  p.lhs_type = L.element_type();
  p.rhs_type = R.element_type();
  p.out_type = O.element_type();
  const auto [lb, rb, lc, rc] = DotDimsOf(*dot->op);
  constexpr size_t kMax = runtime::DotPlan::kMaxDims;
  if (lb.size() != rb.size() || lc.size() != rc.size() || lb.size() > kMax || lc.size() > kMax) {
    return std::nullopt;
  }
  auto free_dims = [](const hlo::Shape& s, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& contracting) {
    std::vector<int64_t> out;
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
        out.push_back(d);
      }
    }
    return out;
  };
  const std::vector<int64_t> lf = free_dims(L, lb, lc), rf = free_dims(R, rb, rc);
  if (lf.size() > kMax || rf.size() > kMax ||
      O.rank() != static_cast<int64_t>(lb.size() + lf.size() + rf.size())) {
    return std::nullopt;
  }
  const std::vector<int64_t> ls = PhysicalStrides(L), rs = PhysicalStrides(R),
                             os = PhysicalStrides(O);
  p.batch_rank = static_cast<int>(lb.size());
  p.m_rank = static_cast<int>(lf.size());
  p.n_rank = static_cast<int>(rf.size());
  p.k_rank = static_cast<int>(lc.size());
  // The result's dimensions: batch, then the lhs's free ones, then the rhs's.
  size_t o = 0;
  for (size_t i = 0; i < lb.size(); ++i, ++o) {
    p.batch[i] = L.dimensions(lb[i]);
    p.lhs_batch[i] = ls[static_cast<size_t>(lb[i])];
    p.rhs_batch[i] = rs[static_cast<size_t>(rb[i])];
    p.out_batch[i] = os[o];
  }
  for (size_t i = 0; i < lf.size(); ++i, ++o) {
    p.m[i] = L.dimensions(lf[i]);
    p.lhs_m[i] = ls[static_cast<size_t>(lf[i])];
    p.out_m[i] = os[o];
  }
  for (size_t i = 0; i < rf.size(); ++i, ++o) {
    p.n[i] = R.dimensions(rf[i]);
    p.rhs_n[i] = rs[static_cast<size_t>(rf[i])];
    p.out_n[i] = os[o];
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    p.k[i] = L.dimensions(lc[i]);
    p.lhs_k[i] = ls[static_cast<size_t>(lc[i])];
    p.rhs_k[i] = rs[static_cast<size_t>(rc[i])];
  }
  if (!p.Invalid().empty()) return std::nullopt;
  return d;
}

std::optional<NodeConv> ConvOf(const KernelNode& n) {
  const std::optional<LibraryOp> op = LibraryOpOf(n, HloOpcode::kConvolution);
  if (!op) return std::nullopt;
  const HloInstruction* conv = op->op;
  NodeConv c{{}, op->lhs, op->rhs, op->out, op->out.shape.element_type()};
  const PrimitiveType t = c.storage;
  c.input_type = c.input.shape.element_type();
  c.kernel_type = c.kernel.shape.element_type();
  // One float type throughout: BLAS (narrow floats widened); any other
  // types a dot takes: widened for BLAS or summed directly (ConvThunk).
  const bool blas = (t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || IsNarrowFloat(t)) &&
                    c.input_type == t && c.kernel_type == t;
  if (!blas && !runtime::ConvTypesSupported(c.input_type, c.kernel_type, t)) return std::nullopt;
  const auto& a = conv->attributes();
  if (a.GetOr<int64_t>(hlo::AttrKey::kBatchGroupCount).value_or(1) != 1) return std::nullopt;
  const int64_t groups = a.GetOr<int64_t>(hlo::AttrKey::kFeatureGroupCount).value_or(1);
  const auto& dn = a.Get<hlo::ConvolutionDimensionNumbers>(hlo::AttrKey::kDimLabels);
  const size_t spatial = dn.input_spatial_dimensions.size();
  if (spatial > static_cast<size_t>(runtime::ConvPlan::kMaxSpatial) ||
      dn.kernel_spatial_dimensions.size() != spatial ||
      dn.output_spatial_dimensions.size() != spatial) {
    return std::nullopt;
  }
  const std::vector<hlo::WindowDim> window =
      a.GetOr<hlo::Window>(hlo::AttrKey::kWindow)
          .value_or(hlo::Window{std::vector<hlo::WindowDim>(spatial)})
          .dimensions;
  if (window.size() != spatial) return std::nullopt;
  const std::vector<int64_t> is = PhysicalStrides(c.input.shape);
  const std::vector<int64_t> ks = PhysicalStrides(c.kernel.shape);
  const std::vector<int64_t> os = PhysicalStrides(c.out.shape);
  const auto& id = c.input.shape.dimensions();
  const auto& kd = c.kernel.shape.dimensions();
  const auto& od = c.out.shape.dimensions();
  runtime::ConvPlan& p = c.plan;
  p.f64 = t == PrimitiveType::kF64;
  p.spatial = static_cast<int>(spatial);
  p.batch = od[dn.output_batch_dimension];
  p.groups = groups;
  p.in_features = kd[dn.kernel_input_feature_dimension];
  const int64_t out_features = kd[dn.kernel_output_feature_dimension];
  if (groups < 1 || out_features % groups != 0 ||
      id[dn.input_feature_dimension] != p.in_features * groups ||
      od[dn.output_feature_dimension] != out_features || id[dn.input_batch_dimension] != p.batch) {
    return std::nullopt;
  }
  p.out_features = out_features / groups;
  p.in_batch = is[dn.input_batch_dimension];
  p.in_feature = is[dn.input_feature_dimension];
  p.kernel_in = ks[dn.kernel_input_feature_dimension];
  p.kernel_out = ks[dn.kernel_output_feature_dimension];
  p.out_batch = os[dn.output_batch_dimension];
  p.out_feature = os[dn.output_feature_dimension];
  for (size_t d = 0; d < spatial; ++d) {
    const hlo::WindowDim& w = window[d];
    p.in_size[d] = id[dn.input_spatial_dimensions[d]];
    p.out_size[d] = od[dn.output_spatial_dimensions[d]];
    p.window[d] = kd[dn.kernel_spatial_dimensions[d]];
    if (w.size != p.window[d]) return std::nullopt;
    p.stride[d] = w.stride;
    p.pad_low[d] = w.padding_low;
    p.base_dilation[d] = w.base_dilation;
    p.window_dilation[d] = w.window_dilation;
    p.reversed[d] = w.window_reversal;
    p.in_spatial[d] = is[dn.input_spatial_dimensions[d]];
    p.kernel_spatial[d] = ks[dn.kernel_spatial_dimensions[d]];
    p.out_spatial[d] = os[dn.output_spatial_dimensions[d]];
  }
  if (!p.Invalid().empty()) return std::nullopt;
  return c;
}

}  // namespace uir::codegen
