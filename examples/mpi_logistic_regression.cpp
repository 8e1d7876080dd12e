// Data-parallel logistic regression: each MPI rank holds a shard of the data, the parameters are
// the root's and reach every rank by nabla::mpi::bcast, and the loss is the sum of the shards'
// losses by nabla::mpi::allreduce. One reverse sweep on every rank leaves the whole gradient on
// the root (the adjoint of bcast sums the ranks' contributions there), where a Newton step is
// taken with the Hessian from Hessian-vector products of the same program (forward over
// reverse: the tape records dual numbers, and dual numbers travel through MPI with their
// tangents). After the fit, rank 0 fits the whole data set alone and checks that the parameters
// agree to 1e-12.
//
//   mpiexec -n 4 build/examples/mpi_logistic_regression [samples]

#include <nabla/mpi.hpp>
#include <nabla/reverse.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <vector>

namespace mpi = nabla::mpi;

namespace {

constexpr std::size_t features = 4;  // with the intercept
using parameters = std::array<double, features>;

// Sample k of the synthetic data set: features (1, x1, x2, x3) and a label drawn from the
// logistic model with parameters (0.3, -1.2, 0.8, 2.0).
struct sample {
    parameters x;
    double label;
};
std::vector<sample> data(std::size_t first, std::size_t n) {
    std::vector<sample> d;
    for (std::size_t k = first; k < first + n; ++k) {
        std::mt19937_64 engine(1000 + k);
        std::normal_distribution<double> normal;
        std::uniform_real_distribution<double> uniform;
        sample s{{1.0, normal(engine), normal(engine), normal(engine)}, 0.0};
        const double z = 0.3 - 1.2 * s.x[1] + 0.8 * s.x[2] + 2.0 * s.x[3];
        s.label = uniform(engine) < 1.0 / (1.0 + std::exp(-z)) ? 1.0 : 0.0;
        d.push_back(s);
    }
    return d;
}

// The negative log-likelihood of the shard, sum of log(1 + e^z) - y z, plus a small ridge term
// on the root's share so that the fit exists for any data.
template <class T>
T shard_loss(const std::array<T, features>& w, const std::vector<sample>& shard, bool root) {
    using std::exp, std::log1p;
    T loss = 0.0;
    for (const sample& s : shard) {
        T z = w[0] * s.x[0];
        for (std::size_t i = 1; i < features; ++i)
            z += w[i] * s.x[i];
        loss += log1p(exp(z)) - s.label * z;
    }
    if (root)
        for (const T& wi : w)
            loss += 0.5e-3 * wi * wi;
    return loss;
}

// The loss over all ranks' shards at the root's parameters w, recorded on the thread's tape of
// numbers T; w's variables are the root's inputs.
template <class T>
nabla::active<T> total_loss(std::array<nabla::active<T>, features>& w,
                            const std::vector<sample>& shard,
                            const mpi::communicator& c) {
    std::array<nabla::active<T>, features> mine = w;
    mpi::bcast(mine, 0, c);
    const nabla::active<T> local = shard_loss(mine, shard, c.rank() == 0);
    return mpi::allreduce(local, mpi::op::sum, c);
}

// Newton's method: the gradient by one sweep, the Hessian column by column as Hessian-vector
// products (one sweep of a tape of dual numbers per column). Every rank takes part; the root
// solves and its new parameters are broadcast.
parameters fit(const std::vector<sample>& shard, const mpi::communicator& c, int iterations) {
    using D = nabla::dual<double, 1>;
    parameters w{};
    for (int it = 0; it < iterations; ++it) {
        std::array<std::array<double, features>, features> h{};
        parameters g{};
        for (std::size_t column = 0; column < features; ++column) {
            nabla::tape<D> t;
            auto recording = t.record();
            std::array<nabla::active<D>, features> v;
            for (std::size_t i = 0; i < features; ++i)
                v[i] = c.rank() == 0 ? t.input(D(w[i], {i == column ? 1.0 : 0.0}))
                                     : nabla::active<D>(D(0.0));
            const nabla::active<D> loss = total_loss(v, shard, c);
            mpi::replicated_gradient(t, loss, c);
            if (c.rank() == 0)
                for (std::size_t i = 0; i < features; ++i) {
                    const D a = t.adjoint(v[i]);
                    g[i] = a.value;
                    h[i][column] = a.tangent[0];
                }
        }
        if (c.rank() == 0) {
            // Solve h d = g by Gaussian elimination (h is symmetric positive definite).
            for (std::size_t k = 0; k < features; ++k)
                for (std::size_t i = k + 1; i < features; ++i) {
                    const double m = h[i][k] / h[k][k];
                    for (std::size_t j = k; j < features; ++j)
                        h[i][j] -= m * h[k][j];
                    g[i] -= m * g[k];
                }
            for (std::size_t k = features; k-- > 0;) {
                double s = g[k];
                for (std::size_t j = k + 1; j < features; ++j)
                    s -= h[k][j] * g[j];
                g[k] = s / h[k][k];
            }
            for (std::size_t i = 0; i < features; ++i)
                w[i] -= g[i];
        }
        mpi::bcast(w, 0, c);
    }
    return w;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int status = 0;
    {
        const mpi::communicator& c = mpi::world();
        const std::size_t samples = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2000;
        const auto p = static_cast<std::size_t>(c.size());
        const auto r = static_cast<std::size_t>(c.rank());
        const std::size_t n = samples / p + (r < samples % p ? 1 : 0);
        const std::size_t first = r * (samples / p) + std::min(r, samples % p);
        const int iterations = 8;
        const parameters w = fit(data(first, n), c, iterations);
        if (c.rank() == 0) {
            const mpi::communicator alone(MPI_COMM_SELF);
            const parameters reference = fit(data(0, samples), alone, iterations);
            double worst = 0;
            for (std::size_t i = 0; i < features; ++i)
                worst = std::max(worst, std::abs(w[i] - reference[i]) / std::abs(reference[i]));
            std::printf("logistic regression, %zu samples over %d ranks, %d Newton steps:\n",
                        samples, c.size(), iterations);
            std::printf("  w = (%.12f, %.12f, %.12f, %.12f)\n", w[0], w[1], w[2], w[3]);
            std::printf("  one rank alone: largest relative difference %.2e\n", worst);
            status = worst <= 1e-12 ? 0 : 1;
        }
        MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return status;
}
