// libFuzzer target for the HLO text parser, printer and verifier.
// Any input must either be rejected with a uir::UserError, or parse into a
// module that prints, parses back to a structurally equal module, and prints
// the same text again. Anything else (a crash, a sanitizer report, an
// InternalError, a broken round trip) is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "support/error.h"

namespace {

[[noreturn]] void Die(const char* what, const std::string& text) {
  std::fprintf(stderr, "round-trip failure: %s\n--- printed ---\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<uir::hlo::HloModule> module;
  try {
    module = uir::hlo::ParseModule(text);
  } catch (const uir::UserError&) {
    return 0;  // rejected with a message: fine
  }
  const std::string printed = uir::hlo::PrintModule(*module);
  std::unique_ptr<uir::hlo::HloModule> again;
  try {
    again = uir::hlo::ParseModule(printed);
  } catch (const uir::UserError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    Die("the printed module does not parse", printed);
  }
  if (uir::hlo::PrintModule(*again) != printed) Die("printing is not a fixpoint", printed);
  if (!again->Equals(*module)) Die("parse(print(m)) differs from m", printed);
  try {
    uir::hlo::Verify(*module);
  } catch (const uir::UserError&) {
  }
  return 0;
}
