#pragma once
// The hand-written baselines of bench/array_*.cpp: each workload written directly with xsimd
// batches (unaligned loads, a scalar tail), in the formulation that measured fastest among those
// tried. Define NABLA_NO_SIMD, or build without xsimd, for plain scalar loops.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

// g++ 12.2 reports its own AVX-512 intrinsics (_mm512_undefined_pd) as reading uninitialised
// values where they are inlined (GCC bug 105593, fixed in later releases).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if !defined(NABLA_NO_SIMD) && __has_include(<xsimd/xsimd.hpp>)
#include <nabla/simd/exp.hpp>

#include <xsimd/xsimd.hpp>
#define NABLA_BENCH_HAND_SIMD 1
#else
#define NABLA_BENCH_HAND_SIMD 0
#endif

namespace nabla_bench::hand {

namespace detail {

// The formulas below are written once, for a double (the scalar tail and the scalar build) and for
// a batch, so the scalar tail follows the same formulation as the lanes.
inline double mul_add(double a, double b, double c) {
    return a * b + c;
}
inline double neg_mul_add(double a, double b, double c) {
    return c - a * b;
}

#if NABLA_BENCH_HAND_SIMD
using batch = xsimd::batch<double>;
inline constexpr std::size_t width = batch::size;

// a b + c and c - a b. xsimd 8.1 has no AVX-512 kernels for these: its generic a * b + c and
// -a * b + c are fused by g++ (which then keeps the negation) but not by clang++, so the AVX-512
// instructions are called directly.
inline batch mul_add(const batch& a, const batch& b, const batch& c) {
#if defined(__AVX512F__)
    return _mm512_fmadd_pd(a, b, c);
#else
    return xsimd::fma(a, b, c);
#endif
}
inline batch neg_mul_add(const batch& a, const batch& b, const batch& c) {
#if defined(__AVX512F__)
    return _mm512_fnmadd_pd(a, b, c);
#elif defined(__FMA__)
    return xsimd::fnma(a, b, c);
#else
    return c - a * b;
#endif
}
inline batch maximum(const batch& a, const batch& b) {
    return xsimd::max(a, b);
}
inline batch load(const double* p) {
    return batch::load_unaligned(p);
}

// The largest multiple of step not above count: loop bounds written with it cannot wrap around, so
// the compilers know that the scalar tail stays within the arrays.
inline constexpr std::size_t whole(std::size_t count, std::size_t step) {
    return count - count % step;
}

// xsimd 8.1 has no horizontal maximum.
inline double lanes_max(const batch& b) {
    double lanes[width];
    b.store_unaligned(lanes);
    double m = lanes[0];
    for (std::size_t k = 1; k < width; ++k)
        m = std::max(m, lanes[k]);
    return m;
}
#endif

// exp as hand-written code calls it: the C library's on a double, xsimd's on a batch; or, with
// nabla_exp, nabla's own kernel on a batch (simd/exp.hpp), to tell what nabla's exp gains from
// what its loops do.
template <bool nabla_exp, class T>
inline T exponential(const T& x) {
    using std::exp;
#if NABLA_BENCH_HAND_SIMD
    if constexpr (nabla_exp && std::is_same_v<T, batch>)
        return nabla::simd::exp(x);
    else
#endif
        return exp(x);
}

// exp(-x/2) sqrt(x^2 + y^2 + 1) / (1 + y^2). The square root and the division do not wait for the
// exponential, so they overlap with it.
template <bool nabla_exp, class T>
inline T chain_term(const T& x, const T& y) {
    using std::sqrt;
    const T d = mul_add(y, y, T(1.0));
    return exponential<nabla_exp>(T(-0.5) * x) * (sqrt(mul_add(x, x, d)) / d);
}

// The term and its two partial derivatives with one division: with t = x^2 + d, s = sqrt(t) and
// w = e / (s d^2), the term is w d t, d/dx is w d (x - t/2) and d/dy is w y (d - 2t). The
// reciprocal is taken apart from e, so that it overlaps with the exponential. (s d^2 stays finite
// for |y| below about 1e61.)
template <bool nabla_exp, class T>
inline T chain_term_and_grad(const T& x, const T& y, T& gx, T& gy) {
    using std::sqrt;
    const T d = mul_add(y, y, T(1.0));
    const T t = mul_add(x, x, d);
    const T w = exponential<nabla_exp>(T(-0.5) * x) * (T(1.0) / (sqrt(t) * d * d));
    const T wd = w * d;
    gx = wd * mul_add(T(-0.5), t, x);
    gy = w * y * mul_add(T(-2.0), t, d);
    return wd * t;
}

// Adds the pair (x, next)'s (next - x^2)^2 to st and (1 - x)^2 to su: the factor 100 is applied
// once to the whole sum.
template <class T>
inline void rosenbrock_pair(const T& x, const T& next, T& st, T& su) {
    const T t = neg_mul_add(x, x, next);
    const T u = T(1.0) - x;
    st = mul_add(t, t, st);
    su = mul_add(u, u, su);
}

// rosenbrock_pair for the pair (x, next), and the derivative with respect to x gathered from the
// two pairs that hold it: 200 (x - prev^2) + x (2 - 400 (next - x^2)) - 2.
template <class T>
inline T rosenbrock_pair_and_grad(const T& prev, const T& x, const T& next, T& st, T& su) {
    const T t_prev = neg_mul_add(prev, prev, x);
    const T t = neg_mul_add(x, x, next);
    const T u = T(1.0) - x;
    st = mul_add(t, t, st);
    su = mul_add(u, u, su);
    return mul_add(T(200.0), t_prev, mul_add(x, mul_add(T(-400.0), t, T(2.0)), T(-2.0)));
}

// The interior points of one row of the heat step, from the rows above and below: c u + r (sum of
// the four neighbours), c = 1 - 4r.
inline void heat_row(const double* up,
                     const double* u,
                     const double* down,
                     std::size_t n,
                     double c,
                     double r,
                     double* out) {
    std::size_t j = 1;
#if NABLA_BENCH_HAND_SIMD
    const batch cb(c), rb(r);
    for (const std::size_t end = 1 + whole(n - 2, width); j < end; j += width) {
        const batch around = (load(up + j) + load(down + j)) + (load(u + j - 1) + load(u + j + 1));
        mul_add(cb, load(u + j), rb * around).store_unaligned(out + j);
    }
#endif
    for (; j + 1 < n; ++j)
        out[j] = c * u[j] + r * ((up[j] + down[j]) + (u[j - 1] + u[j + 1]));
}

// One row i, 1 <= i <= n-2, of the heat step's adjoint (n >= 3). Only interior points feed others:
// the row above (below) counts when it is interior (north, south), and in the row, columns 0 and
// n-1 never count, so columns 1 and n-2 are done apart from the batches.
template <bool north, bool south>
inline void heat_adjoint_row(const double* up,
                             const double* a,
                             const double* down,
                             std::size_t n,
                             double c,
                             double r,
                             double* out) {
    const auto vertical = [&](std::size_t j) {
        if constexpr (north && south)
            return up[j] + down[j];
        else if constexpr (north)
            return up[j];
        else if constexpr (south)
            return down[j];
        else
            return 0.0;
    };
    out[0] = a[0] + r * a[1];
    out[n - 1] = a[n - 1] + r * a[n - 2];
    if (n == 3) {
        out[1] = c * a[1] + r * vertical(1);
        return;
    }
    out[1] = c * a[1] + r * (vertical(1) + a[2]);
    out[n - 2] = c * a[n - 2] + r * (vertical(n - 2) + a[n - 3]);
    std::size_t j = 2;
#if NABLA_BENCH_HAND_SIMD
    const batch cb(c), rb(r);
    for (const std::size_t end = 2 + whole(n - 4, width); j < end; j += width) {
        batch around = load(a + j - 1) + load(a + j + 1);
        if constexpr (north && south)
            around = (load(up + j) + load(down + j)) + around;
        else if constexpr (north)
            around = load(up + j) + around;
        else if constexpr (south)
            around = load(down + j) + around;
        mul_add(cb, load(a + j), rb * around).store_unaligned(out + j);
    }
#endif
    for (; j + 2 < n; ++j)
        out[j] = c * a[j] + r * (vertical(j) + (a[j - 1] + a[j + 1]));
}

// Row 0 or n-1 of the adjoint: the point itself, plus r times the interior neighbour (in row 1 or
// n-2) of every point but the corners.
inline void
heat_adjoint_edge(const double* a, const double* inner, std::size_t n, double r, double* out) {
    out[0] = a[0];
    out[n - 1] = a[n - 1];
    std::size_t j = 1;
#if NABLA_BENCH_HAND_SIMD
    const batch rb(r);
    for (const std::size_t end = 1 + whole(n - 2, width); j < end; j += width)
        mul_add(rb, load(inner + j), load(a + j)).store_unaligned(out + j);
#endif
    for (; j + 1 < n; ++j)
        out[j] = a[j] + r * inner[j];
}

}  // namespace detail

// sum_i x_i.
inline double sum(const double* x, std::size_t n) {
    std::size_t i = 0;
    double s = 0.0;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::load, detail::whole, detail::width;
    // Four accumulators hide the latency of the additions.
    batch s0(0.0), s1(0.0), s2(0.0), s3(0.0);
    for (; i < whole(n, 4 * width); i += 4 * width) {
        s0 += load(x + i);
        s1 += load(x + i + width);
        s2 += load(x + i + 2 * width);
        s3 += load(x + i + 3 * width);
    }
    for (; i < whole(n, width); i += width)
        s0 += load(x + i);
    s = xsimd::hadd((s0 + s1) + (s2 + s3));
#endif
    for (; i < n; ++i)
        s += x[i];
    return s;
}

// sum_i exp(-x_i/2) sqrt(x_i^2 + y_i^2 + 1) / (1 + y_i^2).
template <bool nabla_exp = false>
inline double chain_value(const double* x, const double* y, std::size_t n) {
    std::size_t i = 0;
    double s = 0.0;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::chain_term, detail::load, detail::whole, detail::width;
    batch s0(0.0), s1(0.0), s2(0.0), s3(0.0);
    for (; i < whole(n, 4 * width); i += 4 * width) {
        s0 += chain_term<nabla_exp>(load(x + i), load(y + i));
        s1 += chain_term<nabla_exp>(load(x + i + width), load(y + i + width));
        s2 += chain_term<nabla_exp>(load(x + i + 2 * width), load(y + i + 2 * width));
        s3 += chain_term<nabla_exp>(load(x + i + 3 * width), load(y + i + 3 * width));
    }
    for (; i < whole(n, width); i += width)
        s0 += chain_term<nabla_exp>(load(x + i), load(y + i));
    s = xsimd::hadd((s0 + s1) + (s2 + s3));
#endif
    for (; i < n; ++i)
        s += detail::chain_term<nabla_exp>(x[i], y[i]);
    return s;
}

// chain_value, and its gradient with respect to every x_i (into gx) and y_i (into gy).
template <bool nabla_exp = false>
inline double
chain_value_and_grad(const double* x, const double* y, std::size_t n, double* gx, double* gy) {
    std::size_t i = 0;
    double s = 0.0;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::load, detail::whole, detail::width;
    batch s0(0.0), s1(0.0), s2(0.0), s3(0.0);
    const auto step = [&](std::size_t k, batch& acc) {
        batch dx, dy;
        acc += detail::chain_term_and_grad<nabla_exp>(load(x + k), load(y + k), dx, dy);
        dx.store_unaligned(gx + k);
        dy.store_unaligned(gy + k);
    };
    for (; i < whole(n, 4 * width); i += 4 * width) {
        step(i, s0);
        step(i + width, s1);
        step(i + 2 * width, s2);
        step(i + 3 * width, s3);
    }
    for (; i < whole(n, width); i += width)
        step(i, s0);
    s = xsimd::hadd((s0 + s1) + (s2 + s3));
#endif
    for (; i < n; ++i)
        s += detail::chain_term_and_grad<nabla_exp>(x[i], y[i], gx[i], gy[i]);
    return s;
}

// sum_{i=0}^{n-2} 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2.
inline double rosenbrock_value(const double* x, std::size_t n) {
    if (n < 2)
        return 0.0;
    const std::size_t pairs = n - 1;
    std::size_t i = 0;
    double st = 0.0, su = 0.0;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::load, detail::rosenbrock_pair, detail::whole, detail::width;
    // Two pairs of accumulators (four in all) keep up with the loads.
    batch st0(0.0), su0(0.0), st1(0.0), su1(0.0);
    for (; i < whole(pairs, 2 * width); i += 2 * width) {
        rosenbrock_pair(load(x + i), load(x + i + 1), st0, su0);
        rosenbrock_pair(load(x + i + width), load(x + i + width + 1), st1, su1);
    }
    for (; i < whole(pairs, width); i += width)
        rosenbrock_pair(load(x + i), load(x + i + 1), st0, su0);
    st = xsimd::hadd(st0 + st1);
    su = xsimd::hadd(su0 + su1);
#endif
    for (; i < pairs; ++i)
        detail::rosenbrock_pair(x[i], x[i + 1], st, su);
    return 100.0 * st + su;
}

// rosenbrock_value and its gradient (into g), in one pass: each g_i is gathered from the two pairs
// that hold x_i (recomputing x_i - x_{i-1}^2 costs less than carrying it across lanes or adding
// into g twice).
inline double rosenbrock_value_and_grad(const double* x, std::size_t n, double* g) {
    if (n < 2) {
        std::fill(g, g + n, 0.0);
        return 0.0;
    }
    // The ends: x_0 is only in the first pair, x_{n-1} only in the last.
    double st = 0.0, su = 0.0;
    detail::rosenbrock_pair(x[0], x[1], st, su);
    g[0] = x[0] * (2.0 - 400.0 * (x[1] - x[0] * x[0])) - 2.0;
    g[n - 1] = 200.0 * (x[n - 1] - x[n - 2] * x[n - 2]);
    std::size_t i = 1;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::load, detail::whole, detail::width;
    batch st0(0.0), su0(0.0), st1(0.0), su1(0.0);
    const auto step = [&](std::size_t k, batch& sk, batch& uk) {
        detail::rosenbrock_pair_and_grad(load(x + k - 1), load(x + k), load(x + k + 1), sk, uk)
            .store_unaligned(g + k);
    };
    for (; i < 1 + whole(n - 2, 2 * width); i += 2 * width) {
        step(i, st0, su0);
        step(i + width, st1, su1);
    }
    for (; i < 1 + whole(n - 2, width); i += width)
        step(i, st0, su0);
    st += xsimd::hadd(st0 + st1);
    su += xsimd::hadd(su0 + su1);
#endif
    for (; i + 1 < n; ++i)
        g[i] = detail::rosenbrock_pair_and_grad(x[i - 1], x[i], x[i + 1], st, su);
    return 100.0 * st + su;
}

// The extended Rosenbrock function's Hessian times v, into hv: H is tridiagonal, so each entry
// reads three neighbours of x and of v (one pass; the compiler vectorises the loop).
inline void rosenbrock_hvp(const double* x, const double* v, std::size_t n, double* hv) {
    if (n < 2) {
        std::fill(hv, hv + n, 0.0);
        return;
    }
    hv[0] = (1200.0 * x[0] * x[0] - 400.0 * x[1] + 2.0) * v[0] - 400.0 * x[0] * v[1];
    for (std::size_t i = 1; i + 1 < n; ++i)
        hv[i] = (1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 202.0) * v[i] -
                400.0 * (x[i] * v[i + 1] + x[i - 1] * v[i - 1]);
    hv[n - 1] = 200.0 * v[n - 1] - 400.0 * x[n - 2] * v[n - 2];
}

namespace detail {

// max_i x_i, for n >= 1.
inline double max_of(const double* x, std::size_t n) {
    std::size_t i = 0;
    double m = x[0];
#if NABLA_BENCH_HAND_SIMD
    if (n >= width) {
        batch m0 = load(x), m1 = m0, m2 = m0, m3 = m0;
        for (i = width; i < width + whole(n - width, 4 * width); i += 4 * width) {
            m0 = maximum(m0, load(x + i));
            m1 = maximum(m1, load(x + i + width));
            m2 = maximum(m2, load(x + i + 2 * width));
            m3 = maximum(m3, load(x + i + 3 * width));
        }
        for (; i < whole(n, width); i += width)
            m0 = maximum(m0, load(x + i));
        m = lanes_max(maximum(maximum(m0, m1), maximum(m2, m3)));
    }
#endif
    for (; i < n; ++i)
        m = std::max(m, x[i]);
    return m;
}

// sum_i exp(x_i - m); with store, each exp(x_i - m) also goes to e[i].
template <bool store, bool nabla_exp>
inline double sum_exp(const double* x, std::size_t n, double m, double* e) {
    std::size_t i = 0;
    double s = 0.0;
#if NABLA_BENCH_HAND_SIMD
    const batch mb(m);
    batch s0(0.0), s1(0.0), s2(0.0), s3(0.0);
    const auto step = [&](std::size_t k, batch& acc) {
        const batch v = exponential<nabla_exp>(load(x + k) - mb);
        if constexpr (store)
            v.store_unaligned(e + k);
        acc += v;
    };
    for (; i < whole(n, 4 * width); i += 4 * width) {
        step(i, s0);
        step(i + width, s1);
        step(i + 2 * width, s2);
        step(i + 3 * width, s3);
    }
    for (; i < whole(n, width); i += width)
        step(i, s0);
    s = xsimd::hadd((s0 + s1) + (s2 + s3));
#endif
    for (; i < n; ++i) {
        const double v = exponential<nabla_exp>(x[i] - m);
        if constexpr (store)
            e[i] = v;
        s += v;
    }
    return s;
}

}  // namespace detail

// m + log(sum_i exp(x_i - m)), m = max_i x_i; -infinity for n = 0. Two passes: the maximum first
// (cheap, and the data is then in cache), then one exp per element; a single pass with an online
// maximum needs more exponentials, for the rescaling.
template <bool nabla_exp = false>
inline double logsumexp_value(const double* x, std::size_t n) {
    if (n == 0)
        return -std::numeric_limits<double>::infinity();
    const double m = detail::max_of(x, n);
    return m + std::log(detail::sum_exp<false, nabla_exp>(x, n, m, nullptr));
}

// logsumexp_value, and its gradient exp(x_i - value) (the softmax) into g; nothing is written for
// n = 0. The exponentials of the sum's pass are kept in g and scaled by 1 / sum, which costs less
// than a second exp per element.
template <bool nabla_exp = false>
inline double logsumexp_value_and_grad(const double* x, std::size_t n, double* g) {
    if (n == 0)
        return -std::numeric_limits<double>::infinity();
    const double m = detail::max_of(x, n);
    const double s = detail::sum_exp<true, nabla_exp>(x, n, m, g);
    const double scale = 1.0 / s;
    std::size_t i = 0;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::load, detail::whole, detail::width;
    const batch sb(scale);
    for (; i < whole(n, width); i += width)
        (load(g + i) * sb).store_unaligned(g + i);
#endif
    for (; i < n; ++i)
        g[i] *= scale;
    return m + std::log(s);
}

// One explicit step of the heat equation on an n x n row-major field: interior points
// out(i,j) = u(i,j) + r (u(i+1,j) + u(i-1,j) + u(i,j+1) + u(i,j-1) - 4 u(i,j)), written as
// (1 - 4r) u(i,j) + r (sum of the neighbours), one operation fewer; the boundary rows and columns
// are copied.
inline void heat_step(const double* u, std::size_t n, double r, double* out) {
    if (n < 3) {
        std::copy(u, u + n * n, out);
        return;
    }
    const double c = 1.0 - 4.0 * r;
    std::copy(u, u + n, out);
    for (std::size_t i = 1; i + 1 < n; ++i) {
        const double* row = u + i * n;
        double* dst = out + i * n;
        dst[0] = row[0];
        detail::heat_row(row - n, row, row + n, n, c, r, dst);
        dst[n - 1] = row[n - 1];
    }
    std::copy(u + (n - 1) * n, u + n * n, out + (n - 1) * n);
}

// The vector-Jacobian product of heat_step: given ubar_out, the adjoint of out, writes ubar_in, the
// adjoint of u. Each point gathers its own adjoint (times 1 - 4r when interior, 1 on the boundary)
// and r times that of each interior neighbour.
inline void heat_adjoint(const double* ubar_out, std::size_t n, double r, double* ubar_in) {
    if (n < 3) {
        std::copy(ubar_out, ubar_out + n * n, ubar_in);
        return;
    }
    const double c = 1.0 - 4.0 * r;
    const auto row = [&](std::size_t i) { return ubar_out + i * n; };
    detail::heat_adjoint_edge(row(0), row(1), n, r, ubar_in);
    if (n == 3) {
        detail::heat_adjoint_row<false, false>(row(0), row(1), row(2), n, c, r, ubar_in + n);
    } else {
        detail::heat_adjoint_row<false, true>(row(0), row(1), row(2), n, c, r, ubar_in + n);
        for (std::size_t i = 2; i + 2 < n; ++i)
            detail::heat_adjoint_row<true, true>(row(i - 1), row(i), row(i + 1), n, c, r,
                                                 ubar_in + i * n);
        detail::heat_adjoint_row<true, false>(row(n - 3), row(n - 2), row(n - 1), n, c, r,
                                              ubar_in + (n - 2) * n);
    }
    detail::heat_adjoint_edge(row(n - 1), row(n - 2), n, r, ubar_in + (n - 1) * n);
}

// y = W x for a row-major m x n matrix W: four rows at a time, so that each batch of x loaded
// serves four rows.
inline void gemv(const double* w, const double* x, std::size_t m, std::size_t n, double* y) {
    std::size_t i = 0;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::load, detail::whole, detail::width;
    for (; i + 4 <= m; i += 4) {
        const double* r0 = w + i * n;
        const double* r1 = r0 + n;
        const double* r2 = r1 + n;
        const double* r3 = r2 + n;
        batch s0(0.0), s1(0.0), s2(0.0), s3(0.0);
        std::size_t j = 0;
        for (; j < whole(n, width); j += width) {
            const batch xv = load(x + j);
            s0 = detail::mul_add(load(r0 + j), xv, s0);
            s1 = detail::mul_add(load(r1 + j), xv, s1);
            s2 = detail::mul_add(load(r2 + j), xv, s2);
            s3 = detail::mul_add(load(r3 + j), xv, s3);
        }
        double t0 = xsimd::hadd(s0), t1 = xsimd::hadd(s1), t2 = xsimd::hadd(s2),
               t3 = xsimd::hadd(s3);
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
    for (; i < m; ++i) {
        double t = 0.0;
        for (std::size_t j = 0; j < n; ++j)
            t += w[i * n + j] * x[j];
        y[i] = t;
    }
}

// Parts of the dense layer's value and gradient, shared by its formulations below.
namespace dense {

// For rows [i, i + count): h = tanh(z + b), the loss's h^2 added, dz = 2 h (1 - h^2) into gb.
inline void activation(
    const double* z, const double* b, std::size_t i, std::size_t count, double* gb, double& loss) {
    for (std::size_t r = i; r < i + count; ++r) {
        const double h = std::tanh(z[r] + b[r]);
        loss += h * h;
        gb[r] = 2.0 * h * (1.0 - h * h);
    }
}

// gx += sum_r gb[r] W_r over rows [i, i + count), four at a time (gx loaded once per four rows).
inline void add_rows(const double* w,
                     std::size_t n,
                     std::size_t i,
                     std::size_t count,
                     const double* gb,
                     double* gx) {
    std::size_t r = i;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::load, detail::whole, detail::width;
    for (; r + 4 <= i + count; r += 4) {
        const double* r0 = w + r * n;
        const double *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
        const batch d0(gb[r]), d1(gb[r + 1]), d2(gb[r + 2]), d3(gb[r + 3]);
        std::size_t j = 0;
        for (; j < whole(n, width); j += width) {
            batch acc = load(gx + j);
            acc = detail::mul_add(d0, load(r0 + j), acc);
            acc = detail::mul_add(d1, load(r1 + j), acc);
            acc = detail::mul_add(d2, load(r2 + j), acc);
            acc = detail::mul_add(d3, load(r3 + j), acc);
            acc.store_unaligned(gx + j);
        }
        for (; j < n; ++j)
            gx[j] += gb[r] * r0[j] + gb[r + 1] * r1[j] + gb[r + 2] * r2[j] + gb[r + 3] * r3[j];
    }
#endif
    for (; r < i + count; ++r)
        for (std::size_t j = 0; j < n; ++j)
            gx[j] += gb[r] * w[r * n + j];
}

// gw's rows [0, m) = gb[r] x, written and not read.
inline void outer(const double* gb, const double* x, std::size_t m, std::size_t n, double* gw) {
    for (std::size_t r = 0; r < m; ++r) {
        double* row = gw + r * n;
        std::size_t j = 0;
#if NABLA_BENCH_HAND_SIMD
        using detail::batch, detail::load, detail::whole, detail::width;
        const batch d(gb[r]);
        for (; j < whole(n, width); j += width)
            (d * load(x + j)).store_unaligned(row + j);
#endif
        for (; j < n; ++j)
            row[j] = gb[r] * x[j];
    }
}

// The same, with stores that bypass the cache (no read of the lines dW overwrites), where the
// compiler targets AVX-512 or AVX.
inline void
outer_streaming(const double* gb, const double* x, std::size_t m, std::size_t n, double* gw) {
#if NABLA_BENCH_HAND_SIMD && (defined(__AVX512F__) || defined(__AVX__))
    using detail::batch, detail::load, detail::width;
    for (std::size_t r = 0; r < m; ++r) {
        double* row = gw + r * n;
        std::size_t j = 0;
        for (; j < n && reinterpret_cast<std::uintptr_t>(row + j) % sizeof(batch) != 0; ++j)
            row[j] = gb[r] * x[j];
        const batch d(gb[r]);
        for (; j + width <= n; j += width) {
#if defined(__AVX512F__)
            if constexpr (sizeof(batch) == 64)
                _mm512_stream_pd(row + j, d * load(x + j));
#else
            if constexpr (sizeof(batch) == 32)
                _mm256_stream_pd(row + j, d * load(x + j));
#endif
        }
        for (; j < n; ++j)
            row[j] = gb[r] * x[j];
    }
    _mm_sfence();
#else
    outer(gb, x, m, n, gw);
#endif
}

}  // namespace dense

// The dense layer's loss sum_i tanh((W x + b)_i)^2 and its gradient with respect to W, x and b,
// dz_i = 2 h_i (1 - h_i^2), in four formulations; which is fastest changes with the size (see
// RESULTS.md). Two passes: one product for z, then one pass over W that writes dW = dz x^T and
// gathers dx = W^T dz.
inline double dense_value_and_grad(const double* w,
                                   const double* x,
                                   const double* b,
                                   std::size_t m,
                                   std::size_t n,
                                   double* gw,
                                   double* gx,
                                   double* gb) {
    gemv(w, x, m, n, gb);
    double loss = 0.0;
    dense::activation(gb, b, 0, m, gb, loss);
    std::fill(gx, gx + n, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
        const double dz = gb[i];
        const double* row = w + i * n;
        double* grow = gw + i * n;
        std::size_t j = 0;
#if NABLA_BENCH_HAND_SIMD
        using detail::batch, detail::load, detail::whole, detail::width;
        const batch d(dz);
        for (; j < whole(n, width); j += width) {
            (d * load(x + j)).store_unaligned(grow + j);
            detail::mul_add(d, load(row + j), load(gx + j)).store_unaligned(gx + j);
        }
#endif
        for (; j < n; ++j) {
            grow[j] = dz * x[j];
            gx[j] += dz * row[j];
        }
    }
    return loss;
}

// One pass over W: four rows' products, their dz, then in one loop those rows' dW and their
// share of dx while the rows are still in cache.
inline double dense_value_and_grad_one_pass(const double* w,
                                            const double* x,
                                            const double* b,
                                            std::size_t m,
                                            std::size_t n,
                                            double* gw,
                                            double* gx,
                                            double* gb) {
    std::fill(gx, gx + n, 0.0);
    double loss = 0.0;
    std::size_t i = 0;
    for (; i + 4 <= m; i += 4) {
        const double* r0 = w + i * n;
        const double *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
        gemv(r0, x, 4, n, gb + i);
        dense::activation(gb, b, i, 4, gb, loss);
        double* g0 = gw + i * n;
        double *g1 = g0 + n, *g2 = g1 + n, *g3 = g2 + n;
        std::size_t j = 0;
#if NABLA_BENCH_HAND_SIMD
        using detail::batch, detail::load, detail::whole, detail::width;
        const batch d0(gb[i]), d1(gb[i + 1]), d2(gb[i + 2]), d3(gb[i + 3]);
        for (; j < whole(n, width); j += width) {
            const batch xv = load(x + j);
            (d0 * xv).store_unaligned(g0 + j);
            (d1 * xv).store_unaligned(g1 + j);
            (d2 * xv).store_unaligned(g2 + j);
            (d3 * xv).store_unaligned(g3 + j);
            batch acc = load(gx + j);
            acc = detail::mul_add(d0, load(r0 + j), acc);
            acc = detail::mul_add(d1, load(r1 + j), acc);
            acc = detail::mul_add(d2, load(r2 + j), acc);
            acc = detail::mul_add(d3, load(r3 + j), acc);
            acc.store_unaligned(gx + j);
        }
#endif
        for (; j < n; ++j) {
            g0[j] = gb[i] * x[j];
            g1[j] = gb[i + 1] * x[j];
            g2[j] = gb[i + 2] * x[j];
            g3[j] = gb[i + 3] * x[j];
            gx[j] += gb[i] * r0[j] + gb[i + 1] * r1[j] + gb[i + 2] * r2[j] + gb[i + 3] * r3[j];
        }
    }
    gemv(w + i * n, x, m - i, n, gb + i);
    dense::activation(gb, b, i, m - i, gb, loss);
    dense::add_rows(w, n, i, m - i, gb, gx);
    dense::outer(gb + i, x, m - i, n, gw + i * n);
    return loss;
}

// Three passes: the product, then dx = W^T dz reading W, then dW = dz x^T writing it. Streams that
// only read or only write run faster here than one that reads W and writes dW at once.
inline double dense_value_and_grad_three_passes(const double* w,
                                                const double* x,
                                                const double* b,
                                                std::size_t m,
                                                std::size_t n,
                                                double* gw,
                                                double* gx,
                                                double* gb) {
    gemv(w, x, m, n, gb);
    double loss = 0.0;
    dense::activation(gb, b, 0, m, gb, loss);
    std::fill(gx, gx + n, 0.0);
    dense::add_rows(w, n, 0, m, gb, gx);
    dense::outer(gb, x, m, n, gw);
    return loss;
}

// Read then write: one pass over W computing four rows' products, their dz and their share of dx
// while the rows are in cache, then dW = dz x^T written in a pass of its own (W read once, dW
// only written).
inline double dense_value_and_grad_read_then_write(const double* w,
                                                   const double* x,
                                                   const double* b,
                                                   std::size_t m,
                                                   std::size_t n,
                                                   double* gw,
                                                   double* gx,
                                                   double* gb) {
    std::fill(gx, gx + n, 0.0);
    double loss = 0.0;
    for (std::size_t i = 0; i < m; i += 4) {
        const std::size_t rows = std::min<std::size_t>(4, m - i);
        gemv(w + i * n, x, rows, n, gb + i);
        dense::activation(gb, b, i, rows, gb, loss);
        dense::add_rows(w, n, i, rows, gb, gx);
    }
    dense::outer(gb, x, m, n, gw);
    return loss;
}

// A network of two layers, loss sum_i tanh((W2 h + b2)_i)^2 with h = tanh(W1 x + b1), W1 m x n
// and W2 m x m, and its gradient with respect to W1, b1, W2, b2 and x: each layer as the dense
// layer's three passes, dW streamed past the cache where stream (faster where the matrices and
// their gradients overflow the cache). h and dh are the caller's arrays of m.
inline double network_value_and_grad(bool stream,
                                     const double* w1,
                                     const double* b1,
                                     const double* w2,
                                     const double* b2,
                                     const double* x,
                                     std::size_t m,
                                     std::size_t n,
                                     double* h,
                                     double* dh,
                                     double* gw1,
                                     double* gb1,
                                     double* gw2,
                                     double* gb2,
                                     double* gx) {
    gemv(w1, x, m, n, h);
    for (std::size_t i = 0; i < m; ++i)
        h[i] = std::tanh(h[i] + b1[i]);
    gemv(w2, h, m, m, gb2);
    double loss = 0.0;
    dense::activation(gb2, b2, 0, m, gb2, loss);
    std::fill(dh, dh + m, 0.0);
    dense::add_rows(w2, m, 0, m, gb2, dh);
    if (stream)
        dense::outer_streaming(gb2, h, m, m, gw2);
    else
        dense::outer(gb2, h, m, m, gw2);
    for (std::size_t i = 0; i < m; ++i)
        gb1[i] = dh[i] * (1.0 - h[i] * h[i]);
    std::fill(gx, gx + n, 0.0);
    dense::add_rows(w1, n, 0, m, gb1, gx);
    if (stream)
        dense::outer_streaming(gb1, x, m, n, gw1);
    else
        dense::outer(gb1, x, m, n, gw1);
    return loss;
}

// Read then write, dW written with stores that bypass the cache: for matrices larger than the
// cache, whose dW would only push W out of it.
inline double dense_value_and_grad_read_then_stream(const double* w,
                                                    const double* x,
                                                    const double* b,
                                                    std::size_t m,
                                                    std::size_t n,
                                                    double* gw,
                                                    double* gx,
                                                    double* gb) {
    std::fill(gx, gx + n, 0.0);
    double loss = 0.0;
    for (std::size_t i = 0; i < m; i += 4) {
        const std::size_t rows = std::min<std::size_t>(4, m - i);
        gemv(w + i * n, x, rows, n, gb + i);
        dense::activation(gb, b, i, rows, gb, loss);
        dense::add_rows(w, n, i, rows, gb, gx);
    }
    dense::outer_streaming(gb, x, m, n, gw);
    return loss;
}

// a_i = b_i + s c_i.
inline void triad(double* a, const double* b, const double* c, double s, std::size_t n) {
    std::size_t i = 0;
#if NABLA_BENCH_HAND_SIMD
    using detail::batch, detail::load, detail::whole, detail::width;
    const batch sb(s);
    for (; i < whole(n, width); i += width)
        detail::mul_add(sb, load(c + i), load(b + i)).store_unaligned(a + i);
#endif
    for (; i < n; ++i)
        a[i] = b[i] + s * c[i];
}

}  // namespace nabla_bench::hand

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
