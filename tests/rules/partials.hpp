#pragma once
// One partial derivative of a function at a point, from mpmath (tests/data/elliptic.txt and
// edges.txt), checked in every mode of numbers that reaches its order: Taylor numbers
// (derivatives<8>) and the Taylor integrator's series tape along the one operand differentiated,
// dual numbers and the tape for first partials, forward-over-forward and forward-over-reverse
// Hessians for second ones. Static graphs are each test's own (their orders are types). The
// tolerance is a few units in the last place times the partial's condition number, growing with
// the order (each order is one more level of series arithmetic).

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../test_data.hpp"

namespace nabla_test {

struct partial_line {
    std::string name;
    std::vector<double> p;  // the function's constant parameters (an order, a degree)
    std::vector<double> x;
    std::vector<std::size_t> orders;
    double value = 0.0;
    double condition = 0.0;
    std::string text;

    std::size_t total() const {
        std::size_t n = 0;
        for (const std::size_t o : orders)
            n += o;
        return n;
    }
    double tolerance() const {
        const double eps = std::numeric_limits<double>::epsilon();
        const double n = static_cast<double>(total());
        return eps * (16.0 + 8.0 * n * n) * (1.0 + condition);
    }
};

// The lines of a data file: name [npar p...] nvar x... o... value cond.
inline std::vector<partial_line> partial_lines(const std::string& file, bool with_parameters) {
    std::vector<partial_line> all;
    for (const auto& text : data_lines(file)) {
        std::istringstream in(text);
        partial_line l;
        l.text = text;
        std::size_t n = 0;
        in >> l.name;
        if (with_parameters) {
            in >> n;
            for (std::size_t i = 0; i < n; ++i)
                l.p.push_back(read_number(in));
        }
        in >> n;
        for (std::size_t i = 0; i < n; ++i)
            l.x.push_back(read_number(in));
        for (std::size_t i = 0; i < n; ++i) {
            std::size_t o = 0;
            in >> o;
            l.orders.push_back(o);
        }
        l.value = read_number(in);
        l.condition = read_number(in);
        all.push_back(l);
    }
    return all;
}

// f at the line's point, as a double.
template <std::size_t N, class F>
double call(const F& f, const std::vector<double>& x) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return static_cast<double>(f(x[I]...));
    }
    (std::make_index_sequence<N>{});
}

// d of a static expression of N placeholders in the I-th.
template <std::size_t I, std::size_t N, class E>
auto d_in(const E& e) {
    return nabla::d(e, std::get<I>(nabla::variables<N>()));
}

// The value (order 0) and the partial in every mode of numbers that reaches the line's order;
// with symmetric, a Hessian's two mixed partials are also checked equal to the bit.
template <std::size_t N, class F>
void check_number_modes(const partial_line& l, const F& f, bool symmetric) {
    const double tolerance = l.tolerance();
    if (l.total() == 0)
        CHECK(close(call<N>(f, l.x), l.value, tolerance));

    std::size_t direction = N;
    for (std::size_t i = 0; i < N; ++i)
        if (l.orders[i] == l.total())
            direction = i;
    if (direction < N && l.total() > 0) {
        const auto along = [&](auto t) {
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                const auto operand = [&](std::size_t i) {
                    return i == direction ? t : decltype(t)(l.x[i]);
                };
                return f(operand(I)...);
            }
            (std::make_index_sequence<N>{});
        };
        const auto series = nabla::derivatives<8>(along, l.x[direction]);
        INFO("derivatives<8>: " << series[l.total()]);
        CHECK(close(series[l.total()], l.value, tolerance));

        nabla::series_tape<double> tape(8);
        tape.read_at(8);
        const auto node =
            tape.node_of(nabla::series_variable<double>(along(tape.time(l.x[direction]))));
        double factorial = 1.0;
        for (std::size_t k = 1; k <= l.total(); ++k) {
            tape.replay(k);
            factorial *= static_cast<double>(k);
        }
        const double taped = tape.row(node)[l.total()] * factorial;
        INFO("series tape: " << taped);
        CHECK(close(taped, l.value, tolerance));
    }

    std::array<double, N> point{};
    for (std::size_t i = 0; i < N; ++i)
        point[i] = l.x[i];
    const auto on_array = [&](const auto& v) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return f(v[I]...);
        }
        (std::make_index_sequence<N>{});
    };
    if (l.total() == 1) {
        const auto forward = nabla::grad(on_array, point);
        const auto reverse = nabla::grad(nabla::mode::reverse, on_array, point);
        INFO("dual " << forward[direction] << ", tape " << reverse[direction]);
        CHECK(close(forward[direction], l.value, tolerance));
        CHECK(close(reverse[direction], l.value, tolerance));
    }
    if (l.total() == 2) {
        std::size_t i = N, j = N;
        for (std::size_t m = 0; m < N; ++m)
            for (std::size_t o = 0; o < l.orders[m]; ++o)
                (i == N ? i : j) = m;
        const auto forward = nabla::hessian(nabla::mode::forward, on_array, point);
        const auto reverse = nabla::hessian(nabla::mode::reverse, on_array, point);
        INFO("forward over forward " << forward(i, j) << ", forward over reverse "
                                     << reverse(i, j));
        CHECK(close(forward(i, j), l.value, tolerance));
        CHECK(close(reverse(i, j), l.value, tolerance));
        if (symmetric) {
            CHECK(forward(i, j) == forward(j, i));
            CHECK(reverse(i, j) == reverse(j, i));
        }
    }
}

}  // namespace nabla_test
