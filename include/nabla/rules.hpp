#pragma once
// The rule table: every elementary operation of nabla, defined once.

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include "rules/arithmetic.hpp"
#include "rules/bessel.hpp"
#include "rules/beta.hpp"
#include "rules/elliptic.hpp"
#include "rules/exp_log.hpp"
#include "rules/hyperbolic.hpp"
#include "rules/lambert_w.hpp"
#include "rules/nonsmooth.hpp"
#include "rules/polynomials.hpp"
#include "rules/power.hpp"
#include "rules/special.hpp"
#include "rules/trig.hpp"
#include "rules/zeta.hpp"
