// Tokens of XLA's HLO text (see ../shared/reference/hlo-text-syntax.md §1).
#ifndef UIR_HLO_LEXER_H_
#define UIR_HLO_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace uir::hlo {

enum class Tok : uint8_t {
  kEof,
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kLsquare,
  kRsquare,
  kComma,
  kColon,
  kEqual,
  kArrow,
  kLeq,
  kStar,
  kHash,
  kPlus,
  kTilde,
  kQuestion,
  kDots,
  kName,       // %foo, or foo: (text holds "foo")
  kAttrName,   // foo= (text holds "foo")
  kIdent,      // foo, keywords, opcodes, type names
  kInt,        // -12
  kDecimal,    // 1.5, 1e-06, nan, -nan(0x7f), -inf (inf alone is kIdent)
  kString,     // "..." or '...' (text holds the unescaped value)
  kDimLabels,  // b01f_01io->b01f
  kDxD,        // 3x3
  kPad,        // 1_1x0_0_1
};

std::string_view TokName(Tok tok);

struct Token {
  Tok kind = Tok::kEof;
  std::string text;   // see Tok; for punctuation, the punctuation itself
  size_t offset = 0;  // byte offset of the first character
  size_t end = 0;     // byte offset after the last character
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string file);

  // The current token, and advancing past it.
  const Token& peek() const { return token_; }
  void Next();

  // Saving and restoring the position, for the parser's rare backtracking.
  struct State {
    size_t pos;
    size_t previous_end;
    Token token;
  };
  State Save() const { return {pos_, previous_end_, token_}; }
  void Restore(State s) {
    pos_ = s.pos;
    previous_end_ = s.previous_end;
    token_ = std::move(s.token);
  }
  // Where the token before the current one ended (0 before any): errors
  // about something missing after it point there.
  size_t previous_end() const { return previous_end_; }

  // The current token must be '{': returns the raw text of the brace-balanced
  // block it opens (braces included; strings inside are skipped over, not
  // interpreted) and moves past it.
  std::string TakeBraceBlock() { return TakeBalanced('{', '}'); }
  // The same for any bracket pair; the current token must be `open`.
  std::string TakeBalanced(char open, char close);

  // A ParseError at byte `offset` (default: the current token).
  [[noreturn]] void Fail(const std::string& message) const { FailAt(token_.offset, message); }
  [[noreturn]] void FailAt(size_t offset, const std::string& message) const;
  // The character at `offset` for a message: printable ASCII quoted, a
  // UTF-8 sequence quoted whole with its code point, any other byte by value.
  std::string DescribeCharacter(size_t offset) const;
  SourceLocation LocationOf(size_t offset) const;
  std::string_view text() const { return text_; }

 private:
  void Lex();
  void LexIdentifierLike(size_t start);
  void LexNumberLike(size_t start);
  void LexString(size_t start, char quote);
  void SkipSpaceAndComments();
  bool MatchDimLabels(size_t start, size_t* end) const;
  bool MatchPad(size_t start, size_t* end) const;

  std::string_view text_;
  std::string file_;
  std::vector<size_t> line_starts_;
  size_t pos_ = 0;
  size_t previous_end_ = 0;
  Token token_;
};

}  // namespace uir::hlo

#endif  // UIR_HLO_LEXER_H_
