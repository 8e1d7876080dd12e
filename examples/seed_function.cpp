// The flagship example: the seed function f(x1, x2) = ln(x1) + x1*x2 - sin(x2) at (2, 5).
// Prints its value, gradient and Hessian and its symbolic derivatives, and writes the forward and
// reverse graphs as Graphviz text (to the file named by the first argument, or seed_function.dot).
//
//   build/examples/seed_function && dot -Tsvg seed_function.dot -o seed_function.svg

#include <nabla/nabla.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
    const auto [x1, x2] = nabla::variables<2>();
    const auto f = log(x1) + x1 * x2 - sin(x2);

    std::printf("f(x1, x2)        = %s\n", nabla::to_string(f).c_str());
    std::printf("f(2, 5)          = %.12f\n", f(2.0, 5.0));

    const auto [value, gradient] = nabla::value_and_grad(f, 2.0, 5.0);
    std::printf("value_and_grad   = %.12f, [%.12f, %.12f]\n", value, gradient[0], gradient[1]);

    // Symbolic derivatives are expressions themselves: print them, evaluate them, differentiate
    // them again.
    const auto f1 = nabla::d(f, x1);
    const auto f2 = nabla::d(f, x2);
    std::printf("df/dx1           = %s\n", nabla::to_string(f1).c_str());
    std::printf("df/dx2           = %s\n", nabla::to_string(f2).c_str());

    const double hessian[2][2] = {{nabla::d(f1, x1)(2.0, 5.0), nabla::d(f1, x2)(2.0, 5.0)},
                                  {nabla::d(f2, x1)(2.0, 5.0), nabla::d(f2, x2)(2.0, 5.0)}};
    std::printf("Hessian          = [[%.12f, %.12f],\n                     [%.12f, %.12f]]\n",
                hessian[0][0], hessian[0][1], hessian[1][0], hessian[1][1]);
    std::printf("d3f/dx1^3        = %s = %.12f\n",
                nabla::to_string(nabla::d(f, x1, x1, x1)).c_str(),
                nabla::d(f, x1, x1, x1)(2.0, 5.0));

    const std::string path = argc > 1 ? argv[1] : "seed_function.dot";
    std::ofstream(path) << nabla::to_dot(f);
    std::printf("graph            written to %s\n", path.c_str());

    // The example is also a test: it fails if the seed values are wrong.
    const bool right = std::abs(value - 11.652071455) < 1e-9 && gradient[0] == 5.5 &&
                       std::abs(gradient[1] - 1.716337814) < 1e-9 && hessian[0][1] == 1.0;
    return right ? 0 : 1;
}
