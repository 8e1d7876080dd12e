// The gradient of a 2-D heat equation split over MPI ranks: the plate's rows are cut into strips,
// one per rank; each explicit step exchanges the strips' edge rows with the neighbours
// (nabla::mpi::sendrecv) and the loss, the squared distance of the final field to a target, is
// combined by nabla::mpi::allreduce. The diffusion coefficient is the root's and reaches the
// others by nabla::mpi::bcast. One reverse sweep on every rank gives the loss's gradient with
// respect to each rank's part of the initial field and, on the root, to the coefficient; rank 0
// then runs the same computation alone on the whole plate and checks that both agree to 1e-12.
//
//   mpiexec -n 4 build/examples/mpi_heat [rows] [columns] [steps]
//
// Prints the loss, d loss / d alpha and the largest relative difference to the serial gradient,
// and returns non-zero if it is above 1e-12.

#include <nabla/mpi.hpp>
#include <nabla/reverse.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

namespace mpi = nabla::mpi;
using nabla::var;

namespace {

// The initial field and the target at row i, column j of an rows x columns plate.
double initial(std::size_t i, std::size_t j, std::size_t rows, std::size_t columns) {
    const double x = (j + 0.5) / static_cast<double>(columns);
    const double y = (i + 0.5) / static_cast<double>(rows);
    return std::exp(-40.0 * ((x - 0.4) * (x - 0.4) + (y - 0.6) * (y - 0.6)));
}
double target(std::size_t i, std::size_t j, std::size_t rows, std::size_t columns) {
    return 0.5 * initial(rows - 1 - i, columns - 1 - j, rows, columns);
}

// `steps` explicit steps of u_t = alpha (u_xx + u_yy) on the strip of rows [first, first + n)
// held in u, with one halo row above and below (zero at the plate's edges, which are held at 0);
// the neighbours' rows come from `up` and `down` (MPI_PROC_NULL at the edges). Returns the
// strip's part of the loss.
var run(std::vector<var> u,
        std::size_t first,
        std::size_t n,
        std::size_t rows,
        std::size_t columns,
        int steps,
        const var& alpha,
        int up,
        int down,
        const mpi::communicator& c) {
    const std::size_t w = columns;
    std::vector<var> next(u.size());
    auto row = [&](std::vector<var>& v, std::size_t i) { return std::span(v.data() + i * w, w); };
    for (int s = 0; s < steps; ++s) {
        // Halo rows: my first row goes up, my last row down; theirs come back into rows 0, n + 1.
        mpi::sendrecv(row(u, 1), up, 0, row(u, n + 1), down, 0, c);
        mpi::sendrecv(row(u, n), down, 1, row(u, 0), up, 1, c);
        for (std::size_t i = 1; i <= n; ++i)
            for (std::size_t j = 0; j < w; ++j) {
                const var& left = j > 0 ? u[i * w + j - 1] : var(0.0);
                const var& right = j + 1 < w ? u[i * w + j + 1] : var(0.0);
                next[i * w + j] = u[i * w + j] + alpha * (u[(i - 1) * w + j] + u[(i + 1) * w + j] +
                                                          left + right - 4.0 * u[i * w + j]);
            }
        for (std::size_t i = 1; i <= n; ++i)
            std::copy_n(next.begin() + static_cast<std::ptrdiff_t>(i * w), w,
                        u.begin() + static_cast<std::ptrdiff_t>(i * w));
    }
    var loss = 0.0;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 0; j < w; ++j) {
            const var d = u[i * w + j] - target(first + i - 1, j, rows, columns);
            loss += d * d;
        }
    return loss;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int status = 0;
    {
        const mpi::communicator& c = mpi::world();
        const std::size_t rows = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
        const std::size_t columns = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 48;
        const int steps = argc > 3 ? std::atoi(argv[3]) : 100;
        const auto p = static_cast<std::size_t>(c.size());
        const auto r = static_cast<std::size_t>(c.rank());
        // Rows [first, first + n) are this rank's.
        const std::size_t n = rows / p + (r < rows % p ? 1 : 0);
        const std::size_t first = r * (rows / p) + std::min(r, rows % p);
        const int up = r > 0 ? c.rank() - 1 : MPI_PROC_NULL;
        const int down = r + 1 < p ? c.rank() + 1 : MPI_PROC_NULL;

        nabla::tape<> t;
        auto recording = t.record();
        std::vector<var> u((n + 2) * columns, var(0.0));
        std::vector<double> u0(n * columns);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < columns; ++j)
                u0[i * columns + j] = initial(first + i, j, rows, columns);
        t.inputs(u0, std::span(u.data() + columns, n * columns));
        var alpha_root = c.rank() == 0 ? t.input(0.2) : var(0.0);
        const var alpha = mpi::bcast(alpha_root, 0, c);
        const var local = run(u, first, n, rows, columns, steps, alpha, up, down, c);
        const var loss = mpi::allreduce(local, mpi::op::sum, c);
        mpi::replicated_gradient(t, loss, c);

        // The gradient with respect to the initial field, gathered on rank 0.
        std::vector<double> mine(n * columns);
        t.adjoints(std::span<const var>(u.data() + columns, n * columns), mine);
        std::vector<int> counts(p);
        for (std::size_t k = 0; k < p; ++k)
            counts[k] = static_cast<int>((rows / p + (k < rows % p ? 1 : 0)) * columns);
        std::vector<double> gradient(c.rank() == 0 ? rows * columns : 0);
        mpi::gatherv(mine, gradient, counts, 0, c);

        if (c.rank() == 0) {
            const double d_alpha = t.adjoint(alpha_root);
            // The same computation on one rank.
            nabla::tape<> serial;
            auto serial_recording = serial.record();
            std::vector<var> v((rows + 2) * columns, var(0.0));
            std::vector<double> v0(rows * columns);
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < columns; ++j)
                    v0[i * columns + j] = initial(i, j, rows, columns);
            t.clear();  // (the parallel tape is read; its memory goes back)
            serial.inputs(v0, std::span(v.data() + columns, rows * columns));
            const var a = serial.input(0.2);
            const var serial_loss =
                run(v, 0, rows, rows, columns, steps, a, MPI_PROC_NULL, MPI_PROC_NULL, c);
            serial.gradient(serial_loss);
            std::vector<double> reference(rows * columns);
            serial.adjoints(std::span<const var>(v.data() + columns, rows * columns), reference);
            double worst = std::abs(d_alpha - serial.adjoint(a)) / std::abs(serial.adjoint(a));
            double scale = 0;
            for (double g : reference)
                scale = std::max(scale, std::abs(g));
            for (std::size_t k = 0; k < reference.size(); ++k)
                worst = std::max(worst, std::abs(gradient[k] - reference[k]) / scale);
            std::printf("heat equation on %zu x %zu, %d steps, %d ranks: loss %.12f "
                        "(serial %.12f)\n",
                        rows, columns, steps, c.size(), loss.value, serial_loss.value);
            std::printf("d loss / d alpha = %.12f (serial %.12f)\n", d_alpha, serial.adjoint(a));
            std::printf("largest difference to the serial gradient: %.2e of its largest entry\n",
                        worst);
            if (!(worst <= 1e-12) ||
                !(std::abs(loss.value - serial_loss.value) <= 1e-12 * std::abs(serial_loss.value)))
                status = 1;
        }
        MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return status;
}
