// Inverse heat conduction: the initial temperature of a square plate, recovered from a noisy
// measurement of its temperature after 1,000 explicit steps of the heat equation.
//
// The plate's edge is held at 0. One step updates the interior by a five-point stencil, written
// once as a static array expression: evaluate_into runs it as one fused SIMD loop per step, and
// apply_vjp gives its adjoint, which binomial checkpointing (checkpointed_vjp with the step's
// pullback) chains over the 1,000 steps while storing about log2(1000) states. The loss, the
// misfit to the measurement plus a small penalty on the initial field's roughness (itself a
// static expression with its gradient), is minimised by conjugate gradient descent.
//
//   inverse_heat_conduction [size] [steps] [iterations] [picture.png]
//     defaults 256 1000 40 inverse_heat_conduction.png
//
// It prints the loss and the error of the reconstruction at each iteration, writes the true,
// measured and recovered fields side by side as a PNG, and fails if the loss or the error did
// not fall.

#include <nabla/array.hpp>

#include <xtensor/xtensor.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using field = xt::xtensor<double, 2>;

// k dt / h^2, below the explicit scheme's stability limit of 1/4.
constexpr double rate = 0.2;

// The interior of the next state from the state u: u + rate * (the five-point Laplacian of u).
const auto stencil = [] {
    const auto [u] = nabla::array_variables<1>();
    const auto in = nabla::range<1, -1>;
    return (1.0 - 4.0 * rate) * u(in, in) +
           rate * ((u(nabla::upto<-2>, in) + u(nabla::from<2>, in)) +
                   (u(in, nabla::upto<-2>) + u(in, nabla::from<2>)));
}();

// The interior of a field, as a view with rows apart.
nabla::matrix_ref<double> interior(field& f) {
    const std::size_t n = f.shape()[0];
    return {f.data() + n + 1, n - 2, n - 2, n};
}
nabla::matrix_ref<const double> interior(const field& f) {
    const std::size_t n = f.shape()[0];
    return {f.data() + n + 1, n - 2, n - 2, n};
}

// One step from u into next (its memory reused from step to step); the edge keeps its value.
// The checkpointing passes the parameters, which this problem does not have (an empty vector).
void step(const field& u, const std::vector<double>&, field& next) {
    const std::size_t n = u.shape()[0];
    next.resize(u.shape());
    for (std::size_t j = 0; j < n; ++j) {
        next(0, j) = u(0, j);
        next(n - 1, j) = u(n - 1, j);
    }
    for (std::size_t i = 1; i + 1 < n; ++i) {
        next(i, 0) = u(i, 0);
        next(i, n - 1) = u(i, n - 1);
    }
    nabla::evaluate_into(stencil, interior(next), u);
}

// The step's pullback: w, the adjoint of the next state, to du, the adjoint of u. The
// interior's comes from the stencil's vector-Jacobian product; the edge passes its own through.
void step_pullback(
    const field& u, const std::vector<double>&, const field& w, field& du, std::vector<double>&) {
    du.resize(u.shape());
    nabla::apply_vjp_into(stencil, std::tie(du), interior(w), u);
    const std::size_t n = u.shape()[0];
    for (std::size_t j = 0; j < n; ++j) {
        du(0, j) += w(0, j);
        du(n - 1, j) += w(n - 1, j);
    }
    for (std::size_t i = 1; i + 1 < n; ++i) {
        du(i, 0) += w(i, 0);
        du(i, n - 1) += w(i, n - 1);
    }
}

// The roughness of a field: the sum of its squared differences along rows and columns.
const auto roughness = [] {
    const auto [u] = nabla::array_variables<1>();
    using nabla::whole;
    return sum(square(u(whole, nabla::from<1>) - u(whole, nabla::upto<-1>))) +
           sum(square(u(nabla::from<1>, whole) - u(nabla::upto<-1>, whole)));
}();

// The true initial field: two warm blobs, a cold one and a hot square, zero at the edge.
field true_field(std::size_t n) {
    field u = xt::zeros<double>({n, n});
    const auto blob = [n](double x, double y, double cx, double cy, double radius) {
        const double dx = x - cx * static_cast<double>(n), dy = y - cy * static_cast<double>(n);
        const double s = radius * static_cast<double>(n);
        return std::exp(-(dx * dx + dy * dy) / (2.0 * s * s));
    };
    for (std::size_t i = 1; i + 1 < n; ++i)
        for (std::size_t j = 1; j + 1 < n; ++j) {
            const double x = static_cast<double>(j), y = static_cast<double>(i);
            double v = blob(x, y, 0.3, 0.3, 0.08) + 0.7 * blob(x, y, 0.7, 0.35, 0.05) -
                       0.6 * blob(x, y, 0.45, 0.7, 0.06);
            const double m = static_cast<double>(n);
            if (x > 0.62 * m && x < 0.82 * m && y > 0.58 * m && y < 0.78 * m)
                v += 0.8;
            u(i, j) = v;
        }
    return u;
}

double dot(const field& a, const field& b) {
    double s = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k)
        s += a.data()[k] * b.data()[k];
    return s;
}

// A minimal PNG writer: 8-bit RGB, zlib's stored (uncompressed) blocks.
class png {
public:
    static void write(const std::string& path,
                      std::size_t width,
                      std::size_t height,
                      const std::vector<std::uint8_t>& rgb) {
        std::vector<std::uint8_t> raw;
        for (std::size_t y = 0; y < height; ++y) {
            raw.push_back(0);  // no filter
            raw.insert(raw.end(), rgb.begin() + static_cast<std::ptrdiff_t>(y * width * 3),
                       rgb.begin() + static_cast<std::ptrdiff_t>((y + 1) * width * 3));
        }
        std::vector<std::uint8_t> z{0x78, 0x01};
        for (std::size_t at = 0; at < raw.size() || at == 0;) {
            const std::size_t length = std::min<std::size_t>(65535, raw.size() - at);
            const bool last = at + length == raw.size();
            z.push_back(last ? 1 : 0);
            z.push_back(static_cast<std::uint8_t>(length & 0xff));
            z.push_back(static_cast<std::uint8_t>(length >> 8));
            z.push_back(static_cast<std::uint8_t>(~length & 0xff));
            z.push_back(static_cast<std::uint8_t>((~length >> 8) & 0xff));
            z.insert(z.end(), raw.begin() + static_cast<std::ptrdiff_t>(at),
                     raw.begin() + static_cast<std::ptrdiff_t>(at + length));
            at += length;
            if (last)
                break;
        }
        std::uint32_t a = 1, b = 0;
        for (const std::uint8_t byte : raw) {
            a = (a + byte) % 65521;
            b = (b + a) % 65521;
        }
        append32(z, (b << 16) | a);

        std::vector<std::uint8_t> header;
        append32(header, static_cast<std::uint32_t>(width));
        append32(header, static_cast<std::uint32_t>(height));
        header.insert(header.end(), {8, 2, 0, 0, 0});
        std::ofstream out(path, std::ios::binary);
        const std::uint8_t signature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
        out.write(reinterpret_cast<const char*>(signature), sizeof signature);
        chunk(out, "IHDR", header);
        chunk(out, "IDAT", z);
        chunk(out, "IEND", {});
    }

private:
    static void append32(std::vector<std::uint8_t>& v, std::uint32_t x) {
        for (int shift = 24; shift >= 0; shift -= 8)
            v.push_back(static_cast<std::uint8_t>(x >> shift));
    }
    static std::uint32_t crc(const std::vector<std::uint8_t>& data) {
        std::uint32_t c = 0xffffffffu;
        for (const std::uint8_t byte : data) {
            c ^= byte;
            for (int k = 0; k < 8; ++k)
                c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
        }
        return ~c;
    }
    static void chunk(std::ofstream& out, const char* type, const std::vector<std::uint8_t>& data) {
        std::vector<std::uint8_t> bytes;
        append32(bytes, static_cast<std::uint32_t>(data.size()));
        std::vector<std::uint8_t> typed(type, type + 4);
        typed.insert(typed.end(), data.begin(), data.end());
        bytes.insert(bytes.end(), typed.begin(), typed.end());
        append32(bytes, crc(typed));
        out.write(reinterpret_cast<const char*>(bytes.data()),
                  static_cast<std::streamsize>(bytes.size()));
    }
};

// Fields side by side, on one colour scale from blue (cold) through white to red (hot).
void picture(const std::string& path, const std::vector<const field*>& fields) {
    const std::size_t n = fields.front()->shape()[0], gap = 8;
    const std::size_t width = fields.size() * n + (fields.size() - 1) * gap;
    std::vector<std::uint8_t> rgb(width * n * 3, 255);
    for (std::size_t f = 0; f < fields.size(); ++f)
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const double v = std::max(-1.0, std::min(1.0, (*fields[f])(i, j)));
                const auto level = [](double t) {
                    return static_cast<std::uint8_t>(std::lround(255.0 * t));
                };
                const std::array<std::uint8_t, 3> colour =
                    v >= 0 ? std::array<std::uint8_t, 3>{255, level(1.0 - v), level(1.0 - v)}
                           : std::array<std::uint8_t, 3>{level(1.0 + v), level(1.0 + v), 255};
                const std::size_t at = (i * width + f * (n + gap) + j) * 3;
                rgb[at] = colour[0];
                rgb[at + 1] = colour[1];
                rgb[at + 2] = colour[2];
            }
    png::write(path, width, n, rgb);
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 256;
    const std::size_t steps = argc > 2 ? std::stoul(argv[2]) : 1000;
    const int iterations = argc > 3 ? std::stoi(argv[3]) : 40;
    const std::string path = argc > 4 ? argv[4] : "inverse_heat_conduction.png";
    const double noise = 0.002, smoothing = 1e-4;
    const std::vector<double> no_parameters;

    // The measurement: the true field after `steps` steps, with noise.
    const field truth = true_field(n);
    const auto run = [&](field u) {
        field next;
        for (std::size_t t = 0; t < steps; ++t) {
            step(u, no_parameters, next);
            std::swap(u, next);
        }
        return u;
    };
    field measured = run(truth);
    std::mt19937_64 random(2026);
    std::normal_distribution<double> gaussian(0.0, noise);
    for (std::size_t i = 1; i + 1 < n; ++i)
        for (std::size_t j = 1; j + 1 < n; ++j)
            measured(i, j) += gaussian(random);

    // The loss and its gradient at u0: the run to the final state and back, checkpointed.
    nabla::checkpoint_statistics statistics;
    const auto loss_and_gradient = [&](const field& u0, field& gradient) {
        auto [final_state, pullback] =
            nabla::checkpointed_vjp(step, step_pullback, u0, no_parameters, steps);
        const field residual = final_state - measured;
        auto adjoints = pullback(residual);
        statistics = adjoints.statistics;
        field rough_gradient = xt::zeros<double>({n, n});
        const double rough = nabla::value_and_grad_into(roughness, std::tie(rough_gradient), u0);
        gradient = adjoints.state + (0.5 * smoothing) * rough_gradient;
        return 0.5 * dot(residual, residual) + 0.5 * smoothing * rough;
    };
    const auto error = [&](const field& u) {
        const field d = u - truth;
        return std::sqrt(dot(d, d) / dot(truth, truth));
    };

    // The loss is quadratic in u0, with Hessian H = A^T A + smoothing M (A: the run of `steps`
    // steps, linear; M: roughness(d) = d^T M d), so conjugate gradient descent takes exact step
    // lengths: along d, -g.d / (|A d|^2 + smoothing roughness(d)), A d being one more run.
    field u = xt::zeros<double>({n, n});
    field gradient, direction;
    double first_loss = 0.0, loss = 0.0, gradient_norm = 0.0;
    const double first_error = error(u);
    std::printf("%zu x %zu plate, %zu steps, noise %.3g\n", n, n, steps, noise);
    std::printf("iteration        loss   relative error of the field\n");
    for (int k = 0; k <= iterations; ++k) {
        loss = loss_and_gradient(u, gradient);
        if (k == 0)
            first_loss = loss;
        std::printf("%9d %11.5g   %.4f\n", k, loss, error(u));
        if (k == iterations)
            break;
        const double norm = dot(gradient, gradient);
        if (k == 0)
            direction = -gradient;
        else
            direction = (norm / gradient_norm) * direction - gradient;
        gradient_norm = norm;
        const field moved = run(direction);
        const double curvature = dot(moved, moved) + smoothing * roughness(direction);
        u = u + (-dot(gradient, direction) / curvature) * direction;
    }
    std::printf("checkpointing: %zu snapshots for %zu steps, %zu steps recomputed\n",
                statistics.snapshots, statistics.steps, statistics.forward_steps);

    picture(path, {&truth, &measured, &u});
    std::printf("wrote %s: the true, measured and recovered fields\n", path.c_str());
    const bool improved = loss < 0.01 * first_loss && error(u) < 0.8 * first_error;
    if (!improved)
        std::printf("FAILED: the loss or the error did not fall\n");
    return improved ? 0 : 1;
}
