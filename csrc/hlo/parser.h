// Parsing XLA's HLO text into an HloModule.
#ifndef UIR_HLO_PARSER_H_
#define UIR_HLO_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "hlo/module.h"

namespace uir::hlo {

struct ParseOptions {
  std::string file;                  // named in error messages; "" for "<text>"
  bool fill_missing_layouts = true;  // as XLA's parser does by default
};

// Parses a module: the text XLA writes (header, stack-frame tables,
// computations), and the shorter forms XLA's parser accepts (no header, no
// ENTRY, no ROOT, omitted shapes, nested operands, bare names). Throws
// ParseError with the line and column of the first problem.
std::unique_ptr<HloModule> ParseModule(std::string_view text, const ParseOptions& options = {});

// Parses one shape, e.g. "f32[2,3]{0,1}" or "(s32[], pred[])".
Shape ParseShape(std::string_view text);

// Parses the text form of one attribute value, as it appears after `name=`
// (e.g. "{size=3x3 stride=2x2}" for window). Attributes that name
// computations cannot be parsed this way. Throws ParseError.
AttrValue ParseAttributeValue(AttrKey key, std::string_view text);

// The name of the computation the parser creates for the async sugar
// `X-start` instruction named `start_name`; the printer uses the sugar only
// for computations the parser would have created.
std::string AsyncWrappedComputationName(std::string_view start_name);

}  // namespace uir::hlo

#endif  // UIR_HLO_PARSER_H_
