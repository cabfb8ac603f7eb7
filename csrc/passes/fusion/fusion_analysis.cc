#include "passes/fusion/fusion_analysis.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "support/primitive_type.h"

namespace uir::passes::fusion {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

namespace {

// Flops per output element, estimated for a vectorized implementation:
// 1 for one arithmetic instruction; a division or square root as several;
// transcendental functions as the polynomial they are evaluated with.
double ElementFlops(HloOpcode op) {
  switch (op) {
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kCbrt:
      return 4;
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kTanh:
    case HloOpcode::kErf:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kSinh:
    case HloOpcode::kCosh:
    case HloOpcode::kAtan2:
    case HloOpcode::kAcos:
    case HloOpcode::kAsin:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtanh:
      return 20;
    case HloOpcode::kPower:
      return 40;
    default:
      return hlo::IsElementwise(op) ? 1 : 0;
  }
}

bool IsIndexOnly(HloOpcode op) {
  switch (op) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kCopy:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kIota:
      return true;
    default:
      return false;
  }
}

bool IsLibraryOp(HloOpcode op) { return op == HloOpcode::kDot || op == HloOpcode::kConvolution; }

std::vector<int64_t> Squeezed(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

int64_t Product(const std::vector<int64_t>& dims, size_t from = 0) {
  int64_t n = 1;
  for (size_t k = from; k < dims.size(); ++k) n *= dims[k];
  return n;
}

std::string Describe(const HloInstruction* i) {
  return "%" + i->name() + " (" + std::string(hlo::OpcodeName(i->opcode())) + ")";
}

bool DefaultLayout(const Shape& s) {
  return !s.has_layout() || s.layout().minor_to_major.empty() ||
         s.layout().minor_to_major == Shape::DefaultLayout(s.rank()).minor_to_major;
}

}  // namespace

bool IsFusible(const HloInstruction& i) {
  if (i.HasSideEffect() || !i.control_predecessors().empty() || !i.control_successors().empty())
    return false;
  if (!i.shape().IsArray()) return false;
  const HloOpcode op = i.opcode();
  if (op == HloOpcode::kConstant) return i.shape().element_count() <= 1;
  if (op == HloOpcode::kFusion) {
    // A fusion of more than one dot (dot-chain-fusion's) runs as its own
    // node: nothing fuses into it or with it.
    const hlo::HloComputation* fused = FusedComputation(i);
    int library_ops = 0;
    for (const HloInstruction* x : fused->instructions()) library_ops += IsLibraryOp(x->opcode());
    return !fused->root()->shape().IsTuple() && library_ops <= 1;
  }
  if (op == HloOpcode::kReduce) return true;
  if (op == HloOpcode::kBitcastConvert) {
    return IsRegisterBitcast(i.operand(0)->shape().element_type(), i.shape().element_type());
  }
  if (op == HloOpcode::kStochasticConvert) return false;
  if (op == HloOpcode::kDynamicSlice) {
    // A kernel reads a dynamic window as one more input placed on each
    // run, which must be one contiguous block of its operand (rows of
    // whole minor dims); another window runs as a copy of its own.
    if (!hlo::IsContiguousBlock(i.operand(0)->shape().dimensions(), i.shape().dimensions())) {
      return false;
    }
  }
  // A bitcast that changes layout moves elements across rows: kernels only
  // index through bitcasts between default layouts.
  if (op == HloOpcode::kBitcast)
    return DefaultLayout(i.shape()) && DefaultLayout(i.operand(0)->shape());
  return hlo::IsElementwise(op) || IsIndexOnly(op) || IsLibraryOp(op);
}

hlo::HloComputation* FusedComputation(const HloInstruction& fusion) {
  return fusion.attributes().Get<hlo::HloComputation*>(hlo::AttrKey::kCalls);
}

int64_t ShapeBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& e : shape.tuple_shapes()) n += ShapeBytes(e);
    return n;
  }
  if (!shape.IsArray()) return 0;
  return shape.element_count() * StorageBytes(shape.element_type());
}

double InstructionFlops(const HloInstruction& i) {
  const auto elements = [](const Shape& s) {
    return s.IsArray() ? static_cast<double>(s.element_count()) : 0.0;
  };
  switch (i.opcode()) {
    case HloOpcode::kFusion: {
      double f = 0;
      for (const HloInstruction* n : FusedComputation(i)->instructions()) f += InstructionFlops(*n);
      return f;
    }
    case HloOpcode::kReduce:
      return elements(i.operand(0)->shape()) * static_cast<double>(i.operand_count() / 2);
    case HloOpcode::kDot: {
      double k = 1;
      if (auto dims = i.attributes().GetOr<std::vector<int64_t>>(hlo::AttrKey::kLhsContractingDims))
        for (int64_t d : *dims) k *= static_cast<double>(i.operand(0)->shape().dimensions(d));
      return 2 * elements(i.shape()) * k;
    }
    case HloOpcode::kConvolution: {
      // Each output element reads one kernel window over the input features
      // of its group: kernel elements / output features.
      const Shape& kernel = i.operand(1)->shape();
      const double out_features = std::max<double>(
          1.0, static_cast<double>(i.shape().rank() > 0 ? i.shape().dimensions(i.shape().rank() - 1)
                                                        : 1));
      return 2 * elements(i.shape()) * elements(kernel) / out_features;
    }
    default:
      return elements(i.shape()) * ElementFlops(i.opcode());
  }
}

// ---------------------------------------------------------------------------
// FusionSummary

namespace {

// The bytes of `value` an instruction reads through its use of it as
// operand 0 of a slice or dynamic-slice: the slice's; -1 for any other use.
int64_t SliceRead(const HloInstruction& user, const HloInstruction* value) {
  const bool slice =
      user.opcode() == HloOpcode::kSlice || user.opcode() == HloOpcode::kDynamicSlice;
  if (!slice || user.operand(0) != value) return -1;
  for (int64_t k = 1; k < user.operand_count(); ++k) {
    if (user.operand(k) == value) return -1;
  }
  return ShapeBytes(user.shape());
}

// The bytes of fused parameter `param` its fusion reads: those of the
// slices it is read through when it is only read that way, else all of it.
int64_t ParameterRead(const HloInstruction* param) {
  if (param->users().empty()) return -1;
  int64_t read = 0;
  for (const HloInstruction* u : param->users()) {
    const int64_t bytes = SliceRead(*u, param);
    if (bytes < 0) return -1;
    read += bytes;
  }
  return read;
}

}  // namespace

void FusionSummary::AddFusionInputs(const HloInstruction& fusion) {
  const hlo::HloComputation* c = FusedComputation(fusion);
  for (int64_t k = 0; k < fusion.operand_count(); ++k) {
    AddInput(fusion.operand(k), ParameterRead(c->parameter(k)));
  }
}

FusionSummary FusionSummary::Of(const HloInstruction& i) {
  FusionSummary s;
  s.flops = InstructionFlops(i);
  s.output_bytes = ShapeBytes(i.shape());
  if (i.opcode() == HloOpcode::kFusion) {
    s.AddFusionInputs(i);
  } else {
    for (const HloInstruction* o : i.operands()) s.AddInput(o, SliceRead(i, o));
  }
  if (i.opcode() == HloOpcode::kFusion) {
    const hlo::HloComputation* c = FusedComputation(i);
    for (const HloInstruction* n : c->instructions()) {
      s.reductions += n->opcode() == HloOpcode::kReduce;
      s.library_ops += IsLibraryOp(n->opcode());
    }
    s.root_is_reduction = c->root()->opcode() == HloOpcode::kReduce;
  } else {
    s.reductions = i.opcode() == HloOpcode::kReduce;
    s.library_ops = IsLibraryOp(i.opcode());
    s.root_is_reduction = s.reductions > 0;
  }
  return s;
}

FusionSummary FusionSummary::Merge(const HloInstruction& producer, const FusionSummary& p,
                                   const FusionSummary& c) {
  FusionSummary s;
  s.flops = p.flops + c.flops;
  s.output_bytes = c.output_bytes;
  s.reductions = p.reductions + c.reductions;
  s.library_ops = p.library_ops + c.library_ops;
  s.root_is_reduction = c.root_is_reduction;
  s.inputs.reserve(p.inputs.size() + c.inputs.size());
  s.input_read.reserve(p.inputs.size() + c.inputs.size());
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    if (c.inputs[k] == &producer) continue;
    s.inputs.push_back(c.inputs[k]);
    s.input_read.push_back(c.input_read[k]);
    s.input_bytes += c.input_read[k];
  }
  if (p.inputs.size() * s.inputs.size() <= 1024) {
    for (size_t k = 0; k < p.inputs.size(); ++k) s.AddInput(p.inputs[k], p.input_read[k]);
  } else {
    // Wide fusions: an index, so a merge costs linear time.
    std::unordered_map<const HloInstruction*, size_t> at;
    for (size_t k = 0; k < s.inputs.size(); ++k) at.emplace(s.inputs[k], k);
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      const HloInstruction* o = p.inputs[k];
      const auto [it, inserted] = at.emplace(o, s.inputs.size());
      if (inserted) {
        s.inputs.push_back(o);
        s.input_read.push_back(p.input_read[k]);
        s.input_bytes += p.input_read[k];
      } else {
        s.ReadMore(it->second, p.input_read[k]);
      }
    }
  }
  return s;
}

void FusionSummary::ReadMore(size_t k, int64_t read) {
  const int64_t all = ShapeBytes(inputs[k]->shape());
  const int64_t now = std::min(all, input_read[k] + read);
  input_bytes += now - input_read[k];
  input_read[k] = now;
}

void FusionSummary::AddInput(const HloInstruction* input, int64_t read) {
  const int64_t all = ShapeBytes(input->shape());
  if (read < 0 || read > all) read = all;
  const auto it = std::find(inputs.begin(), inputs.end(), input);
  if (it != inputs.end()) {
    ReadMore(static_cast<size_t>(it - inputs.begin()), read);
    return;
  }
  inputs.push_back(input);
  input_read.push_back(read);
  input_bytes += read;
}

void FusionSummary::ClearInputs() {
  inputs.clear();
  input_read.clear();
  input_bytes = 0;
}

double FusionSummary::Seconds(const MachineModel& m) const {
  const double bytes = static_cast<double>(BytesAccessed());
  const double cores = static_cast<double>(std::max<int64_t>(1, m.cores));
  const double bandwidth =
      (bytes <= static_cast<double>(m.cache_resident_bytes()) ? m.cache_bytes_per_s
                                                              : m.dram_bytes_per_s) *
      cores;
  return std::max(bytes / bandwidth, flops / (m.flops_per_s * cores)) + m.kernel_overhead_s;
}

hlo::FusionKind FusionSummary::Kind() const {
  if (library_ops > 0) return hlo::FusionKind::kOutput;
  if (reductions > 0) return hlo::FusionKind::kInput;
  return hlo::FusionKind::kLoop;
}

// ---------------------------------------------------------------------------
// FusionView

void FusionView::AddBody(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kFusion) {
    nodes_.push_back(i);
    node_set_.insert(i);
    return;
  }
  const hlo::HloComputation* c = FusedComputation(*i);
  for (int64_t k = 0; k < c->num_parameters(); ++k)
    outer_of_param_[c->parameter(k)] = i->operand(k);
  for (const HloInstruction* n : c->MakeInstructionPostOrder()) {
    if (n->opcode() == HloOpcode::kParameter) continue;
    nodes_.push_back(n);
    node_set_.insert(n);
  }
}

FusionView::FusionView(const HloInstruction* single) {
  AddBody(single);
  root_ = nodes_.back();
}

FusionView::FusionView(const HloInstruction* producer, const HloInstruction* consumer)
    : producer_(producer) {
  AddBody(producer);
  producer_root_ = nodes_.back();
  AddBody(consumer);
  root_ = nodes_.back();
}

const HloInstruction* FusionView::Internal(const HloInstruction* node, int64_t i) const {
  const HloInstruction* x = node->operand(i);
  if (auto it = outer_of_param_.find(x); it != outer_of_param_.end()) x = it->second;
  if (producer_ != nullptr && x == producer_) return producer_root_;
  return node_set_.count(x) ? x : nullptr;
}

std::string FusionView::Check(const MachineModel& machine) const {
  int reductions = 0, library = 0;
  for (const HloInstruction* n : nodes_) {
    reductions += n->opcode() == HloOpcode::kReduce;
    library += IsLibraryOp(n->opcode());
  }
  if (library > 0) {
    if (library > 1) return "two dots or convolutions cannot share a fusion";
    if (reductions > 0) return "a reduction cannot join a dot or convolution epilogue";
    return CheckLibraryEpilogue();
  }
  if (reductions == 0) return "";
  if (reductions == 1 && root_->opcode() == HloOpcode::kReduce) return "";
  return CheckRows(machine);
}

std::string FusionView::CheckLibraryEpilogue() const {
  std::unordered_set<const HloInstruction*> dependent;
  const HloInstruction* library = nullptr;
  for (const HloInstruction* n : nodes_) {
    if (IsLibraryOp(n->opcode())) {
      library = n;
      for (int64_t k = 0; k < n->operand_count(); ++k) {
        if (Internal(n, k) != nullptr)
          return Describe(n) +
                 " reads its operands from memory (a library call): " + Describe(Internal(n, k)) +
                 " cannot fuse into them";
      }
      dependent.insert(n);
      continue;
    }
    bool depends = false;
    for (int64_t k = 0; k < n->operand_count(); ++k) depends |= dependent.count(Internal(n, k)) > 0;
    if (!depends) continue;
    if (!hlo::IsElementwise(n->opcode()) ||
        n->shape().dimensions() != library->shape().dimensions()) {
      return "only elementwise ops of the " + std::string(hlo::OpcodeName(library->opcode())) +
             "'s shape form its epilogue, not " + Describe(n);
    }
    dependent.insert(n);
  }
  // The library call writes its result into the fusion's output, where the
  // epilogue then finishes it: both hold one element type.
  if (library != nullptr && root_->shape().IsArray() &&
      root_->shape().element_type() != library->shape().element_type()) {
    return "the epilogue of " + Describe(library) + " must keep its element type, not " +
           Describe(root_);
  }
  return "";
}

std::string FusionView::CheckRows(const MachineModel& machine) const {
  // The row structure, from the first reduction.
  std::vector<int64_t> full;
  int64_t outer_rank = -1;
  for (const HloInstruction* n : nodes_) {
    if (n->opcode() != HloOpcode::kReduce) continue;
    const Shape& in = n->operand(0)->shape();
    const auto& dims = n->attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
    std::vector<int64_t> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    const int64_t k = static_cast<int64_t>(sorted.size());
    for (int64_t j = 0; j < k; ++j) {
      if (sorted[j] != in.rank() - k + j)
        return Describe(n) + " reduces dimensions " + hlo::IntListToString(dims) + " of " +
               in.Describe() + ", not the minor ones: its result is not a row result";
    }
    if (in.has_layout() && !in.layout().minor_to_major.empty() &&
        in.layout().minor_to_major != hlo::Shape::DefaultLayout(in.rank()).minor_to_major) {
      return Describe(n) + " reads a non-default layout";
    }
    if (outer_rank < 0) {
      full = in.dimensions();
      outer_rank = in.rank() - k;
    } else if (in.dimensions() != full || in.rank() - k != outer_rank) {
      return Describe(n) + " reduces rows of " + in.Describe() + ", another reduction rows of " +
             Shape(in.element_type(), full).Describe();
    }
    for (int64_t j = 1; j < n->operand_count() / 2; ++j) {
      if (n->operand(j)->shape().dimensions() != full)
        return Describe(n) + " has operands of different shapes";
    }
  }
  const std::vector<int64_t> row_result(full.begin(), full.begin() + outer_rank);
  const std::vector<int64_t> squeezed_result = Squeezed(row_result);
  const std::vector<int64_t> squeezed_full = Squeezed(full);

  // Everything computed from a reduction must stay within its row.
  std::unordered_set<const HloInstruction*> dependent;
  for (const HloInstruction* n : nodes_) {
    bool depends = false;
    for (int64_t k = 0; k < n->operand_count(); ++k) depends |= dependent.count(Internal(n, k)) > 0;
    if (n->opcode() == HloOpcode::kReduce) {
      dependent.insert(n);  // its operands are rows: checked above
      continue;
    }
    if (!depends) continue;
    const std::vector<int64_t>& dims = n->shape().dimensions();
    const bool is_row = dims == full;
    const bool is_result = !is_row && Squeezed(dims) == squeezed_result;
    if (!is_row && !is_result)
      return Describe(n) + " of shape " + n->shape().Describe() +
             " uses a reduction's result but is neither a row " +
             Shape(n->shape().element_type(), full).Describe() + " nor a row result";
    const HloOpcode op = n->opcode();
    if (hlo::IsElementwise(op)) {
      dependent.insert(n);
      continue;
    }
    if (op == HloOpcode::kReshape || op == HloOpcode::kBitcast) {
      const std::vector<int64_t> in = Squeezed(n->operand(0)->shape().dimensions());
      if (in != (is_row ? squeezed_full : squeezed_result))
        return Describe(n) + " reshapes a row result into another layout of its elements";
      dependent.insert(n);
      continue;
    }
    if (op == HloOpcode::kBroadcast) {
      const Shape& in = n->operand(0)->shape();
      const auto& bdims = n->attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
      if (Squeezed(in.dimensions()) != squeezed_result)
        return Describe(n) + " broadcasts " + in.Describe() + ", not a row result";
      for (size_t j = 0; j < bdims.size(); ++j) {
        if (in.dimensions(static_cast<int64_t>(j)) == 1) continue;
        if (bdims[j] >= outer_rank || (j > 0 && bdims[j] <= bdims[j - 1]))
          return Describe(n) +
                 " broadcasts a row result across rows (dimensions=" + hlo::IntListToString(bdims) +
                 ")";
      }
      dependent.insert(n);
      continue;
    }
    return Describe(n) + " cannot read a reduction's result inside a row fusion";
  }

  // The rows a kernel keeps in fast memory: one per reduction, one per row
  // read from outside.
  int64_t element_bytes = 1;
  for (const HloInstruction* n : nodes_)
    element_bytes = std::max<int64_t>(element_bytes, StorageBytes(n->shape().element_type()));
  int64_t live = 0;
  std::unordered_set<const HloInstruction*> outside_rows;
  for (const HloInstruction* n : nodes_) {
    live += n->opcode() == HloOpcode::kReduce;
    for (int64_t k = 0; k < n->operand_count(); ++k) {
      if (Internal(n, k) == nullptr && n->operand(k)->shape().dimensions() == full)
        outside_rows.insert(n->operand(k));
    }
  }
  live += static_cast<int64_t>(outside_rows.size());
  const int64_t row_bytes = Product(full, static_cast<size_t>(outer_rank)) * element_bytes;
  if (row_bytes * live > machine.fast_memory_bytes()) {
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  "%lld rows of %lld bytes do not fit the fast memory (%lld bytes)",
                  static_cast<long long>(live), static_cast<long long>(row_bytes),
                  static_cast<long long>(machine.fast_memory_bytes()));
    return buf;
  }
  return "";
}

}  // namespace uir::passes::fusion
