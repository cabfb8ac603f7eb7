// The LAPACK custom calls of JAX's CPU lowering, on OpenBLAS's LAPACK.
// Each target checks every buffer of its frame against the shapes its
// operands imply before LAPACK sees a pointer, so a hand-edited module gets
// a CustomCallError naming the call, never a write out of bounds.
#include "runtime/lapack_targets.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <string_view>
#include <type_traits>

#include "support/error.h"
#include "support/primitive_type.h"

namespace {
using c32 = std::complex<float>;
using c64 = std::complex<double>;
}  // namespace

// LAPACK's Fortran entry points (LP64: 32-bit integers), with the hidden
// length of each character argument that gfortran passes last.
extern "C" {
#define UIR_LAPACK_EVERY_TYPE(p, T)                                                           \
  void p##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);     \
  void p##potrf_(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);    \
  void p##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work,           \
                 const int* lwork, int* info);                                                \
  void p##trsm_(const char* side, const char* uplo, const char* trans, const char* diag,      \
                const int* m, const int* n, const T* alpha, const T* a, const int* lda, T* b, \
                const int* ldb, size_t, size_t, size_t, size_t);                              \
  void p##gehrd_(const int* n, const int* ilo, const int* ihi, T* a, const int* lda, T* tau,  \
                 T* work, const int* lwork, int* info);                                       \
  void p##gtsv_(const int* n, const int* nrhs, T* dl, T* d, T* du, T* b, const int* ldb, int* info);

#define UIR_LAPACK_REAL(p, T)                                                                     \
  void p##orgqr_(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau,    \
                 T* work, const int* lwork, int* info);                                           \
  void p##ormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,   \
                 const T* a, const int* lda, const T* tau, T* c, const int* ldc, T* work,         \
                 const int* lwork, int* info, size_t, size_t);                                    \
  void p##geqp3_(const int* m, const int* n, T* a, const int* lda, int* jpvt, T* tau, T* work,    \
                 const int* lwork, int* info);                                                    \
  void p##syevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w,    \
                 T* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,     \
                 size_t);                                                                         \
  void p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u,  \
                 const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, int* iwork,   \
                 int* info, size_t);                                                              \
  void p##gesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, T* a,           \
                 const int* lda, T* s, T* u, const int* ldu, T* vt, const int* ldvt, T* work,     \
                 const int* lwork, int* info, size_t, size_t);                                    \
  void p##geev_(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* wr,  \
                T* wi, T* vl, const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork, \
                int* info, size_t, size_t);                                                       \
  void p##gees_(const char* jobvs, const char* sort, void* select, const int* n, T* a,            \
                const int* lda, int* sdim, T* wr, T* wi, T* vs, const int* ldvs, T* work,         \
                const int* lwork, int* bwork, int* info, size_t, size_t);                         \
  void p##sytrd_(const char* uplo, const int* n, T* a, const int* lda, T* d, T* e, T* tau,        \
                 T* work, const int* lwork, int* info, size_t);

#define UIR_LAPACK_COMPLEX(p, T, R)                                                              \
  void p##ungqr_(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau,   \
                 T* work, const int* lwork, int* info);                                          \
  void p##unmqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,  \
                 const T* a, const int* lda, const T* tau, T* c, const int* ldc, T* work,        \
                 const int* lwork, int* info, size_t, size_t);                                   \
  void p##geqp3_(const int* m, const int* n, T* a, const int* lda, int* jpvt, T* tau, T* work,   \
                 const int* lwork, R* rwork, int* info);                                         \
  void p##heevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w,   \
                 T* work, const int* lwork, R* rwork, const int* lrwork, int* iwork,             \
                 const int* liwork, int* info, size_t, size_t);                                  \
  void p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s, T* u, \
                 const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, R* rwork,    \
                 int* iwork, int* info, size_t);                                                 \
  void p##gesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, T* a,          \
                 const int* lda, R* s, T* u, const int* ldu, T* vt, const int* ldvt, T* work,    \
                 const int* lwork, R* rwork, int* info, size_t, size_t);                         \
  void p##geev_(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* w,  \
                T* vl, const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork,       \
                R* rwork, int* info, size_t, size_t);                                            \
  void p##gees_(const char* jobvs, const char* sort, void* select, const int* n, T* a,           \
                const int* lda, int* sdim, T* w, T* vs, const int* ldvs, T* work,                \
                const int* lwork, R* rwork, int* bwork, int* info, size_t, size_t);              \
  void p##hetrd_(const char* uplo, const int* n, T* a, const int* lda, R* d, R* e, T* tau,       \
                 T* work, const int* lwork, int* info, size_t);

UIR_LAPACK_EVERY_TYPE(s, float)
UIR_LAPACK_EVERY_TYPE(d, double)
UIR_LAPACK_EVERY_TYPE(c, c32)
UIR_LAPACK_EVERY_TYPE(z, c64)
UIR_LAPACK_REAL(s, float)
UIR_LAPACK_REAL(d, double)
UIR_LAPACK_COMPLEX(c, c32, float)
UIR_LAPACK_COMPLEX(z, c64, double)
#undef UIR_LAPACK_EVERY_TYPE
#undef UIR_LAPACK_REAL
#undef UIR_LAPACK_COMPLEX
}

// Calls LAPACK routine `fn` of T's precision: s/d/c/z for every type, or
// s/d for the real and c/z for the complex ones.
#define UIR_EVERY(fn, ...)                            \
  do {                                                \
    if constexpr (std::is_same_v<T, float>) {         \
      s##fn##_(__VA_ARGS__);                          \
    } else if constexpr (std::is_same_v<T, double>) { \
      d##fn##_(__VA_ARGS__);                          \
    } else if constexpr (std::is_same_v<T, c32>) {    \
      c##fn##_(__VA_ARGS__);                          \
    } else {                                          \
      z##fn##_(__VA_ARGS__);                          \
    }                                                 \
  } while (false)
#define UIR_REAL(fn, ...)                     \
  do {                                        \
    if constexpr (std::is_same_v<T, float>) { \
      s##fn##_(__VA_ARGS__);                  \
    } else {                                  \
      d##fn##_(__VA_ARGS__);                  \
    }                                         \
  } while (false)
#define UIR_COMPLEX(fn, ...)                \
  do {                                      \
    if constexpr (std::is_same_v<T, c32>) { \
      c##fn##_(__VA_ARGS__);                \
    } else {                                \
      z##fn##_(__VA_ARGS__);                \
    }                                       \
  } while (false)

namespace uir::runtime {
namespace {

using Dims = std::vector<int64_t>;

template <typename T>
constexpr bool kComplex = std::is_same_v<T, c32> || std::is_same_v<T, c64>;
template <typename T>
struct RealPart {
  using type = T;
};
template <typename R>
struct RealPart<std::complex<R>> {
  using type = R;
};
template <typename T>
using Real = typename RealPart<T>::type;
template <typename T>
using Complex = std::complex<Real<T>>;

template <typename T>
constexpr PrimitiveType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return PrimitiveType::kF32;
  if constexpr (std::is_same_v<T, double>) return PrimitiveType::kF64;
  if constexpr (std::is_same_v<T, c32>) return PrimitiveType::kC64;
  if constexpr (std::is_same_v<T, c64>) return PrimitiveType::kC128;
  if constexpr (std::is_same_v<T, int32_t>) return PrimitiveType::kS32;
}

std::string DimsText(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i > 0 ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

Dims Append(Dims dims, std::initializer_list<int64_t> more) {
  dims.insert(dims.end(), more);
  return dims;
}

// The attributes of a backend_config in MLIR's dictionary syntax, as JAX
// writes them: `{mode = 86 : ui8, uplo = 76 : ui8, left = true}`.
std::map<std::string, std::string, std::less<>> ParseDictionary(std::string_view text) {
  std::map<std::string, std::string, std::less<>> out;
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  if (text.size() >= 2 && text.front() == '{' && text.back() == '}')
    text = text.substr(1, text.size() - 2);
  size_t at = 0;
  while (at < text.size()) {
    // One entry, up to a comma outside quotes.
    size_t end = at;
    bool quoted = false;
    for (; end < text.size() && (quoted || text[end] != ','); ++end) {
      if (text[end] == '"' && (end == 0 || text[end - 1] != '\\')) quoted = !quoted;
    }
    const std::string_view entry = trim(text.substr(at, end - at));
    at = end + 1;
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view value = trim(entry.substr(eq + 1));
    if (!value.empty() && value.front() != '"') {
      const size_t colon = value.find(':');  // the type: `76 : ui8`
      if (colon != std::string_view::npos) value = trim(value.substr(0, colon));
    }
    out[std::string(trim(entry.substr(0, eq)))] = std::string(value);
  }
  return out;
}

// A batch of matrices: `batch` leading dimensions, then rows x cols,
// row-major.
template <typename T>
struct Matrices {
  T* data = nullptr;
  Dims batch;
  int64_t count = 1;  // matrices in the batch
  int rows = 0, cols = 0;
  Dims dims() const { return Append(batch, {rows, cols}); }
  T* at(int64_t b) const { return data + b * rows * cols; }
};

// One call to a LAPACK target: its frame, checked.
class Call {
 public:
  Call(const CallFrame& f, size_t operands, size_t results) : f_(f) {
    if (f.operands.size() != operands)
      Fail("takes " + std::to_string(operands) + " operand(s), got " +
           std::to_string(f.operands.size()));
    if (results == 1 && !f.result.IsTuple()) {
      results_.push_back(&f.result);
    } else if (f.result.IsTuple()) {
      for (const CallBuffer& e : f.result.elements) results_.push_back(&e);
    }
    if (results_.size() != results)
      Fail("returns " + std::to_string(results) + " result(s), the call has " +
           f.result.ToString());
    attributes_ = ParseDictionary(f.opaque);
    // A result may be an operand's memory (JAX declares getrf's lu over
    // its x, trsm's x over its b, ...), and a hand-written call may alias
    // them otherwise: the targets read their operands from copies, so no
    // result written early can change what is still to be read.
    operands_ = f.operands;
    for (CallBuffer& o : operands_) {
      if (!o.IsArray() || o.Bytes() <= 0) continue;
      snapshots_.emplace_back(static_cast<const uint8_t*>(o.data),
                              static_cast<const uint8_t*>(o.data) + o.Bytes());
      o.data = snapshots_.back().data();
    }
  }

  // Operand `i`, from its copy.
  const CallBuffer& operand(size_t i) const { return operands_[i]; }

  [[noreturn]] void Fail(const std::string& message) const {
    throw CustomCallError(f_.target, "%" + f_.call + ": " + message);
  }

  // Operand `i` as a batch of matrices of T.
  template <typename T>
  Matrices<T> Matrix(size_t i, std::string_view what, bool square = false) const {
    const CallBuffer& b = operands_[i];
    if (!b.IsArray() || b.type != TypeOf<T>() || b.dims.size() < 2)
      Fail("operand " + std::to_string(i) + " (" + std::string(what) + ") must be a " +
           std::string(PrimitiveTypeName(TypeOf<T>())) + " array of rank 2 or more, got " +
           b.ToString());
    Matrices<T> m;
    m.data = static_cast<T*>(b.data);
    m.batch.assign(b.dims.begin(), b.dims.end() - 2);
    for (int64_t d : m.batch) m.count *= d;
    const int64_t rows = b.dims[b.dims.size() - 2], cols = b.dims.back();
    if (rows > INT_MAX || cols > INT_MAX)
      Fail(std::string(what) + " " + b.ToString() + " is larger than LAPACK's 32-bit sizes");
    m.rows = static_cast<int>(rows);
    m.cols = static_cast<int>(cols);
    if (square && rows != cols) Fail(std::string(what) + " must be square, got " + b.ToString());
    return m;
  }

  // Operand `i`, which must be of `type` and `dims`.
  template <typename T>
  T* Operand(size_t i, const Dims& dims, std::string_view what) const {
    return Check<T>(operands_[i], dims,
                    "operand " + std::to_string(i) + " (" + std::string(what) + ")");
  }
  // Result `i`, which must be of `type` and `dims`.
  template <typename T>
  T* Result(size_t i, const Dims& dims, std::string_view what) const {
    return Check<T>(*results_[i], dims,
                    "result " + std::to_string(i) + " (" + std::string(what) + ")");
  }
  // Result `i` of T with any dimensions (one LAPACK does not write).
  template <typename T>
  T* AnyResult(size_t i, std::string_view what) const {
    const CallBuffer& b = *results_[i];
    if (!b.IsArray() || b.type != TypeOf<T>())
      Fail("result " + std::to_string(i) + " (" + std::string(what) + ") must be " +
           std::string(PrimitiveTypeName(TypeOf<T>())) + ", got " + b.ToString());
    if (b.Bytes() > 0) std::memset(b.data, 0, static_cast<size_t>(b.Bytes()));
    return static_cast<T*>(b.data);
  }

  // Attribute `name`, a LAPACK character, one of `allowed`.
  char Char(std::string_view name, std::string_view allowed) const {
    const std::string& v = Attribute(name);
    int64_t code = -1;
    try {
      code = std::stoll(v);
    } catch (const std::exception&) {
    }
    if (code <= 0 || code > 127 || allowed.find(static_cast<char>(code)) == std::string::npos) {
      std::string want;
      for (char c : allowed)
        want += std::string(want.empty() ? "" : " or ") + std::to_string(c) + " ('" + c + "')";
      Fail("attribute " + std::string(name) + " = " + v + " must be " + want);
    }
    return static_cast<char>(code);
  }
  bool Bool(std::string_view name) const {
    const std::string& v = Attribute(name);
    if (v == "true" || v == "1") return true;
    if (v == "false" || v == "0") return false;
    Fail("attribute " + std::string(name) + " = " + v + " must be true or false");
  }
  int Int(std::string_view name) const {
    const std::string& v = Attribute(name);
    try {
      size_t used = 0;
      const long long x = std::stoll(v, &used);
      if (used == v.size() && x >= INT_MIN && x <= INT_MAX) return static_cast<int>(x);
    } catch (const std::exception&) {
    }
    Fail("attribute " + std::string(name) + " = " + v + " must be a 32-bit integer");
  }

 private:
  const std::string& Attribute(std::string_view name) const {
    auto it = attributes_.find(name);
    if (it == attributes_.end())
      Fail("needs attribute '" + std::string(name) +
           "' in its backend_config (as JAX writes it: backend_config={" + std::string(name) +
           " = 76 : ui8}), got backend_config=" + (f_.opaque.empty() ? "{}" : f_.opaque));
    return it->second;
  }

  template <typename T>
  T* Check(const CallBuffer& b, const Dims& dims, const std::string& what) const {
    if (!b.IsArray() || b.type != TypeOf<T>() || b.dims != dims)
      Fail(what + " must be " + std::string(PrimitiveTypeName(TypeOf<T>())) + DimsText(dims) +
           ", got " + b.ToString());
    return static_cast<T*>(b.data);
  }

  const CallFrame& f_;
  std::vector<CallBuffer> operands_;
  std::vector<std::vector<uint8_t>> snapshots_;  // the operands' bytes
  std::vector<const CallBuffer*> results_;
  std::map<std::string, std::string, std::less<>> attributes_;
};

// Row-major rows x cols at `from` into column-major at `to`, and back.
template <typename T>
void ToColumnMajor(const T* from, int rows, int cols, T* to) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      to[static_cast<int64_t>(j) * rows + i] = from[static_cast<int64_t>(i) * cols + j];
}
template <typename T>
void ToRowMajor(const T* from, int rows, int cols, T* to) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      to[static_cast<int64_t>(i) * cols + j] = from[static_cast<int64_t>(j) * rows + i];
}

// A workspace size LAPACK reported in `w` (a query with lwork = -1).
template <typename T>
int WorkSize(T w) {
  return std::max(1, static_cast<int>(std::ceil(std::real(w))));
}

int Lead(int rows) { return std::max(1, rows); }

template <typename T>
bool AllFinite(const T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kComplex<T>) {
      if (!std::isfinite(x[i].real()) || !std::isfinite(x[i].imag())) return false;
    } else if (!std::isfinite(x[i])) {
      return false;
    }
  }
  return true;
}

// --- The targets ------------------------------------------------------------------

// getrf(x) -> (lu, ipiv, info): LU with partial pivoting, 1-based pivots.
template <typename T>
void Getrf(const CallFrame& f) {
  Call c(f, 1, 3);
  const Matrices<T> x = c.Matrix<T>(0, "x");
  const int m = x.rows, n = x.cols, k = std::min(m, n), lda = Lead(m);
  T* lu = c.Result<T>(0, x.dims(), "lu");
  int32_t* ipiv = c.Result<int32_t>(1, Append(x.batch, {k}), "ipiv");
  int32_t* info = c.Result<int32_t>(2, x.batch, "info");
  std::vector<T> a(static_cast<size_t>(m) * n);
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), m, n, a.data());
    int status = 0;
    UIR_EVERY(getrf, &m, &n, a.data(), &lda, ipiv + b * k, &status);
    ToRowMajor(a.data(), m, n, lu + b * m * n);
    info[b] = status;
  }
}

// potrf(x; uplo) -> (factor, info): Cholesky; the other triangle keeps x.
template <typename T>
void Potrf(const CallFrame& f) {
  Call c(f, 1, 2);
  const Matrices<T> x = c.Matrix<T>(0, "x", /*square=*/true);
  const char uplo = c.Char("uplo", "LU");
  const int n = x.rows, lda = Lead(n);
  T* out = c.Result<T>(0, x.dims(), "factor");
  int32_t* info = c.Result<int32_t>(1, x.batch, "info");
  std::vector<T> a(static_cast<size_t>(n) * n);
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), n, n, a.data());
    int status = 0;
    UIR_EVERY(potrf, &uplo, &n, a.data(), &lda, &status, 1);
    ToRowMajor(a.data(), n, n, out + b * n * n);
    info[b] = status;
  }
}

// geqrf(x) -> (a, tau): Householder QR, reflectors below the diagonal.
template <typename T>
void Geqrf(const CallFrame& f) {
  Call c(f, 1, 2);
  const Matrices<T> x = c.Matrix<T>(0, "x");
  const int m = x.rows, n = x.cols, k = std::min(m, n), lda = Lead(m);
  T* out = c.Result<T>(0, x.dims(), "a");
  T* tau = c.Result<T>(1, Append(x.batch, {k}), "tau");
  std::vector<T> a(static_cast<size_t>(m) * n);
  T query{};
  int lwork = -1, status = 0;
  UIR_EVERY(geqrf, &m, &n, nullptr, &lda, nullptr, &query, &lwork, &status);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), m, n, a.data());
    UIR_EVERY(geqrf, &m, &n, a.data(), &lda, tau + b * k, work.data(), &lwork, &status);
    ToRowMajor(a.data(), m, n, out + b * m * n);
  }
}

// geqp3(x, jpvt) -> (a, jpvt, tau): QR with column pivoting; jpvt is
// 1-based, a nonzero entry pins its column to the front.
template <typename T>
void Geqp3(const CallFrame& f) {
  Call c(f, 2, 3);
  const Matrices<T> x = c.Matrix<T>(0, "x");
  const int m = x.rows, n = x.cols, k = std::min(m, n), lda = Lead(m);
  const int32_t* jpvt_in = c.Operand<int32_t>(1, Append(x.batch, {n}), "jpvt");
  T* out = c.Result<T>(0, x.dims(), "a");
  int32_t* jpvt = c.Result<int32_t>(1, Append(x.batch, {n}), "jpvt");
  T* tau = c.Result<T>(2, Append(x.batch, {k}), "tau");
  if (x.count * n > 0) std::memcpy(jpvt, jpvt_in, sizeof(int32_t) * x.count * n);
  std::vector<T> a(static_cast<size_t>(m) * n);
  std::vector<Real<T>> rwork(static_cast<size_t>(2 * std::max(n, 1)));
  T query{};
  int lwork = -1, status = 0;
  if constexpr (kComplex<T>) {
    UIR_COMPLEX(geqp3, &m, &n, nullptr, &lda, nullptr, nullptr, &query, &lwork, rwork.data(),
                &status);
  } else {
    UIR_REAL(geqp3, &m, &n, nullptr, &lda, nullptr, nullptr, &query, &lwork, &status);
  }
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), m, n, a.data());
    if constexpr (kComplex<T>) {
      UIR_COMPLEX(geqp3, &m, &n, a.data(), &lda, jpvt + b * n, tau + b * k, work.data(), &lwork,
                  rwork.data(), &status);
    } else {
      UIR_REAL(geqp3, &m, &n, a.data(), &lda, jpvt + b * n, tau + b * k, work.data(), &lwork,
               &status);
    }
    ToRowMajor(a.data(), m, n, out + b * m * n);
  }
}

// orgqr/ungqr(a, tau) -> q: the first n columns of the product of the
// reflectors geqrf left in a.
template <typename T>
void Orgqr(const CallFrame& f) {
  Call c(f, 2, 1);
  const Matrices<T> x = c.Matrix<T>(0, "a");
  const CallBuffer& tau_buffer = c.operand(1);
  const int m = x.rows, n = x.cols, lda = Lead(m);
  const int64_t k64 = tau_buffer.dims.empty() ? -1 : tau_buffer.dims.back();
  if (!(m >= n && k64 >= 0 && n >= k64))
    c.Fail("needs a[..., m, n] and tau[..., k] with m >= n >= k, got a " + DimsText(x.dims()) +
           " and tau " + tau_buffer.ToString());
  const int k = static_cast<int>(k64);
  const T* tau = c.Operand<T>(1, Append(x.batch, {k}), "tau");
  T* out = c.Result<T>(0, x.dims(), "q");
  std::vector<T> a(static_cast<size_t>(m) * n);
  T query{};
  int lwork = -1, status = 0;
  if constexpr (kComplex<T>) {
    UIR_COMPLEX(ungqr, &m, &n, &k, nullptr, &lda, nullptr, &query, &lwork, &status);
  } else {
    UIR_REAL(orgqr, &m, &n, &k, nullptr, &lda, nullptr, &query, &lwork, &status);
  }
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), m, n, a.data());
    if constexpr (kComplex<T>) {
      UIR_COMPLEX(ungqr, &m, &n, &k, a.data(), &lda, tau + b * k, work.data(), &lwork, &status);
    } else {
      UIR_REAL(orgqr, &m, &n, &k, a.data(), &lda, tau + b * k, work.data(), &lwork, &status);
    }
    ToRowMajor(a.data(), m, n, out + b * m * n);
  }
}

// ormqr/unmqr(a, tau, c; left, transpose) -> Q c, Q^T c, c Q or c Q^T,
// with Q the product of the k reflectors in a.
template <typename T>
void Ormqr(const CallFrame& f) {
  Call call(f, 3, 1);
  const Matrices<T> a = call.Matrix<T>(0, "a");
  const Matrices<T> cm = call.Matrix<T>(2, "c");
  const bool left = call.Bool("left");
  const bool transpose = call.Bool("transpose");
  const CallBuffer& tau_buffer = call.operand(1);
  const int m = cm.rows, n = cm.cols, nq = left ? m : n;
  const int64_t k64 = tau_buffer.dims.empty() ? -1 : tau_buffer.dims.back();
  if (a.batch != cm.batch || a.rows != nq || k64 < 0 || k64 > nq || k64 > a.cols)
    call.Fail("needs a[..., " + std::string(left ? "m" : "n") +
              ", >= k], tau[..., k] and c[..., m, n] with k <= " + (left ? "m" : "n") + ", got a " +
              DimsText(a.dims()) + ", tau " + tau_buffer.ToString() + " and c " +
              DimsText(cm.dims()));
  const int k = static_cast<int>(k64), lda = Lead(a.rows), ldc = Lead(m);
  const T* tau = call.Operand<T>(1, Append(a.batch, {k}), "tau");
  T* out = call.Result<T>(0, cm.dims(), "c");
  const char side = left ? 'L' : 'R';
  const char trans = transpose ? (kComplex<T> ? 'C' : 'T') : 'N';
  std::vector<T> am(static_cast<size_t>(a.rows) * a.cols), cc(static_cast<size_t>(m) * n);
  T query{};
  int lwork = -1, status = 0;
  if constexpr (kComplex<T>) {
    UIR_COMPLEX(unmqr, &side, &trans, &m, &n, &k, nullptr, &lda, nullptr, nullptr, &ldc, &query,
                &lwork, &status, 1, 1);
  } else {
    UIR_REAL(ormqr, &side, &trans, &m, &n, &k, nullptr, &lda, nullptr, nullptr, &ldc, &query,
             &lwork, &status, 1, 1);
  }
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < cm.count; ++b) {
    ToColumnMajor(a.at(b), a.rows, a.cols, am.data());
    ToColumnMajor(cm.at(b), m, n, cc.data());
    if constexpr (kComplex<T>) {
      UIR_COMPLEX(unmqr, &side, &trans, &m, &n, &k, am.data(), &lda, tau + b * k, cc.data(), &ldc,
                  work.data(), &lwork, &status, 1, 1);
    } else {
      UIR_REAL(ormqr, &side, &trans, &m, &n, &k, am.data(), &lda, tau + b * k, cc.data(), &ldc,
               work.data(), &lwork, &status, 1, 1);
    }
    ToRowMajor(cc.data(), m, n, out + b * m * n);
  }
}

// syevd/heevd(x; uplo, mode) -> (vectors, values, info): the symmetric
// (Hermitian) eigenproblem by divide and conquer, values ascending.
template <typename T>
void Syevd(const CallFrame& f) {
  Call c(f, 1, 3);
  const Matrices<T> x = c.Matrix<T>(0, "x", /*square=*/true);
  const char uplo = c.Char("uplo", "LU");
  const char jobz = c.Char("mode", "NV");
  const int n = x.rows, lda = Lead(n);
  T* vectors = c.Result<T>(0, x.dims(), "eigenvectors");
  Real<T>* values = c.Result<Real<T>>(1, Append(x.batch, {n}), "eigenvalues");
  int32_t* info = c.Result<int32_t>(2, x.batch, "info");
  std::vector<T> a(static_cast<size_t>(n) * n);
  T query{};
  Real<T> rquery{};
  int iquery = 0, lwork = -1, lrwork = -1, liwork = -1, status = 0;
  if constexpr (kComplex<T>) {
    UIR_COMPLEX(heevd, &jobz, &uplo, &n, nullptr, &lda, nullptr, &query, &lwork, &rquery, &lrwork,
                &iquery, &liwork, &status, 1, 1);
  } else {
    UIR_REAL(syevd, &jobz, &uplo, &n, nullptr, &lda, nullptr, &query, &lwork, &iquery, &liwork,
             &status, 1, 1);
  }
  lwork = WorkSize(query);
  lrwork = WorkSize(rquery);
  liwork = std::max(1, iquery);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<Real<T>> rwork(static_cast<size_t>(lrwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), n, n, a.data());
    if constexpr (kComplex<T>) {
      UIR_COMPLEX(heevd, &jobz, &uplo, &n, a.data(), &lda, values + b * n, work.data(), &lwork,
                  rwork.data(), &lrwork, iwork.data(), &liwork, &status, 1, 1);
    } else {
      UIR_REAL(syevd, &jobz, &uplo, &n, a.data(), &lda, values + b * n, work.data(), &lwork,
               iwork.data(), &liwork, &status, 1, 1);
    }
    ToRowMajor(a.data(), n, n, vectors + b * n * n);
    info[b] = status;
  }
}

// gesdd / gesvd(x; mode) -> (a, s, u, vt, info): the SVD by divide and
// conquer or by QR iteration; mode 'A' full u and vt, 'S' reduced, 'N'
// singular values only.
template <typename T, bool kDivideAndConquer>
void Svd(const CallFrame& f) {
  Call c(f, 1, 5);
  const Matrices<T> x = c.Matrix<T>(0, "x");
  const char mode = c.Char("mode", "ASNO");
  if (mode == 'O')
    c.Fail("mode 'O' (overwrite x with u or vt) is not supported, as in jaxlib's kernels");
  const int m = x.rows, n = x.cols, k = std::min(m, n), lda = Lead(m);
  T* out = c.Result<T>(0, x.dims(), "a");
  Real<T>* s = c.Result<Real<T>>(1, Append(x.batch, {k}), "singular values");
  int urows = 1, ucols = 1, vtrows = 1, vtcols = 1;
  T *u = nullptr, *vt = nullptr;
  std::vector<T> u_none(1), vt_none(1);
  if (mode == 'N') {
    c.AnyResult<T>(2, "u");
    c.AnyResult<T>(3, "vt");
  } else {
    urows = m;
    ucols = mode == 'A' ? m : k;
    vtrows = mode == 'A' ? n : k;
    vtcols = n;
    u = c.Result<T>(2, Append(x.batch, {urows, ucols}), "u");
    vt = c.Result<T>(3, Append(x.batch, {vtrows, vtcols}), "vt");
  }
  int32_t* info = c.Result<int32_t>(4, x.batch, "info");
  const int ldu = Lead(urows), ldvt = Lead(vtrows);
  std::vector<T> a(static_cast<size_t>(m) * n);
  std::vector<T> uc(static_cast<size_t>(urows) * ucols), vtc(static_cast<size_t>(vtrows) * vtcols);
  std::vector<int> iwork(static_cast<size_t>(std::max(1, 8 * k)));
  const int64_t big = std::max(m, n);
  const int64_t rwork_size =
      !kDivideAndConquer ? 5 * k
      : mode == 'N'
          ? 7 * int64_t{k}
          : std::max<int64_t>(5 * int64_t{k} * k + 5 * k, 2 * big * k + 2 * int64_t{k} * k + k);
  std::vector<Real<T>> rwork(static_cast<size_t>(std::max<int64_t>(1, rwork_size)));
  const char job = mode;
  auto run = [&](T* ap, Real<T>* sp, T* work, int* lwork, int* status) {
    if constexpr (kDivideAndConquer) {
      if constexpr (kComplex<T>) {
        UIR_COMPLEX(gesdd, &job, &m, &n, ap, &lda, sp, uc.data(), &ldu, vtc.data(), &ldvt, work,
                    lwork, rwork.data(), iwork.data(), status, 1);
      } else {
        UIR_REAL(gesdd, &job, &m, &n, ap, &lda, sp, uc.data(), &ldu, vtc.data(), &ldvt, work, lwork,
                 iwork.data(), status, 1);
      }
    } else {
      if constexpr (kComplex<T>) {
        UIR_COMPLEX(gesvd, &job, &job, &m, &n, ap, &lda, sp, uc.data(), &ldu, vtc.data(), &ldvt,
                    work, lwork, rwork.data(), status, 1, 1);
      } else {
        UIR_REAL(gesvd, &job, &job, &m, &n, ap, &lda, sp, uc.data(), &ldu, vtc.data(), &ldvt, work,
                 lwork, status, 1, 1);
      }
    }
  };
  T query{};
  int lwork = -1, status = 0;
  std::vector<Real<T>> s_query(static_cast<size_t>(std::max(1, k)));
  run(a.data(), s_query.data(), &query, &lwork, &status);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), m, n, a.data());
    run(a.data(), s + b * k, work.data(), &lwork, &status);
    ToRowMajor(a.data(), m, n, out + b * m * n);
    if (u != nullptr) {
      ToRowMajor(uc.data(), urows, ucols, u + b * urows * ucols);
      ToRowMajor(vtc.data(), vtrows, vtcols, vt + b * vtrows * vtcols);
    }
    info[b] = status;
  }
}

// trsm(a, b; side, uplo, trans_x, diag) -> x: solves op(a) x = b ('L') or
// x op(a) = b ('R') with a triangular.
template <typename T>
void Trsm(const CallFrame& f) {
  Call c(f, 2, 1);
  const Matrices<T> bm = c.Matrix<T>(1, "b");
  const char side = c.Char("side", "LR");
  const char uplo = c.Char("uplo", "LU");
  const char trans = c.Char("trans_x", "NTC");
  const char diag = c.Char("diag", "NU");
  const int m = bm.rows, n = bm.cols, k = side == 'L' ? m : n;
  const T* a_in = c.Operand<T>(0, Append(bm.batch, {k, k}), "a");
  T* out = c.Result<T>(0, bm.dims(), "x");
  const int lda = Lead(k), ldb = Lead(m);
  const T one(1);
  std::vector<T> a(static_cast<size_t>(k) * k), xb(static_cast<size_t>(m) * n);
  for (int64_t b = 0; b < bm.count; ++b) {
    ToColumnMajor(a_in + b * k * k, k, k, a.data());
    ToColumnMajor(bm.at(b), m, n, xb.data());
    UIR_EVERY(trsm, &side, &uplo, &trans, &diag, &m, &n, &one, a.data(), &lda, xb.data(), &ldb, 1,
              1, 1, 1);
    ToRowMajor(xb.data(), m, n, out + b * m * n);
  }
}

// geev(x; compute_left, compute_right): the nonsymmetric eigenproblem. Real
// x gives (wr, wi, vl, vr, info) with complex eigenvectors unpacked from
// LAPACK's conjugate-pair columns; complex x gives (w, vl, vr, info).
// Eigenvectors are columns. A matrix with an infinity or NaN is not
// decomposed: info -4, as in jaxlib.
template <typename T>
void Geev(const CallFrame& f) {
  constexpr bool complex = kComplex<T>;
  Call c(f, 1, complex ? 4 : 5);
  const Matrices<T> x = c.Matrix<T>(0, "x", /*square=*/true);
  const char jobvl = c.Char("compute_left", "NV");
  const char jobvr = c.Char("compute_right", "NV");
  const int n = x.rows, lda = Lead(n);
  const Dims values_dims = Append(x.batch, {n});
  size_t next = 0;
  T* wr = c.Result<T>(next++, values_dims, complex ? "eigenvalues" : "eigenvalues' real parts");
  T* wi = complex ? nullptr : c.Result<T>(next++, values_dims, "eigenvalues' imaginary parts");
  Complex<T>* vl = c.Result<Complex<T>>(next++, x.dims(), "left eigenvectors");
  Complex<T>* vr = c.Result<Complex<T>>(next++, x.dims(), "right eigenvectors");
  int32_t* info = c.Result<int32_t>(next, x.batch, "info");
  const size_t nn = static_cast<size_t>(n) * n;
  std::vector<T> a(nn), vlc(nn), vrc(nn);
  std::vector<Complex<T>> unpacked(nn);
  std::vector<Real<T>> rwork(static_cast<size_t>(std::max(1, 2 * n)));
  T query{};
  int lwork = -1, status = 0;
  if constexpr (complex) {
    UIR_COMPLEX(geev, &jobvl, &jobvr, &n, nullptr, &lda, nullptr, nullptr, &lda, nullptr, &lda,
                &query, &lwork, rwork.data(), &status, 1, 1);
  } else {
    UIR_REAL(geev, &jobvl, &jobvr, &n, nullptr, &lda, nullptr, nullptr, nullptr, &lda, nullptr,
             &lda, &query, &lwork, &status, 1, 1);
  }
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  // LAPACK's real eigenvectors: a complex pair j, j+1 is stored as the
  // real part in column j and the imaginary part in column j + 1.
  auto unpack = [&](const T* packed, const T* imag) {
    for (int j = 0; j < n;) {
      const Real<T> imag_j = std::real(imag[j]);
      const bool pair = !(imag_j == 0 || std::isnan(imag_j)) && j + 1 < n;
      for (int i = 0; i < n; ++i) {
        const Real<T> re = std::real(packed[static_cast<size_t>(j) * n + i]);
        if (!pair) {
          unpacked[static_cast<size_t>(j) * n + i] = {re, 0};
        } else {
          const Real<T> im = std::real(packed[static_cast<size_t>(j + 1) * n + i]);
          unpacked[static_cast<size_t>(j) * n + i] = {re, im};
          unpacked[static_cast<size_t>(j + 1) * n + i] = {re, -im};
        }
      }
      j += pair ? 2 : 1;
    }
  };
  for (int64_t b = 0; b < x.count; ++b) {
    const T* xb = x.at(b);
    Complex<T>* vlb = vl + b * n * n;
    Complex<T>* vrb = vr + b * n * n;
    std::fill(vlb, vlb + nn, Complex<T>{});
    std::fill(vrb, vrb + nn, Complex<T>{});
    if (!AllFinite(xb, static_cast<int64_t>(nn))) {
      info[b] = -4;
      continue;
    }
    ToColumnMajor(xb, n, n, a.data());
    std::fill(vlc.begin(), vlc.end(), T{});
    std::fill(vrc.begin(), vrc.end(), T{});
    if constexpr (complex) {
      UIR_COMPLEX(geev, &jobvl, &jobvr, &n, a.data(), &lda, wr + b * n, vlc.data(), &lda,
                  vrc.data(), &lda, work.data(), &lwork, rwork.data(), &status, 1, 1);
    } else {
      UIR_REAL(geev, &jobvl, &jobvr, &n, a.data(), &lda, wr + b * n, wi + b * n, vlc.data(), &lda,
               vrc.data(), &lda, work.data(), &lwork, &status, 1, 1);
    }
    info[b] = status;
    if (status != 0) continue;
    if constexpr (complex) {
      ToRowMajor(vlc.data(), n, n, vlb);
      ToRowMajor(vrc.data(), n, n, vrb);
    } else {
      unpack(vlc.data(), wi + b * n);
      ToRowMajor(unpacked.data(), n, n, vlb);
      unpack(vrc.data(), wi + b * n);
      ToRowMajor(unpacked.data(), n, n, vrb);
    }
  }
}

// gees(x; mode, sort) -> the Schur form: real (t, vs, wr, wi, sdim, info),
// complex (t, vs, w, sdim, info). Sorting needs a selection function JAX
// does not pass, so only sort 'N' runs (as in jaxlib).
template <typename T>
void Gees(const CallFrame& f) {
  constexpr bool complex = kComplex<T>;
  Call c(f, 1, complex ? 5 : 6);
  const Matrices<T> x = c.Matrix<T>(0, "x", /*square=*/true);
  const char jobvs = c.Char("mode", "NV");
  const char sort = c.Char("sort", "NS");
  if (sort != 'N') c.Fail("ordering the eigenvalues (sort 'S') is not implemented, as in jaxlib");
  const int n = x.rows, lda = Lead(n);
  const Dims values_dims = Append(x.batch, {n});
  size_t next = 0;
  T* t = c.Result<T>(next++, x.dims(), "Schur form");
  T* vs = c.Result<T>(next++, x.dims(), "Schur vectors");
  T* wr = c.Result<T>(next++, values_dims, complex ? "eigenvalues" : "eigenvalues' real parts");
  T* wi = complex ? nullptr : c.Result<T>(next++, values_dims, "eigenvalues' imaginary parts");
  int32_t* sdim = c.Result<int32_t>(next++, x.batch, "selected");
  int32_t* info = c.Result<int32_t>(next, x.batch, "info");
  const size_t nn = static_cast<size_t>(n) * n;
  std::vector<T> a(nn), vsc(nn);
  std::vector<Real<T>> rwork(static_cast<size_t>(std::max(1, n)));
  T query{};
  int lwork = -1, status = 0, selected = 0;
  if constexpr (complex) {
    UIR_COMPLEX(gees, &jobvs, &sort, nullptr, &n, nullptr, &lda, &selected, nullptr, nullptr, &lda,
                &query, &lwork, rwork.data(), nullptr, &status, 1, 1);
  } else {
    UIR_REAL(gees, &jobvs, &sort, nullptr, &n, nullptr, &lda, &selected, nullptr, nullptr, nullptr,
             &lda, &query, &lwork, nullptr, &status, 1, 1);
  }
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), n, n, a.data());
    std::fill(vsc.begin(), vsc.end(), T{});
    if constexpr (complex) {
      UIR_COMPLEX(gees, &jobvs, &sort, nullptr, &n, a.data(), &lda, &selected, wr + b * n,
                  vsc.data(), &lda, work.data(), &lwork, rwork.data(), nullptr, &status, 1, 1);
    } else {
      UIR_REAL(gees, &jobvs, &sort, nullptr, &n, a.data(), &lda, &selected, wr + b * n, wi + b * n,
               vsc.data(), &lda, work.data(), &lwork, nullptr, &status, 1, 1);
    }
    ToRowMajor(a.data(), n, n, t + b * n * n);
    ToRowMajor(vsc.data(), n, n, vs + b * n * n);
    sdim[b] = selected;
    info[b] = status;
  }
}

// gehrd(x; low, high) -> (a, tau, info): Hessenberg form by Householder
// reflectors, rows and columns low..high (1-based) reduced.
template <typename T>
void Gehrd(const CallFrame& f) {
  Call c(f, 1, 3);
  const Matrices<T> x = c.Matrix<T>(0, "x", /*square=*/true);
  const int n = x.rows, lda = Lead(n);
  const int low = c.Int("low"), high = c.Int("high");
  if (n < 1 || low < 1 || low > n || high < std::min(low, n) || high > n)
    c.Fail("needs 1 <= low <= high <= n, got low " + std::to_string(low) + ", high " +
           std::to_string(high) + " for n = " + std::to_string(n));
  T* out = c.Result<T>(0, x.dims(), "a");
  T* tau = c.Result<T>(1, Append(x.batch, {n - 1}), "tau");
  int32_t* info = c.Result<int32_t>(2, x.batch, "info");
  std::vector<T> a(static_cast<size_t>(n) * n);
  T query{};
  int lwork = -1, status = 0;
  UIR_EVERY(gehrd, &n, &low, &high, nullptr, &lda, nullptr, &query, &lwork, &status);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), n, n, a.data());
    UIR_EVERY(gehrd, &n, &low, &high, a.data(), &lda, tau + b * (n - 1), work.data(), &lwork,
              &status);
    ToRowMajor(a.data(), n, n, out + b * n * n);
    info[b] = status;
  }
}

// sytrd/hetrd(x; uplo) -> (a, d, e, tau, info): tridiagonal form of a
// symmetric (Hermitian) matrix.
template <typename T>
void Sytrd(const CallFrame& f) {
  Call c(f, 1, 5);
  const Matrices<T> x = c.Matrix<T>(0, "x", /*square=*/true);
  const char uplo = c.Char("uplo", "LU");
  const int n = x.rows, lda = Lead(n);
  if (n < 1) c.Fail("needs a matrix of at least 1x1, got " + DimsText(x.dims()));
  T* out = c.Result<T>(0, x.dims(), "a");
  Real<T>* d = c.Result<Real<T>>(1, Append(x.batch, {n}), "diagonal");
  Real<T>* e = c.Result<Real<T>>(2, Append(x.batch, {n - 1}), "off-diagonal");
  T* tau = c.Result<T>(3, Append(x.batch, {n - 1}), "tau");
  int32_t* info = c.Result<int32_t>(4, x.batch, "info");
  std::vector<T> a(static_cast<size_t>(n) * n);
  T query{};
  int lwork = -1, status = 0;
  if constexpr (kComplex<T>) {
    UIR_COMPLEX(hetrd, &uplo, &n, nullptr, &lda, nullptr, nullptr, nullptr, &query, &lwork, &status,
                1);
  } else {
    UIR_REAL(sytrd, &uplo, &n, nullptr, &lda, nullptr, nullptr, nullptr, &query, &lwork, &status,
             1);
  }
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < x.count; ++b) {
    ToColumnMajor(x.at(b), n, n, a.data());
    if constexpr (kComplex<T>) {
      UIR_COMPLEX(hetrd, &uplo, &n, a.data(), &lda, d + b * n, e + b * (n - 1), tau + b * (n - 1),
                  work.data(), &lwork, &status, 1);
    } else {
      UIR_REAL(sytrd, &uplo, &n, a.data(), &lda, d + b * n, e + b * (n - 1), tau + b * (n - 1),
               work.data(), &lwork, &status, 1);
    }
    ToRowMajor(a.data(), n, n, out + b * n * n);
    info[b] = status;
  }
}

// gtsv(dl, d, du, b) -> (dl, d, du, x, info): a tridiagonal system by
// Gaussian elimination with partial pivoting. dl[0] and du[m-1] are unused.
template <typename T>
void Gtsv(const CallFrame& f) {
  Call c(f, 4, 5);
  const Matrices<T> bm = c.Matrix<T>(3, "b");
  const int m = bm.rows, nrhs = bm.cols, ldb = Lead(m);
  const Dims diag_dims = Append(bm.batch, {m});
  const T* dl_in = c.Operand<T>(0, diag_dims, "dl");
  const T* d_in = c.Operand<T>(1, diag_dims, "d");
  const T* du_in = c.Operand<T>(2, diag_dims, "du");
  T* dl = c.Result<T>(0, diag_dims, "dl");
  T* d = c.Result<T>(1, diag_dims, "d");
  T* du = c.Result<T>(2, diag_dims, "du");
  T* x = c.Result<T>(3, bm.dims(), "x");
  int32_t* info = c.Result<int32_t>(4, bm.batch, "info");
  const size_t diag_bytes = sizeof(T) * static_cast<size_t>(bm.count) * m;
  if (diag_bytes > 0) {
    std::memcpy(dl, dl_in, diag_bytes);
    std::memcpy(d, d_in, diag_bytes);
    std::memcpy(du, du_in, diag_bytes);
  }
  std::vector<T> xb(static_cast<size_t>(m) * nrhs);
  for (int64_t b = 0; b < bm.count; ++b) {
    ToColumnMajor(bm.at(b), m, nrhs, xb.data());
    int status = 0;
    if (m > 0 && nrhs > 0) {  // LAPACK writes b(n, 1) even for no right-hand side
      UIR_EVERY(gtsv, &m, &nrhs, dl + b * m + 1, d + b * m, du + b * m, xb.data(), &ldb, &status);
    }
    ToRowMajor(xb.data(), m, nrhs, x + b * m * nrhs);
    info[b] = status;
  }
}

template <typename T>
void AddTargets(char p, std::vector<std::pair<std::string, FrameTarget>>& out) {
  auto add = [&](std::string_view name, FrameTarget fn) {
    out.emplace_back("lapack_" + std::string(1, p) + std::string(name) + "_ffi", std::move(fn));
  };
  add("getrf", Getrf<T>);
  add("potrf", Potrf<T>);
  add("geqrf", Geqrf<T>);
  add("geqp3", Geqp3<T>);
  add(kComplex<T> ? "ungqr" : "orgqr", Orgqr<T>);
  add(kComplex<T> ? "unmqr" : "ormqr", Ormqr<T>);
  add(kComplex<T> ? "heevd" : "syevd", Syevd<T>);
  add("gesdd", Svd<T, true>);
  add("gesvd", Svd<T, false>);
  add("trsm", Trsm<T>);
  add("geev", Geev<T>);
  add("gees", Gees<T>);
  add("gehrd", Gehrd<T>);
  add(kComplex<T> ? "hetrd" : "sytrd", Sytrd<T>);
  add("gtsv", Gtsv<T>);
}

}  // namespace

std::vector<std::pair<std::string, FrameTarget>> LapackTargets() {
  std::vector<std::pair<std::string, FrameTarget>> out;
  AddTargets<float>('s', out);
  AddTargets<double>('d', out);
  AddTargets<c32>('c', out);
  AddTargets<c64>('z', out);
  return out;
}

}  // namespace uir::runtime
