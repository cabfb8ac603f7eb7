// Convolution as blocks of im2col rows times the packed kernel.
#include "runtime/conv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/gemm.h"
#include "support/machine.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {

// Products smaller than this many multiply-adds run on the calling thread
// with BLAS's own threading.
constexpr int64_t kParallelWork = int64_t{1} << 22;
// A block's patch rows take about this many bytes (stays in L2).
constexpr int64_t kBlockBytes = int64_t{256} << 10;

int64_t Span(int64_t count, int64_t stride) { return count > 0 ? (count - 1) * stride : 0; }

// Vectors of `Bytes` bytes of floats or doubles, as GCC's and Clang's
// vector extensions spell them.
template <typename T, int Bytes>
struct Vec;
#define UIR_CONV_VEC(T, B)                       \
  template <>                                    \
  struct Vec<T, B> {                             \
    using V = T __attribute__((vector_size(B))); \
  };
UIR_CONV_VEC(float, 16)
UIR_CONV_VEC(float, 32)
UIR_CONV_VEC(float, 64)
UIR_CONV_VEC(double, 16)
UIR_CONV_VEC(double, 32)
UIR_CONV_VEC(double, 64)
#undef UIR_CONV_VEC

template <typename T>
class Conv {
 public:
  Conv(const ConvPlan& p, const T* in, const T* kernel, T* out)
      : p_(p), in_(in), out_(out), positions_(1), window_positions_(1) {
    for (int d = 0; d < p.spatial; ++d) {
      positions_ *= p.out_size[d];
      window_positions_ *= p.window[d];
    }
    row_ = window_positions_ * p.in_features;
    Pack(kernel);
  }

  void Run() {
    if (Depthwise()) {
      RunDepthwise();
      return;
    }
    if (FewInputs()) {
      RunFewInputs();
      return;
    }
    const int64_t rows = p_.batch * positions_;
    const int64_t work = rows * row_ * p_.out_features * p_.groups;
    int64_t block = std::max<int64_t>(16, kBlockBytes / (static_cast<int64_t>(sizeof(T)) * row_));
    block = std::min(block, rows);
    const int64_t blocks = (rows + block - 1) / block;
    const int64_t tasks = blocks * p_.groups;
    auto run = [&](int64_t begin, int64_t end) {
      // Per run of blocks, not per thread: a thread that waits may run
      // another thunk meanwhile.
      const auto patches_memory = std::make_unique_for_overwrite<T[]>(
          static_cast<size_t>(block * (row_ + p_.out_features)));
      T* patches = patches_memory.get();
      T* results = patches + block * row_;
      for (int64_t t = begin; t < end; ++t) {
        const int64_t g = t / blocks;
        const int64_t r0 = t % blocks * block;
        const int64_t count = std::min(block, rows - r0);
        Gather(g, r0, count, patches);
        GemmPlan gemm;
        gemm.f64 = sizeof(T) == 8;
        gemm.m = count;
        gemm.n = p_.out_features;
        gemm.k = row_;
        RunGemm(gemm, patches, packed_.data() + g * row_ * p_.out_features, results);
        Scatter(g, r0, count, results);
      }
    };
    if (work < kParallelWork || tasks == 1 || NumThreads() == 1) {
      run(0, tasks);
      return;
    }
    SingleThreadedGemm scope;
    ParallelFor(tasks, 1, run);
  }

 private:
  // One input and one output feature per group, each contiguous across
  // groups (a depthwise convolution in NHWC): a GEMM per group would have
  // one column, so the window is summed directly, all channels of an
  // output position at once in one vectorized loop per window position.
  // Where window position k of output position o reads the input (an
  // element offset within its batch); false where it reads padding or a
  // hole of the base dilation.
  bool InputAt(const std::array<int64_t, ConvPlan::kMaxSpatial>& o,
               const std::array<int64_t, ConvPlan::kMaxSpatial>& k, int64_t* at) const {
    int64_t offset = 0;
    for (int d = 0; d < p_.spatial; ++d) {
      int64_t pos = o[d] * p_.stride[d] + k[d] * p_.window_dilation[d] - p_.pad_low[d];
      if (pos < 0) return false;
      if (p_.base_dilation[d] != 1) {
        if (pos % p_.base_dilation[d] != 0) return false;
        pos /= p_.base_dilation[d];
      }
      if (pos >= p_.in_size[d]) return false;
      offset += pos * p_.in_spatial[d];
    }
    *at = offset;
    return true;
  }

  bool Depthwise() const {
    return p_.groups > 1 && p_.in_features == 1 && p_.out_features == 1 && p_.in_feature == 1 &&
           p_.out_feature == 1;
  }

  void RunDepthwise() const {
    const int64_t channels = p_.groups;
    // by_window[w][c]: the kernel at window position w for channel c.
    std::vector<T> by_window(static_cast<size_t>(window_positions_ * channels));
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t w = 0; w < window_positions_; ++w) {
        by_window[static_cast<size_t>(w * channels + c)] =
            packed_[static_cast<size_t>(c * window_positions_ + w)];
      }
    }
    DirectRows(channels, [&](T* dst, const T* src, int64_t w) {
      const T* kw = by_window.data() + w * channels;
      for (int64_t c = 0; c < channels; ++c) dst[c] += src[c] * kw[c];
    });
  }

  // Few input features (an image's 3 colours) and a row of output
  // features, both contiguous: a GEMM of so few columns of patches runs
  // far below BLAS's speed, so each input element scales a row of the
  // packed kernel into the output row, one vectorized loop over the
  // output features.
  bool FewInputs() const {
    return p_.groups == 1 && p_.in_features <= 4 && p_.out_features >= 8 && p_.in_feature == 1 &&
           p_.out_feature == 1;
  }

  // Output rows of up to this many features accumulate in vector
  // registers, four rows side by side, stored once; wider ones accumulate
  // in the output.
  static constexpr int64_t kFewInputsRow = 256;

  void RunFewInputs() const {
    const int64_t og = p_.out_features;
    if (og > kFewInputsRow) {
      const int64_t ig = p_.in_features;
      DirectRows(og, [&](T* dst, const T* src, int64_t w) {
        for (int64_t i = 0; i < ig; ++i) {
          const T x = src[i];
          const T* kw = packed_.data() + (w * ig + i) * og;
          for (int64_t f = 0; f < og; ++f) dst[f] += x * kw[f];
        }
      });
      return;
    }
    // The rows' loop in a clone for the host's widest vectors with FMA,
    // chosen at run time (the runtime itself is built for baseline x86-64).
    static const int64_t vector = MachineModel::Host().vector_bytes;
    const int64_t rows = p_.batch * positions_;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, og));
    ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
#if defined(__x86_64__)
      if (vector >= 64) return FewInputsRowsAvx512(begin, end);
      if (vector >= 32) return FewInputsRowsAvx2(begin, end);
#endif
      FewInputsRows<16>(begin, end);
    });
  }

#if defined(__x86_64__)
  __attribute__((target("avx512f,avx512vl,fma"))) void FewInputsRowsAvx512(int64_t begin,
                                                                           int64_t end) const {
    FewInputsRows<64>(begin, end);
  }
  __attribute__((target("avx2,fma"))) void FewInputsRowsAvx2(int64_t begin, int64_t end) const {
    FewInputsRows<32>(begin, end);
  }
#endif

  // Output rows [begin, end): each input element of each window position
  // scales a row of the packed kernel into the row's accumulators, which
  // are vectors of `Bytes` in registers, a few at a time across the
  // output features (the features past the last whole vector one by one).
  // Each feature sums its terms in the same order however it is held.
  template <int Bytes>
  __attribute__((always_inline)) void FewInputsRows(int64_t begin, int64_t end) const {
    constexpr int64_t kLanes = Bytes / static_cast<int64_t>(sizeof(T));
    // Per pass over the window: kRows rows of kVectors accumulators.
    constexpr int kVectors = 2, kRows = 4;
    const int64_t ig = p_.in_features, og = p_.out_features;
    // Each window position's input offset from the window's origin, for
    // output positions whose window lies wholly inside an undilated input.
    std::vector<int64_t> tap(static_cast<size_t>(window_positions_));
    bool undilated = true;
    {
      std::array<int64_t, ConvPlan::kMaxSpatial> k{0, 0, 0};
      for (int64_t w = 0; w < window_positions_; ++w) {
        int64_t offset = 0;
        for (int d = 0; d < p_.spatial; ++d) {
          offset += k[d] * p_.window_dilation[d] * p_.in_spatial[d];
        }
        tap[static_cast<size_t>(w)] = offset;
        for (int d = p_.spatial - 1; d >= 0; --d) {
          if (++k[d] < p_.window[d]) break;
          k[d] = 0;
        }
      }
      for (int d = 0; d < p_.spatial; ++d) undilated = undilated && p_.base_dilation[d] == 1;
    }
    // The input features each window position reads for each row of a
    // group (null where it reads padding or a hole), and where each row's
    // output goes.
    const int64_t taps = window_positions_;
    std::vector<const T*> src(static_cast<size_t>(kRows * taps));
    T* dst[kRows];
    for (int64_t r0 = begin; r0 < end; r0 += kRows) {
      const int64_t rows = std::min<int64_t>(kRows, end - r0);
      for (int64_t q = 0; q < rows; ++q) {
        int64_t b;
        std::array<int64_t, ConvPlan::kMaxSpatial> o{0, 0, 0}, k{0, 0, 0};
        Position(r0 + q, b, o);
        int64_t to = b * p_.out_batch;
        for (int d = 0; d < p_.spatial; ++d) to += o[d] * p_.out_spatial[d];
        dst[q] = out_ + to;
        const T* batch = in_ + b * p_.in_batch;
        bool inside = undilated;
        int64_t origin = 0;
        for (int d = 0; d < p_.spatial && inside; ++d) {
          const int64_t first = o[d] * p_.stride[d] - p_.pad_low[d];
          const int64_t last = first + (p_.window[d] - 1) * p_.window_dilation[d];
          inside = first >= 0 && last < p_.in_size[d];
          origin += first * p_.in_spatial[d];
        }
        const T** row_src = src.data() + q * taps;
        for (int64_t w = 0; w < taps; ++w) {
          int64_t at = 0;
          if (inside) {
            row_src[w] = batch + origin + tap[static_cast<size_t>(w)];
          } else {
            row_src[w] = InputAt(o, k, &at) ? batch + at : nullptr;
            for (int d = p_.spatial - 1; d >= 0; --d) {
              if (++k[d] < p_.window[d]) break;
              k[d] = 0;
            }
          }
        }
      }
      int64_t f0 = 0;
      if (rows == kRows) {
        for (; f0 + kVectors * kLanes <= og; f0 += kVectors * kLanes) {
          FewInputsVectors<Bytes, kVectors, kRows>(src.data(), f0, dst);
        }
        for (; f0 + kLanes <= og; f0 += kLanes) {
          FewInputsVectors<Bytes, 1, kRows>(src.data(), f0, dst);
        }
      }
      for (int64_t q = 0; q < rows; ++q) {
        const T* const* row_src = src.data() + q * taps;
        int64_t f = f0;
        for (; f + kLanes <= og; f += kLanes) {
          FewInputsVectors<Bytes, 1, 1>(row_src, f, dst + q);
        }
        for (; f < og; ++f) {
          T acc = T(0);
          for (int64_t w = 0; w < taps; ++w) {
            const T* x = row_src[w];
            if (x == nullptr) continue;
            for (int64_t i = 0; i < ig; ++i) acc += x[i] * packed_.data()[(w * ig + i) * og + f];
          }
          dst[q][f] = acc;
        }
      }
    }
  }

  // Features [f0, f0 + N vectors) of R output rows into dst[0..R), summed
  // in R x N vector registers (R rows share each load of the kernel and
  // give the FMA unit chains to interleave); src: R rows of FewInputsRows'
  // input features per window position.
  template <int Bytes, int N, int R>
  __attribute__((always_inline)) void FewInputsVectors(const T* const* src, int64_t f0,
                                                       T* const* dst) const {
    using V = typename Vec<T, Bytes>::V;
    constexpr int64_t kLanes = Bytes / static_cast<int64_t>(sizeof(T));
    const int64_t ig = p_.in_features, og = p_.out_features, taps = window_positions_;
    V acc[R][N] = {};
    for (int64_t w = 0; w < taps; ++w) {
      const T* x[R];
      bool all = true;
      for (int r = 0; r < R; ++r) {
        x[r] = src[r * taps + w];
        all = all && x[r] != nullptr;
      }
      const T* kw = packed_.data() + w * ig * og + f0;
      if (all) {
        for (int64_t i = 0; i < ig; ++i, kw += og) {
          V k[N];
          for (int v = 0; v < N; ++v) std::memcpy(&k[v], kw + v * kLanes, sizeof(V));
          for (int r = 0; r < R; ++r) {
            for (int v = 0; v < N; ++v) acc[r][v] += x[r][i] * k[v];
          }
        }
      } else {
        for (int64_t i = 0; i < ig; ++i, kw += og) {
          V k[N];
          for (int v = 0; v < N; ++v) std::memcpy(&k[v], kw + v * kLanes, sizeof(V));
          for (int r = 0; r < R; ++r) {
            if (x[r] == nullptr) continue;
            for (int v = 0; v < N; ++v) acc[r][v] += x[r][i] * k[v];
          }
        }
      }
    }
    for (int r = 0; r < R; ++r) std::memcpy(dst[r] + f0, acc[r], sizeof(acc[r]));
  }

  // The direct loops' frame: each output position's `width` contiguous
  // features zeroed, then `add(dst, src, w)` for every window position w
  // that reads the input (src: the input features it reads there), output
  // positions over the workers.
  template <typename Add>
  void DirectRows(int64_t width, Add&& add) const {
    const int64_t rows = p_.batch * positions_;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, width));
    ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t b;
        std::array<int64_t, ConvPlan::kMaxSpatial> o{0, 0, 0}, k{0, 0, 0};
        Position(r, b, o);
        int64_t to = b * p_.out_batch;
        for (int d = 0; d < p_.spatial; ++d) to += o[d] * p_.out_spatial[d];
        T* dst = out_ + to;
        std::fill(dst, dst + width, T(0));
        const T* batch = in_ + b * p_.in_batch;
        for (int64_t w = 0; w < window_positions_; ++w) {
          int64_t at = 0;
          if (InputAt(o, k, &at)) add(dst, batch + at, w);
          for (int d = p_.spatial - 1; d >= 0; --d) {
            if (++k[d] < p_.window[d]) break;
            k[d] = 0;
          }
        }
      }
    });
  }

  // packed_[g][(k, i)][f] = kernel[i, g*og + f, k'] with k the window
  // position (row-major) and k' it reversed where asked.
  void Pack(const T* kernel) {
    packed_.resize(static_cast<size_t>(p_.groups * row_ * p_.out_features));
    std::array<int64_t, ConvPlan::kMaxSpatial> k{0, 0, 0};
    for (int64_t w = 0; w < window_positions_; ++w) {
      int64_t base = 0;
      for (int d = 0; d < p_.spatial; ++d) {
        const int64_t kd = p_.reversed[d] ? p_.window[d] - 1 - k[d] : k[d];
        base += kd * p_.kernel_spatial[d];
      }
      for (int64_t g = 0; g < p_.groups; ++g) {
        T* dst = packed_.data() + (g * row_ + w * p_.in_features) * p_.out_features;
        for (int64_t i = 0; i < p_.in_features; ++i) {
          for (int64_t f = 0; f < p_.out_features; ++f) {
            dst[i * p_.out_features + f] =
                kernel[base + i * p_.kernel_in + (g * p_.out_features + f) * p_.kernel_out];
          }
        }
      }
      for (int d = p_.spatial - 1; d >= 0; --d) {
        if (++k[d] < p_.window[d]) break;
        k[d] = 0;
      }
    }
  }

  // The output position of row r: its batch and spatial indices.
  void Position(int64_t r, int64_t& b, std::array<int64_t, ConvPlan::kMaxSpatial>& o) const {
    b = r / positions_;
    int64_t rest = r % positions_;
    for (int d = p_.spatial - 1; d >= 0; --d) {
      o[d] = rest % p_.out_size[d];
      rest /= p_.out_size[d];
    }
  }

  void Gather(int64_t g, int64_t r0, int64_t count, T* patches) const {
    const int64_t ig = p_.in_features;
    for (int64_t r = 0; r < count; ++r) {
      int64_t b;
      std::array<int64_t, ConvPlan::kMaxSpatial> o{0, 0, 0}, k{0, 0, 0};
      Position(r0 + r, b, o);
      T* row = patches + r * row_;
      const T* batch = in_ + b * p_.in_batch + g * ig * p_.in_feature;
      for (int64_t w = 0; w < window_positions_; ++w) {
        int64_t at = 0;
        bool inside = true;
        for (int d = 0; d < p_.spatial && inside; ++d) {
          const int64_t pos = o[d] * p_.stride[d] + k[d] * p_.window_dilation[d] - p_.pad_low[d];
          const int64_t i = pos / p_.base_dilation[d];
          inside = pos >= 0 && pos % p_.base_dilation[d] == 0 && i < p_.in_size[d];
          at += i * p_.in_spatial[d];
        }
        T* dst = row + w * ig;
        if (!inside) {
          std::fill(dst, dst + ig, T(0));
        } else if (p_.in_feature == 1) {
          std::memcpy(dst, batch + at, static_cast<size_t>(ig) * sizeof(T));
        } else {
          for (int64_t i = 0; i < ig; ++i) dst[i] = batch[at + i * p_.in_feature];
        }
        for (int d = p_.spatial - 1; d >= 0; --d) {
          if (++k[d] < p_.window[d]) break;
          k[d] = 0;
        }
      }
    }
  }

  void Scatter(int64_t g, int64_t r0, int64_t count, const T* results) const {
    const int64_t og = p_.out_features;
    for (int64_t r = 0; r < count; ++r) {
      int64_t b;
      std::array<int64_t, ConvPlan::kMaxSpatial> o{0, 0, 0};
      Position(r0 + r, b, o);
      int64_t at = b * p_.out_batch + g * og * p_.out_feature;
      for (int d = 0; d < p_.spatial; ++d) at += o[d] * p_.out_spatial[d];
      const T* src = results + r * og;
      if (p_.out_feature == 1) {
        std::memcpy(out_ + at, src, static_cast<size_t>(og) * sizeof(T));
      } else {
        for (int64_t f = 0; f < og; ++f) out_[at + f * p_.out_feature] = src[f];
      }
    }
  }

  const ConvPlan& p_;
  const T* in_;
  T* out_;
  int64_t positions_, window_positions_, row_ = 0;
  std::vector<T> packed_;
};

}  // namespace

int64_t ConvPlan::InputElements() const {
  int64_t span = Span(batch, in_batch) + Span(groups * in_features, in_feature);
  for (int d = 0; d < spatial; ++d) span += Span(in_size[d], in_spatial[d]);
  return span + 1;
}

int64_t ConvPlan::KernelElements() const {
  int64_t span = Span(in_features, kernel_in) + Span(groups * out_features, kernel_out);
  for (int d = 0; d < spatial; ++d) span += Span(window[d], kernel_spatial[d]);
  return span + 1;
}

int64_t ConvPlan::OutputElements() const {
  int64_t span = Span(batch, out_batch) + Span(groups * out_features, out_feature);
  for (int d = 0; d < spatial; ++d) span += Span(out_size[d], out_spatial[d]);
  return span + 1;
}

std::string ConvPlan::Invalid() const {
  if (spatial < 0 || spatial > kMaxSpatial) return "spatial dimensions out of range";
  if (batch < 1 || groups < 1 || in_features < 1 || out_features < 1) return "an empty dimension";
  for (int d = 0; d < spatial; ++d) {
    if (in_size[d] < 1 || out_size[d] < 1 || window[d] < 1) return "an empty spatial dimension";
    if (stride[d] < 1 || base_dilation[d] < 1 || window_dilation[d] < 1) {
      return "a stride or dilation below 1";
    }
  }
  return "";
}

std::string ConvPlan::ToString() const {
  auto dims = [&](const Dims& v) {
    std::string s;
    for (int d = 0; d < spatial; ++d) s += (d ? "x" : "") + std::to_string(v[d]);
    return s.empty() ? std::string("-") : s;
  };
  return std::string(f64 ? "f64 " : "f32 ") + std::to_string(batch) + "x[" + dims(in_size) + "] " +
         std::to_string(groups * in_features) + "->" + std::to_string(groups * out_features) + "/" +
         std::to_string(groups) + " window " + dims(window) + " stride " + dims(stride) + " out [" +
         dims(out_size) + "]";
}

void RunConv(const ConvPlan& plan, const void* in, const void* kernel, void* out) {
  if (plan.f64) {
    Conv<double>(plan, static_cast<const double*>(in), static_cast<const double*>(kernel),
                 static_cast<double*>(out))
        .Run();
  } else {
    Conv<float>(plan, static_cast<const float*>(in), static_cast<const float*>(kernel),
                static_cast<float*>(out))
        .Run();
  }
}

}  // namespace uir::runtime
