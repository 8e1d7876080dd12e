// nabla::mpi's collectives and their adjoints against the MPI calls on plain doubles, run under
// mpiexec (mpiexec -n 4 build/bench/mpi_collectives [n] [repetitions]).
//
// For each operation on n doubles per rank (default 10^6):
//   forward   the MPI call on std::vector<double>: what the program's communication costs
//   adjoint   the MPI call of the adjoint operation on doubles (for bcast, a reduce): what the
//             sweep's communication must cost
//   record    nabla::mpi on std::vector<nabla::var>: forward communication plus recording
//   sweep     the tape's sweep over that one entry: adjoint communication plus adding into the
//             adjoints
// and prints sweep / forward (the adjoint's cost against its operation's) and the tape's
// overhead, (record - forward + sweep - adjoint) / (forward + adjoint). Times are the slowest
// rank's, the median of the repetitions. Then the adjoint of allreduce as MeDiPack takes it (an
// allgather of every rank's adjoints and a local sum) against an allreduce, measured here and in
// bytes received per rank computed for larger p; and the heat equation's gradient against its
// run on doubles.

#include <nabla/mpi.hpp>
#include <nabla/reverse.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "../examples/mpi_heat.hpp"

namespace mpi = nabla::mpi;
using nabla::var;

namespace {

const mpi::communicator& comm() {
    return mpi::world();
}
int rank() {
    return comm().rank();
}

double slowest(double seconds) {
    double s = 0;
    MPI_Allreduce(&seconds, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return s;
}

// The median over `repetitions` of the slowest rank's time of body(), each run after a barrier.
// setup() runs before each, outside the time.
double
time(int repetitions, const std::function<void()>& setup, const std::function<void()>& body) {
    std::vector<double> t;
    for (int r = 0; r < repetitions; ++r) {
        setup();
        MPI_Barrier(MPI_COMM_WORLD);
        const auto start = std::chrono::steady_clock::now();
        body();
        const std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
        t.push_back(slowest(d.count()));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// A buffer kept across repetitions (paged in once), as nabla's sweeps keep theirs.
std::vector<double>& scratch_all(std::size_t n) {
    static std::vector<double> v;
    v.resize(n);
    return v;
}

struct operation {
    const char* name;
    std::size_t in, out;  // elements per rank
    // The operation on doubles and on active variables, and its adjoint on doubles.
    std::function<void(std::vector<double>&, std::vector<double>&)> on_doubles;
    std::function<void(std::vector<var>&, std::vector<var>&)> on_vars;
    std::function<void(std::vector<double>&, std::vector<double>&)> adjoint;
};

void race(const operation& o, int repetitions) {
    std::vector<double> x(o.in, 1.0), y(o.out, 0.0), w(o.out, 1.0), g(o.in, 0.0);
    const double forward = time(
        repetitions, [] {}, [&] { o.on_doubles(x, y); });
    const double adjoint = time(
        repetitions, [] {}, [&] { o.adjoint(w, g); });
    nabla::tape<> t;
    std::vector<var> xv(o.in), yv(o.out);
    const double record = time(
        repetitions,
        [&] {
            t.clear();
            auto recording = t.resume();
            t.inputs(x, xv);
        },
        [&] {
            auto recording = t.resume();
            o.on_vars(xv, yv);
        });
    const double sweep = time(
        repetitions,
        [&] {
            t.zero_adjoints();
            for (const var& v : yv)
                t.seed(v);
        },
        [&] { t.sweep(); });
    const double overhead = (record - forward + sweep - adjoint) / (forward + adjoint);
    if (rank() == 0)
        std::printf("  %-16s forward %8.3f ms  adjoint %8.3f ms  record %8.3f ms  sweep %8.3f ms"
                    "  sweep/forward %.2fx  tape overhead %5.1f%%\n",
                    o.name, forward * 1e3, adjoint * 1e3, record * 1e3, sweep * 1e3,
                    sweep / forward, 100 * overhead);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    {
        const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000000;
        const int repetitions = argc > 2 ? std::atoi(argv[2]) : 7;
        const int p = comm().size();
        const auto P = static_cast<std::size_t>(p);
        const int next = (rank() + 1) % p, previous = (rank() + p - 1) % p;
        const MPI_Comm c = comm().get();
        if (rank() == 0)
            std::printf("nabla::mpi, %d ranks, %zu doubles per rank\n", p, n);
        // The tables without nabla's checks of collective calls; their cost is measured last.
        nabla::mpi::set_checking(false);

        const std::vector<operation> operations{
            {"allreduce (sum)", n, n,
             [&](auto& x, auto& y) { mpi::allreduce(x, y, mpi::op::sum, comm()); },
             [&](auto& x, auto& y) { mpi::allreduce(x, y, mpi::op::sum, comm()); },
             [&](auto& w, auto& g) {
                 MPI_Allreduce(w.data(), g.data(), int(n), MPI_DOUBLE, MPI_SUM, c);
             }},
            {"bcast", n, n,
             [&](auto& x, auto& y) {
                 std::copy(x.begin(), x.end(), y.begin());
                 mpi::bcast(y, 0, comm());
             },
             [&](auto& x, auto& y) {
                 std::copy(x.begin(), x.end(), y.begin());
                 mpi::bcast(y, 0, comm());
             },
             [&](auto& w, auto& g) {
                 if (rank() == 0)
                     MPI_Reduce(MPI_IN_PLACE, w.data(), int(n), MPI_DOUBLE, MPI_SUM, 0, c);
                 else
                     MPI_Reduce(w.data(), nullptr, int(n), MPI_DOUBLE, MPI_SUM, 0, c);
                 (void)g;
             }},
            {"reduce (sum)", n, n,
             [&](auto& x, auto& y) { mpi::reduce(x, y, mpi::op::sum, 0, comm()); },
             [&](auto& x, auto& y) { mpi::reduce(x, y, mpi::op::sum, 0, comm()); },
             [&](auto& w, auto&) { MPI_Bcast(w.data(), int(n), MPI_DOUBLE, 0, c); }},
            {"allgather", n / P, n, [&](auto& x, auto& y) { mpi::allgather(x, y, comm()); },
             [&](auto& x, auto& y) { mpi::allgather(x, y, comm()); },
             [&](auto& w, auto& g) {
                 std::vector<double>& all = scratch_all(n);
                 MPI_Alltoall(w.data(), int(n / P), MPI_DOUBLE, all.data(), int(n / P), MPI_DOUBLE,
                              c);
                 std::copy_n(all.data(), n / P, g.data());
                 for (std::size_t q = 1; q < P; ++q)
                     for (std::size_t k = 0; k < n / P; ++k)
                         g[k] += all[q * (n / P) + k];
             }},
            {"reduce_scatter", n, n / P,
             [&](auto& x, auto& y) { mpi::reduce_scatter(x, y, comm()); },
             [&](auto& x, auto& y) { mpi::reduce_scatter(x, y, comm()); },
             [&](auto& w, auto& g) {
                 MPI_Allgather(w.data(), int(n / P), MPI_DOUBLE, g.data(), int(n / P), MPI_DOUBLE,
                               c);
             }},
            {"alltoall", n, n, [&](auto& x, auto& y) { mpi::alltoall(x, y, comm()); },
             [&](auto& x, auto& y) { mpi::alltoall(x, y, comm()); },
             [&](auto& w, auto& g) {
                 MPI_Alltoall(w.data(), int(n / P), MPI_DOUBLE, g.data(), int(n / P), MPI_DOUBLE,
                              c);
             }},
            {"sendrecv (ring)", n, n,
             [&](auto& x, auto& y) { mpi::sendrecv(x, next, 0, y, previous, 0, comm()); },
             [&](auto& x, auto& y) { mpi::sendrecv(x, next, 0, y, previous, 0, comm()); },
             [&](auto& w, auto& g) {
                 MPI_Sendrecv(w.data(), int(n), MPI_DOUBLE, previous, 0, g.data(), int(n),
                              MPI_DOUBLE, next, 0, c, MPI_STATUS_IGNORE);
             }},
        };
        for (const operation& o : operations)
            race(o, repetitions);

        // The adjoint of allreduce as MeDiPack takes it: every rank's adjoints gathered on every
        // rank (p n numbers each), then summed locally.
        std::vector<double> w(n, 1.0), g(n), all(n * P);
        const double ours = time(
            repetitions, [] {},
            [&] { MPI_Allreduce(w.data(), g.data(), int(n), MPI_DOUBLE, MPI_SUM, c); });
        const double gathered = time(
            repetitions, [] {},
            [&] {
                MPI_Allgather(w.data(), int(n), MPI_DOUBLE, all.data(), int(n), MPI_DOUBLE, c);
                std::fill(g.begin(), g.end(), 0.0);
                for (std::size_t r = 0; r < P; ++r)
                    for (std::size_t k = 0; k < n; ++k)
                        g[k] += all[r * n + k];
            });
        if (rank() == 0) {
            std::printf("adjoint of allreduce (sum), %zu doubles: nabla (allreduce) %.3f ms, "
                        "allgather and local sum %.3f ms (%.2fx)\n",
                        n, ours * 1e3, gathered * 1e3, gathered / ours);
            std::printf("  megabytes received per rank (bandwidth-optimal allreduce 2 (p-1)/p n, "
                        "allgather (p-1) n):\n");
            for (double q : {2.0, 4.0, 64.0, 1024.0})
                std::printf("    p = %4.0f: nabla %8.1f MB, allgather %10.1f MB\n", q,
                            2 * (q - 1) / q * double(n) * 8 / 1e6, (q - 1) * double(n) * 8 / 1e6);
        }

        // The heat equation of examples/mpi_heat.cpp: its value and gradient (recording and
        // sweep) against its run on doubles, on two plates.
        for (const auto& [rows, columns, plate_steps] :
             {std::tuple{std::size_t{64}, std::size_t{48}, 100},
              std::tuple{std::size_t{512}, std::size_t{512}, 50}}) {
            // A copy: clang 14 lambdas cannot capture a structured binding.
            const int steps = plate_steps;
            const heat::strip s = heat::strip_of(rows, columns, rank(), p);
            const std::vector<double> u0 = heat::part(s, heat::initial);
            const std::vector<double> goal = heat::part(s, heat::target);
            double value = 0;
            const double on_doubles = time(
                repetitions, [] {},
                [&] {
                    value = mpi::allreduce(heat::loss_on_doubles(u0, 0.2, s, steps, goal, comm()),
                                           mpi::op::sum, comm());
                });
            nabla::tape<> t;
            double gradient_value = 0;
            const double gradient = time(
                repetitions, [] {},
                [&] {
                    auto recording = t.record();
                    const nabla::var_array u = nabla::input_array(t, heat::padded(u0, s));
                    const var alpha = t.input(0.2);
                    const var loss = mpi::allreduce(
                        heat::loss_on_tape(u, alpha, s, steps, goal, comm()), mpi::op::sum, comm());
                    mpi::replicated_gradient(t, loss, comm());
                    gradient_value = loss.value;
                });
            if (rank() == 0)
                std::printf(
                    "heat equation %zu x %zu, %d steps: on doubles %.3f ms, value and "
                    "gradient %.3f ms (%.2fx)%s\n",
                    rows, columns, steps, on_doubles * 1e3, gradient * 1e3, gradient / on_doubles,
                    std::abs(value - gradient_value) <= 1e-12 * std::abs(value) ? ""
                                                                                : " VALUES DIFFER");
        }

        // The checks (nabla::mpi::set_checking): an allreduce and a sendrecv ring of one active
        // variable and of n, recorded and swept, with and without them.
        for (const bool ring : {false, true})
            for (const std::size_t m : {std::size_t{1}, n}) {
                std::vector<var> x(m), y(m);
                nabla::tape<> t;
                double seconds[2];
                for (const bool on : {false, true}) {
                    nabla::mpi::set_checking(on);
                    seconds[on] = time(
                        repetitions, [] {},
                        [&] {
                            auto recording = t.record();
                            t.inputs(std::vector<double>(m, 1.0), x);
                            if (ring)
                                mpi::sendrecv(x, next, 0, y, previous, 0, comm());
                            else
                                mpi::allreduce(x, y, mpi::op::sum, comm());
                            t.zero_adjoints();
                            t.seed(y[0], 1.0);
                            t.sweep();
                        });
                }
                if (rank() == 0)
                    std::printf("checks: %s of %zu active variables, recorded and swept: "
                                "%.4f ms without, %.4f ms with (+%.4f ms)\n",
                                ring ? "sendrecv ring" : "allreduce", m, seconds[0] * 1e3,
                                seconds[1] * 1e3, (seconds[1] - seconds[0]) * 1e3);
            }
    }
    MPI_Finalize();
    return 0;
}
