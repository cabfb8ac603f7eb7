// Structure-aware libFuzzer target for the whole front end: parse -> verify
// -> print/parse back/clone -> evaluate, under ASan and UBSan.
//
// The custom mutator works on modules, not bytes: it parses the input (a
// corpus module or an earlier mutant), changes one thing a pass or a user
// could change -- a dimension, an element type, a layout, an integer
// attribute, an operand, the nesting of a shape -- and prints the module
// back. Inputs that no longer parse are mutated as bytes instead.
//
// The contract checked: any input is rejected with a uir::UserError or an
// UnimplementedError, or it parses, prints back to an equal module, clones,
// and (when small) evaluates to a result or a UserError. An InternalError,
// a crash or a sanitizer report is a bug.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>

#include "eval/evaluator.h"
#include "hlo/computation.h"
#include "hlo/mutator.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "runtime/builtin_targets.h"
#include "support/error.h"
#include "support/primitive_type.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using uir::PrimitiveType;
using uir::hlo::AttrKey;
using uir::hlo::AttrValue;
using uir::hlo::HloInstruction;
using uir::hlo::HloModule;
using uir::hlo::Literal;
using uir::hlo::Shape;

// Modules are evaluated only below these sizes, so each input runs quickly.
constexpr int64_t kMaxElements = 1 << 14;
constexpr int64_t kMaxSteps = 20000;

[[noreturn]] void Die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz failure: %s\n%s\n", what, detail.c_str());
  std::abort();
}

int64_t Elements(const Shape& s) {
  if (s.IsTuple() || s.IsBuffer()) {
    int64_t n = 0;
    for (const Shape& e : s.tuple_shapes()) {
      const int64_t k = Elements(e);
      if (k < 0 || n + k > kMaxElements) return -1;
      n += k;
    }
    return n;
  }
  int64_t n = 1;
  for (int64_t d : s.dimensions()) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxElements) return -1;
  }
  return n;
}

bool SmallEnough(const HloModule& m) {
  int64_t total = 0;
  for (const auto& c : m.computations()) {
    for (const auto& inst : c->instructions()) {
      const int64_t n = Elements(inst->shape());
      if (n < 0 || (total += n) > 16 * kMaxElements) return false;
    }
  }
  return true;
}

void Fill(Literal& l, std::mt19937_64& rng) {
  if (l.shape().IsTuple()) {
    for (Literal& e : l.mutable_tuple_elements()) Fill(e, rng);
    return;
  }
  if (!l.shape().IsArray()) return;
  const PrimitiveType t = l.shape().element_type();
  for (int64_t i = 0; i < l.element_count(); ++i) {
    const uint64_t r = rng();
    if (t == PrimitiveType::kPred) {
      l.SetBits(i, r & 1);
    } else if (uir::IsComplex(t)) {
      l.SetComplex(i, {static_cast<double>(r % 17) - 8, static_cast<double>((r >> 8) % 9) - 4});
    } else if (uir::IsFloat(t)) {
      // Mostly small values, sometimes the edges.
      static constexpr double kEdges[] = {0.0, -0.0, 1e30, -1e30, INFINITY, -INFINITY, NAN, 1e-40};
      l.SetDouble(i, r % 16 == 0 ? kEdges[(r >> 4) % 8]
                                 : static_cast<double>(static_cast<int64_t>(r >> 8) % 2001) / 250);
    } else if (uir::IsUnsigned(t)) {
      l.SetUint64(i, r % 8 == 0 ? r >> 3 : r % 9);
    } else {
      l.SetInt64(i, r % 8 == 0 ? static_cast<int64_t>(r >> 3) : static_cast<int64_t>(r % 11) - 3);
    }
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 8 != 0) {
    try {
      auto m = uir::hlo::ParseModule(std::string_view(reinterpret_cast<char*>(data), size));
      for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k)
        uir::hlo::MutateModule(*m, rng);
      const std::string text = uir::hlo::PrintModule(*m);
      if (text.size() <= max_size) {
        std::memcpy(data, text.data(), text.size());
        return text.size();
      }
    } catch (const uir::Error&) {
      // Not a module (any more): mutate the bytes.
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uir::runtime::RegisterBuiltinTargets();  // once: custom calls run as the CPU runs them
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<HloModule> module;
  try {
    module = uir::hlo::ParseModule(text);
  } catch (const uir::UserError&) {
    return 0;
  }
  const std::string printed = uir::hlo::PrintModule(*module);
  std::unique_ptr<HloModule> again;
  try {
    again = uir::hlo::ParseModule(printed);
  } catch (const uir::UserError& e) {
    Die("the printed module does not parse", std::string(e.what()) + "\n" + printed);
  }
  if (!again->Equals(*module)) Die("parse(print(m)) differs from m", printed);
  try {
    uir::hlo::Verify(*module);
  } catch (const uir::UserError&) {
    return 0;
  }
  const auto clone = module->Clone();
  if (!clone->Equals(*module)) Die("the clone differs", printed);
  uir::hlo::Verify(*clone);
  if (!SmallEnough(*module) || module->config().replica_count > 1 ||
      module->config().num_partitions > 1)
    return 0;
  std::mt19937_64 rng(std::hash<std::string_view>()(text));
  std::vector<Literal> args;
  for (const HloInstruction* p : module->entry()->parameters()) {
    Shape shape = p->shape();
    if (shape.IsArray()) {
      // A dynamic dimension takes a size up to its bound.
      std::vector<int64_t> dims = shape.dimensions();
      for (int64_t i = 0; i < shape.rank(); ++i) {
        if (dims[i] < 0) return 0;  // unbounded ('?'): no size to pick from
        if (shape.is_dynamic_dimension(i))
          dims[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(dims[i] + 1));
      }
      shape = Shape(shape.element_type(), dims);
    } else if (!shape.is_static()) {
      return 0;  // dynamic dimensions inside tuple parameters: keep it simple
    }
    Literal l(shape);
    Fill(l, rng);
    args.push_back(std::move(l));
  }
  try {
    uir::eval::Evaluate(*clone, args, uir::eval::EvaluateOptions{1, kMaxSteps});
  } catch (const uir::UserError&) {
  } catch (const uir::UnimplementedError&) {
  }
  return 0;
}
