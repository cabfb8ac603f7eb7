// The HLO lexer. Token boundaries follow XLA's lexer: '.' and '-' belong to
// identifiers, "name:" and "attr=" are single tokens, and number-like tokens
// are tried as decimal, dim labels, DxD, padding and integer, in that order.
#include "hlo/lexer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace uir::hlo {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string_view TokName(Tok tok) {
  switch (tok) {
    case Tok::kEof:
      return "end of input";
    case Tok::kLbrace:
      return "'{'";
    case Tok::kRbrace:
      return "'}'";
    case Tok::kLparen:
      return "'('";
    case Tok::kRparen:
      return "')'";
    case Tok::kLsquare:
      return "'['";
    case Tok::kRsquare:
      return "']'";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kEqual:
      return "'='";
    case Tok::kArrow:
      return "'->'";
    case Tok::kLeq:
      return "'<='";
    case Tok::kStar:
      return "'*'";
    case Tok::kHash:
      return "'#'";
    case Tok::kPlus:
      return "'+'";
    case Tok::kTilde:
      return "'~'";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kDots:
      return "'...'";
    case Tok::kName:
      return "name";
    case Tok::kAttrName:
      return "attribute name";
    case Tok::kIdent:
      return "identifier";
    case Tok::kInt:
      return "integer";
    case Tok::kDecimal:
      return "number";
    case Tok::kString:
      return "string";
    case Tok::kDimLabels:
      return "dim labels";
    case Tok::kDxD:
      return "window size";
    case Tok::kPad:
      return "padding";
  }
  return "token";
}

Lexer::Lexer(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
  Lex();
}

void Lexer::Next() {
  previous_end_ = pos_;
  Lex();
}

SourceLocation Lexer::LocationOf(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line = static_cast<size_t>(it - line_starts_.begin());  // 1-based
  size_t column = offset - line_starts_[line - 1] + 1;
  return {file_, static_cast<int64_t>(line), static_cast<int64_t>(column)};
}

std::string Lexer::DescribeCharacter(size_t offset) const {
  const auto lead = static_cast<unsigned char>(text_[offset]);
  if (lead >= 0x20 && lead < 0x7f) return std::string("'") + static_cast<char>(lead) + "'";
  // A whole UTF-8 sequence, quoted with its code point; anything else by value.
  const size_t len = lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 1;
  bool valid = len > 1 && offset + len <= text_.size();
  uint32_t cp = len == 4 ? lead & 0x07 : len == 3 ? lead & 0x0f : lead & 0x1f;
  for (size_t i = 1; valid && i < len; ++i) {
    const auto b = static_cast<unsigned char>(text_[offset + i]);
    valid = (b & 0xc0) == 0x80;
    cp = (cp << 6) | (b & 0x3f);
  }
  char buf[16];
  if (!valid) {
    std::snprintf(buf, sizeof(buf), "byte 0x%02X", lead);
    return buf;
  }
  std::snprintf(buf, sizeof(buf), " (U+%04X)", cp);
  return "'" + std::string(text_.substr(offset, len)) + "'" + buf;
}

void Lexer::FailAt(size_t offset, const std::string& message) const {
  offset = std::min(offset, text_.size());
  SourceLocation loc = LocationOf(offset);
  size_t start = line_starts_[loc.line - 1];
  size_t end = text_.find('\n', start);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view line = text_.substr(start, end - start);
  if (line.size() > 200) line = line.substr(0, 200);  // keep huge one-line texts readable
  throw ParseError(loc, message, line);
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) FailAt(pos_, "unterminated /* comment");
      pos_ = end + 2;
    } else {
      break;
    }
  }
}

void Lexer::Lex() {
  SkipSpaceAndComments();
  token_ = Token{};
  token_.offset = pos_;
  if (pos_ >= text_.size()) {
    token_.kind = Tok::kEof;
    token_.end = pos_;
    return;
  }
  const size_t start = pos_;
  const char c = text_[pos_];
  auto punct = [&](Tok kind, size_t len) {
    token_.kind = kind;
    token_.text = std::string(text_.substr(start, len));
    pos_ = start + len;
    token_.end = pos_;
  };
  auto at = [&](size_t i) { return i < text_.size() ? text_[i] : '\0'; };
  switch (c) {
    case '{':
      return punct(Tok::kLbrace, 1);
    case '}':
      return punct(Tok::kRbrace, 1);
    case '(':
      return punct(Tok::kLparen, 1);
    case ')':
      return punct(Tok::kRparen, 1);
    case '[':
      return punct(Tok::kLsquare, 1);
    case ']':
      return punct(Tok::kRsquare, 1);
    case ',':
      return punct(Tok::kComma, 1);
    case ':':
      return punct(Tok::kColon, 1);
    case '=':
      return punct(Tok::kEqual, 1);
    case '*':
      return punct(Tok::kStar, 1);
    case '#':
      return punct(Tok::kHash, 1);
    case '+':
      return punct(Tok::kPlus, 1);
    case '~':
      return punct(Tok::kTilde, 1);
    case '"':
    case '\'':
      return LexString(start, c);
    default:
      break;
  }
  if (c == '<' && at(start + 1) == '=') return punct(Tok::kLeq, 2);
  if (c == '-' && at(start + 1) == '>') return punct(Tok::kArrow, 2);
  if (c == '.' && at(start + 1) == '.' && at(start + 2) == '.') return punct(Tok::kDots, 3);
  if (c == '%') {
    size_t e = start + 1;
    while (e < text_.size() && IsIdentChar(text_[e])) ++e;
    if (e == start + 1) FailAt(start, "expected a name after '%'");
    if (text_[e - 1] == '-' && at(e) == '>') --e;
    token_.kind = Tok::kName;
    token_.text = std::string(text_.substr(start + 1, e - start - 1));
    pos_ = e;
    token_.end = e;
    return;
  }
  if (c == '?') {
    size_t e;
    if (MatchDimLabels(start, &e)) {
      token_.kind = Tok::kDimLabels;
      token_.text = std::string(text_.substr(start, e - start));
      pos_ = e;
      token_.end = e;
      return;
    }
    return punct(Tok::kQuestion, 1);
  }
  if (IsDigit(c) || c == '-' || (c == '.' && IsDigit(at(start + 1)))) return LexNumberLike(start);
  if (IsIdentStart(c)) return LexIdentifierLike(start);
  FailAt(start, "unexpected character " + DescribeCharacter(start));
}

bool Lexer::MatchDimLabels(size_t start, size_t* end) const {
  // [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
  size_t i = start;
  auto run = [&](std::string_view letters) {
    size_t n = 0;
    while (i < text_.size() && (IsDigit(text_[i]) || text_[i] == '?' ||
                                letters.find(text_[i]) != std::string_view::npos)) {
      ++i;
      ++n;
    }
    return n >= 2;
  };
  if (!run("bf")) return false;
  if (i >= text_.size() || text_[i] != '_') return false;
  ++i;
  if (!run("io")) return false;
  if (text_.substr(i, 2) != "->") return false;
  i += 2;
  if (!run("bf")) return false;
  if (i < text_.size() && IsIdentChar(text_[i]) && text_[i] != '-' && text_[i] != '.') return false;
  *end = i;
  return true;
}

bool Lexer::MatchPad(size_t start, size_t* end) const {
  // -?N_-?N(_-?N)? joined by 'x'
  size_t i = start;
  auto number = [&]() {
    size_t s = i;
    if (i < text_.size() && text_[i] == '-') ++i;
    size_t d = i;
    while (i < text_.size() && IsDigit(text_[i])) ++i;
    if (i == d) {
      i = s;
      return false;
    }
    return true;
  };
  for (bool first = true;; first = false) {
    if (!first) {
      if (i >= text_.size() || text_[i] != 'x') break;
      ++i;
    }
    if (!number()) return false;
    if (i >= text_.size() || text_[i] != '_') return false;
    ++i;
    if (!number()) return false;
    if (i < text_.size() && text_[i] == '_') {
      ++i;
      if (!number()) return false;
    }
  }
  *end = i;
  return true;
}

void Lexer::LexNumberLike(size_t start) {
  auto finish = [&](Tok kind, size_t e) {
    token_.kind = kind;
    token_.text = std::string(text_.substr(start, e - start));
    pos_ = e;
    token_.end = e;
  };
  auto nan_payload = [&](size_t e) {
    // nan(0x7f): a payload in hex
    if (e < text_.size() && text_[e] == '(' && text_.substr(e + 1, 2) == "0x") {
      size_t close = text_.find(')', e);
      if (close == std::string_view::npos) FailAt(e, "unterminated NaN payload");
      return close + 1;
    }
    return e;
  };
  if (text_.substr(start, 4) == "-inf" &&
      !IsIdentChar(start + 4 < text_.size() ? text_[start + 4] : ' ')) {
    return finish(Tok::kDecimal, start + 4);
  }
  if (text_.substr(start, 4) == "-nan") return finish(Tok::kDecimal, nan_payload(start + 4));

  size_t i = start;
  if (text_[i] == '-') ++i;
  size_t digits_start = i;
  while (i < text_.size() && IsDigit(text_[i])) ++i;
  size_t int_end = i;
  // Decimal: digits '.' digits? exponent?, or digits exponent.
  size_t j = int_end;
  bool is_decimal = false;
  if (j < text_.size() && text_[j] == '.' && !(j + 1 < text_.size() && text_[j + 1] == '.')) {
    ++j;
    size_t frac_start = j;
    while (j < text_.size() && IsDigit(text_[j])) ++j;
    is_decimal = (int_end > digits_start) || (j > frac_start);
  }
  size_t k = is_decimal ? j : int_end;
  if (int_end > digits_start && k < text_.size() && (text_[k] == 'e' || text_[k] == 'E')) {
    size_t m = k + 1;
    if (m < text_.size() && (text_[m] == '+' || text_[m] == '-')) ++m;
    size_t exp_digits = m;
    while (m < text_.size() && IsDigit(text_[m])) ++m;
    if (m > exp_digits) {
      is_decimal = true;
      k = m;
    }
  }
  if (is_decimal) return finish(Tok::kDecimal, k);

  size_t e;
  if (MatchDimLabels(start, &e)) return finish(Tok::kDimLabels, e);
  if (int_end > digits_start && text_[start] != '-' && int_end < text_.size() &&
      text_[int_end] == 'x' && int_end + 1 < text_.size() && IsDigit(text_[int_end + 1])) {
    // DxD: 3x3x3
    size_t m = int_end;
    while (m < text_.size() && text_[m] == 'x' && m + 1 < text_.size() && IsDigit(text_[m + 1])) {
      ++m;
      while (m < text_.size() && IsDigit(text_[m])) ++m;
    }
    if (m >= text_.size() || text_[m] != '_') return finish(Tok::kDxD, m);
  }
  if (MatchPad(start, &e)) return finish(Tok::kPad, e);
  if (int_end == digits_start) FailAt(start, "expected a number after '-'");
  finish(Tok::kInt, int_end);
}

void Lexer::LexIdentifierLike(size_t start) {
  size_t e = start;
  while (e < text_.size() && IsIdentChar(text_[e])) ++e;
  if (text_[e - 1] == '-' && e < text_.size() && text_[e] == '>') --e;
  std::string_view word = text_.substr(start, e - start);
  auto finish = [&](Tok kind, std::string_view value, size_t end) {
    token_.kind = kind;
    token_.text = std::string(value);
    pos_ = end;
    token_.end = end;
  };
  if (e < text_.size() && text_[e] == ':') return finish(Tok::kName, word, e + 1);
  if (e < text_.size() && text_[e] == '=' && !(e + 1 < text_.size() && text_[e + 1] == '=')) {
    return finish(Tok::kAttrName, word, e + 1);
  }
  if (word == "nan" || word == "inf") {
    size_t end = e;
    if (word == "nan" && end < text_.size() && text_[end] == '(' &&
        text_.substr(end + 1, 2) == "0x") {
      size_t close = text_.find(')', end);
      if (close == std::string_view::npos) FailAt(end, "unterminated NaN payload");
      end = close + 1;
    }
    return finish(Tok::kDecimal, text_.substr(start, end - start), end);
  }
  size_t dl;
  if (MatchDimLabels(start, &dl))
    return finish(Tok::kDimLabels, text_.substr(start, dl - start), dl);
  finish(Tok::kIdent, word, e);
}

void Lexer::LexString(size_t start, char quote) {
  std::string value;
  size_t i = start + 1;
  while (true) {
    if (i >= text_.size()) FailAt(start, "unterminated string");
    char c = text_[i];
    if (c == quote) break;
    if (c == '\\') {
      if (i + 1 >= text_.size()) FailAt(start, "unterminated string");
      char n = text_[i + 1];
      i += 2;
      switch (n) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case '\\':
          value += '\\';
          break;
        case '"':
          value += '"';
          break;
        case '\'':
          value += '\'';
          break;
        case 'x': {
          int v = 0, digits = 0;
          while (i < text_.size() && digits < 2 &&
                 std::isxdigit(static_cast<unsigned char>(text_[i]))) {
            v = v * 16 + (IsDigit(text_[i]) ? text_[i] - '0' : (std::tolower(text_[i]) - 'a' + 10));
            ++i;
            ++digits;
          }
          if (digits == 0) FailAt(i - 2, "\\x needs hex digits");
          value += static_cast<char>(v);
          break;
        }
        default:
          if (n >= '0' && n <= '7') {
            int v = n - '0', digits = 1;
            while (i < text_.size() && digits < 3 && text_[i] >= '0' && text_[i] <= '7') {
              v = v * 8 + (text_[i] - '0');
              ++i;
              ++digits;
            }
            value += static_cast<char>(v);
          } else {
            FailAt(i - 2, std::string("unknown escape '\\") + n + "' in string");
          }
      }
      continue;
    }
    value += c;
    ++i;
  }
  token_.kind = Tok::kString;
  token_.text = std::move(value);
  pos_ = i + 1;
  token_.end = pos_;
}

std::string Lexer::TakeBalanced(char open, char close) {
  if (token_.offset >= text_.size() || text_[token_.offset] != open) {
    Fail(std::string("expected '") + open + "'");
  }
  size_t i = token_.offset;
  int depth = 0;
  while (true) {
    if (i >= text_.size()) FailAt(token_.offset, std::string("unbalanced '") + open + "'");
    char c = text_[i];
    if (c == '"' || c == '\'') {
      // Skip a string, honouring escapes, so brackets inside it do not count.
      ++i;
      while (i < text_.size() && text_[i] != c) i += text_[i] == '\\' ? 2 : 1;
      if (i >= text_.size()) FailAt(token_.offset, "unterminated string in block");
    } else if (c == open) {
      ++depth;
    } else if (c == close) {
      if (--depth == 0) break;
    }
    ++i;
  }
  std::string block(text_.substr(token_.offset, i + 1 - token_.offset));
  pos_ = i + 1;
  Lex();
  return block;
}

}  // namespace uir::hlo
