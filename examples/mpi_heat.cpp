// The gradient of a 2-D heat equation split over MPI ranks (the computation is in mpi_heat.hpp):
// the plate's rows are cut into strips, one per rank; each explicit step exchanges the strips'
// edge rows with the neighbours (nabla::mpi::sendrecv), and the loss, the squared distance of
// the final field to a target, is summed by nabla::mpi::allreduce. The diffusion coefficient is
// the root's and reaches the others by nabla::mpi::bcast. Each rank's field is a nabla::var_array
// and each step one tape entry, a fused stencil loop. One reverse sweep on every rank gives the
// loss's gradient with respect to each rank's part of the initial field and, on the root, to the
// coefficient; rank 0 then runs the same computation alone on the whole plate and checks that
// both agree to 1e-12, and the loss against the same program on doubles.
//
//   mpiexec -n 4 build/examples/mpi_heat [rows] [columns] [steps]
//
// Prints the loss, d loss / d alpha, the largest relative difference to the serial gradient and
// the time of the value and gradient against the run on doubles (each the second call, as a loop
// of calls pays: the tape's memory reused), and returns non-zero if a difference is above 1e-12.

#include "mpi_heat.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace mpi = nabla::mpi;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int status = 0;
    try {
        const mpi::communicator& c = mpi::world();
        const std::size_t rows = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
        const std::size_t columns = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 48;
        const int steps = argc > 3 ? std::atoi(argv[3]) : 100;
        const heat::strip s = heat::strip_of(rows, columns, c.rank(), c.size());
        const std::vector<double> u0 = heat::part(s, heat::initial);
        const std::vector<double> goal = heat::part(s, heat::target);

        // The run on doubles, and its value and gradient on the tape, each timed as a loop of
        // calls pays for it: the second call of each, the tape's memory reused from the first
        // (the first call also pages that memory in). The times are rank 0's.
        double plain = 0.0, plain_time = 0.0;
        for (int call = 0; call < 2; ++call) {
            MPI_Barrier(c.get());
            const auto start = std::chrono::steady_clock::now();
            plain =
                mpi::allreduce(heat::loss_on_doubles(u0, 0.2, s, steps, goal, c), mpi::op::sum, c);
            plain_time = seconds_since(start);
        }
        nabla::tape<> t;
        nabla::var_array u;
        nabla::var alpha_root, loss;
        std::vector<double> mine;
        double first_time = 0.0, gradient_time = 0.0;
        for (int call = 0; call < 2; ++call) {
            MPI_Barrier(c.get());
            const auto start = std::chrono::steady_clock::now();
            auto recording = t.record();
            u = nabla::input_array(t, heat::padded(u0, s));
            alpha_root = c.rank() == 0 ? t.input(0.2) : nabla::var(0.0);
            const nabla::var alpha = mpi::bcast(alpha_root, 0, c);
            loss = mpi::allreduce(heat::loss_on_tape(u, alpha, s, steps, goal, c), mpi::op::sum, c);
            mpi::replicated_gradient(t, loss, c);
            mine = heat::interior(nabla::adjoints(t, u), s);
            (call == 0 ? first_time : gradient_time) = seconds_since(start);
        }

        // The gradient with respect to the initial field, gathered on rank 0.
        std::vector<int> counts(static_cast<std::size_t>(c.size()));
        for (int k = 0; k < c.size(); ++k)
            counts[static_cast<std::size_t>(k)] =
                static_cast<int>(heat::strip_of(rows, columns, k, c.size()).n * columns);
        std::vector<double> gradient(c.rank() == 0 ? rows * columns : 0);
        mpi::gatherv(mine, gradient, counts, 0, c);

        if (c.rank() == 0) {
            const double d_alpha = t.adjoint(alpha_root);
            t.clear();  // (the parallel tape is read; its memory goes back)
            // The same computation on one rank.
            const heat::strip all = heat::whole(rows, columns);
            nabla::tape<> serial;
            auto serial_recording = serial.record();
            const nabla::var_array v =
                nabla::input_array(serial, heat::padded(heat::part(all, heat::initial), all));
            const nabla::var a = serial.input(0.2);
            const nabla::var serial_loss =
                heat::loss_on_tape(v, a, all, steps, heat::part(all, heat::target), c);
            serial.gradient(serial_loss);
            const std::vector<double> reference = heat::interior(nabla::adjoints(serial, v), all);
            double worst = std::abs(d_alpha - serial.adjoint(a)) / std::abs(serial.adjoint(a));
            double scale = 0;
            for (double g : reference)
                scale = std::max(scale, std::abs(g));
            for (std::size_t k = 0; k < reference.size(); ++k)
                worst = std::max(worst, std::abs(gradient[k] - reference[k]) / scale);
            const double value_difference =
                std::max(std::abs(loss.value - serial_loss.value), std::abs(loss.value - plain)) /
                std::abs(serial_loss.value);
            std::printf("heat equation on %zu x %zu, %d steps, %d ranks: loss %.12f "
                        "(serial %.12f, on doubles %.12f)\n",
                        rows, columns, steps, c.size(), loss.value, serial_loss.value, plain);
            std::printf("d loss / d alpha = %.12f (serial %.12f)\n", d_alpha, serial.adjoint(a));
            std::printf("largest difference to the serial gradient: %.2e of its largest entry\n",
                        worst);
            std::printf("value and gradient %.3f ms a call on a reused tape (%.3f ms the first "
                        "call, which pages the tape's memory in), value on doubles %.3f ms "
                        "(%.2fx)\n",
                        gradient_time * 1e3, first_time * 1e3, plain_time * 1e3,
                        gradient_time / plain_time);
            if (!(worst <= 1e-12) || !(value_difference <= 1e-12))
                status = 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mpi_heat: %s\n", e.what());
        status = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
