// The evaluator's walk over a computation, control flow and tuples.
// Elementwise ops are in elementwise.cc, data movement in shape_ops.cc,
// reductions in reduce.cc, dot in dot.cc.
#include "eval/evaluator.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include "eval/collectives.h"
#include "eval/context.h"
#include "eval/convolution.h"
#include "eval/custom_call.h"
#include "eval/dot.h"
#include "eval/dynamic.h"
#include "eval/elementwise.h"
#include "eval/kernels.h"
#include "eval/linalg.h"
#include "eval/reduce.h"
#include "eval/rng.h"
#include "eval/scatter.h"
#include "eval/shape_ops.h"
#include "eval/sort.h"
#include "eval/typed.h"
#include "hlo/reduction_kind.h"
#include "hlo/verifier.h"
#include "support/float_format.h"

namespace uir::eval {
namespace {

// Why evaluating `inst` ran out of memory: its op, shape and bytes.
std::string AllocationFailure(const hlo::HloInstruction& inst) {
  const hlo::Shape& shape = inst.shape();
  const std::string bytes =
      shape.IsArray() ? DescribeBytes(static_cast<uint64_t>(shape.element_count()) *
                                      static_cast<uint64_t>(StorageBytes(shape.element_type())))
                      : "the memory";
  return "cannot allocate " + bytes + " for %" + inst.name() + " (" +
         std::string(hlo::OpcodeName(inst.opcode())) + ", " + shape.ToString() + ")";
}

}  // namespace

namespace {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::Shape;

// A value during evaluation. Arrays are shared, not copied, between the
// instructions that pass them along (tuple, get-tuple-element, parameters,
// while state); tuples are vectors of values. `owned` marks arrays the
// evaluator made: an owned array nobody else holds may be updated in place.
struct Value {
  std::shared_ptr<Literal> array;  // arrays and tokens
  std::vector<Value> tuple;
  bool owned = false;

  static Value Own(Literal l) {
    if (l.shape().IsTuple()) {
      Value v;
      for (Literal& e : l.mutable_tuple_elements()) v.tuple.push_back(Own(std::move(e)));
      return v;
    }
    return Value{std::make_shared<Literal>(std::move(l)), {}, true};
  }
  // A view of `l`, which must outlive the value.
  static Value Borrow(const Literal& l) {
    if (l.shape().IsTuple()) {
      Value v;
      for (const Literal& e : l.tuple_elements()) v.tuple.push_back(Borrow(e));
      return v;
    }
    return Value{
        std::shared_ptr<Literal>(std::shared_ptr<Literal>(), const_cast<Literal*>(&l)), {}, false};
  }
  bool is_tuple() const { return array == nullptr; }
  // The value as a literal (copied unless this was its only holder).
  Literal Take() && {
    if (is_tuple()) {
      std::vector<Literal> elements;
      for (Value& e : tuple) elements.push_back(std::move(e).Take());
      return TupleOf(std::move(elements));
    }
    if (owned && array.use_count() == 1) return std::move(*array);
    return *array;
  }
  Literal Copy() const { return Value(*this).Take(); }
};

class Evaluator final : public Context {
 public:
  explicit Evaluator(Participant self = {}) : self_(self) {
    rng_.seed = self.seed ^ (static_cast<uint64_t>(self.id) * 0x9E3779B97F4A7C15ull);
  }

  Value Run(const HloComputation& c, std::vector<Value> args) {
    if (static_cast<int64_t>(args.size()) != c.num_parameters()) {
      throw ShapeError("computation " + c.name() + " takes " + std::to_string(c.num_parameters()) +
                       " arguments, got " + std::to_string(args.size()));
    }
    return RunFor(c, std::move(args), /*lift=*/-1, c.root());
  }

  Literal Call(const HloComputation& c, const std::vector<const Literal*>& args) override {
    return Run(c, Borrowed(args)).Take();
  }

  bool Liftable(const HloComputation& c) override {
    auto [it, inserted] = liftable_.try_emplace(&c, false);
    if (!inserted) return it->second;
    bool ok = true;
    for (const HloInstruction* p : c.parameters())
      ok = ok && p->shape().IsArray() && p->shape().rank() == 0;
    for (const auto& inst : c.instructions()) {
      const HloOpcode op = inst->opcode();
      const bool scalar = inst->shape().IsArray() && inst->shape().rank() == 0;
      if (op == HloOpcode::kTuple) {
        ok = ok && inst == c.root();
      } else if (op == HloOpcode::kParameter || op == HloOpcode::kConstant) {
        ok = ok && scalar;
      } else {
        ok =
            ok && scalar &&
            (hlo::IsElementwise(op) || op == HloOpcode::kCopy || op == HloOpcode::kReducePrecision);
      }
    }
    it->second = ok;
    return ok;
  }

  Literal CallLifted(const HloComputation& c, const std::vector<const Literal*>& args,
                     const HloInstruction* value) override {
    UIR_CHECK(Liftable(c) && !args.empty()) << "computation " << c.name() << " cannot be lifted";
    return RunFor(c, Borrowed(args), args[0]->element_count(), value != nullptr ? value : c.root())
        .Take();
  }

 private:
  static std::vector<Value> Borrowed(const std::vector<const Literal*>& args) {
    std::vector<Value> values;
    values.reserve(args.size());
    for (const Literal* a : args) values.push_back(Value::Borrow(*a));
    return values;
  }

  struct Plan {
    std::vector<HloInstruction*> order;                   // post order
    std::unordered_map<const HloInstruction*, int> uses;  // operand slots reading each
  };

  const Plan& PlanFor(const HloComputation& c) {
    auto it = plans_.find(&c);
    if (it != plans_.end()) return it->second;
    Plan plan;
    plan.order = c.MakeInstructionPostOrder();
    for (const HloInstruction* inst : plan.order) {
      for (const HloInstruction* o : inst->operands()) ++plan.uses[o];
    }
    return plans_.emplace(&c, std::move(plan)).first->second;
  }

  // Evaluates `c` up to `want`. Each value is dropped after its last use,
  // so an array passed along (say, a while loop's state) can be updated in
  // place by its last reader. With lift >= 0, scalar constants are expanded
  // to `lift` elements (see CallLifted).
  Value RunFor(const HloComputation& c, std::vector<Value> args, int64_t lift,
               const HloInstruction* want) {
    const Plan& plan = PlanFor(c);
    // Lifted scalar computations run on whole arrays (see CallLifted).
    const bool was_lifted = lifted_;
    lifted_ = lift >= 0;
    struct Restore {
      bool& flag;
      bool value;
      ~Restore() { flag = value; }
    } restore{lifted_, was_lifted};
    std::unordered_map<const HloInstruction*, Value> values;
    std::unordered_map<const HloInstruction*, int> left = plan.uses;
    for (HloInstruction* inst : plan.order) {
      if (self_.max_steps > 0 && ++steps_ > self_.max_steps) {
        throw ShapeError("evaluation stopped after its limit of " +
                         std::to_string(self_.max_steps) + " steps, at %" + inst->name());
      }
      Value v;
      if (inst->opcode() == HloOpcode::kParameter) {
        v = std::move(args[inst->parameter_number()]);
      } else if (lift >= 0 && inst->opcode() == HloOpcode::kConstant) {
        Literal l = MakeLiteral(inst->shape().element_type(), {lift});
        for (int64_t i = 0; i < lift; ++i) SetElement(l, i, inst->literal());
        v = Value::Own(std::move(l));
      } else {
        try {
          v = Eval(*inst, values, left);
        } catch (const std::bad_alloc&) {
          throw OutOfMemoryError(AllocationFailure(*inst));
        } catch (const std::length_error&) {
          throw OutOfMemoryError(AllocationFailure(*inst));
        }
      }
      if (inst == want) return v;
      for (const HloInstruction* o : inst->operands()) {
        if (--left[o] == 0) values.erase(o);
      }
      if (left[inst] > 0) values[inst] = std::move(v);
    }
    UIR_CHECK(false) << "%" << want->name() << " is not in " << c.name();
    return Value();
  }

  Value Call(const HloComputation* c, std::vector<Value> args) { return Run(*c, std::move(args)); }

  HloComputation* Computation(const HloInstruction& inst, AttrKey key) {
    return inst.attributes().Get<HloComputation*>(key);
  }

  Participant self_;
  int64_t steps_ = 0;
  bool lifted_ = false;
  RngState rng_;
  std::unordered_map<const HloComputation*, Plan> plans_;
  std::unordered_map<const HloComputation*, bool> liftable_;

  // Operand 0's array, to be updated in place when this instruction is its
  // last reader and the evaluator owns it; otherwise a copy.
  static Literal TakeOperand(const HloInstruction& inst,
                             std::unordered_map<const HloInstruction*, Value>& values,
                             std::unordered_map<const HloInstruction*, int>& left) {
    const HloInstruction* o = inst.operand(0);
    Value& v = values.at(o);
    int reads = 0;
    for (const HloInstruction* x : inst.operands()) reads += x == o;
    // Not when another operand slot reads the same array.
    if (reads == 1 && left.at(o) == 1 && v.owned && v.array.use_count() == 1) {
      return std::move(*v.array);  // the moved-from array is never read again
    }
    return *v.array;
  }

  Value Eval(const HloInstruction& inst, std::unordered_map<const HloInstruction*, Value>& values,
             std::unordered_map<const HloInstruction*, int>& left) {
    auto value = [&](int64_t i) -> Value& { return values.at(inst.operand(i)); };
    auto all = [&] {
      std::vector<Value> out;
      for (const HloInstruction* o : inst.operands()) out.push_back(values.at(o));
      return out;
    };
    switch (inst.opcode()) {
      case HloOpcode::kConstant:
        return Value::Borrow(inst.literal());
      case HloOpcode::kTuple: {
        Value t;
        t.tuple = all();
        return t;
      }
      case HloOpcode::kGetTupleElement:
        return value(0).tuple.at(inst.attributes().Get<int64_t>(AttrKey::kIndex));
      case HloOpcode::kAddDependency:
      case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kCopy:
      case HloOpcode::kDomain:
        return value(0);
      case HloOpcode::kCall:
        return Call(Computation(inst, AttrKey::kToApply), all());
      case HloOpcode::kFusion:
        return Call(Computation(inst, AttrKey::kCalls), all());
      case HloOpcode::kWhile:
        return While(inst, value(0));
      case HloOpcode::kConditional:
        return Conditional(inst, all());
      case HloOpcode::kScan:
        return Scan(inst, all());
      case HloOpcode::kAsyncStart: {
        // The start's value is ((operands), result, context...): the wrapped
        // op runs here, so update and done only pass it along.
        Value start, operands;
        operands.tuple = all();
        start.tuple.push_back(operands);
        start.tuple.push_back(Call(inst.async_wrapped_computation(), all()));
        for (int64_t i = 2; i < inst.shape().tuple_shapes_size(); ++i)
          start.tuple.push_back(Value::Own(Literal(inst.shape().tuple_shapes(i))));
        return start;
      }
      case HloOpcode::kAsyncUpdate:
        return value(0);
      case HloOpcode::kAsyncDone:
        return value(0).tuple.at(1);
      case HloOpcode::kCopyStart: {  // (destination, source, context)
        Value start;
        start.tuple = {value(0), value(0), Value::Own(Literal(inst.shape().tuple_shapes(2)))};
        return start;
      }
      case HloOpcode::kCopyDone:
        return value(0).tuple.at(0);
      case HloOpcode::kAllGatherDone:
      case HloOpcode::kCollectivePermuteDone:
        return value(0).tuple.at(1);
      case HloOpcode::kAllReduceDone: {
        // all-reduce-start is the result itself, or in its older form
        // ((operand), result).
        Value& start = value(0);
        if (start.is_tuple() && !inst.shape().IsTuple()) return start.tuple.at(1);
        return start;
      }
      case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kScatter: {
        // In place into operand 0 where it is an array at its full size.
        const bool dus = inst.opcode() == HloOpcode::kDynamicUpdateSlice;
        if (dus ? !inst.shape().IsArray() : inst.operand_count() != 3) break;
        std::vector<const Literal*> ops = Arrays(inst, values);
        if (!lifted_ && HasShortOperand(inst, ops)) break;
        Literal target = TakeOperand(inst, values, left);
        ops[0] = &target;
        if (!dus) return Value::Own(EvalScatter(inst, ops, *this, &target));
        DynamicUpdateSliceInto(target, ops);
        return Value::Own(std::move(target));
      }
      default:
        break;
    }
    const std::vector<const Literal*> ops = Arrays(inst, values);
    // (Lifted computations run scalar code on whole arrays: no bounds there.)
    Literal result =
        !lifted_ && HasShortOperand(inst, ops)
            ? EvalDynamic(inst, ops,
                          [this](const HloInstruction& i, const std::vector<const Literal*>& o) {
                            return EvalArrayOp(i, o);
                          })
            : EvalArrayOp(inst, ops);
    // Every later reader indexes by the instruction's shape (a dynamic
    // dimension by its actual size): a result of any other shape would be
    // read out of bounds, so it stops here.
    UIR_CHECK(lifted_ || FitsShape(result.shape(), inst.shape()))
        << "%" << inst.name() << " evaluated to " << result.shape().Describe() << ", not "
        << inst.shape().Describe();
    return Value::Own(std::move(result));
  }

  // The operands of an op that reads arrays. A tuple operand (rare: custom
  // calls, say) is materialized as a literal kept until the next call.
  std::vector<const Literal*> Arrays(const HloInstruction& inst,
                                     std::unordered_map<const HloInstruction*, Value>& values) {
    std::vector<const Literal*> ops;
    ops.reserve(inst.operands().size());
    materialized_.clear();
    for (const HloInstruction* o : inst.operands()) {
      const Value& v = values.at(o);
      if (v.is_tuple()) {
        materialized_.push_back(std::make_unique<Literal>(v.Copy()));
        ops.push_back(materialized_.back().get());
      } else {
        ops.push_back(v.array.get());
      }
    }
    return ops;
  }
  std::vector<std::unique_ptr<Literal>> materialized_;

  Literal EvalArrayOp(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
    const HloOpcode op = inst.opcode();
    switch (op) {
      case HloOpcode::kAfterAll:
        return Literal(Shape::Token());
      case HloOpcode::kMap:
        return eval::Map(*this, inst, ops);
      case HloOpcode::kReduce:
        return eval::Reduce(*this, inst, ops);
      case HloOpcode::kReduceWindow:
        return eval::ReduceWindow(*this, inst, ops);
      case HloOpcode::kDot:
        return eval::Dot(inst, *ops[0], *ops[1]);
      case HloOpcode::kSort:
        return EvalSort(inst, ops, *this);
      case HloOpcode::kCustomCall:
        return eval::RunCustomCall(inst, ops);
      case HloOpcode::kRng:
      case HloOpcode::kRngBitGenerator:
      case HloOpcode::kRngGetAndUpdateState:
        return EvalRng(inst, ops, rng_);
      case HloOpcode::kCholesky:
      case HloOpcode::kTriangularSolve:
      case HloOpcode::kFft:
      case HloOpcode::kTopK:
      case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormTraining:
      case HloOpcode::kBatchNormGrad:
      case HloOpcode::kGetDimensionSize:
      case HloOpcode::kSetDimensionSize:
      case HloOpcode::kDynamicReshape:
        return EvalLinalgOp(inst, ops);
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kReduceScatter:
      case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllToAll:
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kCollectiveBroadcast:
      case HloOpcode::kReplicaId:
      case HloOpcode::kPartitionId:
        return EvalCollective(inst, ops, self_, *this);
      case HloOpcode::kConvolution:
        return EvalConvolution(inst, *ops[0], *ops[1]);
      case HloOpcode::kScatter:
        return EvalScatter(inst, ops, *this);
      case HloOpcode::kSelectAndScatter:
        return EvalSelectAndScatter(inst, ops, *this);
      case HloOpcode::kBroadcast:
      case HloOpcode::kReshape:
      case HloOpcode::kBitcast:
      case HloOpcode::kBitcastConvert:
      case HloOpcode::kTranspose:
      case HloOpcode::kSlice:
      case HloOpcode::kConcatenate:
      case HloOpcode::kPad:
      case HloOpcode::kReverse:
      case HloOpcode::kIota:
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kGather:
        return EvalShapeOp(inst, ops);
      default:
        break;
    }
    if (hlo::IsElementwise(op) || op == HloOpcode::kReducePrecision ||
        op == HloOpcode::kStochasticConvert)
      return EvalElementwise(inst, ops);
    throw UnimplementedError("the evaluator does not support " + std::string(hlo::OpcodeName(op)) +
                             " yet (%" + inst.name() + ")");
  }

  // A one-argument list holding `v` itself (an initializer list would copy
  // it, and a second holder prevents updates in place).
  static std::vector<Value> Single(Value v) {
    std::vector<Value> args;
    args.push_back(std::move(v));
    return args;
  }

  Value While(const HloInstruction& inst, Value state) {
    const HloComputation* cond = Computation(inst, AttrKey::kCondition);
    const HloComputation* body = Computation(inst, AttrKey::kBody);
    while (true) {
      Value keep_going = Call(cond, {state});
      if (!keep_going.array->GetBits(0)) return state;
      state = Call(body, Single(std::move(state)));
    }
  }

  Value Conditional(const HloInstruction& inst, std::vector<Value> ops) {
    std::vector<HloComputation*> branches;
    if (auto b =
            inst.attributes().GetOr<std::vector<HloComputation*>>(AttrKey::kBranchComputations)) {
      branches = *b;
    } else {
      branches = {Computation(inst, AttrKey::kTrueComputation),
                  Computation(inst, AttrKey::kFalseComputation)};
    }
    const Literal& selector = *ops[0].array;
    int64_t index;
    if (selector.shape().element_type() == PrimitiveType::kPred) {
      index = selector.GetBits(0) ? 0 : 1;
    } else {
      // An out-of-range branch index runs the last branch, as in XLA.
      index = selector.GetInt64(0);
      if (index < 0 || index >= static_cast<int64_t>(branches.size()))
        index = static_cast<int64_t>(branches.size()) - 1;
    }
    return Call(branches[index], Single(std::move(ops[index + 1])));
  }

  // Bytes of one element in the evaluator's row-major storage, and the
  // number of blocks above dimension d and block bytes below it.
  static std::pair<int64_t, int64_t> Blocks(const Shape& s, int64_t d) {
    int64_t outer = 1, inner = StorageBytes(s.element_type());
    for (int64_t i = 0; i < d; ++i) outer *= s.dimensions(i);
    for (int64_t i = d + 1; i < s.rank(); ++i) inner *= s.dimensions(i);
    return {outer, inner};
  }

  // scan(inputs..., inits...): step t calls to_apply(slice t of each input
  // along the scan dimension..., carries...) -> (outputs..., carries...)
  // and writes each output at position t of its stacked result; a reverse
  // scan takes t from the end. The result is (stacked outputs..., final
  // carries...), or the one array when there is only one (XLA's ScanExpander
  // defines the same loop).
  Value Scan(const HloInstruction& inst, std::vector<Value> ops) {
    const hlo::AttributeMap& a = inst.attributes();
    const int64_t d = a.Get<std::vector<int64_t>>(AttrKey::kDimensions).at(0);
    const int64_t carries = a.Get<int64_t>(AttrKey::kNumCarries);
    const bool reverse = a.GetOr<bool>(AttrKey::kIsReverse).value_or(false);
    const HloComputation* f = Computation(inst, AttrKey::kToApply);
    const std::vector<Shape> results =
        inst.shape().IsTuple() ? inst.shape().tuple_shapes() : std::vector<Shape>{inst.shape()};
    const int64_t inputs = static_cast<int64_t>(ops.size()) - carries;
    const int64_t outputs = static_cast<int64_t>(results.size()) - carries;
    UIR_CHECK(inputs >= 0 && outputs >= 0 && inputs + outputs > 0)
        << "scan %" << inst.name() << " has no inputs and no outputs";
    const int64_t length =
        (inputs > 0 ? ops[0].array->shape() : results[0]).dimensions().at(static_cast<size_t>(d));
    // The stacked outputs, made at the first step from the sizes to_apply
    // returns (a dynamic dimension may be below its bound).
    std::vector<Literal> stacked;
    auto stack_like = [&](const Shape& out, int64_t j) {
      std::vector<int64_t> dims = out.dimensions();
      dims.insert(dims.begin() + d, length);
      stacked.push_back(MakeLiteral(results[j].element_type(), dims));
    };
    if (length == 0) {
      for (int64_t j = 0; j < outputs; ++j) {
        std::vector<int64_t> dims = results[j].dimensions();
        dims[d] = 0;
        stacked.push_back(MakeLiteral(results[j].element_type(), dims));
      }
    }
    std::vector<Value> carry(std::make_move_iterator(ops.begin() + inputs),
                             std::make_move_iterator(ops.end()));
    for (int64_t step = 0; step < length; ++step) {
      const int64_t t = reverse ? length - 1 - step : step;
      std::vector<Value> args;
      for (int64_t i = 0; i < inputs; ++i) {
        const Literal& in = *ops[i].array;
        if (in.shape().dimensions(d) != length) {
          throw ShapeError("scan %" + inst.name() + "'s inputs have dynamic lengths " +
                           std::to_string(length) + " and " +
                           std::to_string(in.shape().dimensions(d)));
        }
        std::vector<int64_t> dims = in.shape().dimensions();
        dims.erase(dims.begin() + d);
        Literal slice = MakeLiteral(in.shape().element_type(), dims);
        const auto [outer, inner] = Blocks(in.shape(), d);
        for (int64_t o = 0; inner > 0 && o < outer; ++o) {  // (an empty slice has no data)
          std::memcpy(slice.mutable_bytes().data() + o * inner,
                      in.bytes().data() + (o * length + t) * inner, static_cast<size_t>(inner));
        }
        args.push_back(Value::Own(std::move(slice)));
      }
      for (Value& c : carry) args.push_back(std::move(c));
      Value r = Call(f, std::move(args));
      std::vector<Value> parts =
          f->root()->shape().IsTuple() ? std::move(r.tuple) : Single(std::move(r));
      UIR_CHECK(static_cast<int64_t>(parts.size()) == outputs + carries)
          << "scan %" << inst.name() << "'s to_apply returned " << parts.size() << " values";
      for (int64_t j = 0; j < outputs; ++j) {
        UIR_CHECK(!parts[j].is_tuple()) << "scan %" << inst.name() << "'s output is a tuple";
        const Literal& out = *parts[j].array;
        if (step == 0) stack_like(out.shape(), j);
        const auto [outer, inner] = Blocks(stacked[j].shape(), d);
        std::vector<int64_t> row = stacked[j].shape().dimensions();
        row.erase(row.begin() + d);
        if (out.shape().dimensions() != row) {
          throw ShapeError("scan %" + inst.name() + "'s output " + std::to_string(j) +
                           " changes its dynamic size between steps");
        }
        for (int64_t o = 0; inner > 0 && o < outer; ++o) {
          std::memcpy(stacked[j].mutable_bytes().data() + (o * length + t) * inner,
                      out.bytes().data() + o * inner, static_cast<size_t>(inner));
        }
      }
      carry.assign(std::make_move_iterator(parts.begin() + outputs),
                   std::make_move_iterator(parts.end()));
    }
    std::vector<Value> all;
    for (Literal& s : stacked) all.push_back(Value::Own(std::move(s)));
    for (Value& c : carry) all.push_back(std::move(c));
    if (!inst.shape().IsTuple()) return std::move(all.at(0));
    Value t;
    t.tuple = std::move(all);
    return t;
  }
};

}  // namespace

std::optional<HloOpcode> SimpleReducer(const HloComputation& c) {
  const std::optional<hlo::ReductionKind> kind = hlo::ReducerKind(c);
  if (!kind || *kind == hlo::ReductionKind::kXor) return std::nullopt;
  return hlo::ReductionOpcode(*kind);
}

std::optional<HloOpcode> KernelFoldReducer(const HloComputation& c) {
  const std::optional<hlo::ReductionKind> kind = hlo::ReducerKind(c);
  return kind ? std::optional(hlo::ReductionOpcode(*kind)) : std::nullopt;
}

Literal EvaluateComputation(const HloComputation& computation,
                            const std::vector<const Literal*>& args, const Participant& self) {
  return Evaluator(self).Call(computation, args);
}

Literal EvaluateComputation(const HloComputation& computation,
                            const std::vector<const Literal*>& args) {
  return Evaluator().Call(computation, args);
}

namespace {

// Checks `args` against `module`'s entry parameters; returns pointers to them.
std::vector<const Literal*> CheckArguments(const hlo::HloModule& module,
                                           const std::vector<Literal>& args) {
  const HloComputation& entry = *module.entry();
  if (static_cast<int64_t>(args.size()) != entry.num_parameters()) {
    throw ShapeError(module.name() + " takes " + std::to_string(entry.num_parameters()) +
                     " arguments, got " + std::to_string(args.size()));
  }
  std::vector<const Literal*> ptrs;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    // A dynamic dimension takes any size up to its bound.
    const Shape& want = entry.parameter(i)->shape();
    if (!FitsShape(args[i].shape(), want)) {
      throw ShapeError("argument " + std::to_string(i) + " (%" + entry.parameter(i)->name() +
                       ") must be " + want.Describe() + ", got " + args[i].shape().Describe());
    }
    ptrs.push_back(&args[i]);
  }
  return ptrs;
}

}  // namespace

Literal Evaluate(const hlo::HloModule& module, const std::vector<Literal>& args, uint64_t seed) {
  return Evaluate(module, args, EvaluateOptions{seed, 0});
}

Literal Evaluate(const hlo::HloModule& module, const std::vector<Literal>& args,
                 const EvaluateOptions& options) {
  const uint64_t seed = options.seed;
  // The evaluator trusts shapes and attributes; an unverified module could
  // make it read or write out of bounds.
  hlo::Verify(module);
  const auto ptrs = CheckArguments(module, args);
  Participant self;
  self.partitions = static_cast<int>(std::max<int64_t>(1, module.config().num_partitions));
  self.seed = seed;
  self.max_steps = options.max_steps;
  return EvaluateComputation(*module.entry(), ptrs, self);
}

namespace {

std::vector<Literal> RunParticipants(const hlo::HloModule& module,
                                     const std::vector<std::vector<const Literal*>>& args,
                                     uint64_t seed) {
  const int participants = static_cast<int>(args.size());
  const int partitions = static_cast<int>(std::max<int64_t>(1, module.config().num_partitions));
  if (participants % partitions != 0) {
    throw ShapeError(module.name() + " has " + std::to_string(partitions) +
                     " partitions; the participant count " + std::to_string(participants) +
                     " must be a multiple of it");
  }
  Rendezvous rendezvous(participants);
  std::vector<Literal> results(static_cast<size_t>(participants));
  std::mutex mu;
  std::exception_ptr first_error;
  std::vector<std::thread> threads;
  for (int id = 0; id < participants; ++id) {
    threads.emplace_back([&, id] {
      bool failed = false;
      try {
        results[id] =
            EvaluateComputation(*module.entry(), args[id], {id, partitions, &rendezvous, seed});
      } catch (...) {
        // The first failure is the cause; later ones are its echoes in the
        // participants that were waiting for this one.
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
      rendezvous.Finish(id, failed);
    });
  }
  for (std::thread& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
  return results;
}

}  // namespace

std::vector<Literal> EvaluateReplicated(const hlo::HloModule& module,
                                        const std::vector<Literal>& args, int participants,
                                        uint64_t seed) {
  hlo::Verify(module);
  if (participants < 1) throw ShapeError("a replicated evaluation needs at least 1 participant");
  const auto ptrs = CheckArguments(module, args);
  return RunParticipants(module, std::vector<std::vector<const Literal*>>(participants, ptrs),
                         seed);
}

std::vector<Literal> EvaluateReplicated(const hlo::HloModule& module,
                                        const std::vector<std::vector<Literal>>& per_participant,
                                        uint64_t seed) {
  hlo::Verify(module);
  if (per_participant.empty())
    throw ShapeError("a replicated evaluation needs at least 1 participant");
  std::vector<std::vector<const Literal*>> args;
  for (const std::vector<Literal>& a : per_participant) args.push_back(CheckArguments(module, a));
  return RunParticipants(module, args, seed);
}

}  // namespace uir::eval
