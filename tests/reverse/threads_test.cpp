// Threads differentiating at the same time: each has its own active tape (and its own tapes for
// the transformations), so gradients computed concurrently are right. Its own program, so that
// the ThreadSanitizer stage of scripts/test.sh builds only this.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

namespace {

const auto lennard_jones = [](const auto& q) {
    using T = std::decay_t<decltype(q[0])>;
    const std::size_t n = q.size() / 3;
    T e = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            auto dx = q[3 * i] - q[3 * j];
            auto dy = q[3 * i + 1] - q[3 * j + 1];
            auto dz = q[3 * i + 2] - q[3 * j + 2];
            auto r2 = dx * dx + dy * dy + dz * dz;
            auto s6 = 1.0 / (r2 * r2 * r2);
            e += 4.0 * (s6 * s6 - s6);
        }
    return e;
};

std::vector<double> lennard_jones_gradient(const std::vector<double>& q) {
    std::vector<double> g(q.size(), 0.0);
    const std::size_t n = q.size() / 3;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            double d[3], r2 = 0.0;
            for (int k = 0; k < 3; ++k) {
                d[k] = q[3 * i + k] - q[3 * j + k];
                r2 += d[k] * d[k];
            }
            const double s6 = 1.0 / (r2 * r2 * r2);
            const double f = 4.0 * (2.0 * s6 * s6 - s6) * -6.0 / r2;
            for (int k = 0; k < 3; ++k) {
                g[3 * i + k] += f * d[k];
                g[3 * j + k] -= f * d[k];
            }
        }
    return g;
}

std::vector<double> cluster(std::size_t particles, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> jitter(-0.05, 0.05);
    std::vector<double> q;
    for (std::size_t p = 0; p < particles; ++p) {
        q.push_back(1.1 * double(p % 3) + jitter(random));
        q.push_back(1.1 * double((p / 3) % 3) + jitter(random));
        q.push_back(1.1 * double(p / 9) + jitter(random));
    }
    return q;
}

bool close_all(const std::vector<double>& a, const std::vector<double>& b) {
    double scale = 0.0;
    for (double v : b)
        scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > 1e-12 * scale)
            return false;
    return a.size() == b.size();
}

}  // namespace

TEST_CASE("tape: threads record and sweep independently, for a sustained period",
          "[reverse][threads]") {
    constexpr std::size_t thread_count = 4;
    std::vector<std::vector<double>> inputs, expected;
    for (unsigned s = 0; s < thread_count; ++s) {
        inputs.push_back(cluster(12, s + 11));
        expected.push_back(lennard_jones_gradient(inputs.back()));
    }
    std::vector<int> failures(thread_count, 0), rounds(thread_count, 0);
    const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < thread_count; ++k)
        threads.emplace_back([&, k] {
            // Alternates a transformation (its lent tape) and a tape of the thread's own.
            nabla::tape<> own;
            std::vector<nabla::var> q(inputs[k].size());
            while (std::chrono::steady_clock::now() < stop) {
                if (!close_all(nabla::grad(lennard_jones, inputs[k]), expected[k]))
                    ++failures[k];
                auto recording = own.record();
                for (std::size_t i = 0; i < q.size(); ++i)
                    q[i] = own.input(inputs[k][i]);
                const nabla::var e = lennard_jones(q);
                own.gradient(e);
                std::vector<double> g(q.size());
                for (std::size_t i = 0; i < q.size(); ++i)
                    g[i] = own.adjoint(q[i]);
                if (!close_all(g, expected[k]))
                    ++failures[k];
                ++rounds[k];
            }
        });
    for (auto& th : threads)
        th.join();
    for (std::size_t k = 0; k < thread_count; ++k) {
        INFO("thread " << k << ", " << rounds[k] << " rounds");
        CHECK(rounds[k] > 0);
        CHECK(failures[k] == 0);
    }
}

TEST_CASE("tape: a variable of another thread's recording is reported", "[reverse][threads]") {
    nabla::tape<> t;
    nabla::var foreign;
    std::thread other([&] {
        auto recording = t.record();
        foreign = t.input(1.0);
    });
    other.join();
    nabla::tape<> mine;
    auto recording = mine.record();
    const nabla::var x = mine.input(2.0);
    CHECK_THROWS_AS(nabla::var(x * foreign), nabla::tape_error);
}
