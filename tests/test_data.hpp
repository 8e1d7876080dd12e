#pragma once
// Reading the committed reference data (tests/data/*.txt) and comparing against it.

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nabla_test {

inline std::string data_path(const std::string& file) {
    return std::string(NABLA_TEST_DATA_DIR) + "/" + file;
}

// Lines of a data file, without comments and blank lines.
inline std::vector<std::string> data_lines(const std::string& file) {
    std::ifstream in(data_path(file));
    if (!in)
        throw std::runtime_error("cannot open test data " + data_path(file));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#')
            continue;
        lines.push_back(line);
    }
    return lines;
}

// The `key value` pairs of tests/data/derivatives.txt.
inline const std::map<std::string, double>& derivatives() {
    static const std::map<std::string, double> table = [] {
        std::map<std::string, double> t;
        for (const auto& line : data_lines("derivatives.txt")) {
            std::istringstream fields(line);
            std::string key, value;
            fields >> key >> value;
            t[key] = std::strtod(value.c_str(), nullptr);
        }
        return t;
    }();
    return table;
}

inline double reference(const std::string& key) {
    const auto& table = derivatives();
    const auto it = table.find(key);
    if (it == table.end())
        throw std::runtime_error("no reference value named " + key);
    return it->second;
}

// Relative closeness; an exact reference 0 asks for |computed| <= tolerance; NaN matches NaN and
// an infinity matches only itself.
inline bool close(double computed, double expected, double tolerance) {
    if (std::isnan(expected))
        return std::isnan(computed);
    if (std::isinf(expected))
        return computed == expected;
    if (expected == 0.0)
        return std::abs(computed) <= tolerance;
    return std::abs(computed - expected) <= tolerance * std::abs(expected);
}

// The next whitespace-separated number of a data line: repr floats, inf, -inf or nan.
inline double read_number(std::istream& in) {
    std::string field;
    in >> field;
    return std::strtod(field.c_str(), nullptr);
}

// One row of tests/data/rules.txt: a function at a point, with its value, gradient, Hessian
// (upper triangle) and tolerances, from mpmath.
struct row {
    std::string name;
    std::vector<double> parameters;
    std::vector<double> point;
    double value;
    std::vector<double> gradient;
    std::vector<double> hessian_upper;
    double tolerance_value, tolerance_gradient, tolerance_hessian;
    std::string text;
};

inline std::vector<row> read_rows() {
    std::vector<row> rows;
    for (const auto& line : nabla_test::data_lines("rules.txt")) {
        std::istringstream in(line);
        row r;
        r.text = line;
        std::size_t count = 0;
        const auto number = [&] { return nabla_test::read_number(in); };
        in >> r.name >> count;
        for (std::size_t i = 0; i < count; ++i)
            r.parameters.push_back(number());
        in >> count;
        for (std::size_t i = 0; i < count; ++i)
            r.point.push_back(number());
        r.value = number();
        for (std::size_t i = 0; i < count; ++i)
            r.gradient.push_back(number());
        for (std::size_t i = 0; i < count * (count + 1) / 2; ++i)
            r.hessian_upper.push_back(number());
        r.tolerance_value = number();
        r.tolerance_gradient = number();
        r.tolerance_hessian = number();
        rows.push_back(r);
    }
    return rows;
}

inline const std::vector<row>& rows() {
    static const std::vector<row> all = read_rows();
    return all;
}

}  // namespace nabla_test
