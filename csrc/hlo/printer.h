// Printing HLO in XLA's canonical text style.
#ifndef UIR_HLO_PRINTER_H_
#define UIR_HLO_PRINTER_H_

#include <string>

#include "hlo/module.h"

namespace uir::hlo {

struct PrintOptions {
  bool print_layout = true;
  bool print_operand_shapes = false;  // XLA's older style: add(f32[] %a, f32[] %b)
  bool print_metadata = true;
  bool print_backend_config = true;
  // Large constants are printed in full (so the text parses back to the same
  // module); with false, arrays of more than 10 elements print as {...}.
  bool print_large_constants = true;
  // Async ops whose wrapped computation is the one the parser would create
  // print as op-start/op-update/op-done; false prints the generic form.
  bool async_sugar = true;
};

std::string PrintModule(const HloModule& module, const PrintOptions& options = {});
std::string PrintComputation(const HloComputation& computation, const PrintOptions& options = {});
// An attribute's value as the printer writes it after "key=".
std::string AttributeValueText(AttrKey key, const AttrValue& value);
// One instruction line, without indentation or "ROOT".
std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options = {});

}  // namespace uir::hlo

#endif  // UIR_HLO_PRINTER_H_
