// Binomial checkpointing: the gradient of the final state of 10,000 steps of a damped oscillator
// with respect to the initial conditions and the parameters, equal to the gradient from one tape
// of all the steps; the snapshots and recomputations within revolve's bounds.

#include <nabla/nabla.hpp>
#include <nabla/reverse/checkpoint.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace {

// One step of a damped oscillator q'' = -k q - c q' + f sin(q) (a little nonlinearity), by
// semi-implicit Euler with dt = 1e-3. Parameters: k, c, f.
const auto step = [](const auto& x, const auto& p) {
    using T = std::decay_t<decltype(x[0])>;
    using std::sin;
    const double dt = 1e-3;
    std::vector<T> next(2);
    next[1] = x[1] + dt * (-p[0] * x[0] - p[1] * x[1] + p[2] * sin(x[0]));
    next[0] = x[0] + dt * next[1];
    return next;
};

}  // namespace

TEST_CASE("checkpointing: 10,000 steps, equal to the plain tape", "[reverse][checkpoint]") {
    const std::vector<double> x0{1.0, 0.0}, p{4.0, 0.3, 0.5};
    const std::size_t steps = 10000;
    const std::vector<double> w{1.0, -0.5};  // the loss is w . x_T

    // Everything on one tape.
    nabla::tape<> t;
    auto recording = t.record();
    std::vector<nabla::var> x{t.input(x0[0]), t.input(x0[1])};
    std::vector<nabla::var> ap{t.input(p[0]), t.input(p[1]), t.input(p[2])};
    const std::vector<nabla::var> initial = x;
    for (std::size_t i = 0; i < steps; ++i)
        x = step(x, ap);
    t.zero_adjoints();
    t.seed(x[0], w[0]);
    t.seed(x[1], w[1]);
    t.sweep();
    const std::size_t plain_bytes = t.bytes_used();

    auto [xT, pullback] = nabla::checkpointed_vjp(step, x0, p, steps);
    CHECK(xT[0] == x[0].value);
    CHECK(xT[1] == x[1].value);
    const auto adjoints = pullback(w);
    for (std::size_t i = 0; i < 2; ++i)
        CHECK(adjoints.state[i] == Approx(t.adjoint(initial[i])).epsilon(1e-12));
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(adjoints.parameters[i] == Approx(t.adjoint(ap[i])).epsilon(1e-12));

    const auto& s = adjoints.statistics;
    INFO("snapshots " << s.snapshots << ", forward steps " << s.forward_steps << ", bound r "
                      << s.most_recomputations << ", tape bytes " << s.tape_bytes
                      << ", plain tape bytes " << plain_bytes);
    CHECK(s.recorded_steps == steps);
    CHECK(s.snapshots <= 15);                                 // ceil(log2 10000) + x0
    CHECK(s.forward_steps <= s.most_recomputations * steps);  // revolve's bound
    CHECK(s.tape_bytes < plain_bytes / 1000);                 // one step, not 10,000
    // The recorded memory, reported on every run (docs/reverse.md quotes it).
    WARN("checkpointing 10,000 steps: "
         << s.tape_bytes << " bytes of tape (one step at a time) and " << s.snapshots
         << " snapshots, against " << plain_bytes << " bytes for the plain tape; "
         << s.forward_steps << " forward steps");
}

TEST_CASE("checkpointing: every snapshot count reverses exactly", "[reverse][checkpoint]") {
    const std::vector<double> x0{0.3, 0.2}, p{2.0, 0.1, 0.2};
    const std::vector<double> w{0.7, 1.3};
    const std::size_t steps = 37;
    auto [xT, reference] = nabla::checkpointed_vjp(step, x0, p, steps, 40);  // ample snapshots
    const auto expected = reference(w);
    for (std::size_t snapshots : {1u, 2u, 3u, 5u, 8u}) {
        auto [y, pullback] = nabla::checkpointed_vjp(step, x0, p, steps, snapshots);
        const auto got = pullback(w);
        INFO("snapshots " << snapshots);
        for (std::size_t i = 0; i < 2; ++i)
            CHECK(got.state[i] == Approx(expected.state[i]).epsilon(1e-13));
        for (std::size_t i = 0; i < 3; ++i)
            CHECK(got.parameters[i] == Approx(expected.parameters[i]).epsilon(1e-13));
        CHECK(got.statistics.snapshots <= snapshots + 1);
        CHECK(got.statistics.forward_steps <= got.statistics.most_recomputations * steps);
    }
    CHECK_THROWS_WITH(reference(std::vector<double>{1.0}), Catch::Contains("w has 1 entries"));
}
