// derivatives<K> (all derivatives of order 0..K in one evaluation on a Taylor series) of
// g(x) = exp(sin x) / (1 + x^2), side by side with the closed form of the derivatives generated
// by sympy (bench/generate_closed_form.py) and with Boost.Math's autodiff_fvar<double, K>.
// Orders 4, 8 and 16, each as a ratio to the closed form.
//
//   build-gcc/bench/taylor_derivatives

#include <nabla/nabla.hpp>

#include <boost/math/differentiation/autodiff.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_util.hpp"
#include "generated/closed_form.hpp"

namespace {

const auto g = [](auto x) {
    using std::exp, std::sin;
    return exp(sin(x)) / (1.0 + x * x);
};

template <std::size_t K>
[[gnu::noinline]] std::array<double, K + 1> by_nabla(double x) {
    return nabla::derivatives<K>(g, x);
}

template <std::size_t K>
[[gnu::noinline]] std::array<double, K + 1> by_boost(double x) {
    using boost::math::differentiation::make_fvar;
    const auto y = g(make_fvar<double, K>(x));
    std::array<double, K + 1> d;
    for (std::size_t k = 0; k <= K; ++k)
        d[k] = y.derivative(k);
    return d;
}

[[gnu::noinline]] std::array<double, 5> by_hand_4(double x) {
    return closed_form::closed_form_4(x);
}
[[gnu::noinline]] std::array<double, 9> by_hand_8(double x) {
    return closed_form::closed_form_8(x);
}

template <class D>
void keep_all(const D& d) {
    for (double v : d)
        nabla_bench::keep(v);
}

template <std::size_t K, class Hand>
int race(const std::vector<double>& x, Hand hand) {
    for (double at : {0.7, -1.3, 2.1}) {
        const auto n = by_nabla<K>(at);
        const auto b = by_boost<K>(at);
        for (std::size_t k = 0; k <= K; ++k) {
            if (std::abs(n[k] - b[k]) > 1e-9 * (1.0 + std::abs(b[k]))) {
                std::printf("order %zu: nabla and Boost differ at derivative %zu\n", K, k);
                return 1;
            }
            if constexpr (!std::is_same_v<Hand, std::nullptr_t>) {
                const auto h = hand(at);
                if (std::abs(n[k] - h[k]) > 1e-9 * (1.0 + std::abs(h[k]))) {
                    std::printf("order %zu: nabla and the closed form differ at %zu\n", K, k);
                    return 1;
                }
            }
        }
    }
    const long calls = static_cast<long>(x.size());
    char title[96];
    std::snprintf(title, sizeof title, "derivatives of order 0..%zu of exp(sin x)/(1 + x^2)", K);
    if constexpr (std::is_same_v<Hand, std::nullptr_t>) {
        std::vector<nabla_bench::contender> c{{"nabla::derivatives"}, {"boost autodiff_fvar"}};
        nabla_bench::race(
            c, calls, 9, [&](long i) { keep_all(by_nabla<K>(x[i])); },
            [&](long i) { keep_all(by_boost<K>(x[i])); });
        nabla_bench::report(title, c);
    } else {
        std::vector<nabla_bench::contender> c{
            {"closed form (sympy)"}, {"nabla::derivatives"}, {"boost autodiff_fvar"}};
        nabla_bench::race(
            c, calls, 9, [&](long i) { keep_all(hand(x[i])); },
            [&](long i) { keep_all(by_nabla<K>(x[i])); },
            [&](long i) { keep_all(by_boost<K>(x[i])); });
        nabla_bench::report(title, c);
    }
    return 0;
}

}  // namespace

int main() {
    std::vector<double> x(1 << 16);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = 0.7 + 0.5 * std::sin(0.001 * double(i));
    if (race<4>(x, by_hand_4) != 0)
        return 1;
    if (race<8>(x, by_hand_8) != 0)
        return 1;
    if (race<16>(x, nullptr) != 0)
        return 1;
    return 0;
}
