// Array expressions against hand-written xsimd code (bench/array_baselines.hpp), xtensor's own
// evaluation and the scalar tape, side by side in one program: sum, an element-wise chain with
// exp, sqrt and a division, extended Rosenbrock, log-sum-exp and a dense layer (with Eigen's
// matrix-vector product where Eigen is installed), values and gradients, at sizes from 10^3 to
// 10^7, and the same functions as generic lambdas on the tape with whole arrays
// (one entry per array operation); Hessian-vector products of Rosenbrock against its hand-written
// tridiagonal Hessian; and the bandwidth of a STREAM triad measured in the same run,
// against which the large sizes are read (bytes that must move / time). Ratios are to the
// hand-written code.
//
//   build-bench/bench/array_gradient            (buildtype release, -march=native)

#include <nabla/array.hpp>
#include <nabla/reverse.hpp>

#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#if __has_include(<Eigen/Dense>)
#include <Eigen/Dense>
#define NABLA_BENCH_EIGEN 1
#else
#define NABLA_BENCH_EIGEN 0
#endif

#include "array_baselines.hpp"
#include "bench_util.hpp"

namespace {

using nabla_bench::contender;
using nabla_bench::keep;
using nabla_bench::race;
using nabla_bench::report;

std::vector<double> uniform(std::size_t n, double lo, double hi, unsigned salt) {
    std::vector<double> v(n);
    unsigned long long state = 0x9E3779B97F4A7C15ULL * (salt + 1);
    for (auto& e : v) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        e = lo + (hi - lo) * static_cast<double>(state >> 11) * 0x1.0p-53;
    }
    return v;
}

// Matrices and vectors on 64-byte boundaries, as JAX's and PyTorch's buffers are: no load or
// store of the hand-written code or of nabla spans two cache lines.
template <class T>
struct line_allocator {
    using value_type = T;
    line_allocator() = default;
    template <class U>
    line_allocator(const line_allocator<U>&) {}
    T* allocate(std::size_t n) {
        return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
    }
    void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
    template <class U>
    bool operator==(const line_allocator<U>&) const {
        return true;
    }
};
using aligned_vector = std::vector<double, line_allocator<double>>;
using aligned_matrix = xt::
    xtensor_container<xt::uvector<double, line_allocator<double>>, 2, xt::layout_type::row_major>;

aligned_vector aligned(const std::vector<double>& v) {
    return aligned_vector(v.begin(), v.end());
}

aligned_matrix square_matrix(const std::vector<double>& v, std::size_t n) {
    aligned_matrix m(std::array<std::size_t, 2>{n, n});
    std::copy(v.begin(), v.end(), m.data());
    return m;
}

xt::xtensor<double, 1> to_xtensor(const std::vector<double>& v) {
    xt::xtensor<double, 1> t(std::array<std::size_t, 1>{v.size()});
    std::copy(v.begin(), v.end(), t.begin());
    return t;
}

// Calls per round: about 2e7 elements' worth, at least one.
long calls_for(std::size_t n) {
    return std::max(1L, static_cast<long>(20'000'000 / std::max<std::size_t>(n, 1)));
}

const int rounds = 5;

std::string title(const char* workload, std::size_t n) {
    char text[128];
    std::snprintf(text, sizeof text, "%s, n = %.0e", workload, static_cast<double>(n));
    return text;
}

std::string square_title(const char* workload, std::size_t n) {
    char text[128];
    std::snprintf(text, sizeof text, "%s, W %zu x %zu", workload, n, n);
    return text;
}

// Bytes per second of a triad a = b + s c over n doubles (three arrays of 8 n bytes).
double triad_bandwidth(std::size_t n) {
    std::vector<double> a(n), b = uniform(n, 0.0, 1.0, 1), c = uniform(n, 0.0, 1.0, 2);
    std::vector<contender> cs{{"triad"}};
    race(cs, calls_for(n), rounds, [&](long) {
        nabla_bench::hand::triad(a.data(), b.data(), c.data(), 0.5, n);
        keep(a[n / 2]);
    });
    return 3.0 * 8.0 * static_cast<double>(n) / (cs[0].best_ns * 1e-9);
}

void print_bandwidth(const char* what, std::size_t n, double bytes, double ns, double triad) {
    const double rate = bytes / (ns * 1e-9);
    std::printf("  %-28s %8.2f GB/s        %5.2f of the triad's %.2f GB/s\n", what, rate * 1e-9,
                rate / triad, triad * 1e-9);
    nabla_bench::record(title("bandwidth", n).c_str(), what, "fraction of triad", rate / triad);
}

// A peer's value against nabla's, checked before it is timed, to 1e-12 of `scale` (the sum of
// the terms' magnitudes where a sum may cancel).
void check_peer(const char* what, double peer, double nabla_value, double scale = 0.0) {
    if (!(std::abs(peer - nabla_value) <= 1e-12 * std::max(scale, std::abs(nabla_value))))
        std::printf("  MISMATCH: %s %.17g, nabla %.17g\n", what, peer, nabla_value);
}

void bench_sum(std::size_t n, double triad) {
    const auto [x] = nabla::array_variables<1>();
    const auto f = sum(x);
    const auto xs = uniform(n, -1.0, 1.0, 3);
    const xt::xtensor<double, 1> xt_xs = to_xtensor(xs);
    check_peer("xt::sum", xt::sum(xt_xs, xt::evaluation_strategy::immediate)(), f(xs),
               xt::sum(xt::abs(xt_xs))());
    std::vector<contender> cs{{"hand-written xsimd"}, {"nabla sum(x)"}, {"xt::sum"}};
    race(
        cs, calls_for(n), rounds, [&](long) { keep(nabla_bench::hand::sum(xs.data(), n)); },
        [&](long) { keep(f(xs)); },
        [&](long) { keep(xt::sum(xt_xs, xt::evaluation_strategy::immediate)()); });
    report(title("sum", n).c_str(), cs);
    if (n >= 10'000'000)
        print_bandwidth("sum", n, 8.0 * static_cast<double>(n), cs[1].best_ns, triad);
}

// exp over an array in the L1 cache, written into another: xsimd's kernel, nabla's (the one its
// array expressions use, called directly on batches), and nabla's expression exp(x).
void bench_exp(std::size_t n) {
    const auto [x] = nabla::array_variables<1>();
    const auto f = exp(x);
    const auto xs = uniform(n, -5.0, 5.0, 13);
    std::vector<double> out(n);
    std::vector<contender> cs{{"xsimd::exp"}, {"nabla::simd::exp"}, {"nabla exp(x)"}};
#if NABLA_BENCH_HAND_SIMD
    using batch = nabla_bench::hand::detail::batch;
    const auto on_batches = [&](auto kernel) {
        std::size_t i = 0;
        for (; i < nabla_bench::hand::detail::whole(n, batch::size); i += batch::size)
            kernel(batch::load_unaligned(xs.data() + i)).store_unaligned(out.data() + i);
        for (; i < n; ++i)
            out[i] = std::exp(xs[i]);
        keep(out[n / 2]);
    };
    race(
        cs, calls_for(n), rounds,
        [&](long) { on_batches([](const batch& b) { return xsimd::exp(b); }); },
        [&](long) { on_batches([](const batch& b) { return nabla::simd::exp(b); }); },
        [&](long) {
            nabla::evaluate_into(f, out, xs);
            keep(out[n / 2]);
        });
    report(title("exp of each element", n).c_str(), cs);
#endif
}

// A contender's time against the fastest of the hand-written ones (indices into contenders).
void print_against_fastest_hand(const std::vector<contender>& contenders,
                                std::initializer_list<std::size_t> hand,
                                std::size_t which) {
    double fastest = std::numeric_limits<double>::infinity();
    for (const std::size_t k : hand)
        fastest = std::min(fastest, contenders[k].best_ns);
    std::printf("  %s / fastest hand-written: %.2f\n", contenders[which].name,
                contenders[which].best_ns / fastest);
}

void bench_chain(std::size_t n, double triad) {
    const auto [x, y] = nabla::array_variables<2>();
    const auto f = sum(exp(-0.5 * x) * sqrt(x * x + y * y + 1.0) / (1.0 + y * y));
    const auto xs = uniform(n, -1.0, 1.0, 4), ys = uniform(n, 0.5, 2.0, 5);
    const xt::xtensor<double, 1> xt_xs = to_xtensor(xs), xt_ys = to_xtensor(ys);
    std::vector<double> gx(n), gy(n);
    // xtensor both ways: immediate reductions (faster in the cache) and lazy ones (no temporary).
    const auto xtensor_chain = [&](auto strategy) {
        return xt::sum(xt::exp(-0.5 * xt_xs) * xt::sqrt(xt_xs * xt_xs + xt_ys * xt_ys + 1.0) /
                           (1.0 + xt_ys * xt_ys),
                       strategy)();
    };
    check_peer("xtensor", xtensor_chain(xt::evaluation_strategy::immediate), f(xs, ys));
    check_peer("xtensor, lazy", xtensor_chain(xt::evaluation_strategy::lazy), f(xs, ys));
    std::vector<contender> values{{"hand-written xsimd"},
                                  {"nabla"},
                                  {"xtensor"},
                                  {"hand-written, nabla's exp"},
                                  {"xtensor, lazy"}};
    race(
        values, calls_for(n), rounds,
        [&](long) { keep(nabla_bench::hand::chain_value(xs.data(), ys.data(), n)); },
        [&](long) { keep(f(xs, ys)); },
        [&](long) { keep(xtensor_chain(xt::evaluation_strategy::immediate)); },
        [&](long) { keep(nabla_bench::hand::chain_value<true>(xs.data(), ys.data(), n)); },
        [&](long) { keep(xtensor_chain(xt::evaluation_strategy::lazy)); });
    report(title("element-wise chain, value", n).c_str(), values);
    print_against_fastest_hand(values, {0, 3}, 1);

    std::vector<contender> gradients{{"hand-written xsimd"},
                                     {"nabla, into arrays"},
                                     {"nabla, new arrays"},
                                     {"hand-written, nabla's exp"}};
    race(
        gradients, calls_for(n), rounds,
        [&](long) {
            keep(nabla_bench::hand::chain_value_and_grad(xs.data(), ys.data(), n, gx.data(),
                                                         gy.data()));
            keep(gx[n / 2]);
        },
        [&](long) {
            keep(nabla::value_and_grad_into(f, std::tie(gx, gy), xs, ys));
            keep(gx[n / 2]);
        },
        [&](long) {
            const auto [v, a, b] = nabla::value_and_grad(f, xs, ys);
            keep(v);
            keep(a[n / 2]);
        },
        [&](long) {
            keep(nabla_bench::hand::chain_value_and_grad<true>(xs.data(), ys.data(), n, gx.data(),
                                                               gy.data()));
            keep(gx[n / 2]);
        });
    report(title("element-wise chain, value and gradient", n).c_str(), gradients);
    print_against_fastest_hand(gradients, {0, 3}, 1);
    std::printf("  nabla gradient / nabla value: %.2f\n", gradients[1].best_ns / values[1].best_ns);
    nabla_bench::record(title("element-wise chain", n).c_str(), "nabla", "gradient / value",
                        gradients[1].best_ns / values[1].best_ns);
    if (n >= 10'000'000) {
        // The value reads two arrays; the gradient reads two and writes two.
        print_bandwidth("chain value", n, 16.0 * static_cast<double>(n), values[1].best_ns, triad);
        print_bandwidth("chain value and gradient", n, 32.0 * static_cast<double>(n),
                        gradients[1].best_ns, triad);
    }
}

// Extended Rosenbrock as a generic lambda over whole arrays (on the tape, one entry per array
// operation), and element by element (for the scalar tape).
const auto rosenbrock_arrays = [](const auto& v) {
    return sum(100.0 * square(v(nabla::from<1>) - square(v(nabla::upto<-1>))) +
               square(1.0 - v(nabla::upto<-1>)));
};
const auto rosenbrock_elements = [](const auto& v) {
    using T = std::decay_t<decltype(v[0])>;
    T total = 0.0;
    for (std::size_t i = 0; i + 1 < v.size(); ++i) {
        auto d = v[i + 1] - v[i] * v[i];
        auto e = 1.0 - v[i];
        total += 100.0 * d * d + e * e;
    }
    return total;
};

void bench_rosenbrock(std::size_t n, bool with_tape, double triad) {
    const auto [x] = nabla::array_variables<1>();
    const auto a = x(nabla::upto<-1>);
    const auto b = x(nabla::from<1>);
    const auto f = sum(100.0 * square(b - square(a)) + square(1.0 - a));
    const auto xs = uniform(n, 0.5, 1.5, 6);
    std::vector<double> g(n);
    std::vector<contender> values{{"hand-written xsimd"}, {"nabla"}};
    race(
        values, calls_for(n), rounds,
        [&](long) { keep(nabla_bench::hand::rosenbrock_value(xs.data(), n)); },
        [&](long) { keep(f(xs)); });
    report(title("extended Rosenbrock, value", n).c_str(), values);

    std::vector<contender> gradients{{"hand-written xsimd"}, {"nabla, into arrays"}};
    if (with_tape) {
        gradients.push_back({"nabla tape, whole arrays"});
        gradients.push_back({"nabla scalar tape"});
    }
    const auto hand = [&](long) {
        keep(nabla_bench::hand::rosenbrock_value_and_grad(xs.data(), n, g.data()));
        keep(g[n / 2]);
    };
    const auto array = [&](long) {
        keep(nabla::value_and_grad_into(f, std::tie(g), xs));
        keep(g[n / 2]);
    };
    if (with_tape) {
        race(
            gradients, calls_for(n), rounds, hand, array,
            [&](long) {
                const auto r = nabla::value_and_grad(nabla::mode::arrays, rosenbrock_arrays, xs);
                keep(r.value);
            },
            [&](long) {
                const auto r = nabla::value_and_grad(nabla::mode::reverse, rosenbrock_elements, xs);
                keep(r.value);
            });
    } else {
        race(gradients, calls_for(n), rounds, hand, array);
    }
    report(title("extended Rosenbrock, value and gradient", n).c_str(), gradients);
    if (n >= 10'000'000)
        print_bandwidth("Rosenbrock value and gradient", n, 16.0 * static_cast<double>(n),
                        gradients[1].best_ns, triad);
    std::printf("  nabla gradient / hand-written value: %.2f\n",
                gradients[1].best_ns / values[0].best_ns);
}

// Hessian-vector products of extended Rosenbrock: hand-written (the tridiagonal Hessian), the
// static expression's hvp, the tape with whole arrays of dual numbers, the scalar tape; and each
// against nabla's gradient of the same kind.
void bench_second(std::size_t n) {
    const auto [x] = nabla::array_variables<1>();
    const auto f = sum(100.0 * square(x(nabla::from<1>) - square(x(nabla::upto<-1>))) +
                       square(1.0 - x(nabla::upto<-1>)));
    const auto xs = uniform(n, 0.5, 1.5, 6), vs = uniform(n, -1.0, 1.0, 8);
    std::vector<double> hv(n), g(n);
    std::vector<contender> products{{"hand-written"},
                                    {"nabla static hvp"},
                                    {"nabla tape, whole arrays"},
                                    {"nabla scalar tape"}};
    race(
        products, calls_for(n), rounds,
        [&](long) {
            nabla_bench::hand::rosenbrock_hvp(xs.data(), vs.data(), n, hv.data());
            keep(hv[n / 2]);
        },
        [&](long) { keep(nabla::hvp(f, std::tie(xs), std::tie(vs))[n / 2]); },
        [&](long) {
            keep(nabla::hvp(nabla::mode::arrays, rosenbrock_arrays, std::tie(xs),
                            std::tie(vs))[n / 2]);
        },
        [&](long) { keep(nabla::hvp(rosenbrock_elements, xs, vs)[n / 2]); });
    report(title("extended Rosenbrock, Hessian-vector product", n).c_str(), products);
    std::vector<contender> gradients{{"nabla static"}, {"nabla tape, whole arrays"}};
    race(
        gradients, calls_for(n), rounds,
        [&](long) {
            keep(nabla::value_and_grad_into(f, std::tie(g), xs));
            keep(g[n / 2]);
        },
        [&](long) {
            keep(nabla::value_and_grad(nabla::mode::arrays, rosenbrock_arrays, xs).value);
        });
    std::printf("  hvp / gradient: static %.2f, tape with whole arrays %.2f\n",
                products[1].best_ns / gradients[0].best_ns,
                products[2].best_ns / gradients[1].best_ns);
    nabla_bench::record(title("extended Rosenbrock hvp", n).c_str(), "nabla static",
                        "hvp / gradient", products[1].best_ns / gradients[0].best_ns);
    nabla_bench::record(title("extended Rosenbrock hvp", n).c_str(), "nabla tape, whole arrays",
                        "hvp / gradient", products[2].best_ns / gradients[1].best_ns);
}

void bench_logsumexp(std::size_t n) {
    const auto [x] = nabla::array_variables<1>();
    const auto f = logsumexp(x);
    const auto by_hand = log(sum(exp(x - max(x)))) + max(x);
    const auto xs = uniform(n, -3.0, 3.0, 7);
    const xt::xtensor<double, 1> xt_xs = to_xtensor(xs);
    std::vector<double> g(n);
    const auto xtensor_logsumexp = [&](auto strategy) {
        const double m = xt::amax(xt_xs, strategy)();
        return std::log(xt::sum(xt::exp(xt_xs - m), strategy)()) + m;
    };
    check_peer("xtensor", xtensor_logsumexp(xt::evaluation_strategy::immediate), f(xs));
    check_peer("xtensor, lazy", xtensor_logsumexp(xt::evaluation_strategy::lazy), f(xs));
    std::vector<contender> values{{"hand-written xsimd"},           {"nabla logsumexp(x)"},
                                  {"nabla log(sum(exp(x - max)))"}, {"xtensor"},
                                  {"hand-written, nabla's exp"},    {"xtensor, lazy"}};
    race(
        values, calls_for(n), rounds,
        [&](long) { keep(nabla_bench::hand::logsumexp_value(xs.data(), n)); },
        [&](long) { keep(f(xs)); }, [&](long) { keep(by_hand(xs)); },
        [&](long) { keep(xtensor_logsumexp(xt::evaluation_strategy::immediate)); },
        [&](long) { keep(nabla_bench::hand::logsumexp_value<true>(xs.data(), n)); },
        [&](long) { keep(xtensor_logsumexp(xt::evaluation_strategy::lazy)); });
    report(title("log-sum-exp, value", n).c_str(), values);
    print_against_fastest_hand(values, {0, 4}, 1);

    std::vector<contender> gradients{{"hand-written xsimd"},
                                     {"nabla logsumexp(x)"},
                                     {"nabla log(sum(exp(x - max)))"},
                                     {"nabla tape, whole arrays"},
                                     {"hand-written, nabla's exp"}};
    const auto generic = [](const auto& v) {
        using std::log;
        const auto m = amax(v);
        return log(sum(exp(v - m))) + m;
    };
    race(
        gradients, calls_for(n), rounds,
        [&](long) {
            keep(nabla_bench::hand::logsumexp_value_and_grad(xs.data(), n, g.data()));
            keep(g[n / 2]);
        },
        [&](long) {
            keep(nabla::value_and_grad_into(f, std::tie(g), xs));
            keep(g[n / 2]);
        },
        [&](long) {
            keep(nabla::value_and_grad_into(by_hand, std::tie(g), xs));
            keep(g[n / 2]);
        },
        [&](long) {
            const auto r = nabla::value_and_grad(nabla::mode::arrays, generic, xs);
            keep(r.value);
        },
        [&](long) {
            keep(nabla_bench::hand::logsumexp_value_and_grad<true>(xs.data(), n, g.data()));
            keep(g[n / 2]);
        });
    report(title("log-sum-exp, value and gradient", n).c_str(), gradients);
    print_against_fastest_hand(gradients, {0, 4}, 1);
    std::printf("  nabla gradient / nabla value: %.2f\n", gradients[1].best_ns / values[1].best_ns);
    nabla_bench::record(title("log-sum-exp", n).c_str(), "nabla", "gradient / value",
                        gradients[1].best_ns / values[1].best_ns);
}

// A matrix product C = A B of n x n matrices (Eigen's, nabla's in a static expression written
// into an array, nabla's on the tape), and the value and gradient of the least-squares loss
// 0.5 |A B - T|^2 with respect to A and B: three products, R = A B - T, dA = R B^T, dB = A^T R
// (Eigen, written out; nabla, the static expression).
void bench_matmul(std::size_t n) {
#if NABLA_BENCH_EIGEN
    using matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const auto en = static_cast<Eigen::Index>(n);
    const auto av = uniform(n * n, -1.0, 1.0, 11), bv = uniform(n * n, -1.0, 1.0, 12),
               tv = uniform(n * n, -1.0, 1.0, 13);
    const auto shape = std::array<std::size_t, 2>{n, n};
    xt::xtensor<double, 2> a(shape), b(shape), t(shape), out(shape), ga(shape), gb(shape);
    std::copy(av.begin(), av.end(), a.data());
    std::copy(bv.begin(), bv.end(), b.data());
    std::copy(tv.begin(), tv.end(), t.data());
    const Eigen::Map<const matrix> ea(av.data(), en, en), eb(bv.data(), en, en),
        et(tv.data(), en, en);
    matrix ec(en, en), er(en, en), ega(en, en), egb(en, en);
    const auto [A, B, T] = nabla::array_variables<3>();
    const auto product = matmul(A, B);
    const nabla::var_matrix ta(a), tb(b);
    const long calls =
        std::max(1L, static_cast<long>(2e9 / (2.0 * static_cast<double>(n * n * n))));
    std::vector<contender> products{{"Eigen"}, {"nabla static"}, {"nabla tape"}};
    race(
        products, calls, rounds,
        [&](long) {
            ec.noalias() = ea * eb;
            keep(ec(0, 0));
        },
        [&](long) {
            nabla::evaluate_into(product, out, a, b);
            keep(out(0, 0));
        },
        [&](long) { keep(matmul(ta, tb).value(0, 0)); });
    report(square_title("matrix product A B", n).c_str(), products);
    std::printf("  nabla's product / Eigen's speed: %.2f\n",
                products[0].best_ns / products[1].best_ns);
    nabla_bench::record(square_title("matrix product A B", n).c_str(), "nabla static",
                        "speed / Eigen's", products[0].best_ns / products[1].best_ns);

    const auto loss = 0.5 * sum(square(matmul(A, B) - T));
    std::vector<contender> gradients{{"Eigen, three products"}, {"nabla static"}};
    std::vector<double> gt(n * n);
    race(
        gradients, calls, rounds,
        [&](long) {
            er.noalias() = ea * eb;
            er -= et;
            ega.noalias() = er * eb.transpose();
            egb.noalias() = ea.transpose() * er;
            keep(0.5 * er.squaredNorm());
            keep(ega(0, 0));
        },
        [&](long) {
            keep(nabla::value_and_grad_into(loss, std::tie(ga, gb, gt), a, b, t));
            keep(ga(0, 0));
        });
    report(square_title("least squares 0.5 |A B - T|^2, value and gradient", n).c_str(), gradients);
    std::printf("  value and gradient / one product (Eigen's): Eigen %.2f, nabla %.2f\n",
                gradients[0].best_ns / products[0].best_ns,
                gradients[1].best_ns / products[0].best_ns);
#else
    (void)n;
#endif
}

// The element-wise chain, Rosenbrock and log-sum-exp on one thread and on two
// (nabla::set_array_threads), value and gradient into the caller's arrays.
void bench_threads(std::size_t n) {
    const auto [x, y] = nabla::array_variables<2>();
    const auto chain = sum(exp(-0.5 * x) * sqrt(x * x + y * y + 1.0) / (1.0 + y * y));
    const auto rosenbrock = sum(100.0 * square(x(nabla::from<1>) - square(x(nabla::upto<-1>))) +
                                square(1.0 - x(nabla::upto<-1>)));
    const auto lse = logsumexp(x);
    const auto xs = uniform(n, 0.5, 1.5, 4), ys = uniform(n, 0.5, 2.0, 5);
    std::vector<double> gx(n), gy(n);
    const auto two_ways = [&](const char* name, const auto& f, auto&&... gradients) {
        std::vector<contender> c{{"nabla, 1 thread"}, {"nabla, 2 threads"}};
        race(
            c, calls_for(n), rounds,
            [&](long) {
                nabla::set_array_threads(1);
                keep(nabla::value_and_grad_into(f, std::tie(gradients...), xs, ys));
            },
            [&](long) {
                nabla::set_array_threads(2);
                keep(nabla::value_and_grad_into(f, std::tie(gradients...), xs, ys));
            });
        nabla::set_array_threads(1);
        report(title(name, n).c_str(), c);
        std::printf("  speed-up on 2 threads: %.2fx\n", c[0].best_ns / c[1].best_ns);
        nabla_bench::record(title(name, n).c_str(), "nabla", "speed-up on 2 threads",
                            c[0].best_ns / c[1].best_ns);
    };
    two_ways("threads: element-wise chain, value and gradient", chain, gx, gy);
    two_ways("threads: extended Rosenbrock, value and gradient", rosenbrock, gx, gy);
    two_ways("threads: log-sum-exp, value and gradient", lse, gx, gy);

    // A grid: the heat step's adjoint (its fused gradient loop in chunks of rows) on a square of
    // about n elements.
    const auto side = static_cast<std::size_t>(std::sqrt(static_cast<double>(n)));
    const auto [u] = nabla::array_variables<1>();
    const auto inner = nabla::range<1, -1>;
    const auto step =
        0.2 * u(inner, inner) + 0.2 * ((u(nabla::upto<-2>, inner) + u(nabla::from<2>, inner)) +
                                       (u(inner, nabla::upto<-2>) + u(inner, nabla::from<2>)));
    xt::xtensor<double, 2> field(std::array<std::size_t, 2>{side, side});
    const auto values = uniform(side * side, 0.0, 1.0, 11);
    std::copy(values.begin(), values.end(), field.data());
    xt::xtensor<double, 2> w(std::array<std::size_t, 2>{side - 2, side - 2});
    const auto cot = uniform((side - 2) * (side - 2), -1.0, 1.0, 12);
    std::copy(cot.begin(), cot.end(), w.data());
    xt::xtensor<double, 2> g = field;
    std::vector<contender> c{{"nabla, 1 thread"}, {"nabla, 2 threads"}};
    race(
        c, calls_for(side * side), rounds,
        [&](long) {
            nabla::set_array_threads(1);
            nabla::apply_vjp_into(step, std::tie(g), w, field);
            keep(g(side / 2, side / 2));
        },
        [&](long) {
            nabla::set_array_threads(2);
            nabla::apply_vjp_into(step, std::tie(g), w, field);
            keep(g(side / 2, side / 2));
        });
    nabla::set_array_threads(1);
    char name[96];
    std::snprintf(name, sizeof name, "threads: heat step adjoint, %zu x %zu", side, side);
    report(name, c);
    std::printf("  speed-up on 2 threads: %.2fx\n", c[0].best_ns / c[1].best_ns);
    nabla_bench::record(name, "nabla", "speed-up on 2 threads", c[0].best_ns / c[1].best_ns);
}

// The dense layer loss sum(tanh(W x + b)^2) for an n x n W: its matrix-vector product alone (the
// hand-written one, Eigen's, nabla's matvec on constants) and its value and gradient (hand-written,
// and on nabla's tape with W as an xt::xtensor<double, 2>).
void bench_dense(std::size_t n) {
    const auto wu = uniform(n * n, -1.0 / static_cast<double>(n), 1.0 / static_cast<double>(n), 8);
    const aligned_vector wv = aligned(wu), xs = aligned(uniform(n, -1.0, 1.0, 9)),
                         bs = aligned(uniform(n, -0.1, 0.1, 10));
    const aligned_matrix w = square_matrix(wu, n);
    aligned_vector y(n), gw(n * n), gx(n), gb(n);
    // The tape's matrix and gradient: xt::xtensor, 16 bytes past a cache line as large
    // allocations are.
    xt::xtensor<double, 2> w_off(std::array<std::size_t, 2>{n, n}), gw_off = w_off;
    std::copy(wu.begin(), wu.end(), w_off.data());
    const nabla::var_matrix wc(w);
    const nabla::var_array xc(xs);
    std::vector<contender> products{{"hand-written xsimd"}, {"nabla matvec"}};
#if NABLA_BENCH_EIGEN
    products.push_back({"Eigen"});
    // A copy of its own, as nabla's var_matrix has: no contender finds its matrix in the cache
    // because another one read it last.
    const aligned_vector w_eigen = wv;
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>
        we(w_eigen.data(), static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    const Eigen::Map<const Eigen::VectorXd> xe(xs.data(), static_cast<Eigen::Index>(n));
    Eigen::VectorXd ye(static_cast<Eigen::Index>(n));
#endif
    const long calls = std::max(1L, static_cast<long>(20'000'000 / (n * n)));
    race(
        products, calls, rounds,
        [&](long) {
            nabla_bench::hand::gemv(wv.data(), xs.data(), n, n, y.data());
            keep(y[n / 2]);
        },
        [&](long) { keep(matvec(wc, xc).value(n / 2)); }
#if NABLA_BENCH_EIGEN
        ,
        [&](long) {
            ye.noalias() = we * xe;
            keep(ye[static_cast<Eigen::Index>(n / 2)]);
        }
#endif
    );
    report(square_title("dense layer, W x", n).c_str(), products);

    const auto layer = [](const auto& weights, const auto& x, const auto& b) {
        const auto h = tanh(matvec(weights, x) + b);
        return sum(h * h);
    };
    const auto [W, x, b] = nabla::array_variables<3>();
    const auto loss = layer(W, x, b);
    std::vector<contender> gradients{
        {"hand-written, read then write"}, {"hand-written, read then write, streaming dW"},
        {"hand-written, three passes"},    {"hand-written, one pass"},
        {"hand-written, two passes"},      {"nabla static"},
        {"nabla tape, into arrays"},       {"nabla tape, new arrays"},
        {"nabla static, dW stored"},       {"nabla static, dW streamed"}};
    // nabla reads and writes the hand-written code's matrices: no contender finds its matrix and
    // gradient in the cache because it ran last.
    const nabla::matrix_ref<const double> w_shared(wv.data(), n, n);
    const nabla::matrix_ref<double> gwt(gw.data(), n, n);
    // nabla's choice between storing and streaming dW is stream_threshold(); both, for the
    // record.
    const auto nabla_with = [&](std::size_t threshold) {
        const std::size_t chosen = nabla::detail::stream_threshold();
        nabla::detail::stream_threshold() = threshold;
        keep(nabla::value_and_grad_into(loss, std::tie(gwt, gx, gb), w_shared, xs, bs));
        nabla::detail::stream_threshold() = chosen;
        keep(gwt(n / 2, n / 2));
    };
    race(
        gradients, calls, rounds,
        [&](long) {
            keep(nabla_bench::hand::dense_value_and_grad_read_then_write(
                wv.data(), xs.data(), bs.data(), n, n, gw.data(), gx.data(), gb.data()));
            keep(gw[n / 2]);
        },
        [&](long) {
            keep(nabla_bench::hand::dense_value_and_grad_read_then_stream(
                wv.data(), xs.data(), bs.data(), n, n, gw.data(), gx.data(), gb.data()));
            keep(gw[n / 2]);
        },
        [&](long) {
            keep(nabla_bench::hand::dense_value_and_grad_three_passes(
                wv.data(), xs.data(), bs.data(), n, n, gw.data(), gx.data(), gb.data()));
            keep(gw[n / 2]);
        },
        [&](long) {
            keep(nabla_bench::hand::dense_value_and_grad_one_pass(
                wv.data(), xs.data(), bs.data(), n, n, gw.data(), gx.data(), gb.data()));
            keep(gw[n / 2]);
        },
        [&](long) {
            keep(nabla_bench::hand::dense_value_and_grad(wv.data(), xs.data(), bs.data(), n, n,
                                                         gw.data(), gx.data(), gb.data()));
            keep(gw[n / 2]);
        },
        [&](long) {
            keep(nabla::value_and_grad_into(loss, std::tie(gwt, gx, gb), w_shared, xs, bs));
            keep(gwt(n / 2, n / 2));
        },
        [&](long) {
            keep(nabla::value_and_grad_into(nabla::mode::arrays, layer, std::tie(gw_off, gx, gb),
                                            w_off, xs, bs));
            keep(gw_off(n / 2, n / 2));
        },
        [&](long) {
            const auto r = nabla::value_and_grad(nabla::mode::arrays, layer, w_off, xs, bs);
            keep(r.value);
        },
        [&](long) { nabla_with(0); }, [&](long) { nabla_with(1); });
    report(square_title("dense layer, value and gradient", n).c_str(), gradients);
    const double hand = std::min({gradients[0].best_ns, gradients[1].best_ns, gradients[2].best_ns,
                                  gradients[3].best_ns, gradients[4].best_ns});
    std::printf("  value and gradient / hand-written W x: fastest hand-written %.2f, nabla static "
                "%.2f, nabla tape %.2f; nabla static / fastest hand-written %.2fx\n",
                hand / products[0].best_ns, gradients[5].best_ns / products[0].best_ns,
                gradients[6].best_ns / products[0].best_ns, gradients[5].best_ns / hand);
}

// A network of two layers, sum(tanh(W2 tanh(W1 x + b1) + b2)^2) with n x n matrices: value and
// gradient hand-written (each layer as the dense layer's three passes) and by nabla's static
// expression, whose inner layer is an operand of the outer product (computed first, pulled back
// after); against one hand-written product W x.
void bench_network(std::size_t n) {
    const double scale = 1.0 / static_cast<double>(n);
    const auto w1u = uniform(n * n, -scale, scale, 11), w2u = uniform(n * n, -scale, scale, 12);
    const aligned_vector w1v = aligned(w1u), w2v = aligned(w2u),
                         xs = aligned(uniform(n, -1.0, 1.0, 13)),
                         b1 = aligned(uniform(n, -0.1, 0.1, 14)),
                         b2 = aligned(uniform(n, -0.1, 0.1, 15));
    const aligned_matrix w1 = square_matrix(w1u, n), w2 = square_matrix(w2u, n);
    aligned_vector h(n), dh(n), gb1(n), gb2(n), gx(n), y(n), gw1(n * n), gw2(n * n);
    aligned_matrix g1(std::array<std::size_t, 2>{n, n}), g2(std::array<std::size_t, 2>{n, n});
    const auto network = [](const auto& a1, const auto& c1, const auto& a2, const auto& c2,
                            const auto& x) {
        const auto z = tanh(matvec(a2, tanh(matvec(a1, x) + c1)) + c2);
        return sum(z * z);
    };
    const auto [W1, B1, W2, B2, X] = nabla::array_variables<5>();
    const auto loss = network(W1, B1, W2, B2, X);
    const double want = nabla_bench::hand::network_value_and_grad(
        false, w1v.data(), b1.data(), w2v.data(), b2.data(), xs.data(), n, n, h.data(), dh.data(),
        gw1.data(), gb1.data(), gw2.data(), gb2.data(), gx.data());
    aligned_vector hb1(n), hb2(n), hx(n);
    const double got =
        nabla::value_and_grad_into(loss, std::tie(g1, hb1, g2, hb2, hx), w1, b1, w2, b2, xs);
    double worst = std::abs(got - want) / std::abs(want);
    for (std::size_t k = 0; k < n * n; ++k)
        worst = std::max({worst, std::abs(g1.data()[k] - gw1[k]), std::abs(g2.data()[k] - gw2[k])});
    for (std::size_t k = 0; k < n; ++k)
        worst = std::max({worst, std::abs(hb1[k] - gb1[k]), std::abs(hx[k] - gx[k])});
    if (worst > 1e-10) {
        std::printf("network, n = %zu: nabla and the hand-written gradient differ by %g\n", n,
                    worst);
        std::exit(1);
    }
    const long calls = std::max(1L, static_cast<long>(10'000'000 / (n * n)));
    std::vector<contender> product{{"hand-written W x"}};
    race(product, calls, rounds, [&](long) {
        nabla_bench::hand::gemv(w1v.data(), xs.data(), n, n, y.data());
        keep(y[n / 2]);
    });
    // Timed on the hand-written code's matrices and gradients: no contender finds them in the
    // cache because it ran last.
    const nabla::matrix_ref<const double> w1_shared(w1v.data(), n, n), w2_shared(w2v.data(), n, n);
    const nabla::matrix_ref<double> g1_shared(gw1.data(), n, n), g2_shared(gw2.data(), n, n);
    std::vector<contender> gradients{
        {"hand-written, dW stored"}, {"nabla static"}, {"hand-written, dW streamed"}};
    const auto hand = [&](bool stream) {
        keep(nabla_bench::hand::network_value_and_grad(
            stream, w1v.data(), b1.data(), w2v.data(), b2.data(), xs.data(), n, n, h.data(),
            dh.data(), gw1.data(), gb1.data(), gw2.data(), gb2.data(), gx.data()));
        keep(gw1[n / 2]);
    };
    race(
        gradients, calls, rounds, [&](long) { hand(false); },
        [&](long) {
            keep(nabla::value_and_grad_into(loss, std::tie(g1_shared, hb1, g2_shared, hb2, hx),
                                            w1_shared, b1, w2_shared, b2, xs));
            keep(g1_shared(n / 2, n / 2));
        },
        [&](long) { hand(true); });
    // The faster of the hand-written ways is the baseline.
    if (gradients[2].best_ns < gradients[0].best_ns)
        std::swap(gradients[0], gradients[2]);
    report(square_title("network of two layers, value and gradient", n).c_str(), gradients);
    std::printf("  / hand-written W x: hand-written %.2f, nabla %.2f; nabla / hand-written %.2fx\n",
                gradients[0].best_ns / product[0].best_ns,
                gradients[1].best_ns / product[0].best_ns,
                gradients[1].best_ns / gradients[0].best_ns);
    nabla_bench::record(square_title("network of two layers", n).c_str(), "nabla",
                        "value and gradient / hand-written",
                        gradients[1].best_ns / gradients[0].best_ns);
}

// One explicit step of the heat equation on an n x n field (interior points updated, the
// boundary kept) and its adjoint, each a call: the hand-written code of array_baselines.hpp, and
// nabla's interior expression written into the interior (evaluate_into) with the boundary
// copied; the adjoint is its pullback (apply_vjp_into) plus the boundary's own adjoint.
void bench_heat(std::size_t n) {
    const double r = 0.2;
    const auto field = uniform(n * n, 0.0, 1.0, 11);
    const auto adjoint_out = uniform(n * n, -1.0, 1.0, 12);
    xt::xtensor<double, 2> u(std::array<std::size_t, 2>{n, n});
    std::copy(field.begin(), field.end(), u.data());
    xt::xtensor<double, 2> next = u, hand_next = u;
    xt::xtensor<double, 2> a(std::array<std::size_t, 2>{n, n});
    std::copy(adjoint_out.begin(), adjoint_out.end(), a.data());
    xt::xtensor<double, 2> abar = xt::zeros<double>({n, n}), hand_abar = abar;

    const auto [x] = nabla::array_variables<1>();
    const auto inner = nabla::range<1, -1>;
    const auto step = (1.0 - 4.0 * r) * x(inner, inner) +
                      r * ((x(nabla::upto<-2>, inner) + x(nabla::from<2>, inner)) +
                           (x(inner, nabla::upto<-2>) + x(inner, nabla::from<2>)));
    const auto copy_boundary = [n](const double* from, double* to) {
        std::copy(from, from + n, to);
        for (std::size_t i = 1; i + 1 < n; ++i) {
            to[i * n] = from[i * n];
            to[i * n + n - 1] = from[i * n + n - 1];
        }
        std::copy(from + (n - 1) * n, from + n * n, to + (n - 1) * n);
    };
    const auto nabla_step = [&] {
        copy_boundary(u.data(), next.data());
        nabla::evaluate_into(step, nabla::matrix_ref(next.data() + n + 1, n - 2, n - 2, n), u);
    };
    const auto nabla_adjoint = [&] {
        nabla::apply_vjp_into(step, std::tie(abar),
                              nabla::matrix_ref(a.data() + n + 1, n - 2, n - 2, n), u);
        // The boundary passes its adjoint through unchanged.
        double* g = abar.data();
        const double* w = a.data();
        for (std::size_t j = 0; j < n; ++j) {
            g[j] += w[j];
            g[(n - 1) * n + j] += w[(n - 1) * n + j];
        }
        for (std::size_t i = 1; i + 1 < n; ++i) {
            g[i * n] += w[i * n];
            g[i * n + n - 1] += w[i * n + n - 1];
        }
    };
    // Both agree with the hand-written code before they are timed.
    nabla_step();
    nabla_bench::hand::heat_step(u.data(), n, r, hand_next.data());
    nabla_adjoint();
    nabla_bench::hand::heat_adjoint(a.data(), n, r, hand_abar.data());
    double step_error = 0.0, adjoint_error = 0.0;
    for (std::size_t k = 0; k < n * n; ++k) {
        step_error = std::max(step_error, std::abs(next.data()[k] - hand_next.data()[k]));
        adjoint_error = std::max(adjoint_error, std::abs(abar.data()[k] - hand_abar.data()[k]));
    }
    if (step_error > 1e-12 || adjoint_error > 1e-12)
        std::printf("  MISMATCH: step %.3g, adjoint %.3g\n", step_error, adjoint_error);

    const long calls = std::max(1L, static_cast<long>(20'000'000 / (n * n)));
    xt::xtensor<double, 2> xt_next = u;
    const auto xtensor_step = [&] {
        using xt::range;
        const long m = static_cast<long>(n);
        const auto c = [m] { return range(1L, m - 1); };
        xt::view(xt_next, c(), c()) =
            (1.0 - 4.0 * r) * xt::view(u, c(), c()) +
            r * ((xt::view(u, range(0L, m - 2), c()) + xt::view(u, range(2L, m), c())) +
                 (xt::view(u, c(), range(0L, m - 2)) + xt::view(u, c(), range(2L, m))));
    };
    xtensor_step();
    double xtensor_error = 0.0;
    for (std::size_t k = 0; k < n * n; ++k)
        xtensor_error = std::max(xtensor_error, std::abs(xt_next.data()[k] - next.data()[k]));
    if (xtensor_error > 1e-12)
        std::printf("  MISMATCH: xtensor's step %.3g\n", xtensor_error);

    std::vector<contender> steps{{"hand-written xsimd"}, {"nabla"}, {"xtensor"}};
    race(
        steps, calls, rounds,
        [&](long) {
            nabla_bench::hand::heat_step(u.data(), n, r, hand_next.data());
            keep(hand_next(n / 2, n / 2));
        },
        [&](long) {
            nabla_step();
            keep(next(n / 2, n / 2));
        },
        [&](long) {
            xtensor_step();
            keep(xt_next(n / 2, n / 2));
        });
    report(square_title("heat step", n).c_str(), steps);

    std::vector<contender> adjoints{{"hand-written xsimd"}, {"nabla"}};
    race(
        adjoints, calls, rounds,
        [&](long) {
            nabla_bench::hand::heat_adjoint(a.data(), n, r, hand_abar.data());
            keep(hand_abar(n / 2, n / 2));
        },
        [&](long) {
            nabla_adjoint();
            keep(abar(n / 2, n / 2));
        });
    report(square_title("heat step, adjoint", n).c_str(), adjoints);
    std::printf(
        "  adjoint / step: hand-written %.2f, nabla %.2f (nabla adjoint / hand step %.2f)\n",
        adjoints[0].best_ns / steps[0].best_ns, adjoints[1].best_ns / steps[1].best_ns,
        adjoints[1].best_ns / steps[0].best_ns);
    nabla_bench::record(square_title("heat step", n).c_str(), "nabla", "adjoint / step",
                        adjoints[1].best_ns / steps[1].best_ns);
}

}  // namespace

// With an argument, only the workloads whose name it is (sum, chain, rosenbrock, second,
// logsumexp, dense, network, matmul, threads, heat).
int main(int argc, char** argv) {
    const std::string only = argc > 1 ? argv[1] : "";
    const auto want = [&](const char* workload) { return only.empty() || only == workload; };
    if (want("heat"))
        for (const std::size_t n : {256UL, 1024UL, 4096UL})
            bench_heat(n);
    if (!only.empty() && only != "sum" && only != "chain" && only != "rosenbrock" &&
        only != "logsumexp" && only != "dense" && only != "threads" && only != "matmul" &&
        only != "second" && only != "network" && only != "exp")
        return 0;
    const double triad = triad_bandwidth(10'000'000);
    std::printf("STREAM triad, n = 1e7: %.2f GB/s\n\n", triad * 1e-9);
    nabla_bench::record("triad, n = 1e7", "hand-written xsimd", "GB/s", triad * 1e-9);
    if (want("exp"))
        bench_exp(4096);
    for (const std::size_t n : {1'000UL, 100'000UL, 10'000'000UL})
        if (want("sum"))
            bench_sum(n, triad);
    for (const std::size_t n : {1'000UL, 100'000UL, 10'000'000UL})
        if (want("chain"))
            bench_chain(n, triad);
    for (const std::size_t n : {1'000UL, 100'000UL, 10'000'000UL})
        if (want("rosenbrock"))
            bench_rosenbrock(n, n <= 100'000, triad);
    for (const std::size_t n : {1'000UL, 100'000UL})
        if (want("second"))
            bench_second(n);
    for (const std::size_t n : {100'000UL, 10'000'000UL})
        if (want("logsumexp"))
            bench_logsumexp(n);
    for (const std::size_t n : {256UL, 1024UL, 2048UL})
        if (want("dense"))
            bench_dense(n);
    for (const std::size_t n : {256UL, 1024UL})
        if (want("network"))
            bench_network(n);
    for (const std::size_t n : {256UL, 512UL, 1024UL})
        if (want("matmul"))
            bench_matmul(n);
    for (const std::size_t n : {100'000UL, 1'000'000UL, 10'000'000UL})
        if (want("threads"))
            bench_threads(n);
}
