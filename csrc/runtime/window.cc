// The library reduce-window: typed loops, one instantiation per element
// type and fold op. A dimension whose window is one element and whose
// elements are adjacent in both arrays is walked as a row (the loops over
// it vectorize); the others iterate per output element over the window
// positions each output coordinate reaches, tabulated once per run (or,
// where the innermost other dimension has an interior, per window position
// over all of that dimension's outputs: Swept).
#include "runtime/window.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/fold.h"
#include "runtime/narrow_float.h"
#include "runtime/strided.h"
#include "support/machine.h"
#include "support/thread_pool.h"

namespace uir::runtime {

std::string_view FoldOpName(FoldOp op) {
  switch (op) {
    case FoldOp::kAdd:
      return "add";
    case FoldOp::kMultiply:
      return "multiply";
    case FoldOp::kMaximum:
      return "maximum";
    case FoldOp::kMinimum:
      return "minimum";
    case FoldOp::kAnd:
      return "and";
    case FoldOp::kOr:
      return "or";
  }
  return "?";
}

namespace {

// Work per parallel chunk, in element visits.
constexpr int64_t kGrainWork = 1 << 15;

// Coordinates of row `r` over `dims` (row-major), as offsets into both
// arrays and the coordinates themselves.
struct Odometer {
  std::vector<int> dims;  // logical dimensions, outermost first
  std::vector<int64_t> size, coord;
  int64_t in_offset = 0, out_offset = 0;
  const WindowPlan* plan = nullptr;
  // Input strides along each dim for the scan (which reads input and
  // output at the same coordinates); unused elsewhere.
  bool same_coords = false;

  void Seek(int64_t r) {
    in_offset = out_offset = 0;
    for (size_t j = dims.size(); j-- > 0;) {
      coord[j] = r % size[j];
      r /= size[j];
      out_offset += coord[j] * plan->out_stride[static_cast<size_t>(dims[j])];
      if (same_coords) in_offset += coord[j] * plan->in_stride[static_cast<size_t>(dims[j])];
    }
  }
  void Next() {
    for (size_t j = dims.size(); j-- > 0;) {
      const auto d = static_cast<size_t>(dims[j]);
      if (++coord[j] < size[j]) {
        out_offset += plan->out_stride[d];
        if (same_coords) in_offset += plan->in_stride[d];
        return;
      }
      out_offset -= (size[j] - 1) * plan->out_stride[d];
      if (same_coords) in_offset -= (size[j] - 1) * plan->in_stride[d];
      coord[j] = 0;
    }
  }
};

Odometer MakeOdometer(const WindowPlan& p, const std::vector<int>& dims, bool same_coords) {
  Odometer o;
  o.plan = &p;
  o.dims = dims;
  o.same_coords = same_coords;
  for (int d : dims) o.size.push_back(p.out_size[static_cast<size_t>(d)]);
  o.coord.assign(dims.size(), 0);
  return o;
}

// The dimension walked as a row: window one element, no stride, padding
// or dilation, and adjacent elements in both arrays. -1 if none.
int RowDim(const WindowPlan& p, int skip) {
  for (int d = p.rank - 1; d >= 0; --d) {
    const auto k = static_cast<size_t>(d);
    if (d == skip) continue;
    if (p.window[k] == 1 && p.stride[k] == 1 && p.pad_low[k] == 0 && p.base_dilation[k] == 1 &&
        p.in_size[k] == p.out_size[k] && p.in_stride[k] == 1 && p.out_stride[k] == 1) {
      return d;
    }
  }
  return -1;
}

template <typename T, FoldOp Op>
void Scan(const WindowPlan& p, int s, bool reverse, const T* in, T init, T* out) {
  const int v = RowDim(p, s);
  const int64_t row = v >= 0 ? p.out_size[static_cast<size_t>(v)] : 1;
  std::vector<int> outer;
  for (int d = 0; d < p.rank; ++d) {
    if (d != s && d != v) outer.push_back(d);
  }
  const auto ks = static_cast<size_t>(s);
  const int64_t n = p.out_size[ks];
  const int64_t is = p.in_stride[ks], os = p.out_stride[ks];
  int64_t lines = 1;
  for (int d : outer) lines *= p.out_size[static_cast<size_t>(d)];
  const int64_t grain = std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, n * row));
  ParallelFor(lines, grain, [&](int64_t begin, int64_t end) {
    Odometer at = MakeOdometer(p, outer, /*same_coords=*/true);
    at.Seek(begin);
    std::unique_ptr<T[]> acc(new T[static_cast<size_t>(row)]);
    for (int64_t l = begin; l < end; ++l, at.Next()) {
      if (row == 1) {  // one line: a running value
        const T* x = in + at.in_offset;
        T* y = out + at.out_offset;
        T a = init;
        if (reverse) {
          for (int64_t i = n - 1; i >= 0; --i) y[i * os] = a = Apply<T, Op>(a, x[i * is]);
        } else {
          for (int64_t i = 0; i < n; ++i) y[i * os] = a = Apply<T, Op>(a, x[i * is]);
        }
        continue;
      }
      T* a = acc.get();
      std::fill(a, a + row, init);
      for (int64_t t = 0; t < n; ++t) {
        const int64_t i = reverse ? n - 1 - t : t;
        const T* x = in + at.in_offset + i * is;
        T* y = out + at.out_offset + i * os;
        for (int64_t j = 0; j < row; ++j) {
          a[j] = Apply<T, Op>(a[j], x[j]);
          y[j] = a[j];
        }
      }
    }
  });
}

// Per output coordinate along one dimension, the input offsets (already
// times the input stride) of the window positions it reaches, in order.
struct Reach {
  std::vector<int64_t> offsets;
  std::vector<int64_t> start;  // out_size + 1 entries into offsets
};

Reach Tabulate(const WindowPlan& p, size_t d) {
  Reach r;
  r.start.push_back(0);
  for (int64_t o = 0; o < p.out_size[d]; ++o) {
    for (int64_t k = 0; k < p.window[d]; ++k) {
      const int64_t pos = o * p.stride[d] + k * p.window_dilation[d] - p.pad_low[d];
      if (pos < 0 || pos % p.base_dilation[d] != 0) continue;
      const int64_t i = pos / p.base_dilation[d];
      if (i >= p.in_size[d]) continue;
      r.offsets.push_back(i * p.in_stride[d]);
    }
    r.start.push_back(static_cast<int64_t>(r.offsets.size()));
  }
  return r;
}

// rows of y (`count` of them, `y_step` elements apart) folded with rows of
// x (`x_step` apart), `row` elements each: one call per window position
// and run of outputs, in clones for AVX2 and AVX-512 chosen once, so that
// floats' NaN-propagating maximum and minimum compile to vector compares
// and blends on hosts that have them (max-pooling over NHWC with 32
// channels took twice as long in baseline x86-64 code).
template <typename T, FoldOp Op>
void FoldRowsOf(T* y, int64_t y_step, const T* x, int64_t x_step, int64_t count, int64_t row) {
  for (int64_t o = 0; o < count; ++o) {
    T* yo = y + o * y_step;
    const T* xo = x + o * x_step;
    for (int64_t j = 0; j < row; ++j) yo[j] = Apply<T, Op>(yo[j], xo[j]);
  }
}
template <typename T, FoldOp Op>
using FoldRowsFn = void (*)(T*, int64_t, const T*, int64_t, int64_t, int64_t);

#if defined(__x86_64__)
template <typename T, FoldOp Op>
__attribute__((target("avx2"))) void FoldRowsAvx2(T* y, int64_t y_step, const T* x, int64_t x_step,
                                                  int64_t count, int64_t row) {
  FoldRowsOf<T, Op>(y, y_step, x, x_step, count, row);
}
template <typename T, FoldOp Op>
__attribute__((target("avx512f"))) void FoldRowsAvx512(T* y, int64_t y_step, const T* x,
                                                       int64_t x_step, int64_t count, int64_t row) {
  FoldRowsOf<T, Op>(y, y_step, x, x_step, count, row);
}
#endif

template <typename T, FoldOp Op>
FoldRowsFn<T, Op> PickFoldRows() {
#if defined(__x86_64__)
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    static const int64_t vector = MachineModel::Host().vector_bytes;
    if (vector >= 64) return FoldRowsAvx512<T, Op>;
    if (vector >= 32) return FoldRowsAvx2<T, Op>;
  }
#endif
  return FoldRowsOf<T, Op>;
}

// One row of y folded with one of x: short rows inline (an indirect call
// would cost more than the fold), longer ones through `rows`.
template <typename T, FoldOp Op>
void FoldRow(FoldRowsFn<T, Op> rows, T* y, const T* x, int64_t row) {
  if (row >= 8) return rows(y, 0, x, 0, 1, row);
  for (int64_t j = 0; j < row; ++j) y[j] = Apply<T, Op>(y[j], x[j]);
}

// The output coordinates [lo, hi) along dimension d whose whole window
// lies inside the input (no position clipped, none between dilated input
// elements): each reaches o * stride - pad + k * window_dilation for every k.
std::pair<int64_t, int64_t> Interior(const WindowPlan& p, size_t d) {
  if (p.base_dilation[d] != 1) return {0, 0};
  const int64_t s = p.stride[d], pad = p.pad_low[d];
  const int64_t lo = pad > 0 ? (pad + s - 1) / s : 0;
  const int64_t last = p.in_size[d] - 1 + pad - (p.window[d] - 1) * p.window_dilation[d];
  const int64_t hi = last < 0 ? 0 : std::min(p.out_size[d], last / s + 1);
  return {std::min(lo, hi), hi};
}

// Every combination of the positions `reach` gives the current output
// coordinates `coord` (row-major, the last dimension fastest), each as the
// sum of its input offsets; false at once where a dimension reaches none.
template <typename F>
bool ForEachPosition(const std::vector<Reach>& reach, const std::vector<int64_t>& coord,
                     std::vector<int64_t>& pos, const F& visit) {
  const size_t depth = reach.size();
  for (size_t j = 0; j < depth; ++j) {
    const Reach& re = reach[j];
    pos[j] = re.start[static_cast<size_t>(coord[j])];
    if (pos[j] == re.start[static_cast<size_t>(coord[j]) + 1]) return false;
  }
  for (;;) {
    int64_t off = 0;
    for (size_t j = 0; j < depth; ++j) off += reach[j].offsets[static_cast<size_t>(pos[j])];
    visit(off);
    size_t j = depth;
    for (; j-- > 0;) {
      const Reach& re = reach[j];
      const auto c = static_cast<size_t>(coord[j]);
      if (++pos[j] < re.start[c + 1]) break;
      pos[j] = re.start[c];
    }
    if (j == static_cast<size_t>(-1)) return true;
  }
}

// General's loop with its innermost non-row dimension w swept: per
// combination of the other dimensions' window positions and per position
// k along w, one pass over all of w's interior outputs, instead of the
// window positions found again for every output (pooling over NHWC with
// 32 channels: each position's bookkeeping was most of the work). Outputs
// near w's edges fold their clipped windows one by one. Every output folds
// its positions in the same (row-major) order as General, so the results
// are the same bits.
template <typename T, FoldOp Op>
void Swept(const WindowPlan& p, const T* in, T init, T* out, int v, const std::vector<int>& outer) {
  const int64_t row = v >= 0 ? p.out_size[static_cast<size_t>(v)] : 1;
  const auto w = static_cast<size_t>(outer.back());
  const std::vector<int> rest(outer.begin(), outer.end() - 1);
  std::vector<Reach> reach;
  for (int d : rest) reach.push_back(Tabulate(p, static_cast<size_t>(d)));
  const Reach along = Tabulate(p, w);
  const auto [lo, hi] = Interior(p, w);
  const int64_t n = p.out_size[w], os = p.out_stride[w], is = p.in_stride[w];
  const int64_t step = p.stride[w] * is;
  int64_t rows = 1, window = 1;
  for (int d : rest) rows *= p.out_size[static_cast<size_t>(d)];
  for (int d : outer) window *= p.window[static_cast<size_t>(d)];
  const int64_t grain = std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, window * row * n));
  ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
    Odometer at = MakeOdometer(p, rest, /*same_coords=*/false);
    at.Seek(begin);
    std::vector<int64_t> pos(rest.size());
    const FoldRowsFn<T, Op> rows_fold = PickFoldRows<T, Op>();
    for (int64_t r = begin; r < end; ++r, at.Next()) {
      T* y = out + at.out_offset;
      for (int64_t o = 0; o < n; ++o) std::fill_n(y + o * os, row, init);
      ForEachPosition(reach, at.coord, pos, [&](int64_t off) {
        auto clipped = [&](int64_t o) {
          const auto c = static_cast<size_t>(o);
          for (int64_t q = along.start[c]; q < along.start[c + 1]; ++q)
            FoldRow<T, Op>(rows_fold, y + o * os, in + off + along.offsets[static_cast<size_t>(q)],
                           row);
        };
        for (int64_t o = 0; o < lo; ++o) clipped(o);
        for (int64_t k = 0; k < p.window[w]; ++k) {
          const int64_t first = off + (k * p.window_dilation[w] - p.pad_low[w]) * is;
          rows_fold(y + lo * os, os, in + first + lo * step, step, hi - lo, row);
        }
        for (int64_t o = hi; o < n; ++o) clipped(o);
      });
    }
  });
}

template <typename T, FoldOp Op>
void General(const WindowPlan& p, const T* in, T init, T* out) {
  const int v = RowDim(p, -1);
  const int64_t row = v >= 0 ? p.out_size[static_cast<size_t>(v)] : 1;
  std::vector<int> outer;
  for (int d = 0; d < p.rank; ++d) {
    if (d != v) outer.push_back(d);
  }
  if (!outer.empty()) {
    const auto [lo, hi] = Interior(p, static_cast<size_t>(outer.back()));
    if (hi - lo >= 4) return Swept<T, Op>(p, in, init, out, v, outer);
  }
  std::vector<Reach> reach;
  int64_t window = 1;
  for (int d : outer) {
    reach.push_back(Tabulate(p, static_cast<size_t>(d)));
    window *= p.window[static_cast<size_t>(d)];
  }
  int64_t rows = 1;
  for (int d : outer) rows *= p.out_size[static_cast<size_t>(d)];
  const int64_t grain = std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, window * row));
  ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
    Odometer at = MakeOdometer(p, outer, /*same_coords=*/false);
    at.Seek(begin);
    std::vector<int64_t> pos(outer.size());
    const FoldRowsFn<T, Op> rows_fold = PickFoldRows<T, Op>();
    for (int64_t r = begin; r < end; ++r, at.Next()) {
      T* y = out + at.out_offset;
      std::fill_n(y, row, init);
      ForEachPosition(reach, at.coord, pos,
                      [&](int64_t off) { FoldRow<T, Op>(rows_fold, y, in + off, row); });
    }
  });
}

template <typename T, FoldOp Op>
void RunTyped(const WindowPlan& p, const void* in, const void* init, void* out) {
  T start;
  std::memcpy(&start, init, sizeof(T));
  bool reverse = false;
  const int s = p.ScanDim(&reverse);
  if (s >= 0) {
    Scan<T, Op>(p, s, reverse, static_cast<const T*>(in), start, static_cast<T*>(out));
  } else {
    General<T, Op>(p, static_cast<const T*>(in), start, static_cast<T*>(out));
  }
}

template <typename T>
void RunOp(const WindowPlan& p, const void* in, const void* init, void* out) {
  switch (p.op) {
    case FoldOp::kAdd:
      return RunTyped<T, FoldOp::kAdd>(p, in, init, out);
    case FoldOp::kMultiply:
      return RunTyped<T, FoldOp::kMultiply>(p, in, init, out);
    case FoldOp::kMaximum:
      return RunTyped<T, FoldOp::kMaximum>(p, in, init, out);
    case FoldOp::kMinimum:
      return RunTyped<T, FoldOp::kMinimum>(p, in, init, out);
    case FoldOp::kAnd:
      if constexpr (!std::is_floating_point_v<T>)
        return RunTyped<T, FoldOp::kAnd>(p, in, init, out);
      break;
    case FoldOp::kOr:
      if constexpr (!std::is_floating_point_v<T>) return RunTyped<T, FoldOp::kOr>(p, in, init, out);
      break;
  }
}

std::string DimsText(const WindowPlan::Dims& d, int rank) {
  std::string s;
  for (int i = 0; i < rank; ++i) s += (i ? "x" : "") + std::to_string(d[static_cast<size_t>(i)]);
  return s;
}

}  // namespace

int WindowPlan::ScanDim(bool* reverse) const {
  int found = -1;
  for (int d = 0; d < rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if (stride[k] != 1 || base_dilation[k] != 1 || window_dilation[k] != 1 ||
        in_size[k] != out_size[k]) {
      return -1;
    }
    if (window[k] == 1 && pad_low[k] == 0) continue;
    // out[o] folds in[o - w + 1 .. o] (pad_low = w - 1), all of [0, o]
    // when w reaches the start from the last element; or in[o .. o + w - 1]
    // (pad_low = 0, pad_high = w - 1), all of [o, n).
    const int64_t n = in_size[k], w = window[k];
    if (found >= 0 || w < n || n < 2) return -1;
    if (pad_low[k] == w - 1) {
      *reverse = false;
    } else if (pad_low[k] == 0) {
      *reverse = true;
    } else {
      return -1;
    }
    found = d;
  }
  return found;
}

int64_t WindowPlan::InputElements() const { return SpannedElements(in_size, in_stride, rank); }
int64_t WindowPlan::OutputElements() const { return SpannedElements(out_size, out_stride, rank); }

bool WindowTypeSupported(PrimitiveType type, FoldOp op) {
  using P = PrimitiveType;
  const bool logical = op == FoldOp::kAnd || op == FoldOp::kOr;
  switch (type) {
    case P::kF32:
    case P::kF64:
    case P::kF16:
    case P::kBF16:
      return !logical;
    case P::kPred:
    case P::kS8:
    case P::kS16:
    case P::kS32:
    case P::kS64:
    case P::kU8:
    case P::kU16:
    case P::kU32:
    case P::kU64:
      return true;
    case P::kC64:
    case P::kC128:
      return op == FoldOp::kAdd || op == FoldOp::kMultiply;
    default:
      return false;
  }
}

std::string WindowPlan::Invalid() const {
  if (rank < 0 || rank > kMaxRank) return "rank " + std::to_string(rank);
  if (!WindowTypeSupported(type, op)) {
    return std::string(FoldOpName(op)) + " of " + std::string(PrimitiveTypeName(type));
  }
  for (int d = 0; d < rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if (in_size[k] < 0 || out_size[k] < 0 || window[k] < 1 || stride[k] < 1 ||
        base_dilation[k] < 1 || window_dilation[k] < 1 || in_stride[k] < 0 || out_stride[k] < 0) {
      return "dimension " + std::to_string(d) + " out of range";
    }
  }
  return "";
}

std::string WindowPlan::ToString() const {
  std::string s = std::string(PrimitiveTypeName(type)) + " " + std::string(FoldOpName(op)) + " [" +
                  DimsText(in_size, rank) + "] window " + DimsText(window, rank) + " stride " +
                  DimsText(stride, rank) + " -> [" + DimsText(out_size, rank) + "]";
  bool reverse = false;
  const int scan = ScanDim(&reverse);
  if (scan >= 0)
    s += std::string(reverse ? ", reverse" : ",") + " scan along " + std::to_string(scan);
  return s;
}

void RunWindow(const WindowPlan& p, const void* in, const void* init, void* out) {
  using P = PrimitiveType;
  switch (p.type) {
    case P::kPred:
      return RunOp<bool>(p, in, init, out);
    case P::kS8:
      return RunOp<int8_t>(p, in, init, out);
    case P::kS16:
      return RunOp<int16_t>(p, in, init, out);
    case P::kS32:
      return RunOp<int32_t>(p, in, init, out);
    case P::kS64:
      return RunOp<int64_t>(p, in, init, out);
    case P::kU8:
      return RunOp<uint8_t>(p, in, init, out);
    case P::kU16:
      return RunOp<uint16_t>(p, in, init, out);
    case P::kU32:
      return RunOp<uint32_t>(p, in, init, out);
    case P::kU64:
      return RunOp<uint64_t>(p, in, init, out);
    case P::kF32:
      return RunOp<float>(p, in, init, out);
    case P::kF64:
      return RunOp<double>(p, in, init, out);
    case P::kC64:
      return RunOp<std::complex<float>>(p, in, init, out);
    case P::kC128:
      return RunOp<std::complex<double>>(p, in, init, out);
    case P::kF16:
    case P::kBF16: {
      // Widened as laid out, folded in f32, rounded once.
      WindowPlan wide = p;
      wide.type = P::kF32;
      float start;
      WidenToF32(p.type, init, 1, &start);
      RunInF32(p.type, in, p.InputElements(), nullptr, 0, out, p.OutputElements(),
               [&](const float* x, const float*, float* y) { RunWindow(wide, x, &start, y); });
      return;
    }
    default:
      return;
  }
}

}  // namespace uir::runtime
