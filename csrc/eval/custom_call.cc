#include "eval/custom_call.h"

#include <string>

#include "support/custom_call.h"

namespace uir::eval {
namespace {

using hlo::Literal;

// `l` as a call buffer over its bytes. Targets only read operands; a
// result is made to own its bytes first (MakeOwn), so writing them writes it.
CallBuffer BufferOf(const Literal& l) {
  CallBuffer b;
  if (l.shape().IsTuple()) {
    b.kind = CallBuffer::Kind::kTuple;
    for (const Literal& e : l.tuple_elements()) b.elements.push_back(BufferOf(e));
    return b;
  }
  if (!l.shape().IsArray()) {
    b.kind = CallBuffer::Kind::kToken;
    return b;
  }
  b.type = l.shape().element_type();
  b.dims = l.shape().dimensions();
  b.data = const_cast<uint8_t*>(l.bytes().data());
  return b;
}

void MakeOwn(Literal& l) {
  if (l.shape().IsTuple()) {
    for (Literal& e : l.mutable_tuple_elements()) MakeOwn(e);
  } else if (l.shape().IsArray()) {
    l.mutable_bytes();
  }
}

}  // namespace

std::optional<CustomCallApi> CustomCallApiOf(const hlo::HloInstruction& call) {
  using V = hlo::CustomCallApiVersion;
  const auto v = call.attributes().GetEnumOr<V>(hlo::AttrKey::kApiVersion);
  if (!v) return std::nullopt;
  switch (*v) {
    case V::kOriginal:
      return CustomCallApi::kOriginal;
    case V::kStatusReturning:
      return CustomCallApi::kStatusReturning;
    case V::kStatusReturningUnified:
      return CustomCallApi::kStatusReturningUnified;
    case V::kTypedFfi:
      return CustomCallApi::kTypedFfi;
  }
  return std::nullopt;
}

Literal RunCustomCall(const hlo::HloInstruction& call,
                      const std::vector<const Literal*>& operands) {
  CallFrame frame;
  frame.api = CustomCallApiOf(call);
  frame.target = call.attributes().GetOr<std::string>(hlo::AttrKey::kCustomCallTarget).value_or("");
  frame.call = call.name();
  if (const auto config = call.attributes().GetOr<hlo::BackendConfig>(hlo::AttrKey::kBackendConfig))
    frame.opaque = config->text;
  for (const Literal* o : operands) frame.operands.push_back(BufferOf(*o));
  Literal result(call.shape().IsBuffer() ? call.shape().buffer_element() : call.shape());
  MakeOwn(result);
  frame.result = BufferOf(result);
  uir::RunCustomCall(frame);
  return result;
}

}  // namespace uir::eval
