// The 2-D heat equation of examples/mpi_heat.cpp, split over MPI ranks into strips of rows, on
// doubles and on nabla's tape (also timed by bench/mpi_collectives.cpp).
//
// u_t = alpha (u_xx + u_yy) on a rows x columns plate, zero outside it, by explicit steps of the
// five-point stencil. Each rank holds the rows [first, first + n); each step exchanges the
// strip's edge rows with the ranks above and below (nabla::mpi::sendrecv, MPI_PROC_NULL at the
// plate's edges, which gives rows of zeros). The loss is the squared distance of the final field
// to a target, each rank's part summed by the caller.
//
// On the tape a step is one entry: nabla::custom_array runs the stencil as one fused SIMD loop
// (nabla::evaluate_into of a static array expression) and its pullback as another
// (nabla::apply_vjp_into of the same expression), so no adjoint is written by hand.

#pragma once

#include <nabla/array.hpp>
#include <nabla/mpi.hpp>
#include <nabla/reverse.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace heat {

// A rank's part of the plate: rows [first, first + n) of a rows x columns plate, and the ranks
// above and below (MPI_PROC_NULL at the plate's edges).
struct strip {
    std::size_t rows, columns, first, n;
    int up, down;
};

// Rank r's strip of p: the rows shared as evenly as they go.
inline strip strip_of(std::size_t rows, std::size_t columns, int r, int p) {
    if (rows < static_cast<std::size_t>(p) || columns == 0)
        throw std::invalid_argument("the heat example needs at least one row per rank and one "
                                    "column");
    const auto R = static_cast<std::size_t>(r), P = static_cast<std::size_t>(p);
    return {rows,
            columns,
            R * (rows / P) + std::min(R, rows % P),
            rows / P + (R < rows % P ? 1 : 0),
            r > 0 ? r - 1 : MPI_PROC_NULL,
            r + 1 < p ? r + 1 : MPI_PROC_NULL};
}

// The whole plate on one rank.
inline strip whole(std::size_t rows, std::size_t columns) {
    return {rows, columns, 0, rows, MPI_PROC_NULL, MPI_PROC_NULL};
}

// The initial field and the target at row i, column j.
inline double initial(std::size_t i, std::size_t j, std::size_t rows, std::size_t columns) {
    const double x = (static_cast<double>(j) + 0.5) / static_cast<double>(columns);
    const double y = (static_cast<double>(i) + 0.5) / static_cast<double>(rows);
    return std::exp(-40.0 * ((x - 0.4) * (x - 0.4) + (y - 0.6) * (y - 0.6)));
}
inline double target(std::size_t i, std::size_t j, std::size_t rows, std::size_t columns) {
    return 0.5 * initial(rows - 1 - i, columns - 1 - j, rows, columns);
}

// The strip's part of a field given by f(i, j, rows, columns), row after row.
template <class F>
std::vector<double> part(const strip& s, F f) {
    std::vector<double> v(s.n * s.columns);
    for (std::size_t i = 0; i < s.n; ++i)
        for (std::size_t j = 0; j < s.columns; ++j)
            v[i * s.columns + j] = f(s.first + i, j, s.rows, s.columns);
    return v;
}

// The next state's interior from the padded state u, (n + 2) x (columns + 2): the halo rows
// above and below, zero columns left and right; and a one-element array whose sum is the
// coefficient (an array, so that the loop takes the coefficient's gradient with the field's):
// u + alpha * (the five-point Laplacian of u), n x columns.
inline const auto step_expression = [] {
    const auto [u, alpha] = nabla::array_variables<2>();
    const auto in = nabla::range<1, -1>;
    return u(in, in) + sum(alpha) * (((u(nabla::upto<-2>, in) + u(nabla::from<2>, in)) +
                                      (u(in, nabla::upto<-2>) + u(in, nabla::from<2>))) -
                                     4.0 * u(in, in));
}();

// ---------------------------------------------------------------------------------------------
// On doubles: the run a gradient is measured against. The state lives padded, so that each row
// is one loop without a test at the edges, and the halo rows are received in place.

// The strip's part of the loss after `steps` steps from u0 (the strip's n x columns values).
inline double loss_on_doubles(const std::vector<double>& u0,
                              double alpha,
                              const strip& s,
                              int steps,
                              const std::vector<double>& goal,
                              const nabla::mpi::communicator& c) {
    const std::size_t n = s.n, w = s.columns, W = w + 2;
    std::vector<double> u((n + 2) * W, 0.0), next((n + 2) * W, 0.0);
    for (std::size_t i = 0; i < n; ++i)
        std::copy_n(u0.data() + i * w, w, u.data() + (i + 1) * W + 1);
    const auto row = [&](std::size_t i) { return std::span(u.data() + i * W + 1, w); };
    for (int k = 0; k < steps; ++k) {
        nabla::mpi::sendrecv(row(1), s.up, 0, row(n + 1), s.down, 0, c);
        nabla::mpi::sendrecv(row(n), s.down, 1, row(0), s.up, 1, c);
        for (std::size_t i = 1; i <= n; ++i) {
            const double* const m = u.data() + i * W;
            double* const out = next.data() + i * W;
            for (std::size_t j = 1; j <= w; ++j)
                out[j] =
                    m[j] + alpha * ((m[j - W] + m[j + W]) + (m[j - 1] + m[j + 1]) - 4.0 * m[j]);
        }
        std::swap(u, next);
    }
    double loss = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < w; ++j) {
            const double d = u[(i + 1) * W + 1 + j] - goal[i * w + j];
            loss += d * d;
        }
    return loss;
}

// ---------------------------------------------------------------------------------------------
// On the tape. The state is the strip with a zero column on each side, n x (columns + 2), so
// that joining it with the halo rows is nabla::concat, one copy.

// The strip's values with its zero columns, n x (columns + 2).
inline std::vector<double> padded(const std::vector<double>& u, const strip& s) {
    const std::size_t w = s.columns, W = w + 2;
    std::vector<double> p(s.n * W, 0.0);
    for (std::size_t i = 0; i < s.n; ++i)
        std::copy_n(u.data() + i * w, w, p.data() + i * W + 1);
    return p;
}

// The strip's values without its zero columns, n x columns.
inline std::vector<double> interior(const std::vector<double>& p, const strip& s) {
    const std::size_t w = s.columns, W = w + 2;
    std::vector<double> u(s.n * w);
    for (std::size_t i = 0; i < s.n; ++i)
        std::copy_n(p.data() + i * W + 1, w, u.data() + i * w);
    return u;
}

// One step as one tape entry: from the state joined with its halo rows, (n + 2) x W, to the next
// state, n x W (W = columns + 2), whose zero columns take no adjoint. Its value is
// step_expression's fused loop, and its pullback the same expression's, adding into the tape's
// adjoints.
inline nabla::var_array
step(const nabla::var_array& joined, const nabla::var_array& alpha, std::size_t w) {
    const std::size_t W = w + 2, n = joined.size() / W - 2;
    using values = std::span<const double>;
    return nabla::custom_array(
        n * W,
        [=](std::span<double> next, values u, values a) {
            for (std::size_t i = 0; i < n; ++i)
                next[i * W] = next[i * W + W - 1] = 0.0;
            nabla::evaluate_into(step_expression, nabla::matrix_ref(next.data() + 1, n, w, W),
                                 nabla::matrix_ref(u.data(), n + 2, W), a);
        },
        [=](values u, values a, values, values d_next, std::span<double> du, std::span<double> da) {
            // (A constant field or coefficient takes its adjoint into an array of its own.)
            std::vector<double> spare;
            if (du.empty() || da.empty()) {
                spare.assign(du.empty() ? u.size() : 1, 0.0);
                (du.empty() ? du : da) = spare;
            }
            nabla::add_vjp_into(step_expression, std::tie(du, da),
                                nabla::matrix_ref(d_next.data() + 1, n, w, W),
                                nabla::matrix_ref(u.data(), n + 2, W), a);
        },
        joined, alpha);
}

// The strip's part of the loss after `steps` steps from u (the strip's n x (columns + 2) variables,
// zero at the sides), with the coefficient alpha.
inline nabla::var loss_on_tape(nabla::var_array u,
                               const nabla::var& alpha,
                               const strip& s,
                               int steps,
                               const std::vector<double>& goal,
                               const nabla::mpi::communicator& c) {
    namespace mpi = nabla::mpi;
    const std::size_t n = s.n, w = s.columns, W = w + 2;
    const nabla::var_array a(std::vector<nabla::var>{alpha});
    for (int k = 0; k < steps; ++k) {
        // The first row goes up and the row below comes from down; the last row goes down and the
        // row above comes from up (zeros at the plate's edges).
        const nabla::var_array below = mpi::sendrecv(u.slice(0, W), s.up, 0, W, s.down, 0, c);
        const nabla::var_array above =
            mpi::sendrecv(u.slice((n - 1) * W, n * W), s.down, 1, W, s.up, 1, c);
        u = step(concat(above, u, below), a, w);
    }
    return sum(square(u - padded(goal, s)));
}

}  // namespace heat
