#!/usr/bin/env python3
"""fuzz_costs.py: mutation fuzzer for the cost-file reader of
examples/planning/plan_clusters.py (load_costs, then sweep_spec on what it
accepts).  The reader is Python, so libFuzzer cannot drive it; this is the
same loop in the standard library: start from seed files, mutate one at a
time (lines dropped, duplicated or re-indented, scalars replaced by edge
values such as nan, inf, -1, 1e309, a number-like name '123', bytes
flipped), run the reader, and record as a finding any outcome other than
the documented ones:

  * plan_clusters.YamlError (the reader's clear error), or
  * a cost list whose every price is a finite positive number and whose
    sweep spec is produced without an exception.

Each finding (exception type and first line, or the broken promise) is
written with its input under OUT/finding-N.yaml; the run exits 1 when any
was found.  Deterministic for a given --seed.

  fuzz/fuzz_costs.py [--seconds S] [--seed N] [--out DIR] [SEED.yaml ...]

Default seeds: examples/planning/costs.yaml and fuzz/corpus/costs/*.
"""
import argparse
import glob
import math
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "examples", "planning"))
import plan_clusters  # noqa: E402

EDGES = ["nan", "NaN", "inf", "-inf", "-1", "0", "1e309", "-0", "1e-320", "123", "0x10", "true", "null", "~",
         "''", '""', "[]", "{}", "&a", "*a", "|", "'unterminated", '"unterminated', "2.00 # c", "- x",
         "a: b", "9" * 400, "é", "\\x00"]


def mutate(text, rng):
    lines = text.split("\n")
    op = rng.randrange(7)
    i = rng.randrange(len(lines)) if lines else 0
    if op == 0 and lines:                      # replace a scalar after ':' or '- '
        line = lines[i]
        cut = line.find(": ")
        if cut < 0:
            cut = line.find("- ")
        if cut >= 0:
            lines[i] = line[:cut + 2] + rng.choice(EDGES)
    elif op == 1 and lines:                    # drop a line
        del lines[i]
    elif op == 2 and lines:                    # duplicate a line
        lines.insert(i, lines[i])
    elif op == 3 and lines:                    # re-indent a line
        lines[i] = " " * rng.randrange(0, 9) + lines[i].lstrip()
    elif op == 4 and lines:                    # replace a key
        line = lines[i]
        cut = line.find(":")
        if cut > 0:
            ind = len(line) - len(line.lstrip())
            lines[i] = line[:ind] + rng.choice(["name", "price_gpu_hour", "set", "options", "currency", "123",
                                                "scale_up_bw", "- name"]) + line[cut:]
    elif op == 5:                              # flip a byte
        data = bytearray("\n".join(lines).encode("utf-8", "surrogateescape"))
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        return data.decode("utf-8", "replace")
    else:                                      # splice a line from elsewhere
        if lines:
            lines.insert(i, lines[rng.randrange(len(lines))])
    return "\n".join(lines)


def check(path):
    """None when the outcome is a documented one, else the finding's text."""
    try:
        currency, opts, keys = plan_clusters.load_costs(path)
    except plan_clusters.YamlError:
        return None
    except RecursionError:
        return "RecursionError"
    except Exception as e:  # any other exception is a finding
        return "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:200])
    for o in opts:
        p = o.get("price_gpu_hour")
        try:
            ok = not isinstance(p, bool) and isinstance(p, (int, float)) and math.isfinite(float(p)) and p > 0
        except OverflowError:  # an integer beyond a double
            ok = False
        if not ok:
            return "accepted price_gpu_hour %.40r for option %r" % (p, o.get("name"))
    try:
        plan_clusters.sweep_spec("fuzz", "w", "c.yaml", opts, keys)
    except Exception as e:
        return "sweep_spec %s: %s" % (type(e).__name__, str(e).split("\n")[0][:200])
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="fuzz-costs")
    ap.add_argument("seeds", nargs="*")
    a = ap.parse_args(argv)
    seeds = a.seeds or [os.path.join(SRC, "examples", "planning", "costs.yaml")] + \
        sorted(glob.glob(os.path.join(HERE, "corpus", "costs", "*")))
    texts = [open(s, encoding="utf-8", errors="replace").read() for s in seeds]
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    found = {}
    runs = 0
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "costs.yaml")
        while time.monotonic() - t0 < a.seconds:
            text = rng.choice(texts)
            for _ in range(rng.randrange(1, 4)):
                text = mutate(text, rng)
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            runs += 1
            why = check(path)
            if why is not None:
                kind = why.split(" for option")[0].split(":")[0]
                if kind not in found:
                    found[kind] = why
                    n = len(found)
                    with open(os.path.join(a.out, "finding-%d.yaml" % n), "w", encoding="utf-8",
                              errors="surrogateescape") as f:
                        f.write(text)
                    print("fuzz_costs: finding %d: %s (input: %s/finding-%d.yaml)" % (n, why, a.out, n))
    dt = time.monotonic() - t0
    print("fuzz_costs: %d runs in %.0f s (%.0f/s), %d distinct finding(s)" % (runs, dt, runs / max(dt, 1e-9),
                                                                             len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
