#!/usr/bin/env python3
"""No header includes one of a higher layer, no headers include each other in a cycle, and no
rule is missing from the function list.

nabla's headers are layered, lowest first (docs/design.md):

  0 vocabulary   config.hpp, version.hpp, concepts.hpp, literal.hpp, values.hpp
  1 rules, simd  rules/ and rules.hpp (the rule table), simd/
  2 core         core/ (static graphs)
  3 forward      forward/ (dual and Taylor numbers)
  4 reverse      reverse/ and reverse/detail/ (the tape)
  5 containers,  tensor/containers.hpp, tensor/matrix.hpp (xtensor as inputs and results),
    arrays       array/ (array expressions, their plans and fused loops)
  6 api          api/ (transformations of generic callables)
  7 umbrellas    nabla.hpp, reverse.hpp, tensor.hpp, array.hpp, eigen.hpp, and mpi.hpp with
                 mpi/ (differentiable MPI over the forward and reverse numbers)

A header may include headers of its own layer or lower ones. Every header must have a layer, so a
new file is placed on purpose. No headers may reach each other through their includes (a cycle,
which `#pragma once` hides: what a file sees then depends on which one a program includes first);
the check is shown to catch one on every run, on the real include graph with one include added.

The function list: every rule (`struct name_rule`, or `using name_rule =` for a member of a
template family) in include/nabla/rules/ is bound to a
name in rules/functions.hpp, or is one of the rules each mode binds by hand (arithmetic, pow,
fma), so no mode can miss a function.

Usage: check_layers.py <include directory>
"""

import pathlib
import re
import sys

LAYERS = [
    ("config.hpp", 0), ("version.hpp", 0), ("concepts.hpp", 0), ("literal.hpp", 0),
    ("values.hpp", 0),
    ("rules.hpp", 1), ("rules/", 1), ("simd/", 1),
    ("core/", 2),
    ("forward/", 3),
    ("reverse/", 4),
    ("tensor/", 5), ("array/", 5),
    ("api/", 6),
    ("nabla.hpp", 7), ("reverse.hpp", 7), ("tensor.hpp", 7), ("array.hpp", 7),
    ("eigen.hpp", 7), ("mpi.hpp", 7), ("mpi/", 7),
]

#Rules whose overloads choose among rules by argument type or arity, written by hand per mode.
BOUND_BY_HAND = {"add_rule", "sub_rule", "mul_rule", "div_rule", "neg_rule", "fma_rule",
                 "hypot3_rule", "ellint_3_rule", "ldexp_rule",
                 "pow_rule", "powi_rule"}


def layer(relative):
    for prefix, rank in LAYERS:
        if relative == prefix or (prefix.endswith("/") and relative.startswith(prefix)):
            return rank
    return None


def cycles(graph):
    """The strongly connected components of more than one header (Tarjan's algorithm), each as a
    sorted list; `graph` maps a header to the headers it includes."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    root = pathlib.Path(sys.argv[1]).resolve() / "nabla"
    failures = []
    graph = {}
    for header in sorted(root.glob("**/*.hpp")):
        relative = header.relative_to(root).as_posix()
        graph.setdefault(relative, set())
        rank = layer(relative)
        if rank is None:
            failures.append(f"<nabla/{relative}> has no layer: add it to LAYERS in {__file__}")
            continue
        for included in re.findall(r'^#include "([^"]+)"', header.read_text(), re.M):
            target = (header.parent / included).resolve().relative_to(root).as_posix()
            graph[relative].add(target)
            target_rank = layer(target)
            if target_rank is None or target_rank > rank:
                failures.append(f"<nabla/{relative}> (layer {rank}) includes <nabla/{target}> "
                                f"(layer {target_rank}): an include upward")

    for component in cycles(graph):
        failures.append("headers that include each other (a cycle): " +
                        ", ".join(f"<nabla/{h}>" for h in component))
    # The cycle check catches one: rules/trig.hpp includes rules/rule.hpp, so rule.hpp including
    # trig.hpp would close a cycle.
    injected = {h: set(targets) for h, targets in graph.items()}
    injected.setdefault("rules/rule.hpp", set()).add("rules/trig.hpp")
    if "rules/rule.hpp" not in graph.get("rules/trig.hpp", ()):
        failures.append("the cycle check's own test: rules/trig.hpp no longer includes "
                        "rules/rule.hpp; inject another cycle")
    elif not any("rules/trig.hpp" in c and "rules/rule.hpp" in c for c in cycles(injected)):
        failures.append("the cycle check missed a cycle injected between rules/rule.hpp and "
                        "rules/trig.hpp")

    rules = set()
    for header in sorted((root / "rules").glob("*.hpp")):
        text = header.read_text()
        # A rule is a struct, or an alias of a family's template (ellint_1_rule).
        rules.update(name for template, name in
                     re.findall(r"^(template <[^\n]*>\n)?struct (\w+_rule)\b", text, re.M)
                     if not template)
        rules.update(re.findall(r"^using (\w+_rule) =", text, re.M))
    listed = set(re.findall(r"X\(\w+, (\w+_rule)\)", (root / "rules/functions.hpp").read_text()))
    for rule in sorted(rules - listed - BOUND_BY_HAND):
        failures.append(f"rules::{rule} is in no function list: add it to rules/functions.hpp")
    for rule in sorted(listed - rules):
        failures.append(f"rules/functions.hpp binds {rule}, which no header in rules/ defines")

    for failure in failures:
        print("FAILED:", failure)
    print(f"{len(rules)} rules, {len(listed)} listed; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
