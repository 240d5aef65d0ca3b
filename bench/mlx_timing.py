# The timing loop the MLX-Python benchmarks in bench/ share: the median wall time, in ms, of
# evaluating what `f` builds, after `warm` evaluations that are not counted.
import statistics
import time


def median_ms(f, reps, warm=3):
    # Imported here, not at the top: cuda_step_variants.py's children set MLX's settings in their
    # environment, and MLX reads them once, when it is first imported.
    import mlx.core as mx

    for _ in range(warm):
        mx.eval(f())
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        mx.eval(f())
        ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts)
