// nabla::to_string and nabla::to_dot.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace {
const auto [x, y, z] = nabla::variables<3>();

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("to_string uses the fewest parentheses that keep the meaning", "[core][print]") {
    CHECK(nabla::to_string(x + y * z) == "x0 + x1*x2");
    CHECK(nabla::to_string((x + y) * z) == "(x0 + x1)*x2");
    CHECK(nabla::to_string(x - (y - z)) == "x0 - (x1 - x2)");
    CHECK(nabla::to_string((x - y) - z) == "x0 - x1 - x2");
    CHECK(nabla::to_string(x / (y * z)) == "x0/(x1*x2)");
    CHECK(nabla::to_string(x / y * z) == "x0/x1*x2");
    CHECK(nabla::to_string(-(x + y)) == "-(x0 + x1)");
    CHECK(nabla::to_string(-x * y) == "-(x0*x1)");  // the sign moves out of the product
    CHECK(nabla::to_string(-sin(x)) == "-sin(x0)");
    CHECK(nabla::to_string(x * -2.5) == "x0*(-2.5)");
    CHECK(nabla::to_string(pow(x, 3) + atan2(y, 0.5)) == "pow(x0, 3) + atan2(x1, 0.5)");
    CHECK(nabla::to_string(fma(x, y, z)) == "fma(x0, x1, x2)");
    CHECK(nabla::to_string(erf(x) * nabla::two_over_sqrt_pi) == "erf(x0)*2/sqrt(pi)");
    CHECK(nabla::to_string(x * 0.1) == "x0*0.1");
}

TEST_CASE("derivatives collect like terms where that keeps every bit of the value",
          "[core][print]") {
    // The product rule on c y y gives y c + c y: one term, twice, as 2 y c.
    const auto f = 0.735 * y * y + x * x * y;
    const auto fy = nabla::d(f, y);
    CHECK(nabla::to_string(fy) == "2*x1*0.735 + x0*x0");
    for (const double v : {0.3, -1.7, 1e300, 4.9e-324}) {
        const double u = 0.4;
        CHECK(fy(u, v) == v * 0.735 + 0.735 * v + u * u);  // the same bits
    }
    // Sums and products are like terms up to the order of their operands.
    CHECK(nabla::to_string(x * y + y * x) == "2*x0*x1");
    CHECK(nabla::to_string(sin(x + y) + sin(y + x)) == "2*sin(x0 + x1)");
    // Not collected: constants written twice are two run-time constants (their values are not
    // known to be equal), and a sum of three terms is not reassociated (that would round
    // differently).
    CHECK(nabla::to_string(x * 3.0 + x * 3.0) == "x0*3 + x0*3");
    CHECK(nabla::to_string(x * y + z + y * x) == "x0*x1 + x2 + x1*x0");
    CHECK(nabla::to_string(x - y + (y - x)) == "x0 - x1 + x1 - x0");
}

TEST_CASE("to_dot shows the forward graph and the adjoint graph", "[core][print]") {
    const auto u = x * y;
    const auto f = u + sin(u) * 2.5;
    const std::string dot = nabla::to_dot(f);
    CHECK(contains(dot, "digraph nabla {"));
    CHECK(contains(dot, "subgraph cluster_forward"));
    CHECK(contains(dot, "subgraph cluster_reverse"));
    CHECK(contains(dot, "[label=\"x0\"]"));
    CHECK(contains(dot, "[label=\"c0 = 2.5\"]"));
    CHECK(contains(dot, "[label=\"cos(x0*x1)\"]"));  // d sin(u) / du
    CHECK(contains(dot, "n0 -> n2;"));               // x feeds x*y, which is node 2
    // x*y appears once in the forward graph although f uses it twice.
    std::size_t muls = 0;
    for (std::size_t at = dot.find("label=\"mul\""); at != std::string::npos;
         at = dot.find("label=\"mul\"", at + 1))
        ++muls;
    CHECK(muls == 2);  // x*y and sin(u)*c0
    CHECK(dot.back() == '\n');
}
