#pragma once
// Matrix products in static array expressions. matvec(A, x) multiplies an array variable bound
// to a matrix (a two-dimensional argument, whole or viewed) by one bound to a vector, matmul(A, B)
// two bound to matrices (operands that are expressions run in stages: array/operands.hpp):
//
//   auto [W, x, b] = nabla::array_variables<3>();
//   auto loss = sum(square(tanh(matvec(W, x) + b)));
//   auto [v, gW, gx, gb] = nabla::value_and_grad(loss, w, xs, bs);   // w: xt::xtensor<double, 2>
//
// A product is a boundary of fusion, as in the compilers that fuse element-wise code: it is
// computed first, once, into an array of its own; the expression then runs over those arrays as
// over extra arguments, fused as usual; and its gradient with respect to each product's value,
// dY, is pulled back after: dx += A^T dy in a pass over the matrix, then dA = dy x^T written in
// a pass of its own; or dA = dY B^T and dB = A^T dY (stored where nothing else wrote the
// gradient, added otherwise). Where one fused loop alone reads a matvec's value, the product's
// rows are computed inside that loop, batch by batch, and their share of dx added while they are
// in cache, so the matrix is read once. The same kernels serve the tape's var_matrix
// (array/matrix.hpp).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "evaluate.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace nabla {

namespace detail {

// sum_j a[j] b[j] over n elements, four accumulators.
template <int = 0>
double dot_kernel(const double* a, const double* b, std::size_t n) {
    std::size_t j = 0;
    double total = 0.0;
#if NABLA_ARRAY_LANES
    constexpr std::size_t w = width<lanes>;
    lanes s0(0.0), s1(0.0), s2(0.0), s3(0.0);
    for (; j + 4 * w <= n; j += 4 * w) {
        s0 = fma(load<lanes>(a + j), load<lanes>(b + j), s0);
        s1 = fma(load<lanes>(a + j + w), load<lanes>(b + j + w), s1);
        s2 = fma(load<lanes>(a + j + 2 * w), load<lanes>(b + j + 2 * w), s2);
        s3 = fma(load<lanes>(a + j + 3 * w), load<lanes>(b + j + 3 * w), s3);
    }
    for (; j + w <= n; j += w)
        s0 = fma(load<lanes>(a + j), load<lanes>(b + j), s0);
    total = add_lanes((s0 + s1) + (s2 + s3));
#endif
    for (; j < n; ++j)
        total += a[j] * b[j];
    return total;
}

#if NABLA_ARRAY_LANES
// The elements of a matrix's rows before the first at a batch's alignment (at most n), where its
// rows, `stride` apart, all share one alignment; else 0. Kernels that stream a matrix from
// beyond the L1 do these alone, so that no load or store of the matrix spans two cache lines
// (large std::vector allocations start 16 bytes past one; RESULTS.md).
inline std::size_t aligning_head(const double* p, std::size_t stride, std::size_t n) {
    constexpr std::size_t bytes = sizeof(lanes);
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    if (address % sizeof(double) != 0 || (stride * sizeof(double)) % bytes != 0)
        return 0;
    return std::min(n, (bytes - address % bytes) % bytes / sizeof(double));
}
#endif

// y = A x for an m x n A, row-major with rows `stride` apart: four rows at a time, so that each
// batch of x loaded serves four rows (the rows stream from memory once).
template <int = 0>
void gemv_kernel(
    const double* a, std::size_t stride, const double* x, std::size_t m, std::size_t n, double* y) {
    std::size_t i = 0;
#if NABLA_ARRAY_LANES
    constexpr std::size_t w = width<lanes>;
    const std::size_t head = m >= 4 ? aligning_head(a, stride, n) : 0;
    for (; i + 4 <= m; i += 4) {
        const double* r0 = a + i * stride;
        const double* r1 = r0 + stride;
        const double* r2 = r1 + stride;
        const double* r3 = r2 + stride;
        double h0 = 0.0, h1 = 0.0, h2 = 0.0, h3 = 0.0;
        std::size_t j = 0;
        for (; j < head; ++j) {
            h0 += r0[j] * x[j];
            h1 += r1[j] * x[j];
            h2 += r2[j] * x[j];
            h3 += r3[j] * x[j];
        }
        lanes s0(0.0), s1(0.0), s2(0.0), s3(0.0);
        for (; j + w <= n; j += w) {
            const lanes xv = load<lanes>(x + j);
            s0 = fma(load<lanes>(r0 + j), xv, s0);
            s1 = fma(load<lanes>(r1 + j), xv, s1);
            s2 = fma(load<lanes>(r2 + j), xv, s2);
            s3 = fma(load<lanes>(r3 + j), xv, s3);
        }
        double t0 = h0 + add_lanes(s0), t1 = h1 + add_lanes(s1), t2 = h2 + add_lanes(s2),
               t3 = h3 + add_lanes(s3);
        for (; j < n; ++j) {
            t0 += r0[j] * x[j];
            t1 += r1[j] * x[j];
            t2 += r2[j] * x[j];
            t3 += r3[j] * x[j];
        }
        y[i] = t0;
        y[i + 1] = t1;
        y[i + 2] = t2;
        y[i + 3] = t3;
    }
#endif
    for (; i < m; ++i)
        y[i] = dot_kernel(a + i * stride, x, n);
}

// y[j] += s x[j] over n elements.
template <int = 0>
void axpy_kernel(double s, const double* x, double* y, std::size_t n) {
    std::size_t j = 0;
#if NABLA_ARRAY_LANES
    const lanes sb(s);
    for (; j + width<lanes> <= n; j += width<lanes>)
        store_lanes(y + j, fma(sb, load<lanes>(x + j), load<lanes>(y + j)));
#endif
    for (; j < n; ++j)
        y[j] += s * x[j];
}

// C = op(A) B, or C += op(A) B where Add: C is m x n (rows c_stride apart), B k x n (rows b_stride
// apart), and op(A)(i, t) = a[i * a_row + t * a_col], so that A or its transpose is read where it
// is. R rows of C and four batches of its columns at a time: each element of op(A) is broadcast
// against four batches of a row of B, sixteen accumulators in registers.
template <bool Add, std::size_t R>
NABLA_ALWAYS_INLINE void gemm_rows(std::size_t i,
                                   std::size_t k,
                                   std::size_t n,
                                   const double* a,
                                   std::size_t a_row,
                                   std::size_t a_col,
                                   const double* b,
                                   std::size_t b_stride,
                                   double* c,
                                   std::size_t c_stride) {
    const auto put = [](double* p, const auto& v) NABLA_INLINE_LAMBDA {
        if constexpr (Add)
            add_to(p, v);
        else
            store_lanes(p, v);
    };
    std::size_t j = 0;
#if NABLA_ARRAY_LANES
    constexpr std::size_t w = width<lanes>;
    for (; j + 4 * w <= n; j += 4 * w) {
        std::array<std::array<lanes, 4>, R> acc{};
        for (std::size_t t = 0; t < k; ++t) {
            const double* bt = b + t * b_stride + j;
            const lanes b0 = load<lanes>(bt), b1 = load<lanes>(bt + w),
                        b2 = load<lanes>(bt + 2 * w), b3 = load<lanes>(bt + 3 * w);
            each_index<R>([&]<std::size_t r>(std::integral_constant<std::size_t, r>)
                              NABLA_INLINE_LAMBDA {
                                  const lanes s(a[(i + r) * a_row + t * a_col]);
                                  acc[r][0] = fma(s, b0, acc[r][0]);
                                  acc[r][1] = fma(s, b1, acc[r][1]);
                                  acc[r][2] = fma(s, b2, acc[r][2]);
                                  acc[r][3] = fma(s, b3, acc[r][3]);
                              });
        }
        each_index<R>([&]<std::size_t r>(std::integral_constant<std::size_t, r>)
                          NABLA_INLINE_LAMBDA {
                              double* row = c + (i + r) * c_stride + j;
                              put(row, acc[r][0]);
                              put(row + w, acc[r][1]);
                              put(row + 2 * w, acc[r][2]);
                              put(row + 3 * w, acc[r][3]);
                          });
    }
    for (; j + w <= n; j += w) {
        std::array<lanes, R> acc{};
        for (std::size_t t = 0; t < k; ++t) {
            const lanes bt = load<lanes>(b + t * b_stride + j);
            each_index<R>([&]<std::size_t r>(std::integral_constant<std::size_t, r>)
                              NABLA_INLINE_LAMBDA {
                                  acc[r] = fma(lanes(a[(i + r) * a_row + t * a_col]), bt, acc[r]);
                              });
        }
        each_index<R>([&]<std::size_t r>(std::integral_constant<std::size_t, r>)
                          NABLA_INLINE_LAMBDA { put(c + (i + r) * c_stride + j, acc[r]); });
    }
#endif
    for (; j < n; ++j)
        for (std::size_t r = 0; r < R; ++r) {
            double total = 0.0;
            for (std::size_t t = 0; t < k; ++t)
                total += a[(i + r) * a_row + t * a_col] * b[t * b_stride + j];
            put(c + (i + r) * c_stride + j, total);
        }
}

// Whether gemm_kernel copies B into panels: large enough products, with SIMD.
inline bool gemm_packs(std::size_t m, std::size_t k, std::size_t n) {
    return NABLA_ARRAY_LANES && m >= 8 && k >= 8 && n >= 4 * width<lanes>;
}

// op(B)(t, j) = b[t * b_row + j * b_col]: B or its transpose (the latter only where gemm_packs).
template <bool Add>
void gemm_kernel(std::size_t m,
                 std::size_t k,
                 std::size_t n,
                 const double* a,
                 std::size_t a_row,
                 std::size_t a_col,
                 const double* b,
                 std::size_t b_row,
                 std::size_t b_col,
                 double* c,
                 std::size_t c_stride) {
#if NABLA_ARRAY_LANES
    constexpr std::size_t panel = 4 * width<lanes>;
    if (gemm_packs(m, k, n)) {
        // B in panels of `panel` columns, each copied into aligned memory, its rows one after
        // another, and read by every block of four rows of C (a panel of 1024 rows is 256 KiB,
        // in the second-level cache); a transposed A copied into rows once. Unaligned rows of B
        // otherwise split half the loads across cache lines.
        const auto aligned = [](std::vector<double>& v) {
            const auto p = reinterpret_cast<std::uintptr_t>(v.data());
            return reinterpret_cast<double*>((p + 63) & ~std::uintptr_t{63});
        };
        std::vector<double> b_memory(k * panel + 8);
        double* const bp = aligned(b_memory);
        std::vector<double> a_memory;
        if (a_col != 1) {
            a_memory.resize(m * k);
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t t = 0; t < k; ++t)
                    a_memory[i * k + t] = a[i * a_row + t * a_col];
            a = a_memory.data();
            a_row = k;
            a_col = 1;
        }
        std::size_t j = 0;
        const auto pack = [&](std::size_t j, std::size_t width) {
            if (b_col == 1) {
                for (std::size_t t = 0; t < k; ++t)
                    std::copy_n(b + t * b_row + j, width, bp + t * panel);
            } else {
                for (std::size_t q = 0; q < width; ++q)
                    for (std::size_t t = 0; t < k; ++t)
                        bp[t * panel + q] = b[t * b_row + (j + q) * b_col];
            }
        };
        for (; j + panel <= n; j += panel) {
            pack(j, panel);
            std::size_t i = 0;
            for (; i + 4 <= m; i += 4)
                gemm_rows<Add, 4>(i, k, panel, a, a_row, 1, bp, panel, c + j, c_stride);
            for (; i < m; ++i)
                gemm_rows<Add, 1>(i, k, panel, a, a_row, 1, bp, panel, c + j, c_stride);
        }
        if (j < n) {
            // The last columns, fewer than a panel, packed likewise (the panel's width apart).
            pack(j, n - j);
            std::size_t i = 0;
            for (; i + 4 <= m; i += 4)
                gemm_rows<Add, 4>(i, k, n - j, a, a_row, 1, bp, panel, c + j, c_stride);
            for (; i < m; ++i)
                gemm_rows<Add, 1>(i, k, n - j, a, a_row, 1, bp, panel, c + j, c_stride);
        }
        return;
    }
#endif
    std::vector<double> b_rows;
    if (b_col != 1) {  // B read by columns: copied into rows first
        b_rows.resize(k * n);
        for (std::size_t t = 0; t < k; ++t)
            for (std::size_t j = 0; j < n; ++j)
                b_rows[t * n + j] = b[t * b_row + j * b_col];
        b = b_rows.data();
        b_row = n;
    }
    std::size_t i = 0;
    for (; i + 4 <= m; i += 4)
        gemm_rows<Add, 4>(i, k, n, a, a_row, a_col, b, b_row, c, c_stride);
    for (; i < m; ++i)
        gemm_rows<Add, 1>(i, k, n, a, a_row, a_col, b, b_row, c, c_stride);
}

// C = X Y^T, or C += X Y^T where Add: C(i, l) is the dot product of row i of X (m x n) and row l
// of Y (p x n), four rows of each at a time (sixteen accumulators), the lanes summed at the end.
template <bool Add, std::size_t R, std::size_t Q>
NABLA_ALWAYS_INLINE void gemm_nt_block(std::size_t i,
                                       std::size_t l,
                                       std::size_t n,
                                       const double* x,
                                       std::size_t x_stride,
                                       const double* y,
                                       std::size_t y_stride,
                                       double* c,
                                       std::size_t c_stride) {
    std::array<std::array<double, Q>, R> total{};
    std::size_t j = 0;
#if NABLA_ARRAY_LANES
    constexpr std::size_t w = width<lanes>;
    std::array<std::array<lanes, Q>, R> acc{};
    for (; j + w <= n; j += w) {
        std::array<lanes, Q> yq{};
        each_index<Q>([&]<std::size_t q>(std::integral_constant<std::size_t, q>)
                          NABLA_INLINE_LAMBDA { yq[q] = load<lanes>(y + (l + q) * y_stride + j); });
        each_index<R>(
            [&]<std::size_t r>(std::integral_constant<std::size_t, r>) NABLA_INLINE_LAMBDA {
                const lanes xr = load<lanes>(x + (i + r) * x_stride + j);
                each_index<Q>([&]<std::size_t q>(std::integral_constant<std::size_t, q>)
                                  NABLA_INLINE_LAMBDA { acc[r][q] = fma(xr, yq[q], acc[r][q]); });
            });
    }
    each_index<R>([&]<std::size_t r>(std::integral_constant<std::size_t, r>) NABLA_INLINE_LAMBDA {
        each_index<Q>([&]<std::size_t q>(std::integral_constant<std::size_t, q>)
                          NABLA_INLINE_LAMBDA { total[r][q] = add_lanes(acc[r][q]); });
    });
#endif
    for (; j < n; ++j)
        for (std::size_t r = 0; r < R; ++r)
            for (std::size_t q = 0; q < Q; ++q)
                total[r][q] += x[(i + r) * x_stride + j] * y[(l + q) * y_stride + j];
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t q = 0; q < Q; ++q) {
            double& out = c[(i + r) * c_stride + l + q];
            out = Add ? out + total[r][q] : total[r][q];
        }
}

// C = X Y^T (X m x n, Y p x n), or C += X Y^T where Add: the packed product where it is large
// enough (Y read as a transposed B), dot products otherwise.
template <bool Add>
void gemm_xyt(std::size_t m,
              std::size_t p,
              std::size_t n,
              const double* x,
              std::size_t x_stride,
              const double* y,
              std::size_t y_stride,
              double* c,
              std::size_t c_stride) {
    if (gemm_packs(m, n, p)) {
        gemm_kernel<Add>(m, n, p, x, x_stride, 1, y, 1, y_stride, c, c_stride);
        return;
    }
    std::size_t i = 0;
    for (; i + 4 <= m; i += 4) {
        std::size_t l = 0;
        for (; l + 4 <= p; l += 4)
            gemm_nt_block<Add, 4, 4>(i, l, n, x, x_stride, y, y_stride, c, c_stride);
        for (; l < p; ++l)
            gemm_nt_block<Add, 4, 1>(i, l, n, x, x_stride, y, y_stride, c, c_stride);
    }
    for (; i < m; ++i)
        for (std::size_t l = 0; l < p; ++l)
            gemm_nt_block<Add, 1, 1>(i, l, n, x, x_stride, y, y_stride, c, c_stride);
}

// The size in bytes of a cache size as Linux's sysfs writes it ("32768K", "1M", "512"); 0 for
// anything else.
inline std::size_t parse_cache_size(const char* text) {
    std::size_t bytes = 0;
    const char* c = text;
    for (; *c >= '0' && *c <= '9'; ++c)
        bytes = bytes * 10 + static_cast<std::size_t>(*c - '0');
    if (c == text)
        return 0;
    switch (*c) {
    case 'K':
        return bytes << 10;
    case 'M':
        return bytes << 20;
    case 'G':
        return bytes << 30;
    case '\0':
    case '\n':
        return bytes;
    default:
        return 0;
    }
}

// The bytes of this machine's level-3 cache, from sysfs; 0 where it says none. Virtual machines
// misreport it to sysconf(_SC_LEVEL3_CACHE_SIZE) (384 MiB for a 32 MiB L3), not to sysfs.
inline std::size_t level3_cache_bytes() {
    for (int index = 0; index < 8; ++index) {
        const std::string dir =
            "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
        const auto read = [&](const char* name) {
            std::string text;
            if (std::FILE* file = std::fopen((dir + name).c_str(), "r")) {
                char line[32] = {};
                if (std::fgets(line, sizeof line, file) != nullptr)
                    text = line;
                std::fclose(file);
            }
            return text;
        };
        if (read("level") == "3\n")
            return parse_cache_size(read("size").c_str());
    }
    return 0;
}

// The elements of a stored gradient from which its stores bypass the cache: where the matrix
// and its gradient (16 bytes an element) fill the L3, a gradient stored through the cache is
// read from memory first and written back later; where they fit, it stays in the cache for what
// reads it next (RESULTS.md). Without a size to go by, 2^19 (a 724^2 matrix).
inline std::size_t stream_threshold_for(std::size_t cache_bytes) {
    return cache_bytes == 0 ? std::size_t{1} << 19 : cache_bytes / (2 * sizeof(double));
}

// Stores that bypass the cache, for results larger than it that are not read again soon: the
// elements from which they are used (0: never; set once from the L3's size), and the stores.
inline std::size_t& stream_threshold() {
    static std::size_t elements = stream_threshold_for(level3_cache_bytes());
    return elements;
}
// The elements of the matrices (two-dimensional arguments) of the gradient being computed on this
// thread: a gradient of several matrices, each within the cache but together beyond it, streams
// their gradients too.
inline thread_local std::size_t matrix_elements_in_flight = 0;
struct matrices_in_flight {
    std::size_t before = matrix_elements_in_flight;
    template <class... Args>
    explicit matrices_in_flight(const Args&... args) {
        std::size_t elements = 0;
        ((elements += TwoDimensional<Args> ? static_cast<std::size_t>(args.size()) : 0), ...);
        matrix_elements_in_flight = elements;
    }
    matrices_in_flight(const matrices_in_flight&) = delete;
    matrices_in_flight& operator=(const matrices_in_flight&) = delete;
    ~matrices_in_flight() { matrix_elements_in_flight = before; }
};
inline bool stream_stores(std::size_t elements) {
    return stream_threshold() != 0 &&
           std::max(elements, matrix_elements_in_flight) >= stream_threshold();
}
#if NABLA_ARRAY_LANES && (defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__))
inline bool stream_aligned(const double* p) {
    return reinterpret_cast<std::uintptr_t>(p) % sizeof(lanes) == 0;
}
template <class L>
void stream_lanes(double* p, const L& v) {
#if defined(__AVX512F__)
    if constexpr (sizeof(L) == 64) {
        _mm512_stream_pd(p, v);
        return;
    }
#endif
#if defined(__AVX__)
    if constexpr (sizeof(L) == 32) {
        _mm256_stream_pd(p, v);
        return;
    }
#endif
    if constexpr (sizeof(L) == 16)
        _mm_stream_pd(p, v);
    else
        v.store_aligned(p);
}
inline void stream_fence() {
    _mm_sfence();
}
#else
inline bool stream_aligned(const double*) {
    return true;
}
template <class L>
void stream_lanes(double* p, const L& v) {
    store_lanes(p, v);
}
inline void stream_fence() {}
#endif

// The pullback of y = A x for an m x n A (rows `stride` apart) in one pass over A: dA = dy x^T,
// stored (Add false) or added (dA's rows `da_stride` apart), where Matrix; dx += A^T dy where
// Vector. Four rows a pass, so that each batch of x and of dx is loaded once for four rows.
template <bool Matrix, bool Add, bool Vector>
void matvec_pullback_rows(const double* a,
                          std::size_t stride,
                          std::size_t m,
                          std::size_t n,
                          const double* x,
                          const double* dy,
                          double* da,
                          std::size_t da_stride,
                          double* dx) {
    const auto put = [](double* p, const auto& v) {
        if constexpr (Add)
            add_to(p, v);
        else
            store_lanes(p, v);
    };
    std::size_t i = 0;
#if NABLA_ARRAY_LANES
    constexpr std::size_t w = width<lanes>;
    if constexpr (!Vector) {
        // dA alone: a row at a time, one stream of stores (four rows' streams at once, rows of
        // 2 KiB apart, ran 1.6x slower on a Xeon). Stored, and larger than stream_threshold(),
        // it bypasses the cache: no read of the lines it overwrites.
        const bool stream = !Add && stream_stores(m * n);
        for (; i < m; ++i) {
            double* g = da + i * da_stride;
            const lanes d(dy[i]);
            std::size_t j = 0;
            // Aligned stores, streamed or not: none spans two cache lines.
            for (; j < n && !stream_aligned(g + j); ++j)
                put(g + j, dy[i] * x[j]);
            if (stream) {
                for (; j + w <= n; j += w)
                    stream_lanes(g + j, d * load<lanes>(x + j));
            }
            for (; j + w <= n; j += w)
                put(g + j, d * load<lanes>(x + j));
            for (; j < n; ++j)
                put(g + j, dy[i] * x[j]);
        }
        if (stream)
            stream_fence();
        return;
    }
    const std::size_t head = m >= 4 ? aligning_head(a, stride, n) : 0;
    for (; i + 4 <= m; i += 4) {
        const double* r0 = a + i * stride;
        const double* r1 = r0 + stride;
        const double* r2 = r1 + stride;
        const double* r3 = r2 + stride;
        double* g0 = Matrix ? da + i * da_stride : nullptr;
        double* g1 = Matrix ? g0 + da_stride : nullptr;
        double* g2 = Matrix ? g1 + da_stride : nullptr;
        double* g3 = Matrix ? g2 + da_stride : nullptr;
        const auto one = [&](std::size_t j) {
            if constexpr (Matrix) {
                put(g0 + j, dy[i] * x[j]);
                put(g1 + j, dy[i + 1] * x[j]);
                put(g2 + j, dy[i + 2] * x[j]);
                put(g3 + j, dy[i + 3] * x[j]);
            }
            if constexpr (Vector)
                dx[j] += dy[i] * r0[j] + dy[i + 1] * r1[j] + dy[i + 2] * r2[j] + dy[i + 3] * r3[j];
        };
        const lanes d0(dy[i]), d1(dy[i + 1]), d2(dy[i + 2]), d3(dy[i + 3]);
        std::size_t j = 0;
        for (; j < head; ++j)
            one(j);
        for (; j + w <= n; j += w) {
            if constexpr (Matrix) {
                const lanes xv = load<lanes>(x + j);
                put(g0 + j, d0 * xv);
                put(g1 + j, d1 * xv);
                put(g2 + j, d2 * xv);
                put(g3 + j, d3 * xv);
            }
            if constexpr (Vector) {
                lanes acc = load<lanes>(dx + j);
                acc = fma(d0, load<lanes>(r0 + j), acc);
                acc = fma(d1, load<lanes>(r1 + j), acc);
                acc = fma(d2, load<lanes>(r2 + j), acc);
                acc = fma(d3, load<lanes>(r3 + j), acc);
                store_lanes(dx + j, acc);
            }
        }
        for (; j < n; ++j)
            one(j);
    }
#endif
    for (; i < m; ++i) {
        const double* r = a + i * stride;
        for (std::size_t j = 0; j < n; ++j) {
            if constexpr (Matrix)
                put(da + i * da_stride + j, dy[i] * x[j]);
            if constexpr (Vector)
                dx[j] += dy[i] * r[j];
        }
    }
}

template <int = 0>
void matvec_pullback(const double* a,
                     std::size_t stride,
                     std::size_t m,
                     std::size_t n,
                     const double* x,
                     const double* dy,
                     double* da,
                     std::size_t da_stride,
                     bool add,
                     double* dx) {
    if (da != nullptr && dx != nullptr) {
        // Added to, dA is read and written with A in one pass. Stored, it is written in a pass
        // of its own after dx's pass over A: streams that only read or only write run faster
        // here than one that does both (3.5-4.0 products for the dense layer against 3.8-7.5).
        if (add) {
            matvec_pullback_rows<true, true, true>(a, stride, m, n, x, dy, da, da_stride, dx);
        } else {
            matvec_pullback_rows<false, false, true>(a, stride, m, n, x, dy, da, da_stride, dx);
            matvec_pullback_rows<true, false, false>(a, stride, m, n, x, dy, da, da_stride, dx);
        }
    } else if (da != nullptr) {
        if (add)
            matvec_pullback_rows<true, true, false>(a, stride, m, n, x, dy, da, da_stride, dx);
        else
            matvec_pullback_rows<true, false, false>(a, stride, m, n, x, dy, da, da_stride, dx);
    } else if (dx != nullptr) {
        matvec_pullback_rows<false, false, true>(a, stride, m, n, x, dy, da, da_stride, dx);
    }
}

// Dot product and y += a x, with nabla's SIMD kernels for doubles and element by element for
// dual numbers (the tape's arrays of them, array/matrix.hpp).
template <class T>
T dot_of(const T* a, const T* b, std::size_t n) {
    if constexpr (std::is_same_v<T, double>) {
        return dot_kernel(a, b, n);
    } else {
        T total(0.0);
        for (std::size_t i = 0; i < n; ++i)
            total += a[i] * b[i];
        return total;
    }
}
template <class T>
void axpy_of(const T& a, const T* x, T* y, std::size_t n) {
    if constexpr (std::is_same_v<T, double>) {
        axpy_kernel(a, x, y, n);
    } else {
        for (std::size_t i = 0; i < n; ++i)
            y[i] += a * x[i];
    }
}

// The LU factors of an n x n matrix with partial pivoting, P A = L U (L with a unit diagonal
// below, U on and above it, in one row-major array), and the solves they give.
template <class T = double>
struct lu_factors {
    std::vector<T> lu;
    std::vector<std::size_t> pivot;  // row k of P A is row pivot[k] of A
    std::size_t n = 0;

    // A's rows `stride` apart.
    lu_factors(const T* a, std::size_t size, std::size_t stride)
        : lu(size * size),
          pivot(size),
          n(size) {
        for (std::size_t i = 0; i < n; ++i)
            std::copy(a + i * stride, a + i * stride + n,
                      lu.begin() + static_cast<std::ptrdiff_t>(i * n));
        const auto magnitude = [](const T& x) {
            if constexpr (std::is_same_v<T, double>)
                return std::abs(x);
            else
                return std::abs(x.value);
        };
        for (std::size_t k = 0; k < n; ++k)
            pivot[k] = k;
        for (std::size_t k = 0; k < n; ++k) {
            std::size_t best = k;
            for (std::size_t i = k + 1; i < n; ++i)
                if (magnitude(lu[i * n + k]) > magnitude(lu[best * n + k]))
                    best = i;
            if (best != k) {
                std::swap_ranges(lu.begin() + static_cast<std::ptrdiff_t>(k * n),
                                 lu.begin() + static_cast<std::ptrdiff_t>(k * n + n),
                                 lu.begin() + static_cast<std::ptrdiff_t>(best * n));
                std::swap(pivot[k], pivot[best]);
            }
            const T d = lu[k * n + k];
            for (std::size_t i = k + 1; i < n; ++i) {
                const T l = lu[i * n + k] / d;
                lu[i * n + k] = l;
                axpy_of<T>(-l, lu.data() + k * n + k + 1, lu.data() + i * n + k + 1, n - k - 1);
            }
        }
    }
    // x = A^-1 b.
    std::vector<T> solve(const T* b) const {
        std::vector<T> x(n);
        for (std::size_t i = 0; i < n; ++i)
            x[i] = b[pivot[i]] - dot_of<T>(lu.data() + i * n, x.data(), i);
        for (std::size_t i = n; i-- > 0;)
            x[i] = (x[i] - dot_of<T>(lu.data() + i * n + i + 1, x.data() + i + 1, n - i - 1)) /
                   lu[i * n + i];
        return x;
    }
    // l = A^-T w: U^T z = w, L^T v = z, l = P^T v.
    std::vector<T> solve_transposed(const T* w) const {
        std::vector<T> z(w, w + n);
        for (std::size_t i = 0; i < n; ++i) {
            z[i] = z[i] / lu[i * n + i];
            axpy_of<T>(-z[i], lu.data() + i * n + i + 1, z.data() + i + 1, n - i - 1);
        }
        for (std::size_t i = n; i-- > 0;)
            for (std::size_t k = 0; k < i; ++k)
                z[k] -= lu[i * n + k] * z[i];
        std::vector<T> l(n);
        for (std::size_t i = 0; i < n; ++i)
            l[pivot[i]] = z[i];
        return l;
    }
};

template <class G>
struct product_predicate : std::bool_constant<is_product_v<G>> {};

template <class T>
inline constexpr bool is_array_leaf_v = false;
template <std::size_t Code>
inline constexpr bool is_array_leaf_v<placeholder<Code>> = is_array_leaf_code(Code);

// Whether a graph holds a product with an operand that is not an array variable (viewed or not),
// or a function of the caller's: these run in stages (array/operands.hpp).
template <class G>
inline constexpr bool has_operand_expressions = false;
template <class Rule, class... Ops>
inline constexpr bool has_operand_expressions<node<Rule, Ops...>> =
    is_custom_v<node<Rule, Ops...>> ||
    (is_product_v<node<Rule, Ops...>> ? (!is_array_leaf_v<Ops> || ...)
                                      : (has_operand_expressions<Ops> || ...));

template <class Body, class... Args>
auto operand_value(const array_expression<Body>& f, const Args&... args);
template <std::uint64_t Constants, bool Value, class Body, class... Args>
double operand_gradient(const array_expression<Body>& f,
                        const std::array<double*, sizeof...(Args)>& gradients,
                        const Args&... args);
template <std::uint64_t Constants, class Body, class Cotangent, class... Args>
void operand_vjp(const array_expression<Body>& f,
                 const std::array<double*, sizeof...(Args)>& gradients,
                 const Cotangent& w,
                 const Args&... args);
template <class Body, class Out, class... Args>
void operand_evaluate_into(const array_expression<Body>& f, Out& out, const Args&... args);

// The graph with product number k (of Products) read as argument N + k.
template <class Products, std::size_t N, class G>
struct substitute {
    using type = G;
};
template <class Products, std::size_t N, class Rule, class... Ops>
struct substitute<Products, N, node<Rule, Ops...>> {
    using type = node<Rule, typename substitute<Products, N, Ops>::type...>;
};
template <class Products, std::size_t N, class A, class X>
struct substitute<Products, N, node<matvec_rule, A, X>> {
    using type =
        placeholder<array_leaf_code(N + index_of<Products, node<matvec_rule, A, X>>, 0, 0)>;
};
template <class Products, std::size_t N, class A, class B>
struct substitute<Products, N, node<matmul_rule, A, B>> {
    using type =
        placeholder<array_leaf_code(N + index_of<Products, node<matmul_rule, A, B>>, 0, 0)>;
};
template <class Products, std::size_t N, class A, class B>
struct substitute<Products, N, node<solve_rule, A, B>> {
    using type = placeholder<array_leaf_code(N + index_of<Products, node<solve_rule, A, B>>, 0, 0)>;
};

// A product's operands: the matrix A, and x (matvec), B (matmul) or b (solve).
template <class Product>
struct product_leaves;
template <class Rule, std::size_t A, std::size_t X>
struct product_leaves<node<Rule, placeholder<A>, placeholder<X>>> {
    static constexpr bool matrix_product = std::is_same_v<Rule, matmul_rule>;
    static constexpr bool solves = std::is_same_v<Rule, solve_rule>;
    static constexpr const char* name = Rule::name;
    static constexpr leaf_view matrix = decode_leaf(A);
    static constexpr leaf_view second = decode_leaf(X);
};

// One product's operands where they are in memory, views applied: A is rows x inner, the second
// operand inner x cols (cols 1 for a vector).
struct product_operands {
    const double* a;
    std::size_t a_stride;
    const double* b;
    std::size_t b_stride;
    std::size_t rows;
    std::size_t inner;
    std::size_t cols;
};

// The products' values, each in an array of its own, with its shape; a solve's LU factors, for
// its pullback.
template <std::size_t K>
struct product_values {
    std::array<std::vector<double>, K> y;
    std::array<extent, K> shape{};
    std::array<std::shared_ptr<const lu_factors<double>>, K> factors{};
};

// An expression's products, and the expression with each read as an extra argument.
template <class Body, class... Args>
struct product_plan {
    using graph = graph_t<Body>;
    using products = filter_t<product_predicate, schedule<graph>>;
    static constexpr std::size_t N = sizeof...(Args);
    static constexpr std::size_t K = products::size;
    using substituted_graph = typename substitute<products, N, graph>::type;
    using substituted_body =
        std::conditional_t<is_held_v<Body>,
                           held<substituted_graph, constant_type_t<Body>, constant_count<Body>>,
                           substituted_graph>;

    template <std::size_t J>
    using leaves = product_leaves<at<J, products>>;

    static constexpr std::uint64_t bit(std::size_t argument) {
        return argument < 64 ? std::uint64_t{1} << argument : 0;
    }
    // Bit k: argument k is read by a product.
    static constexpr std::uint64_t product_reads = [] {
        std::uint64_t m = 0;
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            ((m |= bit(leaves<J>::matrix.argument) | bit(leaves<J>::second.argument)), ...);
        }
        (std::make_index_sequence<K>{});
        return m;
    }();
    // Read by products and by nothing else: the pullbacks alone write their gradients.
    static constexpr std::uint64_t product_only = product_reads & ~read_mask<substituted_graph>;

    static constexpr bool checked = [] {
        constexpr std::uint64_t two_d = two_d_mask<Args...>();
        const auto each = [](auto test) {
            bool ok = true;
            [&]<std::size_t... J>(std::index_sequence<J...>) {
                ((ok = ok && test(leaves<J>{})), ...);
            }
            (std::make_index_sequence<K>{});
            return ok;
        };
        constexpr bool enough = each([](auto q) {
            return decltype(q)::matrix.argument < N && decltype(q)::second.argument < N;
        });
        static_assert(enough, "nabla: too few arrays: matvec(A, x), matmul(A, B) or solve(A, b) "
                              "reads an array variable whose index is not covered by the "
                              "arguments given.");
        static_assert(N + K <= 64, "nabla: an expression with products takes at most 64 arrays "
                                   "and products together.");
        const auto grid = [](std::size_t argument) {
            return ((two_d >> (argument % 64)) & 1) != 0;
        };
        constexpr bool matrices = each([&](auto q) { return grid(decltype(q)::matrix.argument); });
        static_assert(
            matrices,
            "nabla: the matrix A of matvec(A, x), matmul(A, B) or solve(A, b) is bound to a "
            "one-dimensional array; it takes a two-dimensional one (xt::xtensor<double, "
            "2>, nabla::matrix_ref).");
        constexpr bool seconds = each([&](auto q) {
            using Q = decltype(q);
            if constexpr (Q::matrix_product)
                return grid(Q::second.argument);
            else
                return !grid(Q::second.argument) && Q::second.begin1 == 0 && Q::second.trim1 == 0;
        });
        static_assert(seconds,
                      "nabla: matvec(A, x) and solve(A, b) take a vector x or b (one-dimensional, "
                      "viewed on one axis); matmul(A, B) a matrix B (two-dimensional).");
        return enough && N + K <= 64 && matrices && seconds;
    }();

    static auto substitute_body(const Body& b) {
        substituted_body r{};
        if constexpr (is_held_v<Body>)
            r.constants = b.constants;
        return r;
    }

    // Product J's operands; a shape_error if the views do not fit or the shapes disagree.
    template <std::size_t J>
    static product_operands operands(const std::array<argument_layout, N>& layouts) {
        using Q = leaves<J>;
        constexpr leaf_view m = Q::matrix;
        constexpr leaf_view v = Q::second;
        const argument_layout& a = layouts[m.argument];
        const argument_layout& b = layouts[v.argument];
        const auto view_error = [](const leaf_view& view, const argument_layout& l) {
            throw shape_error(std::string("nabla::") + Q::name + ": a view drops " +
                              std::to_string(view.begin + view.trim) + " rows and " +
                              std::to_string(view.begin1 + view.trim1) + " columns of a " +
                              std::to_string(l.rows) + " x " + std::to_string(l.cols) +
                              " array (argument " + std::to_string(view.argument) + ")");
        };
        if (a.rows < m.begin + m.trim || a.cols < m.begin1 + m.trim1)
            view_error(m, a);
        product_operands p{a.data + m.begin * a.stride + m.begin1,
                           a.stride,
                           nullptr,
                           b.stride,
                           a.rows - m.begin - m.trim,
                           a.cols - m.begin1 - m.trim1,
                           1};
        if constexpr (Q::matrix_product) {
            if (b.rows < v.begin + v.trim || b.cols < v.begin1 + v.trim1)
                view_error(v, b);
            p.b = b.data + v.begin * b.stride + v.begin1;
            const std::size_t inner = b.rows - v.begin - v.trim;
            p.cols = b.cols - v.begin1 - v.trim1;
            if (inner != p.inner)
                throw shape_error("nabla::matmul: a " + std::to_string(p.rows) + " x " +
                                  std::to_string(p.inner) + " matrix times a " +
                                  std::to_string(inner) + " x " + std::to_string(p.cols) +
                                  " matrix");
        } else {
            if (b.cols < v.begin + v.trim)
                throw shape_error(std::string("nabla::") + Q::name + ": a view drops " +
                                  std::to_string(v.begin + v.trim) + " elements of a vector of " +
                                  std::to_string(b.cols) + " (argument " +
                                  std::to_string(v.argument) + ")");
            p.b = b.data + v.begin;
            const std::size_t length = b.cols - v.begin - v.trim;
            if constexpr (Q::solves) {
                if (p.rows != p.inner || length != p.rows)
                    throw shape_error("nabla::solve: a " + std::to_string(p.rows) + " x " +
                                      std::to_string(p.inner) + " matrix and a vector of " +
                                      std::to_string(length) +
                                      " elements (the matrix is square, of the vector's length)");
            }
            if (length != p.inner)
                throw shape_error("nabla::matvec: a " + std::to_string(p.rows) + " x " +
                                  std::to_string(p.inner) + " matrix times a vector of " +
                                  std::to_string(length) + " elements");
        }
        return p;
    }

    // Every product's value, each in an array of its own.
    static product_values<K> values(const std::array<argument_layout, N>& layouts) {
        product_values<K> out;
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            (
                [&] {
                    const product_operands p = operands<J>(layouts);
                    std::vector<double>& y = out.y[J];
                    y.assign(p.rows * p.cols, 0.0);
                    if constexpr (leaves<J>::matrix_product) {
                        out.shape[J] = {p.rows, p.cols};
                        gemm_kernel<false>(p.rows, p.inner, p.cols, p.a, p.a_stride, 1, p.b,
                                           p.b_stride, 1, y.data(), p.cols);
                    } else if constexpr (leaves<J>::solves) {
                        out.shape[J] = {1, p.rows};
                        out.factors[J] =
                            std::make_shared<const lu_factors<double>>(p.a, p.rows, p.a_stride);
                        y = out.factors[J]->solve(p.b);
                    } else {
                        out.shape[J] = {1, p.rows};
                        gemv_kernel(p.a, p.a_stride, p.b, p.rows, p.inner, y.data());
                    }
                }(),
                ...);
        }
        (std::make_index_sequence<K>{});
        return out;
    }

    // Product J's value as an argument of the substituted expression.
    template <std::size_t J>
    static auto argument(const product_values<K>& v) {
        if constexpr (leaves<J>::matrix_product)
            return matrix_ref<const double>(v.y[J].data(), v.shape[J].rows, v.shape[J].cols,
                                            v.shape[J].cols);
        else
            return std::span<const double>(v.y[J]);
    }

    // The pullbacks of every product, given the adjoints of their values, into the gradients
    // (contiguous, shaped like the arguments) of the arguments not in Constants. written[k]:
    // gradient k already holds the rest of the expression's gradient; else it is written here
    // (stored where a product's operand is the whole argument, else zeroed first).
    template <std::uint64_t Constants>
    static void pull_back(const std::array<argument_layout, N>& layouts,
                          const product_values<K>& values,
                          const std::array<std::vector<double>, K>& dy,
                          const std::array<double*, N>& gradients,
                          std::array<bool, N>& written) {
        // Where the gradient of an operand viewed through `view` starts, and whether it is
        // added to: stored only where it is the first written and the operand is the whole
        // argument (`whole`).
        const auto target = [&](const leaf_view& view, bool whole,
                                bool grid) -> std::pair<double*, bool> {
            const std::size_t k = view.argument;
            if (((Constants >> k) & 1) != 0)
                return {nullptr, true};
            const argument_layout& l = layouts[k];
            double* g = gradients[k];
            bool add = true;
            if (!written[k]) {
                add = !whole;
                if (add)
                    std::fill(g, g + l.rows * l.cols, 0.0);
                written[k] = true;
            }
            return {grid ? g + view.begin * l.cols + view.begin1 : g + view.begin, add};
        };
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            (
                [&] {
                    using Q = leaves<J>;
                    const product_operands p = operands<J>(layouts);
                    const double* d = dy[J].data();
                    const std::size_t a_cols = layouts[Q::matrix.argument].cols;
                    const std::size_t b_cols = layouts[Q::second.argument].cols;
                    const auto whole = [&](const leaf_view& view, std::size_t rows,
                                           std::size_t cols) {
                        const argument_layout& l = layouts[view.argument];
                        return rows == l.rows && cols == l.cols;
                    };
                    const auto [da, add_a] =
                        target(Q::matrix, whole(Q::matrix, p.rows, p.inner), true);
                    if constexpr (Q::matrix_product) {
                        // dA = dY B^T, dB = A^T dY.
                        if (da != nullptr) {
                            if (add_a)
                                gemm_xyt<true>(p.rows, p.inner, p.cols, d, p.cols, p.b, p.b_stride,
                                               da, a_cols);
                            else
                                gemm_xyt<false>(p.rows, p.inner, p.cols, d, p.cols, p.b, p.b_stride,
                                                da, a_cols);
                        }
                        const auto [db, add_b] =
                            target(Q::second, whole(Q::second, p.inner, p.cols), true);
                        if (db != nullptr) {
                            if (add_b)
                                gemm_kernel<true>(p.inner, p.rows, p.cols, p.a, 1, p.a_stride, d,
                                                  p.cols, 1, db, b_cols);
                            else
                                gemm_kernel<false>(p.inner, p.rows, p.cols, p.a, 1, p.a_stride, d,
                                                   p.cols, 1, db, b_cols);
                        }
                    } else if constexpr (Q::solves) {
                        // l = A^-T dy: db += l, dA -= l x^T.
                        const std::vector<double> l = values.factors[J]->solve_transposed(d);
                        const std::vector<double>& x = values.y[J];
                        if (da != nullptr)
                            for (std::size_t i = 0; i < p.rows; ++i) {
                                double* row = da + i * a_cols;
                                if (!add_a)
                                    std::fill(row, row + p.inner, 0.0);
                                axpy_kernel(-l[i], x.data(), row, p.inner);
                            }
                        double* const db = target(Q::second, false, false).first;
                        if (db != nullptr)
                            for (std::size_t i = 0; i < p.rows; ++i)
                                db[i] += l[i];
                    } else {
                        // dA = dy x^T, dx += A^T dy (the rows' shares are added up: x's gradient
                        // is zeroed first where nothing else wrote it).
                        const auto dx = target(Q::second, false, false).first;
                        matvec_pullback(p.a, p.a_stride, p.rows, p.inner, p.b, d, da, a_cols, add_a,
                                        dx);
                    }
                }(),
                ...);
        }
        (std::make_index_sequence<K>{});
    }
};

template <class... Args>
std::array<argument_layout, sizeof...(Args)> layouts_of(const Args&... args) {
    std::size_t k = 0;
    const auto one = [&k](const auto& a) {
        check_array_argument(a, k++);
        return layout_of(a);
    };
    return {one(args)...};
}

template <class Body, class... Args>
auto product_value(const array_expression<Body>& f, const Args&... args) {
    using Q = product_plan<Body, Args...>;
    if constexpr (has_operand_expressions<graph_t<Body>>) {
        return operand_value(f, args...);
    } else if constexpr (!Q::checked) {
        return 0.0;
    } else {
        const array_expression<typename Q::substituted_body> g{Q::substitute_body(f.body)};
        const auto y = Q::values(layouts_of(args...));
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
            return array_value(g, args..., Q::template argument<J>(y)...);
        }
        (std::make_index_sequence<Q::K>{});
    }
}

// The gradient: the expression's over the products' values (run(g, gradients, arrays...) with
// the products' adjoints as extra gradients, Constants marking the arguments it writes no
// gradient for), then the products' pullbacks.
template <std::uint64_t Constants, class Body, class... Args, class Run>
double product_reverse(const array_expression<Body>& f,
                       const std::array<double*, sizeof...(Args)>& gradients,
                       const Run& run,
                       const Args&... args) {
    using Q = product_plan<Body, Args...>;
    constexpr std::size_t N = sizeof...(Args);
    if constexpr (!Q::checked) {
        return 0.0;
    } else {
        const array_expression<typename Q::substituted_body> g{Q::substitute_body(f.body)};
        const auto layouts = layouts_of(args...);
        const auto y = Q::values(layouts);
        std::array<std::vector<double>, Q::K> dy;
        std::array<double*, N + Q::K> all{};
        std::array<bool, N> written{};
        for (std::size_t k = 0; k < N; ++k) {
            const bool skipped = ((Q::product_only >> k) & 1) != 0 || ((Constants >> k) & 1) != 0;
            all[k] = skipped ? nullptr : gradients[k];
            written[k] = !skipped;
        }
        for (std::size_t j = 0; j < Q::K; ++j) {
            dy[j].assign(y.y[j].size(), 0.0);
            all[N + j] = dy[j].data();
        }
        const double value = [&]<std::size_t... J>(std::index_sequence<J...>) {
            return run(g, all, args..., Q::template argument<J>(y)...);
        }
        (std::make_index_sequence<Q::K>{});
        Q::template pull_back<Constants>(layouts, y, dy, gradients, written);
        return value;
    }
}

// The bytes of matrix and gradient above which a matvec runs row by row in its loop: 8 MiB
// (from 724^2 doubles; the systems we tried report their caches' sizes unreliably). With its
// gradient streamed past the cache (stream_threshold), reading the matrix once ran faster from
// 1024^2 on (RESULTS.md). Tests lower it.
inline std::size_t& row_fusion_bytes() {
    static std::size_t bytes = std::size_t{8} << 20;
    return bytes;
}

// The plan of the expression over the products' values, for a gradient.
template <std::uint64_t Constants, bool Value, class Body, class... Args>
using product_gradient_plan =
    program<graph_t<typename product_plan<Body, Args...>::substituted_body>,
            two_d_mask<Args..., std::span<const double>>() &
                read_mask<typename product_plan<Body, Args...>::substituted_graph>,
            Constants | product_plan<Body, Args...>::product_only,
            Value>;

// Whether a gradient runs a matrix-vector product row by row inside the fused loop that reads
// it: one matvec, whose value one fused loop of one-dimensional arrays reads unviewed, with no
// prepass (that would read every row's value first), its operands read by nothing else and not
// constant.
template <std::uint64_t Constants, bool Value, class Body, class... Args>
constexpr bool row_fusable() {
    using Q = product_plan<Body, Args...>;
    if constexpr (!Q::checked || Q::K != 1) {
        return false;
    } else if constexpr (Q::template leaves<0>::matrix_product || Q::template leaves<0>::solves) {
        return false;
    } else {
        using P = product_gradient_plan<Constants, Value, Body, Args...>;
        constexpr std::size_t a = Q::template leaves<0>::matrix.argument;
        constexpr std::size_t x = Q::template leaves<0>::second.argument;
        constexpr auto operand_free = [](std::size_t k) {
            return ((Q::product_only >> k) & 1) != 0 && ((Constants >> k) & 1) == 0;
        };
        if constexpr (P::two_d_mask != 0 || P::count != 1 || P::group_count != 1 ||
                      fusion<P>::fused[0] != 0 || !operand_free(a) || !operand_free(x)) {
            return false;
        } else {
            using kind = typename P::template kind<0>;
            if (requires { typename kind::prepass; })
                return false;
            using E = typename P::template body<0>;
            for (const std::size_t code : E::codes)
                if (is_array_leaf_code(code) && decode_leaf(code).argument == Q::N) {
                    const leaf_view v = decode_leaf(code);
                    if (v.begin != 0 || v.trim != 0)
                        return false;
                }
            return true;
        }
    }
}

// Computes the product's rows before each batch of the fused loop and adds their share of dx
// after it, while the rows are in cache. Calls, not inlined: each does a batch's rows of work,
// and inlined into the loop they only crowd it.
struct matvec_rows {
    product_operands p;
    double* y;
    const double* dy;
    double* dx;
    NABLA_OUT_OF_LINE void before(std::size_t i, std::size_t count) const {
        gemv_kernel(p.a + i * p.a_stride, p.a_stride, p.b, count, p.inner, y + i);
    }
    NABLA_OUT_OF_LINE void after(std::size_t i, std::size_t count) const {
        matvec_pullback(p.a + i * p.a_stride, p.a_stride, count, p.inner, p.b, dy + i, nullptr, 0,
                        false, dx);
    }
};

// The gradient of an expression whose one matvec runs row by row in its fused loop: A read once
// (each row's product and its share of dx together), then dA = dy x^T written in a pass of its
// own, dx and dA scaled by the loop's reduction adjoint.
template <std::uint64_t Constants, bool Value, class Body, class... Args>
double product_row_fused(const array_expression<Body>& f,
                         const std::array<double*, sizeof...(Args)>& gradients,
                         const Args&... args) {
    using Q = product_plan<Body, Args...>;
    using P = product_gradient_plan<Constants, Value, Body, Args...>;
    using Y = std::span<const double>;
    constexpr std::size_t N = sizeof...(Args);
    constexpr leaf_view m = Q::template leaves<0>::matrix;
    constexpr leaf_view v = Q::template leaves<0>::second;
    const auto layouts = layouts_of(args...);
    const product_operands p = Q::template operands<0>(layouts);
    std::vector<double> y(p.rows), dy(p.rows);
    const array_expression<typename Q::substituted_body> g{Q::substitute_body(f.body)};
    std::array<double*, N + 1> all{};
    for (std::size_t k = 0; k < N; ++k)
        all[k] = P::constant(k) ? nullptr : gradients[k];
    all[N] = dy.data();
    if constexpr (!check_array_call<typename Q::substituted_body, Args..., Y>()) {
        return 0.0;
    } else {
        auto run = start_gradient<P>(g, all, args..., Y(y));
        const argument_layout& xl = layouts[v.argument];
        double* const dx = gradients[v.argument];
        std::fill(dx, dx + xl.cols, 0.0);
        fused_group<P, 0>(run, run.length[0], matvec_rows{p, y.data(), dy.data(), dx + v.begin});
        const double value = finish_gradient<P>(run);
        // dy is scaled by the reduction's adjoint now; dx, summed from the unscaled dy, follows.
        using kind = typename P::template kind<0>;
        const double c =
            kind::scale(std::get<0>(run.state), run.result[0], run.adjoint[0], run.length[0]);
        if (c != 1.0 && run.length[0] != 0)
            for (std::size_t j = 0; j < p.inner; ++j)
                dx[v.begin + j] *= c;
        const argument_layout& al = layouts[m.argument];
        double* const da = gradients[m.argument];
        const bool whole = p.rows == al.rows && p.inner == al.cols;
        if (!whole)
            std::fill(da, da + al.rows * al.cols, 0.0);
        double* const first = da + m.begin * al.cols + m.begin1;
        if (whole)
            matvec_pullback_rows<true, false, false>(p.a, p.a_stride, p.rows, p.inner, p.b,
                                                     dy.data(), first, al.cols, nullptr);
        else
            matvec_pullback_rows<true, true, false>(p.a, p.a_stride, p.rows, p.inner, p.b,
                                                    dy.data(), first, al.cols, nullptr);
        return value;
    }
}

// The gradient of an expression without products, planned with Constants (arguments that take no
// gradient) and Value (whether the value is formed).
template <std::uint64_t Constants, bool Value, class Body, class... Args>
double loop_gradient(const array_expression<Body>& f,
                     const std::array<double*, sizeof...(Args)>& gradients,
                     const Args&... args) {
    if constexpr (!check_array_call<Body, Args...>()) {
        return 0.0;
    } else {
        using P = program<graph_t<Body>, two_d_mask<Args...>() & read_mask<graph_t<Body>>,
                          Constants, Value>;
        return array_gradient_checked<P>(f, gradients, args...);
    }
}

template <std::uint64_t Constants, bool Value, class Body, class... Args>
double product_gradient(const array_expression<Body>& f,
                        const std::array<double*, sizeof...(Args)>& gradients,
                        const Args&... args) {
    using Q = product_plan<Body, Args...>;
    const matrices_in_flight matrices(args...);
    if constexpr (has_operand_expressions<graph_t<Body>>) {
        return operand_gradient<Constants, Value>(f, gradients, args...);
    } else {
        if constexpr (row_fusable<Constants, Value, Body, Args...>()) {
            // Reading the matrix once pays for large matrices; for small ones, passes that only
            // read or only write run faster (RESULTS.md).
            const auto& a = std::get<Q::template leaves<0>::matrix.argument>(std::tie(args...));
            if (2 * sizeof(double) * static_cast<std::size_t>(a.size()) > row_fusion_bytes())
                return product_row_fused<Constants, Value>(f, gradients, args...);
        }
        return product_reverse<Constants>(
            f, gradients,
            [](const auto& g, const auto& all, const auto&... extended) {
                return loop_gradient<Constants | Q::product_only, Value>(g, all, extended...);
            },
            args...);
    }
}

template <std::uint64_t Constants, class Body, class Cotangent, class... Args>
void product_vjp(const array_expression<Body>& f,
                 const std::array<double*, sizeof...(Args)>& gradients,
                 const Cotangent& w,
                 const Args&... args) {
    using Q = product_plan<Body, Args...>;
    const matrices_in_flight matrices(args...);
    if constexpr (has_operand_expressions<graph_t<Body>>) {
        operand_vjp<Constants>(f, gradients, w, args...);
    } else {
        product_reverse<Constants>(
            f, gradients,
            [&w](const auto& g, const auto& all, const auto&... extended) {
                apply_vjp<Constants | Q::product_only>(g, all, w, extended...);
                return 0.0;
            },
            args...);
    }
}

template <class Body, class Out, class... Args>
void product_evaluate_into(const array_expression<Body>& f, Out& out, const Args&... args) {
    using Q = product_plan<Body, Args...>;
    if constexpr (has_operand_expressions<graph_t<Body>>) {
        operand_evaluate_into(f, out, args...);
    } else if constexpr (Q::checked) {
        const array_expression<typename Q::substituted_body> g{Q::substitute_body(f.body)};
        const auto y = Q::values(layouts_of(args...));
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            evaluate_into(g, out, args..., Q::template argument<J>(y)...);
        }
        (std::make_index_sequence<Q::K>{});
    }
}

}  // namespace detail

namespace detail {

template <class Rule, class A, class B>
constexpr auto product_node(const A& a, const B& b) {
    if constexpr (A::is_array && B::is_array)
        return make_array(combine(
            [](auto m, auto v) { return node<Rule, decltype(m), decltype(v)>{}; }, a.body, b.body));
    else
        return a;  // after the caller's message, no more errors
}

}  // namespace detail

// A x for A a matrix (an array variable bound to a two-dimensional array, whole or a view, or an
// expression over such) and x a vector: an opaque node of the expression, computed before the
// loops that read it (see above); an operand that is an expression is computed into an array of
// its own first (array/operands.hpp). The tape's var_matrix has its own matvec
// (array/matrix.hpp).
template <class A, class X>
requires detail::ArrayExpression<A> && detail::ArrayExpression<X>
constexpr auto matvec(const A& a, const X& x) {
    static_assert(A::is_array && X::is_array,
                  "nabla::matvec(A, x) in an array expression multiplies a matrix by a vector; "
                  "an operand here is a scalar (a reduction's result).");
    return detail::product_node<detail::matvec_rule>(a, x);
}

// A B for matrices A and B (array variables bound to two-dimensional arrays, whole or views, or
// expressions over such): an opaque node, as matvec. The tape's var_matrix has its own matmul
// (array/matrix.hpp).
template <class A, class B>
requires detail::ArrayExpression<A> && detail::ArrayExpression<B>
constexpr auto matmul(const A& a, const B& b) {
    static_assert(A::is_array && B::is_array,
                  "nabla::matmul(A, B) in an array expression multiplies two matrices; an operand "
                  "here is a scalar (a reduction's result).");
    return detail::product_node<detail::matmul_rule>(a, b);
}

// A^-1 b for a square matrix A and a vector b (array variables, views or expressions, as
// matvec's): an opaque node, as matvec, computed by an LU factorisation with partial pivoting
// before the loops; its pullback (l = A^-T dx, db += l, dA -= l x^T) uses the same factors. The
// tape's var_matrix has its own solve (array/matrix.hpp).
template <class A, class B>
requires detail::ArrayExpression<A> && detail::ArrayExpression<B>
constexpr auto solve(const A& a, const B& b) {
    static_assert(A::is_array && B::is_array,
                  "nabla::solve(A, b) in an array expression takes a square matrix and a vector; "
                  "an operand here is a scalar (a reduction's result).");
    return detail::product_node<detail::solve_rule>(a, b);
}

}  // namespace nabla
