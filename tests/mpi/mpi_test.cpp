// nabla/mpi.hpp under mpiexec with 1 to 4 ranks: every operation's adjoint is the transpose of
// its tangent map (the dot-product test <J v, w> = <v, J^T w> over all ranks, with forward mode
// on dual numbers against the tape's sweep), values equal on plain, dual and active numbers,
// gradients equal to those of the serial program, NaN and infinity carried through, a pipeline
// of sends swept without deadlock, and misuse reported. Every rank runs every test; checks use
// CHECK so that a failing rank still takes part in the collectives the others wait in.

// Listeners (MPI_Init and MPI_Finalize below) are part of Catch2's external interfaces.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <nabla/array.hpp>
#include <nabla/mpi.hpp>
#include <nabla/reverse.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

// MPI_Init before the first test and MPI_Finalize after the last, around Catch2's own main.
struct mpi_lifetime : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testRunStarting(const Catch::TestRunInfo&) override { MPI_Init(nullptr, nullptr); }
    void testRunEnded(const Catch::TestRunStats&) override { MPI_Finalize(); }
};

using dual1 = nabla::dual<double, 1>;
namespace mpi = nabla::mpi;

const mpi::communicator& world() {
    return mpi::world();
}

double sum_over_ranks(double x) {
    double s = 0;
    MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

std::vector<double> uniform(std::size_t n, std::uint32_t seed, double low = -1, double high = 1) {
    std::mt19937 engine(seed);
    std::uniform_real_distribution<double> d(low, high);
    std::vector<double> v(n);
    for (double& x : v)
        x = d(engine);
    return v;
}

std::uint32_t seed_of(const std::string& name, int salt) {
    return static_cast<std::uint32_t>(std::hash<std::string>{}(name)) * 7919u +
           static_cast<std::uint32_t>(world().rank()) * 104729u + static_cast<std::uint32_t>(salt);
}

// The input values of an operation on this rank: random, or drawn so that the reductions meet
// their edges (products with zeros among the factors, min and max with ties).
enum class inputs { random, edges };

std::vector<double> input_values(std::size_t n, const std::string& name, inputs kind) {
    std::vector<double> x = uniform(n, seed_of(name, 1), 0.5, 1.5);
    if (kind == inputs::edges && n >= 3) {
        const int r = world().rank();
        if (r == 0)
            x[0] = 0;  // one zero factor
        if (r <= 1)
            x[1] = 0;  // two zero factors where there are two ranks
        x[2] = 0.75;   // a tie on every rank
    }
    return x;
}

// Runs `operation` (a generic callable (in, out) on std::vector<E>) on plain, dual and active
// numbers, checks that their values agree and that the tape's sweep is the transpose of the
// tangent map: sum over ranks of <J v, w> equals sum over ranks of <v, J^T w>.
template <class Operation>
void check_transpose(const std::string& name,
                     std::size_t n_in,
                     std::size_t n_out,
                     Operation operation,
                     inputs kind = inputs::random) {
    INFO(name << " on rank " << world().rank() << " of " << world().size());
    const std::vector<double> x = input_values(n_in, name, kind);
    const std::vector<double> v = uniform(n_in, seed_of(name, 2));
    const std::vector<double> w = uniform(n_out, seed_of(name, 3));

    std::vector<double> y_plain(n_out, 0.0);
    std::vector<double> x_plain = x;
    operation(x_plain, y_plain);

    std::vector<dual1> x_dual(n_in), y_dual(n_out);
    for (std::size_t k = 0; k < n_in; ++k)
        x_dual[k] = dual1(x[k], {v[k]});
    operation(x_dual, y_dual);

    nabla::tape<> t;
    std::vector<nabla::var> x_var(n_in), y_var(n_out);
    std::vector<double> g(n_in);
    {
        auto recording = t.record();
        t.inputs(x, x_var);
        operation(x_var, y_var);
    }
    t.zero_adjoints();
    for (std::size_t k = 0; k < n_out; ++k)
        t.seed(y_var[k], w[k]);
    t.sweep();
    t.adjoints(x_var, g);

    double jv_w = 0, v_jtw = 0, scale = 0;
    for (std::size_t k = 0; k < n_out; ++k) {
        // (A product may be multiplied in another order for plain numbers.)
        CHECK(y_var[k].value == Approx(y_plain[k]).epsilon(1e-15).margin(1e-300));
        CHECK(y_dual[k].value == Approx(y_var[k].value).epsilon(1e-15).margin(1e-300));
        jv_w += y_dual[k].tangent[0] * w[k];
        scale += std::abs(y_dual[k].tangent[0] * w[k]);
    }
    for (std::size_t k = 0; k < n_in; ++k) {
        v_jtw += v[k] * g[k];
        scale += std::abs(v[k] * g[k]);
    }
    jv_w = sum_over_ranks(jv_w);
    v_jtw = sum_over_ranks(v_jtw);
    scale = sum_over_ranks(scale);
    CHECK(scale > 0);
    CHECK(std::abs(jv_w - v_jtw) <= 1e-12 * scale);
}

std::size_t ranks() {
    return static_cast<std::size_t>(world().size());
}
int rank() {
    return world().rank();
}

}  // namespace

CATCH_REGISTER_LISTENER(mpi_lifetime)

TEST_CASE("bcast's adjoint is a reduction to the root", "[mpi]") {
    for (int root : {0, world().size() - 1})
        check_transpose("bcast", 4, 4, [root](auto& in, auto& out) {
            std::copy(in.begin(), in.end(), out.begin());
            mpi::bcast(out, root, world());
        });
    // One number.
    check_transpose("bcast one", 1, 1, [](auto& in, auto& out) {
        out[0] = mpi::bcast(in[0], world().size() - 1, world());
    });
}

TEST_CASE("allreduce: sum, product, min and max are transposed by their sweeps", "[mpi]") {
    for (mpi::op o : {mpi::op::sum, mpi::op::prod, mpi::op::min, mpi::op::max})
        for (inputs kind : {inputs::random, inputs::edges})
            check_transpose(
                "allreduce " + std::to_string(static_cast<int>(o)), 5, 5,
                [o](auto& in, auto& out) { mpi::allreduce(in, out, o, world()); }, kind);
    check_transpose("allreduce one", 1, 1, [](auto& in, auto& out) {
        using E = std::remove_cvref_t<decltype(in[0])>;
        const E square = in[0] * in[0];
        out[0] = mpi::allreduce(square, mpi::op::sum, world());
    });
}

TEST_CASE("reduce: the root's result, its adjoint a broadcast from the root", "[mpi]") {
    for (int root : {0, world().size() - 1})
        for (mpi::op o : {mpi::op::sum, mpi::op::prod, mpi::op::min, mpi::op::max})
            for (inputs kind : {inputs::random, inputs::edges})
                check_transpose(
                    "reduce " + std::to_string(static_cast<int>(o)), 5, rank() == root ? 5 : 0,
                    [o, root](auto& in, auto& out) { mpi::reduce(in, out, o, root, world()); },
                    kind);
}

TEST_CASE("min and max: the adjoint goes to the lowest rank of a tie", "[mpi]") {
    nabla::tape<> t;
    auto recording = t.record();
    nabla::var x = t.input(2.0);
    nabla::var lowest = mpi::allreduce(x, mpi::op::min, world());
    nabla::var highest = mpi::allreduce(x, mpi::op::max, world());
    nabla::var f = lowest + 3.0 * highest;
    mpi::replicated_gradient(t, f, world());
    CHECK(f.value == 8.0);
    CHECK(t.adjoint(x) == (rank() == 0 ? 4.0 : 0.0));
}

TEST_CASE("allgather, reduce_scatter and alltoall are transposed by their sweeps", "[mpi]") {
    const std::size_t p = ranks();
    check_transpose("allgather", 3, 3 * p,
                    [](auto& in, auto& out) { mpi::allgather(in, out, world()); });
    check_transpose("reduce_scatter", 3 * p, 3,
                    [](auto& in, auto& out) { mpi::reduce_scatter(in, out, world()); });
    check_transpose("alltoall", 2 * p, 2 * p,
                    [](auto& in, auto& out) { mpi::alltoall(in, out, world()); });
}

TEST_CASE("gather, scatter and their v variants are transposed by their sweeps", "[mpi]") {
    const std::size_t p = ranks();
    for (int root : {0, world().size() - 1}) {
        const bool at_root = rank() == root;
        check_transpose("gather", 3, at_root ? 3 * p : 0,
                        [root](auto& in, auto& out) { mpi::gather(in, out, root, world()); });
        check_transpose("scatter", at_root ? 3 * p : 0, 3,
                        [root](auto& in, auto& out) { mpi::scatter(in, out, root, world()); });
        // Rank r has r + 1 elements; at the root the blocks go in reverse rank order, with a gap
        // of one element before each.
        std::vector<int> counts(p), displacements(p);
        std::size_t total = 0;
        for (std::size_t r = p; r-- > 0;) {
            counts[r] = static_cast<int>(r + 1);
            displacements[r] = static_cast<int>(total + 1);
            total += r + 2;
        }
        const auto mine = static_cast<std::size_t>(rank() + 1);
        check_transpose("gatherv", mine, at_root ? total : 0, [&, root](auto& in, auto& out) {
            mpi::gatherv(in, out, counts, displacements, root, world());
        });
        check_transpose("scatterv", at_root ? total : 0, mine, [&, root](auto& in, auto& out) {
            mpi::scatterv(in, counts, displacements, out, root, world());
        });
        check_transpose(
            "gatherv packed", mine, at_root ? p * (p + 1) / 2 : 0,
            [&, root](auto& in, auto& out) { mpi::gatherv(in, out, counts, root, world()); });
    }
}

TEST_CASE("gatherv leaves the root's elements between the blocks as they were", "[mpi]") {
    const std::size_t p = ranks();
    nabla::tape<> t;
    auto recording = t.record();
    nabla::var x = t.input(static_cast<double>(rank() + 1));
    nabla::var kept = t.input(-1.0);
    std::vector<nabla::var> out(rank() == 0 ? 2 * p : 0, kept);
    std::vector<int> counts(p, 1), displacements(p);
    for (std::size_t r = 0; r < p; ++r)
        displacements[r] = static_cast<int>(2 * r + 1);
    mpi::gatherv(std::span(&x, 1), out, counts, displacements, 0, world());
    nabla::var s = 0.0;
    for (const nabla::var& y : out)
        s += y * y;
    t.gradient(s);
    if (rank() == 0) {
        for (std::size_t r = 0; r < p; ++r) {
            CHECK(out[2 * r].value == -1.0);
            CHECK(out[2 * r + 1].value == static_cast<double>(r + 1));
        }
        CHECK(t.adjoint(kept) == -2.0 * static_cast<double>(p));
    }
    CHECK(t.adjoint(x) == 2.0 * (rank() + 1));
}

TEST_CASE("send, recv and sendrecv: the adjoint goes back to the sender", "[mpi]") {
    const int p = world().size();
    const int next = (rank() + 1) % p, previous = (rank() + p - 1) % p;
    check_transpose("sendrecv ring", 4, 4, [=](auto& in, auto& out) {
        mpi::sendrecv(in, next, 7, out, previous, 7, world());
    });
    check_transpose("sendrecv any source", 4, 4, [=](auto& in, auto& out) {
        mpi::sendrecv(in, next, 5, out, MPI_ANY_SOURCE, MPI_ANY_TAG, world());
    });
    // A shift without wrapping: the ends send to and receive from MPI_PROC_NULL.
    const int up = rank() + 1 < p ? rank() + 1 : MPI_PROC_NULL;
    const int down = rank() > 0 ? rank() - 1 : MPI_PROC_NULL;
    if (p > 1)
        check_transpose("sendrecv shift", 3, 3, [=](auto& in, auto& out) {
            mpi::sendrecv(in, up, 1, out, down, 1, world());
        });
    if (p > 1)
        check_transpose("send and recv ring", 3, 3, [=](auto& in, auto& out) {
            if (rank() % 2 == 0) {
                mpi::send(in, next, 3, world());
                mpi::recv(out, previous, 3, world());
            } else {
                mpi::recv(out, previous, 3, world());
                mpi::send(in, next, 3, world());
            }
        });
}

TEST_CASE("isend and irecv: the sweep starts the adjoint transfer at the wait", "[mpi]") {
    const int p = world().size();
    const int next = (rank() + 1) % p, previous = (rank() + p - 1) % p;
    check_transpose("isend and irecv, wait_all", 3, 3, [=](auto& in, auto& out) {
        std::array<mpi::request, 2> q{mpi::irecv(out, previous, 4, world()),
                                      mpi::isend(in, next, 4, world())};
        mpi::wait_all(q);
        CHECK(!q[0].pending());
    });
    // Two messages each way, waited for one by one in the other order than started.
    check_transpose("isend and irecv, wait", 4, 4, [=](auto& in, auto& out) {
        using E = std::remove_cvref_t<decltype(in[0])>;
        std::span<E> low(out.data(), 2), high(out.data() + 2, 2);
        mpi::request r1 = mpi::irecv(low, previous, 1, world());
        mpi::request r2 = mpi::irecv(high, MPI_ANY_SOURCE, 2, world());
        mpi::request s1 = mpi::isend(std::span(in.data(), 2), next, 1, world());
        mpi::request s2 = mpi::isend(std::span(in.data() + 2, 2), next, 2, world());
        mpi::wait(s2);
        mpi::wait(r2);
        mpi::wait(r1);
        mpi::wait(s1);
    });
}

TEST_CASE("adjoint messages pair up with their messages whatever order the waits take", "[mpi]") {
    // Two messages with one tag to the next rank: the senders wait for them in the order they
    // started, the receivers in the other order, and a blocking send follows with the same tag.
    const int p = world().size();
    const int next = (rank() + 1) % p, previous = (rank() + p - 1) % p;
    check_transpose("waits in other orders", 5, 5, [=](auto& in, auto& out) {
        using E = std::remove_cvref_t<decltype(in[0])>;
        mpi::request r1 = mpi::irecv(std::span<E>(out.data(), 2), previous, 0, world());
        mpi::request r2 = mpi::irecv(std::span<E>(out.data() + 2, 2), previous, 0, world());
        mpi::request s1 = mpi::isend(std::span(in.data(), 2), next, 0, world());
        mpi::request s2 = mpi::isend(std::span(in.data() + 2, 2), next, 0, world());
        mpi::wait(s1);
        mpi::wait(s2);
        mpi::wait(r2);
        mpi::wait(r1);
        mpi::sendrecv(std::span(in.data() + 4, 1), next, 0, std::span<E>(out.data() + 4, 1),
                      previous, 0, world());
    });
}

TEST_CASE("a scatterv whose blocks overlap sums the adjoints of the shared inputs", "[mpi]") {
    // Rank r gets the first r + 1 of the root's inputs.
    const std::size_t p = ranks();
    std::vector<int> counts(p), displacements(p, 0);
    for (std::size_t r = 0; r < p; ++r)
        counts[r] = static_cast<int>(r + 1);
    check_transpose(
        "scatterv overlapping", rank() == 0 ? p : 0, static_cast<std::size_t>(rank() + 1),
        [&](auto& in, auto& out) { mpi::scatterv(in, counts, displacements, out, 0, world()); });
}

TEST_CASE("a tape of dual numbers through gatherv, send and irecv", "[mpi]") {
    // Forward over reverse: values and tangents travel together, blocks land where the
    // displacements say, and the elements between them keep what they held.
    using D = dual1;
    const std::size_t p = ranks();
    nabla::tape<D> t;
    auto recording = t.record();
    std::vector<nabla::active<D>> x(2);
    x[0] = t.input(D(1.0 + rank(), {1.0}));
    x[1] = t.input(D(2.0 * rank(), {0.0}));
    std::vector<nabla::active<D>> out(rank() == 0 ? 3 * p : 0, nabla::active<D>(D(-7.0)));
    std::vector<int> counts(p, 2), displacements(p);
    for (std::size_t r = 0; r < p; ++r)
        displacements[r] = static_cast<int>(3 * r + 1);
    mpi::gatherv(x, out, counts, displacements, 0, world());
    if (rank() == 0)
        for (std::size_t r = 0; r < p; ++r) {
            CHECK(out[3 * r].value.value == -7.0);
            CHECK(out[3 * r + 1].value.value == 1.0 + static_cast<double>(r));
            CHECK(out[3 * r + 1].value.tangent[0] == 1.0);
            CHECK(out[3 * r + 2].value.value == 2.0 * static_cast<double>(r));
        }
    // Around a ring by isend and irecv: y = the previous rank's x, f = sum y^2.
    const int next = (rank() + 1) % world().size();
    const int previous = (rank() + world().size() - 1) % world().size();
    std::vector<nabla::active<D>> y(2);
    std::array<mpi::request, 2> q{mpi::irecv(y, previous, 3, world()),
                                  mpi::isend(x, next, 3, world())};
    mpi::wait_all(q);
    nabla::active<D> f = y[0] * y[0] + y[1] * y[1];
    t.gradient(f);
    // d f / d x0 = 2 x0 (its tangent 2 along x0's direction), on the rank that sent it.
    CHECK(t.adjoint(x[0]).value == 2.0 * (1.0 + rank()));
    CHECK(t.adjoint(x[0]).tangent[0] == 2.0);
    CHECK(t.adjoint(x[1]).value == 4.0 * rank());
}

TEST_CASE("arrays on the tape go through the collectives as arrays", "[mpi]") {
    // f = sum over the ranks of sum(exp(allreduce(x)) * allgather(x)[0..n)) + the ring's
    // sum(y^2), with x this rank's array; the same with buffers of variables.
    const std::size_t n = 5;
    const int p = world().size();
    const int next = (rank() + 1) % p, previous = (rank() + p - 1) % p;
    const std::vector<double> xs = uniform(n, seed_of("arrays", 1));
    const auto run = [&](auto on_arrays) {
        nabla::tape<> t;
        auto recording = t.record();
        std::vector<double> g(n);
        if constexpr (decltype(on_arrays)::value) {
            nabla::var_array x = nabla::input_array(t, xs);
            const nabla::var_array s = mpi::allreduce(x, mpi::op::sum, world());
            const nabla::var_array all = mpi::allgather(x, world());
            const nabla::var_array y = mpi::sendrecv(x, next, 0, n, previous, 0, world());
            const nabla::var_array b = mpi::bcast(x, p - 1, world());
            const nabla::var local = sum(exp(s) * all.slice(0, n)) + sum(y * y) + sum(b);
            const nabla::var f = mpi::allreduce(local, mpi::op::sum, world());
            mpi::replicated_gradient(t, f, world());
            g = nabla::adjoints(t, x);
            return std::pair{f.value, g};
        } else {
            std::vector<nabla::var> x(n), s(n), all(n * ranks()), y(n), b(n);
            t.inputs(xs, x);
            mpi::allreduce(x, s, mpi::op::sum, world());
            mpi::allgather(x, all, world());
            mpi::sendrecv(x, next, 0, y, previous, 0, world());
            b = x;
            mpi::bcast(b, p - 1, world());
            nabla::var local = 0.0;
            for (std::size_t k = 0; k < n; ++k)
                local += exp(s[k]) * all[k] + y[k] * y[k] + b[k];
            const nabla::var f = mpi::allreduce(local, mpi::op::sum, world());
            mpi::replicated_gradient(t, f, world());
            t.adjoints(x, g);
            return std::pair{f.value, g};
        }
    };
    const auto [f_arrays, g_arrays] = run(std::true_type{});
    const auto [f_vars, g_vars] = run(std::false_type{});
    CHECK(f_arrays == Approx(f_vars).epsilon(1e-14));
    for (std::size_t k = 0; k < n; ++k)
        CHECK(g_arrays[k] == Approx(g_vars[k]).epsilon(1e-13));
}

TEST_CASE("a pipeline of sends is swept without deadlock and its gradient is the chain's",
          "[mpi]") {
    // Rank r receives u from rank r - 1, computes u * u / 2 + sin(u), and sends it on; the last
    // rank's result is the function of rank 0's input.
    const int p = world().size();
    const auto stage = [](auto u) {
        using std::sin;
        return u * u / 2.0 + sin(u);
    };
    nabla::tape<> t;
    auto recording = t.record();
    nabla::var u = t.input(0.3);
    if (rank() > 0)
        mpi::recv(std::span(&u, 1), rank() - 1, 0, world());
    nabla::var v = stage(u);
    if (rank() + 1 < p)
        mpi::send(std::span(&v, 1), rank() + 1, 0, world());
    t.zero_adjoints();
    if (rank() + 1 == p)
        t.seed(v);
    t.sweep();
    // The same chain on one rank, in forward mode.
    dual1 z(0.3, {1.0});
    for (int r = 0; r < p; ++r)
        z = stage(z);
    if (rank() + 1 == p)
        CHECK(v.value == z.value);
    if (rank() == 0)
        CHECK(t.adjoint(u) == Approx(z.tangent[0]).epsilon(1e-14));
}

TEST_CASE("a distributed sum's gradient equals the serial program's", "[mpi]") {
    // f(x) = sum_i x_i^2 sin(x_i) + (sum_i x_i)^2 over 11 numbers split unevenly over the ranks.
    const std::size_t n = 11, p = ranks();
    const std::vector<double> all = uniform(n, 42);
    std::vector<int> counts(p);
    for (std::size_t r = 0; r < p; ++r)
        counts[r] = static_cast<int>(n / p + (r < n % p ? 1 : 0));
    const auto mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(rank())]);
    const auto local = [](const auto& x) {
        using std::sin;
        nabla::var s = 0.0, t = 0.0;
        for (const auto& xi : x) {
            s += xi * xi * sin(xi);
            t += xi;
        }
        return std::pair{s, t};
    };

    nabla::tape<> t;
    std::vector<nabla::var> x(mine);
    std::vector<nabla::var> every(rank() == 0 ? n : 0);
    auto recording = t.record();
    if (rank() == 0)
        t.inputs(all, every);
    mpi::scatterv(every, counts, x, 0, world());
    const auto [s, sum] = local(x);
    nabla::var total = mpi::allreduce(s, mpi::op::sum, world());
    nabla::var sum_all = mpi::allreduce(sum, mpi::op::sum, world());
    nabla::var f = total + sum_all * sum_all;
    mpi::replicated_gradient(t, f, world());

    if (rank() == 0) {
        nabla::tape<> serial;
        auto serial_recording = serial.record();
        std::vector<nabla::var> y(n);
        serial.inputs(all, y);
        const auto [s1, sum1] = local(y);
        nabla::var g = s1 + sum1 * sum1;
        serial.gradient(g);
        CHECK(f.value == Approx(g.value).epsilon(1e-14));
        for (std::size_t i = 0; i < n; ++i)
            CHECK(t.adjoint(every[i]) == Approx(serial.adjoint(y[i])).epsilon(1e-14));
    }
}

TEST_CASE("NaN and infinity go through every reduction as they would on one rank", "[mpi]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    nabla::tape<> t;
    auto recording = t.record();
    // Rank 0 holds a NaN in element 0 and infinity in element 1.
    std::vector<double> values{rank() == 0 ? nan : 1.0, rank() == 0 ? inf : 2.0, 3.0};
    std::vector<nabla::var> x(3), sum(3), lowest(3), highest(3), product(3);
    t.inputs(values, x);
    mpi::allreduce(x, sum, mpi::op::sum, world());
    mpi::allreduce(x, lowest, mpi::op::min, world());
    mpi::allreduce(x, highest, mpi::op::max, world());
    mpi::allreduce(x, product, mpi::op::prod, world());
    CHECK(std::isnan(sum[0].value));
    CHECK(std::isnan(lowest[0].value));
    CHECK(std::isnan(highest[0].value));
    CHECK(std::isnan(product[0].value));
    CHECK(sum[1].value == inf);
    CHECK(highest[1].value == inf);
    CHECK(lowest[1].value == (world().size() == 1 ? inf : 2.0));
    CHECK(product[1].value == inf);
    // The sum's adjoint does not depend on the values; min and max send theirs to the NaN's
    // rank (the lowest one holding one).
    t.zero_adjoints();
    for (std::size_t k = 0; k < 3; ++k) {
        t.seed(sum[k]);
        t.seed(lowest[k]);
        t.seed(highest[k]);
    }
    t.sweep();
    const double p = static_cast<double>(world().size());
    CHECK(t.adjoint(x[0]) == (rank() == 0 ? p + 2 * p : p));
    CHECK(t.adjoint(x[2]) == (rank() == 0 ? p + 2 * p : p));

    // Forward numbers carry the NaN in value and tangent alike.
    std::vector<dual1> d{dual1(values[0], {1.0})}, e(1);
    mpi::allreduce(d, e, mpi::op::max, world());
    CHECK(std::isnan(e[0].value));
    CHECK(e[0].tangent[0] == 1.0);
}

TEST_CASE("the product's adjoint in float: NaN and infinity among the factors", "[mpi]") {
    // Rank 0 holds a NaN, rank 1 infinity: d/dx of the product on rank 0 is the product of the
    // others (infinity with 2 ranks), on rank 1 NaN.
    nabla::tape<float> t;
    auto recording = t.record();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    nabla::active<float> x = t.input(rank() == 0 ? nan : rank() == 1 ? inf : 2.0f);
    nabla::active<float> y = mpi::allreduce(x, mpi::op::prod, world());
    mpi::replicated_gradient(t, y, world());
    if (world().size() == 2) {
        if (rank() == 0)
            CHECK(t.adjoint(x) == inf);
        else
            CHECK(std::isnan(t.adjoint(x)));
    }
}

TEST_CASE("plain numbers and constants go through the same calls without a tape", "[mpi]") {
    std::vector<double> x{1.0 * rank(), 2.0}, y(2);
    mpi::allreduce(x, y, mpi::op::sum, world());
    const double p = world().size();
    CHECK(y[0] == p * (p - 1) / 2);
    CHECK(y[1] == 2 * p);
    std::vector<int> counts{rank(), 1}, all(2 * ranks());
    mpi::allgather(counts, all, world());
    CHECK(all[2 * ranks() - 2] == world().size() - 1);
    // The same vector as input and output.
    std::vector<double> z{1.0, 2.0};
    mpi::allreduce(z, z, mpi::op::sum, world());
    CHECK(z[1] == 2 * p);
    std::vector<double> ring{1.0 * rank()};
    mpi::sendrecv(ring, (rank() + 1) % world().size(), 0, ring,
                  (rank() + world().size() - 1) % world().size(), 0, world());
    CHECK(ring[0] == (rank() + world().size() - 1) % world().size());
    // Active variables while no tape records: constants, nothing recorded.
    std::vector<nabla::var> c{2.0}, d(1);
    mpi::allreduce(c, d, mpi::op::prod, world());
    CHECK(d[0].value == std::pow(2.0, p));
    CHECK(!d[0].is_active());
    // Taylor numbers: the series of a product over the ranks.
    std::vector<nabla::taylor<double, 3>> s(1), u(1);
    s[0].c = {1.0, 1.0, 0.0, 0.0};  // 1 + t on every rank
    mpi::allreduce(s, u, mpi::op::prod, world());
    CHECK(u[0].c[1] == Approx(p));  // (1 + t)^p = 1 + p t + ...
    CHECK(u[0].c[2] == Approx(p * (p - 1) / 2));
}

TEST_CASE("misuse: sizes that do not fit, a freed communicator, a stale variable", "[mpi]") {
    std::vector<nabla::var> x(3), y(2);
    CHECK_THROWS_WITH(mpi::allreduce(x, y, mpi::op::sum, world()),
                      Catch::Contains("out holds 2 elements where 3 are needed"));
    CHECK_THROWS_WITH(mpi::bcast(x, world().size(), world()),
                      Catch::Contains("root " + std::to_string(world().size()) + " is not a rank"));
    CHECK_THROWS_WITH(mpi::bcast(x, MPI_PROC_NULL, world()), Catch::Contains("is not a rank"));
    std::vector<double> a(2), b(3 * ranks());
    CHECK_THROWS_WITH(mpi::allgather(a, b, world()), Catch::Contains("where"));

    // A message longer than the buffer: reported on the receiving side, the message consumed.
    const int p = world().size();
    const int next = (rank() + 1) % p, previous = (rank() + p - 1) % p;
    std::vector<double> three{1, 2, 3}, two(2);
    CHECK_THROWS_WITH(mpi::sendrecv(three, next, 9, two, previous, 9, world()),
                      Catch::Contains("holds 3 elements where the buffer takes 2"));
    // Active variables carry a number more in each message; the count is the user's elements.
    std::vector<nabla::var> five(5), four(4);
    CHECK_THROWS_WITH(mpi::sendrecv(five, next, 10, four, previous, 10, world()),
                      Catch::Contains("holds 5 elements where the buffer takes 4"));

    // A sweep over an operation on a communicator freed since.
    {
        mpi::communicator c(MPI_COMM_WORLD);
        nabla::tape<> t;
        auto recording = t.record();
        nabla::var v = t.input(1.0);
        nabla::var s = mpi::allreduce(v, mpi::op::sum, c);
        c.free();
        CHECK_THROWS_WITH(t.gradient(s), Catch::Contains("communicator that was freed"));
    }
    // A variable of a cleared tape.
    {
        nabla::tape<> t;
        auto recording = t.record();
        nabla::var v = t.input(1.0);
        t.clear();
        CHECK_THROWS_AS(mpi::allreduce(v, mpi::op::sum, world()), nabla::tape_error);
    }
}

TEST_CASE("checking: ranks that make different collectives are told so on every rank",
          "[mpi][checking]") {
    REQUIRE(mpi::checking());  // the default without NDEBUG
    if (ranks() < 2)
        return;  // (one rank always agrees with itself)
    // Sizes: small differences ended in MPI's truncation abort, 1000 against 100000 corrupted
    // the heap.
    std::vector<double> a(rank() == 0 ? 5 : 4, 1.0), b(a.size());
    CHECK_THROWS_WITH(mpi::allreduce(a, b, mpi::op::sum, world()),
                      Catch::Contains("rank 0 passes 5 elements, rank 1 passes 4 elements"));
    std::vector<double> big(rank() == 0 ? 1000 : 100000, 1.0), big_out(big.size());
    CHECK_THROWS_WITH(
        mpi::allreduce(big, big_out, mpi::op::sum, world()),
        Catch::Contains("rank 0 passes 1000 elements, rank 1 passes 100000 elements"));
    // Roots and reductions that differ gave silently wrong values.
    std::vector<double> x(3, 1.0);
    CHECK_THROWS_WITH(mpi::bcast(x, rank() == 0 ? 0 : 1, world()),
                      Catch::Contains("rank 0 names root 0, rank 1 names root 1"));
    CHECK_THROWS_WITH(mpi::allreduce(1.0, rank() == 0 ? mpi::op::sum : mpi::op::max, world()),
                      Catch::Contains("rank 0 reduces by sum, rank 1 reduces by max"));
    // Active variables on one rank, plain numbers on another.
    {
        nabla::tape<> t;
        auto recording = t.record();
        std::vector<nabla::var> v(3);
        if (rank() == 0)
            CHECK_THROWS_WITH(mpi::bcast(v, 0, world()),
                              Catch::Contains("elements of 1 floating-point number"));
        else
            CHECK_THROWS_WITH(mpi::bcast(x, 0, world()), Catch::Contains("rank 0 passes"));
    }
    // The root's counts of a gatherv against each rank's buffer: the others returned, the root
    // waited.
    std::vector<int> counts(rank() == 0 ? static_cast<std::size_t>(ranks()) : 0, 3);
    std::vector<double> gathered(rank() == 0 ? 3 * static_cast<std::size_t>(ranks()) : 0);
    std::vector<double> in(rank() == 1 ? 2 : 3, 1.0);
    CHECK_THROWS_WITH(mpi::gatherv(in, gathered, counts, 0, world()),
                      Catch::Contains("counts give rank 1 3 elements, and rank 1's in holds 2"));
    // A rank whose own check of the call fails (its out too short) throws its own error; the
    // others learn that it failed instead of waiting in the collective.
    std::vector<double> three(3, 1.0), out(rank() == 1 ? 2 : 3);
    if (rank() == 1)
        CHECK_THROWS_WITH(mpi::allreduce(three, out, mpi::op::sum, world()),
                          Catch::Contains("out holds 2 elements where 3 are needed"));
    else
        CHECK_THROWS_WITH(mpi::allreduce(three, out, mpi::op::sum, world()),
                          Catch::Contains("rank 1 fails its own checks of the call"));
    // After each error the ranks are in step: the next collective works.
    CHECK(mpi::allreduce(1.0, mpi::op::sum, world()) == ranks());
}

TEST_CASE("checking: a rank that sweeps alone is told so within the timeout", "[mpi][checking]") {
    if (ranks() < 2)
        return;
    mpi::set_checking(true, 0.5);
    {
        nabla::tape<> t;
        auto recording = t.record();
        const nabla::var v = t.input(1.0);
        const nabla::var s = mpi::allreduce(v, mpi::op::sum, world());
        if (rank() == 0) {
            CHECK_THROWS_WITH(t.gradient(s), Catch::Contains("the sweep's adjoint of "
                                                             "nabla::mpi::allreduce: waited"));
            mpi::detail::wait_for_abandoned_checks();
        } else {
            // (Once rank 0 has given up, the others join its check, so that the tests after
            // this one find MPI in step.)
            std::this_thread::sleep_for(std::chrono::seconds(1));
            mpi::detail::agree("", world().state()->for_sweep(),
                               {static_cast<long long>(mpi::detail::collective::allreduce), -1,
                                static_cast<long long>(mpi::op::sum),
                                mpi::detail::element_code<nabla::var>(), 1});
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpi::set_checking(true);
}

TEST_CASE("checking: a rank whose peer does not sweep the other end of a message is told so",
          "[mpi][checking]") {
    if (ranks() < 2)
        return;
    mpi::set_checking(true, 0.5);
    // Rank 0 sends, rank 1 receives; rank 0 sweeps alone: its adjoint of the send waits for
    // adjoints rank 1 never sends.
    if (rank() < 2) {
        nabla::tape<> t;
        auto recording = t.record();
        std::vector<nabla::var> v{t.input(2.0)};
        if (rank() == 0) {
            mpi::send(v, 1, 11, world());
            CHECK_THROWS_WITH(t.gradient(3.0 * v[0]),
                              Catch::Contains("the adjoint of nabla::mpi::send: waited 0.5 s for "
                                              "rank 1 to sweep the other end of the message"));
        } else {
            mpi::recv(v, 0, 11, world());
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    // The other way: rank 1 sweeps alone and its adjoint of the receive, a message too long for
    // MPI to send before it is received, waits for rank 0. Rank 0's late sweep then receives it.
    if (rank() < 2) {
        nabla::tape<> t;
        auto recording = t.record();
        std::vector<nabla::var> v(100'000);
        t.inputs(std::vector<double>(v.size(), 1.0), v);
        if (rank() == 0) {
            mpi::send(v, 1, 12, world());
            MPI_Barrier(MPI_COMM_WORLD);
            t.zero_adjoints();
            t.seed(v[0], 3.0);
            t.sweep();
            CHECK(t.adjoint(v[0]) == 3.0 + 2.0);  // its own seed and rank 1's
            CHECK(t.adjoint(v[1]) == 0.0);
        } else {
            mpi::recv(v, 0, 12, world());
            CHECK_THROWS_WITH(t.gradient(2.0 * v[0]),
                              Catch::Contains("the adjoint of nabla::mpi::recv: waited 0.5 s for "
                                              "rank 0 to sweep the other end"));
            MPI_Barrier(MPI_COMM_WORLD);
            mpi::detail::wait_for_abandoned_checks();
        }
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    // sendrecv and isend/irecv, rank 0 sweeping alone; then rank 1 sweeps late, which takes
    // what rank 0 sent and completes what it gave up, so that MPI is in step for what follows.
    for (const bool blocking : {true, false}) {
        if (rank() >= 2) {
            MPI_Barrier(MPI_COMM_WORLD);
            continue;
        }
        const int other = 1 - rank();
        nabla::tape<> t;
        auto recording = t.record();
        std::vector<nabla::var> v{t.input(2.0)}, w(1);
        if (blocking) {
            mpi::sendrecv(v, other, 13, w, other, 13, world());
        } else {
            std::array<mpi::request, 2> q{mpi::irecv(w, other, 14, world()),
                                          mpi::isend(v, other, 14, world())};
            mpi::wait_all(q);
        }
        if (rank() == 0) {
            CHECK_THROWS_WITH(t.gradient(2.0 * w[0]),
                              Catch::Contains(std::string("the adjoint of nabla::mpi::") +
                                              (blocking ? "sendrecv" : "isend") +
                                              ": waited 0.5 s for rank 1 to sweep the other end"));
            MPI_Barrier(MPI_COMM_WORLD);
            mpi::detail::wait_for_abandoned_checks();
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            t.gradient(2.0 * w[0]);
            CHECK(t.adjoint(v[0]) == 2.0);  // rank 0's seed on its copy, sent back
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpi::set_checking(true);
}
