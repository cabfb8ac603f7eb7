// Thunks of the runtime's library loops (reduce-window, arg-reduce, sort,
// gather, scatter, fft, rng-bit-generator), each over the slices its plan reads and writes. First
// a reduce-window thunk: RunWindow over an input, its init value and the
// output.
#ifndef UIR_RUNTIME_LIBRARY_THUNKS_H_
#define UIR_RUNTIME_LIBRARY_THUNKS_H_

#include <atomic>
#include <memory>
#include <string>

#include "runtime/arg_reduce.h"
#include "runtime/dot.h"
#include "runtime/fft.h"
#include "runtime/gather.h"
#include "runtime/rng_bits.h"
#include "runtime/scatter.h"
#include "runtime/sort.h"
#include "runtime/thunk.h"
#include "runtime/window.h"

namespace uir::runtime {

class WindowThunk final : public Thunk {
 public:
  // Checks the plan (WindowPlan::Invalid) and that each slice holds every
  // element the plan's strides reach.
  static std::unique_ptr<WindowThunk> Create(std::string name, const WindowPlan& plan,
                                             const BufferSlice& input, const BufferSlice& init,
                                             const BufferSlice& out);

  const WindowPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  WindowThunk(std::string name, const WindowPlan& plan, const BufferSlice& input,
              const BufferSlice& init, const BufferSlice& out)
      : Thunk(Kind::kWindow, std::move(name),
              {BufferUse::Read(input), BufferUse::Read(init), BufferUse::Write(out)}),
        plan_(plan),
        input_(input),
        init_(init),
        out_(out) {}
  std::string Details() const override { return plan_.ToString(); }

  WindowPlan plan_;
  BufferSlice input_, init_, out_;
};

// An arg-reduce thunk: RunArgReduce over the values, the init pair and the
// two outputs.
class ArgReduceThunk final : public Thunk {
 public:
  static std::unique_ptr<ArgReduceThunk> Create(std::string name, const ArgReducePlan& plan,
                                                const BufferSlice& values,
                                                const BufferSlice& init_value,
                                                const BufferSlice& init_index,
                                                const BufferSlice& out_value,
                                                const BufferSlice& out_index);

  const ArgReducePlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  ArgReduceThunk(std::string name, const ArgReducePlan& plan, const BufferSlice& values,
                 const BufferSlice& init_value, const BufferSlice& init_index,
                 const BufferSlice& out_value, const BufferSlice& out_index)
      : Thunk(Kind::kReduce, std::move(name),
              {BufferUse::Read(values), BufferUse::Read(init_value), BufferUse::Read(init_index),
               BufferUse::Write(out_value), BufferUse::Write(out_index)}),
        plan_(plan),
        values_(values),
        init_value_(init_value),
        init_index_(init_index),
        out_value_(out_value),
        out_index_(out_index) {}
  std::string Details() const override { return plan_.ToString(); }

  ArgReducePlan plan_;
  BufferSlice values_, init_value_, init_index_, out_value_, out_index_;
};

// A sort thunk: RunSort over its operands and results.
class SortThunk final : public Thunk {
 public:
  static std::unique_ptr<SortThunk> Create(std::string name, const SortPlan& plan,
                                           std::vector<BufferSlice> inputs,
                                           std::vector<BufferSlice> outputs);
  const SortPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  SortThunk(std::string name, const SortPlan& plan, std::vector<BufferUse> uses,
            std::vector<BufferSlice> inputs, std::vector<BufferSlice> outputs)
      : Thunk(Kind::kSort, std::move(name), std::move(uses)),
        plan_(plan),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}
  std::string Details() const override { return plan_.ToString(); }

  SortPlan plan_;
  std::vector<BufferSlice> inputs_, outputs_;
};

// A topk thunk: RunTopK from the input to the values and indices.
class TopKThunk final : public Thunk {
 public:
  static std::unique_ptr<TopKThunk> Create(std::string name, const TopKPlan& plan,
                                           const BufferSlice& input, const BufferSlice& values,
                                           const BufferSlice& indices);
  const TopKPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  TopKThunk(std::string name, const TopKPlan& plan, const BufferSlice& input,
            const BufferSlice& values, const BufferSlice& indices)
      : Thunk(Kind::kSort, std::move(name),
              {BufferUse::Read(input), BufferUse::Write(values), BufferUse::Write(indices)}),
        plan_(plan),
        input_(input),
        values_(values),
        indices_(indices) {}
  std::string Details() const override { return "topk " + plan_.ToString(); }

  TopKPlan plan_;
  BufferSlice input_, values_, indices_;
};

// An fft thunk: RunFft from the input to the output.
class FftThunk final : public Thunk {
 public:
  static std::unique_ptr<FftThunk> Create(std::string name, const FftPlan& plan,
                                          const BufferSlice& input, const BufferSlice& out);
  const FftPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  FftThunk(std::string name, const FftPlan& plan, const BufferSlice& input, const BufferSlice& out)
      : Thunk(Kind::kFft, std::move(name), {BufferUse::Read(input), BufferUse::Write(out)}),
        plan_(plan),
        input_(input),
        out_(out) {}
  std::string Details() const override { return plan_.ToString(); }

  FftPlan plan_;
  BufferSlice input_, out_;
};

// An rng-bit-generator thunk: RunRngBits from the state to the new state
// and the bits.
class RngBitsThunk final : public Thunk {
 public:
  static std::unique_ptr<RngBitsThunk> Create(std::string name, const RngBitsPlan& plan,
                                              const BufferSlice& state_in,
                                              const BufferSlice& state_out,
                                              const BufferSlice& bits);
  const RngBitsPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  RngBitsThunk(std::string name, const RngBitsPlan& plan, const BufferSlice& state_in,
               const BufferSlice& state_out, const BufferSlice& bits)
      : Thunk(Kind::kRng, std::move(name),
              {BufferUse::Read(state_in), BufferUse::Write(state_out), BufferUse::Write(bits)}),
        plan_(plan),
        state_in_(state_in),
        state_out_(state_out),
        bits_(bits) {}
  std::string Details() const override { return plan_.ToString(); }

  RngBitsPlan plan_;
  BufferSlice state_in_, state_out_, bits_;
};

// An rng thunk: RunRng from its two scalar operands into the array, each
// run its next draw (the count is the thunk's own: every executable's rng
// draws its own sequence, run after run).
class RngThunk final : public Thunk {
 public:
  static std::unique_ptr<RngThunk> Create(std::string name, const RngPlan& plan,
                                          const BufferSlice& a, const BufferSlice& b,
                                          const BufferSlice& out);
  const RngPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  RngThunk(std::string name, const RngPlan& plan, const BufferSlice& a, const BufferSlice& b,
           const BufferSlice& out)
      : Thunk(Kind::kRng, std::move(name),
              {BufferUse::Read(a), BufferUse::Read(b), BufferUse::Write(out)}),
        plan_(plan),
        a_(a),
        b_(b),
        out_(out) {}
  std::string Details() const override { return plan_.ToString(); }

  RngPlan plan_;
  BufferSlice a_, b_, out_;
  mutable std::atomic<uint64_t> draws_{0};
};

// A gather thunk: RunGather over the operand, the start indices and the
// result.
class GatherThunk final : public Thunk {
 public:
  static std::unique_ptr<GatherThunk> Create(std::string name, const GatherPlan& plan,
                                             const BufferSlice& operand, const BufferSlice& indices,
                                             const BufferSlice& out);
  const GatherPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  GatherThunk(std::string name, const GatherPlan& plan, const BufferSlice& operand,
              const BufferSlice& indices, const BufferSlice& out)
      : Thunk(Kind::kGather, std::move(name),
              {BufferUse::Read(operand), BufferUse::Read(indices), BufferUse::Write(out)}),
        plan_(plan),
        operand_(operand),
        indices_(indices),
        out_(out) {}
  std::string Details() const override { return plan_.ToString(); }

  GatherPlan plan_;
  BufferSlice operand_, indices_, out_;
};

// A scatter thunk: RunScatter over the operand, the scatter indices, the
// updates and the result (which may be the operand's memory).
class ScatterThunk final : public Thunk {
 public:
  static std::unique_ptr<ScatterThunk> Create(std::string name, const ScatterPlan& plan,
                                              const BufferSlice& operand,
                                              const BufferSlice& indices,
                                              const BufferSlice& updates, const BufferSlice& out);
  const ScatterPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  ScatterThunk(std::string name, const ScatterPlan& plan, const BufferSlice& operand,
               const BufferSlice& indices, const BufferSlice& updates, const BufferSlice& out)
      : Thunk(Kind::kScatter, std::move(name),
              {BufferUse::Read(operand), BufferUse::Read(indices), BufferUse::Read(updates),
               BufferUse::Write(out)}),
        plan_(plan),
        operand_(operand),
        indices_(indices),
        updates_(updates),
        out_(out) {}
  std::string Details() const override { return plan_.ToString(); }

  ScatterPlan plan_;
  BufferSlice operand_, indices_, updates_, out_;
};

// A general dot thunk: RunDot over the two operands and the result (a
// "gemm" thunk, as BLAS's row-major products are).
class DotThunk final : public Thunk {
 public:
  static std::unique_ptr<DotThunk> Create(std::string name, const DotPlan& plan,
                                          const BufferSlice& lhs, const BufferSlice& rhs,
                                          const BufferSlice& out);
  const DotPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  DotThunk(std::string name, const DotPlan& plan, const BufferSlice& lhs, const BufferSlice& rhs,
           const BufferSlice& out)
      : Thunk(Kind::kGemm, std::move(name),
              {BufferUse::Read(lhs), BufferUse::Read(rhs), BufferUse::Write(out)}),
        plan_(plan),
        lhs_(lhs),
        rhs_(rhs),
        out_(out) {}
  std::string Details() const override { return plan_.ToString(); }

  DotPlan plan_;
  BufferSlice lhs_, rhs_, out_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_LIBRARY_THUNKS_H_
