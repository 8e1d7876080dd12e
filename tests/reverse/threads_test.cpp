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

#include "workloads.hpp"

using nabla_test::cluster;
using nabla_test::lennard_jones;
using nabla_test::lennard_jones_gradient;

namespace {

bool close_all(const std::vector<double>& a, const std::vector<double>& b) {
    return nabla_test::close_all(a, b, 1e-12);
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
