"""uir.debug.print and uir.debug.callback: host calls in compiled
programs, run in program order (in loops every iteration, in branches
when taken), with the traced values as NumPy arrays; the structure that
keeps the order (control dependencies, ordered thunks) is checked too."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.debug
import uir.lax as lax
import uir.numpy as jnp


def test_print_formats_the_runtime_values(capfd):
    @uir.jit
    def f(x):
        uir.debug.print("x is {}, total {total}", x, total=x.sum())
        return x * 2

    out = f(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(out, [0, 2, 4])
    # (Twice under UIR_FLAGS=--check_kernel_graph, which runs the program
    # a second time on its Kernel Graph.)
    lines = capfd.readouterr().out.splitlines()
    assert lines and set(lines) == {"x is [0. 1. 2.], total 3.0"}


def test_callbacks_run_in_program_order_inside_loops_and_branches():
    seen = []

    def record(tag):
        return lambda *values: seen.append((tag, *[np.asarray(v).tolist() for v in values]))

    @uir.jit
    def f(x):
        uir.debug.callback(record("start"), x[0])

        def body(i, acc):
            uir.debug.callback(record("step"), i, acc)
            return acc + x[i]

        total = lax.fori_loop(0, 3, body, jnp.float32(0))
        lax.cond(total > 2, lambda t: uir.debug.callback(record("big"), t), lambda t: None, total)
        lax.cond(
            total > 100, lambda t: uir.debug.callback(record("huge"), t), lambda t: None, total
        )
        uir.debug.callback(record("end"), total)
        return total

    assert f(np.array([1.0, 2.0, 3.0], np.float32)) == 6.0
    once = [
        ("start", 1.0),
        ("step", 0, 0.0),
        ("step", 1, 1.0),
        ("step", 2, 3.0),
        ("big", 6.0),
        ("end", 6.0),
    ]
    # (The whole sequence twice under UIR_FLAGS=--check_kernel_graph.)
    assert seen and seen == once * (len(seen) // len(once))
    seen.clear()
    f(np.array([1.0, 2.0, 3.0], np.float32))  # the cached executable calls them again
    assert seen and seen == once * (len(seen) // len(once))


def test_the_order_is_in_the_program_and_the_thunks():
    def g(x):
        uir.debug.callback(lambda v: None, x)
        y = lax.fori_loop(0, 2, lambda i, a: (uir.debug.callback(lambda v: None, a), a + 1)[1], x)
        uir.debug.callback(lambda v: None, y)
        return y

    lowered = uir.jit(g).lower(np.ones(1 << 16, np.float32))
    entry = lowered.module.entry.instructions
    calls = [i for i in entry if i.opcode == "custom-call"]
    loop = next(i for i in entry if i.opcode == "while")
    assert len(calls) == 2 and all(i.has_side_effect for i in calls) and loop.has_side_effect
    assert calls[0] in loop.control_predecessors and loop in calls[1].control_predecessors
    # In the thunk DAG (concurrent at this size), the loop holding a host
    # call waits for the first call, and the last call for the loop.
    text = lowered.compile().executable.thunk_text.splitlines()
    first = next(line for line in text if "uir.debug.callback" in line and line.startswith("  %"))
    first_id = first.split()[0]
    loop_line = next(line for line in text if line.startswith("  %") and " while " in line)
    assert (
        "after" in loop_line
        and first_id in loop_line.split("after", 1)[1].replace(",", " ").split()
    )
    last = [line for line in text if line.startswith("  %") and "uir.debug.callback" in line][-1]
    assert loop_line.split()[0] in last.split("after", 1)[1]


def test_a_callback_survives_when_its_result_is_unused_and_outside_jit_it_runs_at_once():
    hits = []
    f = uir.jit(lambda x: (uir.debug.callback(lambda v: hits.append(float(v)), x.sum()), x + 1)[1])
    f(np.ones(3, np.float32))
    assert hits and set(hits) == {3.0}
    hits.clear()
    uir.debug.callback(lambda v: hits.append(v), 7)
    assert hits == [7]


def test_a_failing_callback_raises_in_python_and_bad_formats_are_refused():
    def boom(v):
        raise RuntimeError("no thanks")

    f = uir.jit(lambda x: (uir.debug.callback(boom, x), x)[1])
    with pytest.raises(uir.CustomCallError, match="no thanks"):
        f(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="names arguments"):
        uir.jit(lambda x: (uir.debug.print("{} {}", x), x)[1])(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="callable"):
        uir.debug.callback(3, 4)
