// The custom-call registry, the built-in targets, and calling a target on
// literals.
#include "runtime/custom_call.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>

#include "support/error.h"

namespace uir::runtime {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::Literal;

// The status a C target reports through. The first member is the C ABI
// (UirCustomCallStatus); the rest is ours, and plain data so the layout is
// standard.
struct Status {
  void (*set_failure)(Status*, const char*, size_t);
  bool failed;
  char message[1024];
};

void SetFailure(Status* status, const char* message, size_t length) {
  status->failed = true;
  const size_t n = std::min(length, sizeof(status->message) - 1);
  if (message != nullptr && n > 0) std::memcpy(status->message, message, n);
  status->message[n] = '\0';
}

std::string TargetName(const HloInstruction& call) {
  return call.attributes().GetOr<std::string>(AttrKey::kCustomCallTarget).value_or("");
}

// --- Built-in targets ----------------------------------------------------------
// What a single host makes of the custom calls XLA's own pipelines emit.

// The array a call's result holds: a buffer shape b(T) holds a T.
const hlo::Shape& ResultArrayShape(const HloInstruction& call) {
  return call.shape().IsBuffer() ? call.shape().buffer_element() : call.shape();
}

// Copies `from`'s elements into `to` when both are arrays of the same
// element type and dimensions (dynamic-ness and layout may differ).
bool CopyArray(const Literal& from, Literal& to) {
  if (!from.shape().IsArray() || !to.shape().IsArray() ||
      from.shape().element_type() != to.shape().element_type() ||
      from.shape().dimensions() != to.shape().dimensions()) {
    return false;
  }
  const auto b = from.bytes();
  to.mutable_bytes().assign(b.begin(), b.end());
  return true;
}

// Sharding annotations, host offloading marks and bounds: on one host the
// value passes through unchanged.
void PassThrough(const HloInstruction& call, const std::vector<const Literal*>& ops,
                 Literal& result) {
  if (!ops.empty() && ops[0]->shape().IsTuple() && ops[0]->shape().Compatible(result.shape())) {
    result = *ops[0];
    return;
  }
  if (ops.empty() || !CopyArray(*ops[0], result)) {
    throw CustomCallError(TargetName(call), "expects one operand of the result's shape " +
                                                ResultArrayShape(call).ToString(false));
  }
}

// A buffer the program fills before reading; zeros are as good as any.
void AllocateBuffer(const HloInstruction&, const std::vector<const Literal*>&, Literal&) {}

// SliceToDynamic(array, sizes...) marks dimensions dynamic: evaluated at
// their bound, the data passes through.
void SliceToDynamic(const HloInstruction& call, const std::vector<const Literal*>& ops,
                    Literal& result) {
  if (ops.empty() || !CopyArray(*ops[0], result))
    throw CustomCallError(TargetName(call), "expects an operand of the result's shape");
}

// PadToStatic(array) -> (array, s32 size of each dimension).
void PadToStatic(const HloInstruction& call, const std::vector<const Literal*>& ops,
                 Literal& result) {
  if (ops.size() != 1 || !result.shape().IsTuple() ||
      result.tuple_elements().size() != ops[0]->shape().dimensions().size() + 1) {
    throw CustomCallError(TargetName(call),
                          "expects one array operand and a (array, sizes...) result");
  }
  auto& parts = result.mutable_tuple_elements();
  for (size_t d = 1; d < parts.size(); ++d) {
    const hlo::Shape& size = parts[d].shape();
    if (!size.IsArray() || size.rank() != 0 || !hlo::IsInteger(size.element_type()))
      throw CustomCallError(TargetName(call), "the sizes in the result must be integer scalars");
  }
  parts[0] = *ops[0];
  for (size_t d = 0; d < ops[0]->shape().dimensions().size(); ++d)
    parts[d + 1].SetInt64(0, ops[0]->shape().dimensions()[d]);
}

// TopK(x[..., n]) -> (values[..., k], s32 indices[..., k]): the k largest
// along the last dimension, largest first (NaN above +inf), ties in index
// order.
void TopK(const HloInstruction& call, const std::vector<const Literal*>& ops, Literal& result) {
  if (ops.size() != 1 || !result.shape().IsTuple() || result.tuple_elements().size() != 2 ||
      ops[0]->shape().dimensions().empty()) {
    throw CustomCallError(TargetName(call), "expects x[..., n] and a (values, indices) result");
  }
  const Literal& x = *ops[0];
  Literal& values = result.mutable_tuple_elements()[0];
  Literal& indices = result.mutable_tuple_elements()[1];
  const int64_t n = x.shape().dimensions().back();
  const int64_t k = values.shape().dimensions().empty() ? 1 : values.shape().dimensions().back();
  // values and indices are x's shape with k in the last dimension.
  std::vector<int64_t> want = x.shape().dimensions();
  want.back() = k;
  if (!values.shape().IsArray() || !indices.shape().IsArray() ||
      values.shape().dimensions() != want || indices.shape().dimensions() != want ||
      !hlo::IsInteger(indices.shape().element_type())) {
    throw CustomCallError(TargetName(call),
                          "the result must be (values, integer indices), each of x's shape with "
                          "k in the last dimension");
  }
  if (k > n || values.shape().element_type() != x.shape().element_type()) {
    throw CustomCallError(TargetName(call), "k = " + std::to_string(k) + " of " +
                                                std::to_string(n) + " elements, or wrong types");
  }
  const int64_t rows = n == 0 ? 0 : x.element_count() / n;
  const size_t size = static_cast<size_t>(hlo::StorageBytes(x.shape().element_type()));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int64_t i) { return x.GetDouble(r * n + i); };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const double va = key(a), vb = key(b);
      if (std::isnan(va) || std::isnan(vb)) return std::isnan(va) && !std::isnan(vb);
      return va > vb;
    });
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(values.mutable_bytes().data() + (r * k + j) * size,
                  x.bytes().data() + (r * n + order[j]) * size, size);
      indices.SetInt64(r * k + j, order[j]);
    }
  }
}

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const CustomCallTarget>, std::less<>> targets;

  Registry() {
    auto builtin = [&](const std::string& name, LiteralTarget fn) {
      auto t = std::make_shared<CustomCallTarget>();
      t->name = name;
      t->literal_function = std::move(fn);
      t->builtin = true;
      targets[name] = std::move(t);
    };
    for (const char* name :
         {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice",
          "Pin", "Unpin", "annotate_device_placement", "SetBound", "LayoutConstraint"}) {
      builtin(name, PassThrough);
    }
    builtin("AllocateBuffer", AllocateBuffer);
    builtin("SliceToDynamic", SliceToDynamic);
    builtin("PadToStatic", PadToStatic);
    builtin("TopK", TopK);
  }
};

Registry& Global() {
  static Registry* registry = new Registry();  // never destroyed: targets may outlive statics
  return *registry;
}

void Store(std::shared_ptr<CustomCallTarget> target) {
  if (target->name.empty()) throw ShapeError("a custom-call target needs a non-empty name");
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  r.targets[target->name] = std::move(target);
}

// Pointers to the buffers of `l` in the C calling convention: an array's
// data, or for a tuple an array of its elements' pointers (kept in `keep`).
void* BufferOf(const Literal& l, std::vector<std::unique_ptr<std::vector<void*>>>& keep) {
  if (!l.shape().IsTuple()) return const_cast<uint8_t*>(l.bytes().data());
  auto table = std::make_unique<std::vector<void*>>();
  for (const Literal& e : l.tuple_elements()) table->push_back(BufferOf(e, keep));
  void* out = table->data();
  keep.push_back(std::move(table));
  return out;
}

void CallC(const CustomCallTarget& t, const HloInstruction& call,
           const std::vector<const Literal*>& ops, Literal& result) {
  std::vector<std::unique_ptr<std::vector<void*>>> keep;
  // Materialize every array of the result so the target can write it.
  std::function<void(Literal&)> own = [&](Literal& l) {
    if (l.shape().IsTuple()) {
      for (Literal& e : l.mutable_tuple_elements()) own(e);
    } else {
      l.mutable_bytes();
    }
  };
  own(result);
  std::vector<const void*> in;
  for (const Literal* o : ops) in.push_back(BufferOf(*o, keep));
  void* out = BufferOf(result, keep);
  Status status{SetFailure, false, {0}};
  const auto config = call.attributes().GetOr<hlo::BackendConfig>(AttrKey::kBackendConfig);
  const std::string opaque = config ? config->text : "";
  switch (t.api) {
    case CustomCallApi::kOriginal:
      reinterpret_cast<void (*)(void*, const void**)>(t.c_function)(out, in.data());
      break;
    case CustomCallApi::kStatusReturning:
      reinterpret_cast<void (*)(void*, const void**, Status*)>(t.c_function)(out, in.data(),
                                                                             &status);
      break;
    case CustomCallApi::kStatusReturningUnified:
      reinterpret_cast<void (*)(void*, const void**, const char*, size_t, Status*)>(t.c_function)(
          out, in.data(), opaque.data(), opaque.size(), &status);
      break;
  }
  if (status.failed) throw CustomCallError(t.name, status.message);
}

}  // namespace

void RegisterCustomCallTarget(const std::string& name, void* c_function, CustomCallApi api) {
  if (c_function == nullptr)
    throw ShapeError("custom-call target '" + name + "' is a null pointer");
  auto t = std::make_shared<CustomCallTarget>();
  t->name = name;
  t->c_function = c_function;
  t->api = api;
  Store(std::move(t));
}

void RegisterCustomCallTarget(const std::string& name, LiteralTarget fn) {
  auto t = std::make_shared<CustomCallTarget>();
  t->name = name;
  t->literal_function = std::move(fn);
  Store(std::move(t));
}

bool UnregisterCustomCallTarget(const std::string& name) {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.targets.erase(name) > 0;
}

std::shared_ptr<const CustomCallTarget> FindCustomCallTarget(std::string_view name) {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.targets.find(name);
  return it == r.targets.end() ? nullptr : it->second;
}

std::vector<std::string> CustomCallTargetNames() {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [name, target] : r.targets) names.push_back(name);
  return names;
}

Literal RunCustomCall(const HloInstruction& call, const std::vector<const Literal*>& operands) {
  const std::string name = TargetName(call);
  const auto target = FindCustomCallTarget(name);
  if (target == nullptr) {
    throw CustomCallError(name, "no target of this name is registered (%" + call.name() +
                                    "; see uir.custom_call.register)");
  }
  Literal result(ResultArrayShape(call));
  if (target->literal_function) {
    target->literal_function(call, operands, result);
  } else {
    CallC(*target, call, operands, result);
  }
  if (!result.shape().Compatible(ResultArrayShape(call))) {
    throw CustomCallError(name, "returned " + result.shape().ToString() + " for %" + call.name() +
                                    " of shape " + ResultArrayShape(call).ToString());
  }
  return result;
}

}  // namespace uir::runtime
