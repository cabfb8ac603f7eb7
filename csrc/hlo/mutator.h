// Structure-aware mutations of HLO modules, for fuzzers: one change a pass
// or a user could make -- a dimension, an element type, a layout, an
// integer attribute, an operand, the nesting of a shape -- applied to a
// parsed module. The result need not verify; fuzzers filter on that.
#ifndef UIR_HLO_MUTATOR_H_
#define UIR_HLO_MUTATOR_H_

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "hlo/module.h"

namespace uir::hlo {

// Makes one random change to `module`; false when the change drawn did not
// apply (the module is unchanged then).
bool MutateModule(HloModule& module, std::mt19937_64& rng);

// `text` parsed, changed `rounds` times with a generator seeded by `seed`,
// and printed back. Throws ParseError when `text` does not parse.
std::string MutateText(std::string_view text, uint64_t seed, int rounds);

}  // namespace uir::hlo

#endif  // UIR_HLO_MUTATOR_H_
