// Literal: the value of a constant (or of any HLO result): an array of one
// element type in logical row-major order, or a tuple of literals.
#ifndef UIR_HLO_LITERAL_H_
#define UIR_HLO_LITERAL_H_

#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hlo/shape.h"

namespace uir::hlo {

class Literal {
 public:
  Literal() : shape_(Shape::Tuple({})) {}  // the empty tuple
  // A zero-filled literal of `shape` (tuples recursively). Layouts are kept
  // in shape() but do not affect the data order, which is always row-major.
  explicit Literal(const Shape& shape);

  const Shape& shape() const { return shape_; }
  // Replaces the layout part of shape() (data is unaffected).
  void set_shape_layouts_from(const Shape& shape);
  int64_t element_count() const { return shape_.IsArray() ? shape_.element_count() : 0; }

  // An array literal over `data` (row-major, `shape`'s storage size),
  // without copying it; every copy of the literal holds `keepalive`. Writing
  // (mutable_bytes, Set*) first copies the data, so `data` is never written.
  static Literal View(const Shape& shape, const uint8_t* data,
                      std::shared_ptr<const void> keepalive);
  bool is_view() const { return view_ != nullptr; }

  std::span<const uint8_t> bytes() const {
    return view_ != nullptr ? std::span<const uint8_t>(view_, view_size_)
                            : std::span<const uint8_t>(data_);
  }
  std::vector<uint8_t>& mutable_bytes();

  // Raw element bits (zero-extended), for any array type.
  uint64_t GetBits(int64_t i) const;
  void SetBits(int64_t i, uint64_t bits);

  // The value of element i, converted. Valid for pred, integer and float
  // types; GetComplex also for complex types (imaginary part 0 otherwise).
  double GetDouble(int64_t i) const;
  int64_t GetInt64(int64_t i) const;    // integers and pred
  uint64_t GetUint64(int64_t i) const;  // unsigned integers and pred
  std::complex<double> GetComplex(int64_t i) const;
  // Stores `v` rounded to the element type (floats: to nearest even).
  void SetDouble(int64_t i, double v);
  void SetInt64(int64_t i, int64_t v);
  void SetUint64(int64_t i, uint64_t v);
  void SetComplex(int64_t i, std::complex<double> v);

  const std::vector<Literal>& tuple_elements() const { return elements_; }
  std::vector<Literal>& mutable_tuple_elements() { return elements_; }

  // Same shape (layouts ignored) and bit-identical data.
  bool operator==(const Literal& other) const;

  // The text inside constant(...), as XLA prints it: 1.5, {1, 2}, { { 1 }, { 2 } },
  // (1, 0) for complex, true/false for pred scalars, (a, b) for tuples.
  std::string ToString() const;
  // The text of one element as XLA prints it.
  std::string ElementToString(int64_t i) const;

 private:
  const uint8_t* raw() const { return view_ != nullptr ? view_ : data_.data(); }

  Shape shape_;
  std::vector<uint8_t> data_;
  const uint8_t* view_ = nullptr;  // set for views: data_ is then empty
  size_t view_size_ = 0;
  std::shared_ptr<const void> keepalive_;
  std::vector<Literal> elements_;
};

// Formats `value` the way XLA does: the shortest of %.{digits10}g and
// %.{max_digits10}g that reads back as the same value; inf, -inf, nan,
// -nan, and nan(0x...) for NaNs with a payload.
std::string FormatFloat(float value);
std::string FormatDouble(double value);

}  // namespace uir::hlo

#endif  // UIR_HLO_LITERAL_H_
