#!/usr/bin/env python3
"""Times JAX (jit, CPU) and PyTorch (CPU) on the workloads of nabla's array benchmark.

What it measures
    Five array workloads, all in float64, each at several sizes:

      chain       sum_i exp(-0.5 x_i) sqrt(x_i^2 + y_i^2 + 1) / (1 + y_i^2),
                  x uniform in [-1, 1], y uniform in [0.5, 2]; gradient in x and y;
                  n = 1e3 ... 1e7
      rosenbrock  sum_{i<n-1} 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2, x uniform in [0.5, 1.5];
                  n = 1e3 ... 1e7
      logsumexp   log(sum(exp(x))), x normal(0, 1); n = 1e5, 1e6, 1e7. Two forms are timed for
                  each peer, the library's (jax.scipy.special.logsumexp, torch.logsumexp) and the
                  explicit m + log(sum(exp(x - m))) with m = max(x) held constant for the
                  gradient; the faster one is reported and named on stderr
      heat        one explicit 2-D step on an n x n field,
                  out = u + r (u[2:,1:-1] + u[:-2,1:-1] + u[1:-1,2:] + u[1:-1,:-2] - 4 u[1:-1,1:-1])
                  on the interior, boundary unchanged, r = 0.2; the "value" is the step, the
                  "gradient" its vector-Jacobian product with a random cotangent (jax.vjp under
                  jit; torch.autograd.grad with grad_outputs); n = 256 ... 4096. Two forms
                  each, the interior updated in place (u.at[1:-1, 1:-1].add; clone and +=) and
                  u + pad(r lap); the faster one is reported and named on stderr
      dense       sum(tanh(W x + b)^2), W m x m; gradient in W, x and b; m = 256 ... 2048

    For each workload and size, each peer is timed on the value alone and on the value and
    gradient together: jax.jit(f) and jax.jit(jax.value_and_grad(f, argnums=...)); PyTorch's
    forward under torch.no_grad() and forward + torch.autograd.grad on leaf tensors that require
    grad (fresh gradients every call, nothing accumulates). torch.compile is tried only where it
    exists and compiles offline within a few seconds; Debian's PyTorch 1.13 has none, so it is
    left out there. Results are forced before the clock stops (block_until_ready for JAX; PyTorch
    on the CPU computes eagerly), and nothing is copied to the host inside the timed loop.

    Every result, value and gradient, is first checked against a NumPy float64 reference with
    hand-written derivatives (largest difference at most 1e-10 of the largest reference entry); a
    peer that disagrees is reported on stderr and not timed.

    Timing: each call is repeated until a sample lasts at least 0.2 s; the best of 5 samples
    counts, as nanoseconds per call. The samples of one workload and size are taken in rounds,
    each round timing every peer, measure and form once, as nabla's benchmarks do, so that load
    elsewhere on the machine is shared out rather than falling on one figure.

    Single thread: XLA_FLAGS is set before JAX is imported
    ("--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"), PyTorch gets
    torch.set_num_threads(1) and torch.set_num_interop_threads(1), and the OpenMP/BLAS thread
    counts are set to 1. XLA's CPU client still sizes its own thread pool by the CPUs in sight, so
    the process sees one CPU while the peers start, then may move between all of them again
    (--pin keeps it on the one). A peer whose CPU time exceeds its wall time by more than 10% is
    reported on stderr.

Output
    CSV on stdout in the format of nabla's benchmarks (bench/bench_util.hpp), a header line and
    then one row per figure:
        program,workload,contender,measure,value,ratio
    e.g.  "array_peers","chain n=100000","JAX jit value+grad","ns per call",123456.7,
    with contenders "JAX jit value", "JAX jit value+grad", "PyTorch value", "PyTorch value+grad"
    and the ratio left empty. Progress and notes go to stderr.

Installing the peers (Debian 12, as root)
    apt-get update && apt-get install -y python3-torch python3-venv
    python3 -m venv --system-site-packages /opt/nabla-peers
    /opt/nabla-peers/bin/pip install jax "numpy<2"
    (jax's CPU wheel; numpy below 2 because Debian's PyTorch 1.13 is built against NumPy 1.x and
    the virtual environment's NumPy shadows the system one.)

Running
    /opt/nabla-peers/bin/python bench/array_peers.py > array_peers.csv       # JAX and PyTorch
    /usr/bin/python3 bench/array_peers.py                                    # PyTorch alone
    python3 bench/array_peers.py --workloads chain,dense --max-n 100000
    python3 bench/array_peers.py --quick                                     # smoke test
    A peer that cannot be imported is left out with a one-line message on stderr. The full run
    takes about five minutes on two cores.
"""

import argparse
import math
import os
import sys
import time

WORKLOADS = ("chain", "rosenbrock", "logsumexp", "heat", "dense")
SIZES = {
    "chain": [10**3, 10**4, 10**5, 10**6, 10**7],
    "rosenbrock": [10**3, 10**4, 10**5, 10**6, 10**7],
    "logsumexp": [10**5, 10**6, 10**7],
    "heat": [256, 512, 1024, 2048, 4096],
    "dense": [256, 512, 1024, 2048],
}
QUICK_SIZES = {
    "chain": [10**3, 10**4],
    "rosenbrock": [10**3, 10**4],
    "logsumexp": [10**4, 10**5],
    "heat": [64, 128],
    "dense": [64, 128],
}
SIZE_NAME = {"chain": "n", "rosenbrock": "n", "logsumexp": "n", "heat": "n", "dense": "m"}
HEAT_R = 0.2
TOLERANCE = 1e-10


def note(message):
    print(message, file=sys.stderr, flush=True)


def parse_args():
    parser = argparse.ArgumentParser(
        description="Times JAX (jit, CPU) and PyTorch (CPU) on nabla's array workloads, "
        "single-threaded, and prints CSV rows in nabla's benchmark format.")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="comma-separated subset of " + ",".join(WORKLOADS))
    parser.add_argument("--max-n", type=float, default=None,
                        help="largest size to run (the n or m in the workload's name), e.g. 1e5")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: small sizes, one short sample each")
    parser.add_argument("--samples", type=int, default=None,
                        help="samples per figure, the best counts (default 5; 1 with --quick)")
    parser.add_argument("--min-time", type=float, default=None,
                        help="seconds per sample at least (default 0.2; 0.02 with --quick)")
    parser.add_argument("--pin", action="store_true",
                        help="keep the process on one CPU throughout (by default it is on one "
                        "CPU only while the peers make their thread pools)")
    args = parser.parse_args()
    args.workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in args.workloads:
        if w not in WORKLOADS:
            parser.error("unknown workload %r (known: %s)" % (w, ", ".join(WORKLOADS)))
    if args.samples is None:
        args.samples = 1 if args.quick else 5
    if args.min_time is None:
        args.min_time = 0.02 if args.quick else 0.2
    return args


def single_thread_environment():
    """Set before NumPy, JAX or PyTorch is imported; returns the CPUs the process may use, after
    pinning it to one of them for the time the peers make their thread pools (XLA sizes its pool
    by the CPUs in sight, whatever XLA_FLAGS says)."""
    flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    previous = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = (previous + " " + flags).strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {max(cpus)})
    return cpus


# ---------------------------------------------------------------------------------------------
# Inputs and NumPy references (values and hand-written gradients)

def make_inputs(np, workload, n):
    rng = np.random.default_rng(20240 + n)
    if workload == "chain":
        return {"x": rng.uniform(-1.0, 1.0, n), "y": rng.uniform(0.5, 2.0, n)}
    if workload == "rosenbrock":
        return {"x": rng.uniform(0.5, 1.5, n)}
    if workload == "logsumexp":
        return {"x": rng.normal(0.0, 1.0, n)}
    if workload == "heat":
        return {"u": rng.uniform(0.0, 1.0, (n, n)), "c": rng.uniform(-1.0, 1.0, (n, n))}
    if workload == "dense":
        return {"W": rng.normal(0.0, 1.0 / math.sqrt(n), (n, n)), "x": rng.normal(0.0, 1.0, n),
                "b": rng.normal(0.0, 0.1, n)}
    raise ValueError(workload)


def reference(np, workload, d):
    """(value, gradients) in float64; for heat the value is the step and the gradient its VJP."""
    if workload == "chain":
        x, y = d["x"], d["y"]
        s = np.sqrt(x * x + y * y + 1.0)
        e = np.exp(-0.5 * x)
        q = 1.0 + y * y
        value = math.fsum(e * s / q)
        gx = e * (-0.5 * s + x / s) / q
        gy = e * (y / (s * q) - 2.0 * y * s / (q * q))
        return value, (gx, gy)
    if workload == "rosenbrock":
        x = d["x"]
        a = x[1:] - x[:-1] ** 2
        value = math.fsum(100.0 * a * a + (1.0 - x[:-1]) ** 2)
        g = np.zeros_like(x)
        g[:-1] += -400.0 * x[:-1] * a - 2.0 * (1.0 - x[:-1])
        g[1:] += 200.0 * a
        return value, (g,)
    if workload == "logsumexp":
        x = d["x"]
        m = x.max()
        e = np.exp(x - m)
        s = math.fsum(e)
        return m + math.log(s), (e / s,)
    if workload == "heat":
        u, c = d["u"], d["c"]
        out = u.copy()
        out[1:-1, 1:-1] += HEAT_R * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                     - 4.0 * u[1:-1, 1:-1])
        g = c.copy()
        ci = HEAT_R * c[1:-1, 1:-1]
        g[2:, 1:-1] += ci
        g[:-2, 1:-1] += ci
        g[1:-1, 2:] += ci
        g[1:-1, :-2] += ci
        g[1:-1, 1:-1] -= 4.0 * ci
        return out, (g,)
    if workload == "dense":
        W, x, b = d["W"], d["x"], d["b"]
        t = np.tanh(W @ x + b)
        value = math.fsum(t * t)
        dz = 2.0 * t * (1.0 - t * t)
        return value, (np.outer(dz, x), W.T @ dz, dz)
    raise ValueError(workload)


def close(np, got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return False, "shape %s, expected %s" % (got.shape, want.shape)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    ok = err <= TOLERANCE * max(scale, 1e-300) and np.all(np.isfinite(got))
    return bool(ok), "max difference %.3g against largest entry %.3g" % (err, scale)


def check(np, label, result, ref_value, ref_grads):
    """result: (value, grads) with grads None for a value-only call. True when it matches."""
    value, grads = result
    ok, why = close(np, value, ref_value)
    if not ok:
        note("%s: wrong value (%s): not timed" % (label, why))
        return False
    if grads is not None:
        if len(grads) != len(ref_grads):
            note("%s: %d gradients, expected %d: not timed" % (label, len(grads), len(ref_grads)))
            return False
        for k, (g, r) in enumerate(zip(grads, ref_grads)):
            ok, why = close(np, g, r)
            if not ok:
                note("%s: wrong gradient %d (%s): not timed" % (label, k, why))
                return False
    return True


# ---------------------------------------------------------------------------------------------
# Timing

class Timed:
    """One figure: a call repeated `calls` times per sample, the best sample kept."""

    def __init__(self, call, min_time):
        call()  # warm-up (compilation, allocator)
        calls = 1
        while True:  # calibration; its last pass is the first sample
            start = time.perf_counter()
            for _ in range(calls):
                call()
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
            calls = max(calls * 2, int(calls * 1.2 * min_time / max(elapsed, 1e-9)))
        self.call, self.calls = call, calls
        self.best = elapsed / calls
        self.wall = self.cpu = 0.0

    def sample(self):
        call, calls = self.call, self.calls
        cpu = time.process_time()
        start = time.perf_counter()
        for _ in range(calls):
            call()
        elapsed = time.perf_counter() - start
        self.cpu += time.process_time() - cpu
        self.wall += elapsed
        self.best = min(self.best, elapsed / calls)

    def threads_note(self, label):
        if self.cpu > 1.1 * self.wall and self.cpu > 0.05:
            note("%s: CPU time %.2f s over %.2f s of wall time: more than one thread busy"
                 % (label, self.cpu, self.wall))


# ---------------------------------------------------------------------------------------------
# Peers: each gives, per workload, a list of variants; a variant is (form, value_call,
# grad_call), each call returning (value, grads) forced, grads None for the value alone.

class Jax:
    name = "JAX jit"

    def __init__(self):
        import jax
        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        import jax.numpy as jnp
        import jax.scipy.special as jsp
        self.jax, self.jnp, self.jsp = jax, jnp, jsp
        jax.devices()  # the CPU client and its thread pool, made now
        jnp.zeros(1).block_until_ready()
        self.version = jax.__version__

    def variants(self, workload, d):
        jax, jnp = self.jax, self.jnp
        arrays = {k: jnp.asarray(v) for k, v in d.items()}
        jax.block_until_ready(arrays)

        def scalar(f, names):
            args = [arrays[k] for k in names]
            value = jax.jit(f)
            both = jax.jit(jax.value_and_grad(f, argnums=tuple(range(len(names)))))

            def value_call():
                return jax.block_until_ready(value(*args)), None

            def grad_call():
                return jax.block_until_ready(both(*args))

            return value_call, grad_call

        if workload == "chain":
            def f(x, y):
                return jnp.sum(jnp.exp(-0.5 * x) * jnp.sqrt(x * x + y * y + 1.0) / (1.0 + y * y))
            return [("", *scalar(f, ["x", "y"]))]
        if workload == "rosenbrock":
            def f(x):
                a = x[1:] - x[:-1] ** 2
                return jnp.sum(100.0 * a * a + (1.0 - x[:-1]) ** 2)
            return [("", *scalar(f, ["x"]))]
        if workload == "logsumexp":
            def library(x):
                return self.jsp.logsumexp(x)

            def explicit(x):
                m = jax.lax.stop_gradient(jnp.max(x))
                return m + jnp.log(jnp.sum(jnp.exp(x - m)))
            return [("library logsumexp", *scalar(library, ["x"])),
                    ("explicit m + log(sum(exp(x - m)))", *scalar(explicit, ["x"]))]
        if workload == "heat":
            u, c = arrays["u"], arrays["c"]

            def laplacian(u):
                return (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                        - 4.0 * u[1:-1, 1:-1])

            def step_at(u):
                return u.at[1:-1, 1:-1].add(HEAT_R * laplacian(u))

            def step_pad(u):
                return u + jnp.pad(HEAT_R * laplacian(u), 1)

            def heat(step):
                def step_and_vjp(u, c):
                    out, pullback = jax.vjp(step, u)
                    return out, pullback(c)

                value = jax.jit(step)
                both = jax.jit(step_and_vjp)

                def value_call():
                    return jax.block_until_ready(value(u)), None

                def grad_call():
                    return jax.block_until_ready(both(u, c))

                return value_call, grad_call

            return [("u.at[1:-1, 1:-1].add(r lap)", *heat(step_at)),
                    ("u + jnp.pad(r lap, 1)", *heat(step_pad))]
        if workload == "dense":
            def f(W, x, b):
                t = jnp.tanh(W @ x + b)
                return jnp.sum(t * t)
            return [("", *scalar(f, ["W", "x", "b"]))]
        raise ValueError(workload)


class Torch:
    name = "PyTorch"

    def __init__(self):
        import torch
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass  # already set once in this process
        self.torch = torch
        self.version = torch.__version__
        self.compile = None
        if hasattr(torch, "compile"):
            self.compile = self._try_compile()

    def _try_compile(self):
        """torch.compile, when it exists and compiles a small function offline within seconds."""
        torch = self.torch
        try:
            start = time.perf_counter()
            f = torch.compile(lambda x: torch.sum(torch.exp(x) * x))
            x = torch.linspace(0.0, 1.0, 64, dtype=torch.float64)
            ok = abs(float(f(x)) - float(torch.sum(torch.exp(x) * x))) < 1e-12
            if ok and time.perf_counter() - start < 30.0:
                return torch.compile
            note("PyTorch: torch.compile too slow or wrong here: left out")
        except Exception as error:  # noqa: BLE001 (any failure leaves it out)
            note("PyTorch: torch.compile does not work here (%s): left out"
                 % str(error).splitlines()[0][:120] if str(error) else type(error).__name__)
        return None

    def variants(self, workload, d, compiled=False):
        torch = self.torch
        wrap = self.compile if compiled else (lambda f: f)
        plain = {k: torch.from_numpy(v.copy()) for k, v in d.items()}
        leaves = {k: v.clone().requires_grad_(True) for k, v in plain.items()}

        def scalar(f, names):
            f = wrap(f)
            args = [plain[k] for k in names]
            grad_args = [leaves[k] for k in names]

            def value_call():
                with torch.no_grad():
                    return f(*args), None

            def grad_call():
                value = f(*grad_args)
                grads = torch.autograd.grad(value, grad_args)
                return value.detach(), grads

            return value_call, grad_call

        if workload == "chain":
            def f(x, y):
                return torch.sum(torch.exp(-0.5 * x) * torch.sqrt(x * x + y * y + 1.0)
                                 / (1.0 + y * y))
            return [("", *scalar(f, ["x", "y"]))]
        if workload == "rosenbrock":
            def f(x):
                a = x[1:] - x[:-1] ** 2
                return torch.sum(100.0 * a * a + (1.0 - x[:-1]) ** 2)
            return [("", *scalar(f, ["x"]))]
        if workload == "logsumexp":
            def library(x):
                return torch.logsumexp(x, 0)

            def explicit(x):
                m = torch.max(x).detach()
                return m + torch.log(torch.sum(torch.exp(x - m)))
            return [("library logsumexp", *scalar(library, ["x"])),
                    ("explicit m + log(sum(exp(x - m)))", *scalar(explicit, ["x"]))]
        if workload == "heat":
            u, c, leaf = plain["u"], plain["c"], leaves["u"]

            def laplacian(u):
                return (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                        - 4.0 * u[1:-1, 1:-1])

            def step_inplace(u):
                out = u.clone()
                out[1:-1, 1:-1] += HEAT_R * laplacian(u)
                return out

            def step_pad(u):
                return u + torch.nn.functional.pad(HEAT_R * laplacian(u), (1, 1, 1, 1))

            def heat(step):
                step = wrap(step)

                def value_call():
                    with torch.no_grad():
                        return step(u), None

                def grad_call():
                    out = step(leaf)
                    (g,) = torch.autograd.grad(out, (leaf,), grad_outputs=(c,))
                    return out.detach(), (g,)

                return value_call, grad_call

            return [("clone, interior += r lap", *heat(step_inplace)),
                    ("u + F.pad(r lap)", *heat(step_pad))]
        if workload == "dense":
            def f(W, x, b):
                t = torch.tanh(torch.mv(W, x) + b)
                return torch.sum(t * t)
            return [("", *scalar(f, ["W", "x", "b"]))]
        raise ValueError(workload)


def to_numpy(np, result):
    value, grads = result

    def host(a):
        if hasattr(a, "detach"):
            a = a.detach()
        return np.asarray(a, dtype=np.float64)

    return host(value), None if grads is None else [host(g) for g in grads]


def csv_field(text):
    return '"' + str(text).replace('"', '""') + '"'


def emit(workload_title, contender, ns):
    print(",".join([csv_field("array_peers"), csv_field(workload_title), csv_field(contender),
                    csv_field("ns per call"), "%.10g" % ns, ""]), flush=True)


def main():
    args = parse_args()
    free_cpus = single_thread_environment()
    import numpy as np

    peers = []
    for cls, module in ((Jax, "jax"), (Torch, "torch")):
        try:
            peer = cls()
        except Exception as error:  # noqa: BLE001 (an import that fails in any way)
            note("%s: %s is not importable (%s: %s): left out"
                 % (cls.name, module, type(error).__name__, str(error).splitlines()[0][:160]))
            continue
        note("%s %s" % (cls.name, peer.version))
        peers.append(peer)
    # The thread pools are made: with one CPU in sight each has one thread. The process may now
    # move between CPUs (a pinned one waits whenever another process takes its CPU).
    if free_cpus is not None and not args.pin:
        os.sched_setaffinity(0, free_cpus)
    # Contenders: (label, peer, compiled).
    contenders = []
    for peer in peers:
        contenders.append((peer.name, peer, False))
        if isinstance(peer, Torch) and peer.compile is not None:
            contenders.append(("PyTorch compile", peer, True))
    print("program,workload,contender,measure,value,ratio", flush=True)
    if not contenders:
        note("no peer is importable: nothing to time")
        return 0

    sizes = QUICK_SIZES if args.quick else SIZES
    for workload in args.workloads:
        for n in sizes[workload]:
            if args.max_n is not None and n > args.max_n:
                continue
            title = "%s %s=%d" % (workload, SIZE_NAME[workload], n)
            d = make_inputs(np, workload, n)
            ref_value, ref_grads = reference(np, workload, d)
            # Every call that agrees with the reference, calibrated; then the samples in rounds,
            # each round timing every call once, so that a burst of load elsewhere on the
            # machine is shared out rather than falling on one figure.
            figures = []  # (contender, [(form, Timed)])
            for label, peer, compiled in contenders:
                variants = (peer.variants(workload, d, compiled=True) if compiled
                            else peer.variants(workload, d))
                for measure, index in (("value", 1), ("value+grad", 2)):
                    contender = "%s %s" % (label, measure)
                    timed = []
                    for variant in variants:
                        form, call = variant[0], variant[index]
                        what = "%s, %s%s" % (title, contender, " (%s)" % form if form else "")
                        try:
                            result = to_numpy(np, call())
                        except Exception as error:  # noqa: BLE001 (a failing peer is skipped)
                            note("%s: failed (%s: %s): not timed"
                                 % (what, type(error).__name__, str(error)[:200]))
                            continue
                        if check(np, what, result, ref_value,
                                 None if index == 1 else ref_grads):
                            timed.append((form, what, Timed(call, args.min_time)))
                    if timed:
                        figures.append((contender, timed))
            for _ in range(args.samples - 1):
                for _, timed in figures:
                    for _, _, t in timed:
                        t.sample()
            for contender, timed in figures:
                for _, what, t in timed:
                    t.threads_note(what)
                best = min(timed, key=lambda entry: entry[2].best)
                if len(timed) > 1:
                    note("%s, %s: %s form faster (%s)"
                         % (title, contender, best[0],
                            ", ".join("%s %.4g ns" % (f, t.best * 1e9) for f, _, t in timed)))
                emit(title, contender, best[2].best * 1e9)
            del figures
    return 0


if __name__ == "__main__":
    sys.exit(main())
