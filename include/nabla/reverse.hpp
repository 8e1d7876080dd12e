#pragma once
// Reverse mode on a run-time tape: nabla::tape, nabla::active<T> (nabla::var).

#include "reverse/active.hpp"
#include "reverse/tape.hpp"
