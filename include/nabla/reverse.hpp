#pragma once
// Reverse mode on a run-time tape: nabla::tape, nabla::active<T> (nabla::var).

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include "api/reverse.hpp"
#include "reverse/active.hpp"
#include "reverse/checkpoint.hpp"
#include "reverse/custom.hpp"
#include "reverse/errors.hpp"
#include "reverse/expression.hpp"
#include "reverse/tape.hpp"
