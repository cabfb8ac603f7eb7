// Library-loop thunks: each plan checked against its slices once.
#include "runtime/library_thunks.h"

#include "support/error.h"

namespace uir::runtime {

std::unique_ptr<WindowThunk> WindowThunk::Create(std::string name, const WindowPlan& plan,
                                                 const BufferSlice& input, const BufferSlice& init,
                                                 const BufferSlice& out) {
  CheckSlices(name, {input, init, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "reduce-window thunk " << name << ": " << invalid;
  const int64_t e = StorageBytes(plan.type);
  UIR_CHECK(input.size >= plan.InputElements() * e && init.size >= e &&
            out.size >= plan.OutputElements() * e)
      << "reduce-window thunk " << name << ": slices of " << input.size << ", " << init.size
      << " and " << out.size << " bytes for " << plan.ToString();
  return std::unique_ptr<WindowThunk>(new WindowThunk(std::move(name), plan, input, init, out));
}

void WindowThunk::Execute(const ExecuteParams& params) const {
  RunWindow(plan_, params.At(input_), params.At(init_), params.At(out_));
}

std::unique_ptr<FftThunk> FftThunk::Create(std::string name, const FftPlan& plan,
                                           const BufferSlice& input, const BufferSlice& out) {
  CheckSlices(name, {input, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "fft thunk " << name << ": " << invalid;
  UIR_CHECK(input.size >= plan.InputElements() * plan.InputBytes() &&
            out.size >= plan.OutputElements() * plan.OutputBytes())
      << "fft thunk " << name << ": slices of " << input.size << " and " << out.size
      << " bytes for " << plan.ToString();
  return std::unique_ptr<FftThunk>(new FftThunk(std::move(name), plan, input, out));
}

void FftThunk::Execute(const ExecuteParams& params) const {
  RunFft(plan_, params.At(input_), params.At(out_));
}

std::unique_ptr<RngBitsThunk> RngBitsThunk::Create(std::string name, const RngBitsPlan& plan,
                                                   const BufferSlice& state_in,
                                                   const BufferSlice& state_out,
                                                   const BufferSlice& bits) {
  CheckSlices(name, {state_in, state_out, bits});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "rng thunk " << name << ": " << invalid;
  UIR_CHECK(state_in.size >= 8 * plan.state_words && state_out.size >= 8 * plan.state_words &&
            bits.size >= plan.Elements() * plan.bytes)
      << "rng thunk " << name << ": slices too small for " << plan.ToString();
  return std::unique_ptr<RngBitsThunk>(
      new RngBitsThunk(std::move(name), plan, state_in, state_out, bits));
}

void RngBitsThunk::Execute(const ExecuteParams& params) const {
  RunRngBits(plan_, reinterpret_cast<const uint64_t*>(params.At(state_in_)),
             reinterpret_cast<uint64_t*>(params.At(state_out_)), params.At(bits_));
}

std::unique_ptr<RngThunk> RngThunk::Create(std::string name, const RngPlan& plan,
                                           const BufferSlice& a, const BufferSlice& b,
                                           const BufferSlice& out) {
  CheckSlices(name, {a, b, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "rng thunk " << name << ": " << invalid;
  const int64_t bytes = StorageBytes(plan.type);
  UIR_CHECK(a.size >= bytes && b.size >= bytes && out.size >= plan.elements * bytes)
      << "rng thunk " << name << ": slices too small for " << plan.ToString();
  return std::unique_ptr<RngThunk>(new RngThunk(std::move(name), plan, a, b, out));
}

void RngThunk::Execute(const ExecuteParams& params) const {
  RunRng(plan_, params.At(a_), params.At(b_), params.At(out_),
         draws_.fetch_add(1, std::memory_order_relaxed));
}

std::unique_ptr<ArgReduceThunk> ArgReduceThunk::Create(std::string name, const ArgReducePlan& plan,
                                                       const BufferSlice& values,
                                                       const BufferSlice& init_value,
                                                       const BufferSlice& init_index,
                                                       const BufferSlice& out_value,
                                                       const BufferSlice& out_index) {
  CheckSlices(name, {values, init_value, init_index, out_value, out_index});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "arg-reduce thunk " << name << ": " << invalid;
  const int64_t v = StorageBytes(plan.value_type), i = StorageBytes(plan.index_type);
  UIR_CHECK(values.size >= plan.InputElements() * v && init_value.size >= v &&
            init_index.size >= i && out_value.size >= plan.OutputElements(false) * v &&
            out_index.size >= plan.OutputElements(true) * i)
      << "arg-reduce thunk " << name << ": slices too small for " << plan.ToString();
  return std::unique_ptr<ArgReduceThunk>(new ArgReduceThunk(
      std::move(name), plan, values, init_value, init_index, out_value, out_index));
}

void ArgReduceThunk::Execute(const ExecuteParams& params) const {
  RunArgReduce(plan_, params.At(values_), params.At(init_value_), params.At(init_index_),
               params.At(out_value_), params.At(out_index_));
}

std::unique_ptr<SortThunk> SortThunk::Create(std::string name, const SortPlan& plan,
                                             std::vector<BufferSlice> inputs,
                                             std::vector<BufferSlice> outputs) {
  std::vector<BufferSlice> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  CheckSlices(name, all);
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "sort thunk " << name << ": " << invalid;
  UIR_CHECK(inputs.size() == plan.operands.size() && outputs.size() == plan.operands.size())
      << "sort thunk " << name << ": " << inputs.size() << " inputs and " << outputs.size()
      << " outputs for " << plan.operands.size() << " operands";
  std::vector<BufferUse> uses;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const SortPlan::Operand& o = plan.operands[k];
    UIR_CHECK(inputs[k].size >= plan.Elements(o, false) * o.element_bytes &&
              outputs[k].size >= plan.Elements(o, true) * o.element_bytes)
        << "sort thunk " << name << ": operand " << k << "'s slices too small for "
        << plan.ToString();
    uses.push_back(BufferUse::Read(inputs[k]));
  }
  for (const BufferSlice& s : outputs) uses.push_back(BufferUse::Write(s));
  return std::unique_ptr<SortThunk>(
      new SortThunk(std::move(name), plan, std::move(uses), std::move(inputs), std::move(outputs)));
}

void SortThunk::Execute(const ExecuteParams& params) const {
  std::vector<const void*> in;
  std::vector<void*> out;
  for (const BufferSlice& s : inputs_) in.push_back(params.At(s));
  for (const BufferSlice& s : outputs_) out.push_back(params.At(s));
  RunSort(plan_, in, out);
}

std::unique_ptr<TopKThunk> TopKThunk::Create(std::string name, const TopKPlan& plan,
                                             const BufferSlice& input, const BufferSlice& values,
                                             const BufferSlice& indices) {
  CheckSlices(name, {input, values, indices});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "topk thunk " << name << ": " << invalid;
  const int64_t e = StorageBytes(plan.type);
  UIR_CHECK(input.size >= plan.rows * plan.n * e && values.size >= plan.rows * plan.k * e &&
            indices.size >= plan.rows * plan.k * StorageBytes(plan.index_type))
      << "topk thunk " << name << ": slices too small for " << plan.ToString();
  return std::unique_ptr<TopKThunk>(new TopKThunk(std::move(name), plan, input, values, indices));
}

void TopKThunk::Execute(const ExecuteParams& params) const {
  RunTopK(plan_, params.At(input_), params.At(values_), params.At(indices_));
}

std::unique_ptr<GatherThunk> GatherThunk::Create(std::string name, const GatherPlan& plan,
                                                 const BufferSlice& operand,
                                                 const BufferSlice& indices,
                                                 const BufferSlice& out) {
  CheckSlices(name, {operand, indices, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "gather thunk " << name << ": " << invalid;
  UIR_CHECK(operand.size >= plan.OperandElements() * plan.element_bytes &&
            indices.size >= plan.IndexElements() * StorageBytes(plan.index_type) &&
            out.size >= plan.OutputElements() * plan.element_bytes)
      << "gather thunk " << name << ": slices too small for " << plan.ToString();
  return std::unique_ptr<GatherThunk>(
      new GatherThunk(std::move(name), plan, operand, indices, out));
}

void GatherThunk::Execute(const ExecuteParams& params) const {
  RunGather(plan_, params.At(operand_), params.At(indices_), params.At(out_));
}

std::unique_ptr<ScatterThunk> ScatterThunk::Create(std::string name, const ScatterPlan& plan,
                                                   const BufferSlice& operand,
                                                   const BufferSlice& indices,
                                                   const BufferSlice& updates,
                                                   const BufferSlice& out) {
  CheckSlices(name, {operand, indices, updates, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "scatter thunk " << name << ": " << invalid;
  const int64_t e = StorageBytes(plan.type);
  UIR_CHECK(operand.size >= plan.OperandElements(false) * e &&
            out.size >= plan.OperandElements(true) * e &&
            updates.size >= plan.UpdateElements() * e &&
            indices.size >= plan.IndexElements() * StorageBytes(plan.index_type))
      << "scatter thunk " << name << ": slices too small for " << plan.ToString();
  return std::unique_ptr<ScatterThunk>(
      new ScatterThunk(std::move(name), plan, operand, indices, updates, out));
}

void ScatterThunk::Execute(const ExecuteParams& params) const {
  RunScatter(plan_, params.At(operand_), params.At(indices_), params.At(updates_), params.At(out_));
}

std::unique_ptr<DotThunk> DotThunk::Create(std::string name, const DotPlan& plan,
                                           const BufferSlice& lhs, const BufferSlice& rhs,
                                           const BufferSlice& out) {
  CheckSlices(name, {lhs, rhs, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "dot thunk " << name << ": " << invalid;
  UIR_CHECK(lhs.size >= plan.LhsElements() * StorageBytes(plan.lhs_type) &&
            rhs.size >= plan.RhsElements() * StorageBytes(plan.rhs_type) &&
            out.size >= plan.OutElements() * StorageBytes(plan.out_type))
      << "dot thunk " << name << ": slices too small for " << plan.ToString();
  return std::unique_ptr<DotThunk>(new DotThunk(std::move(name), plan, lhs, rhs, out));
}

void DotThunk::Execute(const ExecuteParams& params) const {
  RunDot(plan_, params.At(lhs_), params.At(rhs_), params.At(out_));
}

}  // namespace uir::runtime
