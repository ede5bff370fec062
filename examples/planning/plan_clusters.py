#!/usr/bin/env python3
"""plan_clusters.py: rank cluster options by cost per training step.

A planning script on wisp's stable interfaces (doc/interfaces.md): it builds
a `wisp sweep` spec (zip: one point per option), runs `wisp sweep`, reads the
JSON lines (schema_version 1) and prints the options ranked by dollars per
step = step time x GPUs x price per GPU-second, with steps per dollar beside.
Standard library only (python3 from Debian); the cost file is a small YAML
subset parsed here (no PyYAML).

Usage:
  plan_clusters.py --wisp build/wisp --workload WORKLOAD --cluster CLUSTER \
                   --costs examples/planning/costs.yaml [--out DIR] \
                   [--scale dp=N] [--placement outer|inner] [--starts together|measured] \
                   [--card FILE] [--network-model analytical|flow]
The last five are wisp's own options, passed to every point of the sweep with
the same spelling and meaning as on `wisp simulate` (e.g. --scale dp=512 prices
a 512-GPU cluster from DLRM's 8-GPU data-parallel trace); GPUs per option is the simulated job's.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile


class YamlError(Exception):
    pass


def _scalar(text):
    """A YAML scalar: int, float, quoted or plain string."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def parse_yaml_subset(text, name="costs.yaml"):
    """Parses block mappings, block lists ('- key: value' items or '- scalar')
    and scalars, with '#' comments; errors name the line.  Flow collections,
    anchors and multi-line scalars are not part of the subset."""
    lines = []
    for no, raw in enumerate(text.splitlines(), 1):
        s = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if s.strip():
            if "\t" in s[: len(s) - len(s.lstrip())]:
                raise YamlError("%s:%d: tabs in indentation" % (name, no))
            lines.append((no, len(s) - len(s.lstrip()), s.strip()))
    pos = 0

    def block(indent):
        nonlocal pos
        if pos >= len(lines):
            return None
        no, ind, s = lines[pos]
        if s.startswith("- ") or s == "-":
            out = []
            while pos < len(lines) and lines[pos][1] == indent and lines[pos][2].startswith("-"):
                no, ind, s = lines[pos]
                item = s[1:].strip()
                if ":" in item and not item.startswith(("'", '"')):
                    # '- key: value' opens a mapping whose other keys sit under the key.
                    lines[pos] = (no, ind + 2, item)
                    out.append(mapping(ind + 2))
                else:
                    pos += 1
                    out.append(_scalar(item))
            return out
        return mapping(indent)

    def mapping(indent):
        nonlocal pos
        out = {}
        while pos < len(lines) and lines[pos][1] == indent and not lines[pos][2].startswith("- "):
            no, ind, s = lines[pos]
            if ":" not in s:
                raise YamlError("%s:%d: expected 'key: value', got '%s'" % (name, no, s))
            key, _, val = s.partition(":")
            key = key.strip()
            if key in out:
                raise YamlError("%s:%d: key '%s' given twice" % (name, no, key))
            pos += 1
            if val.strip():
                if val.strip()[0] in "[{&*|>":
                    raise YamlError("%s:%d: '%s': flow collections, anchors and block scalars are outside "
                                    "the YAML subset this script reads" % (name, no, val.strip()))
                out[key] = _scalar(val)
            elif pos < len(lines) and lines[pos][1] > indent:
                out[key] = block(lines[pos][1])
            elif pos < len(lines) and lines[pos][1] == indent and lines[pos][2].startswith("- "):
                out[key] = block(indent)
            else:
                out[key] = None
        if pos < len(lines) and lines[pos][1] > indent:
            raise YamlError("%s:%d: unexpected indentation" % (name, lines[pos][0]))
        return out

    doc = block(0) if lines else {}
    if pos < len(lines):
        raise YamlError("%s:%d: unexpected indentation" % (name, lines[pos][0]))
    return doc


def load_costs(path):
    with open(path, encoding="utf-8") as f:
        doc = parse_yaml_subset(f.read(), path)
    opts = doc.get("options") if isinstance(doc, dict) else None
    if not isinstance(opts, list) or not opts:
        raise YamlError("%s: needs 'options:', a list of {name, price_gpu_hour, set}" % path)
    keys = None
    problems = []
    for i, o in enumerate(opts):
        if not isinstance(o, dict) or not isinstance(o.get("set"), dict) or "name" not in o:
            problems.append("option %d needs name, price_gpu_hour and a 'set' mapping" % (i + 1))
            continue
        if not isinstance(o["name"], str) or not o["name"]:
            # An unquoted 123 reads as a number; the sweep labels points
            # with strings, so say how to write it rather than fail later.
            problems.append("option %d: name %r is not a string; quote it (name: \"%s\")"
                            % (i + 1, o["name"], o["name"]))
            o["name"] = str(o["name"])
        price = o.get("price_gpu_hour")
        try:
            ok = (not isinstance(price, bool) and isinstance(price, (int, float)) and math.isfinite(float(price))
                  and price > 0)
        except OverflowError:  # an integer past a double (10**400): float() overflows, not a price either
            ok = False
        if not ok:
            problems.append("option '%s': price_gpu_hour must be a positive finite number (per GPU-hour), got %.40r"
                            % (o["name"], price))
        if [str(p.get("name")) for p in opts if isinstance(p, dict)].count(o["name"]) > 1:
            problems.append("option name '%s' is used twice (names label the sweep's points)" % o["name"])
        if keys is None:
            keys = list(o["set"])
        elif sorted(keys) != sorted(o["set"]):
            problems.append("option '%s' sets %s; every option must set the same keys %s"
                            % (o["name"], sorted(o["set"]), sorted(keys)))
    if problems:
        # Every problem at once, each on its own line.
        raise YamlError("%s: %d problem%s:\n  %s" % (path, len(problems), "" if len(problems) == 1 else "s",
                                                   "\n  ".join(dict.fromkeys(problems))))
    return doc.get("currency", "USD"), opts, keys


def sweep_spec(name, workload, cluster, opts, keys):
    """A zip sweep: one point per option, labelled by its name."""
    q = lambda s: json.dumps(str(s))  # a JSON string is a valid YAML scalar
    out = ["sweep_version: 1", "name: %s" % name, "workload: %s" % q(workload), "cluster: %s" % q(cluster),
           "combine: zip", "labels: [%s]" % ", ".join(q(o["name"]) for o in opts), "base: first", "axes:"]
    for k in keys:
        out.append("  - {key: %s, values: [%s]}" % (k, ", ".join(q(o["set"][k]) for o in opts)))
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wisp", default="wisp", help="the wisp binary")
    ap.add_argument("--workload", required=True)
    ap.add_argument("--cluster", required=True, help="preset name or config the options modify")
    ap.add_argument("--costs", required=True, help="cost inputs (YAML subset, see costs.yaml)")
    ap.add_argument("--out", help="sweep output directory (default: a temporary one)")
    # wisp's common options, passed to `wisp sweep` as they are spelled there.
    passed = (("--scale", "dp=N|tp=N,pp=N,...: price the job at this scale (wisp simulate --scale)"),
              ("--placement", "outer|inner: where --scale puts the new ranks"),
              ("--starts", "together|measured: how the replay starts the ranks"),
              ("--card", "FILE: workload card (CCL-Bench YAML) for --scale's layout"),
              ("--network-model", "analytical|flow: the network model (fidelity tier)"))
    for opt, text in passed:
        ap.add_argument(opt, help=text)
    a = ap.parse_args(argv)
    wisp_opts = []
    for opt, _ in passed:
        v = getattr(a, opt[2:].replace("-", "_"))
        if v is not None:
            wisp_opts += [opt, os.path.abspath(v) if opt == "--card" else v]
    try:
        currency, opts, keys = load_costs(a.costs)
    except (OSError, YamlError) as e:
        print("plan_clusters: %s" % e, file=sys.stderr)
        return 1
    out = a.out or tempfile.mkdtemp(prefix="wisp-plan-")
    os.makedirs(out, exist_ok=True)
    cluster = os.path.abspath(a.cluster) if os.path.exists(a.cluster) else a.cluster
    spec = os.path.join(out, "planning.yaml")
    with open(spec, "w", encoding="utf-8") as f:
        f.write(sweep_spec("planning", os.path.abspath(a.workload), cluster, opts, keys))
    r = subprocess.run([a.wisp, "sweep", spec, "-o", out, "--jobs", "1"] + wisp_opts, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        print("plan_clusters: wisp sweep failed (%d): %s" % (r.returncode, r.stderr.strip()), file=sys.stderr)
        return 1
    price = {o["name"]: float(o["price_gpu_hour"]) for o in opts}
    rows = []
    with open(os.path.join(out, "planning.jsonl"), encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            p = json.loads(line)
            if p.get("schema_version") != 1:
                print("plan_clusters: planning.jsonl:%d: schema_version %r, this script reads 1"
                      % (no, p.get("schema_version")), file=sys.stderr)
                return 1
            if p["status"] != "ok":
                print("plan_clusters: option %s: %s" % (p["label"], p["status"]), file=sys.stderr)
                continue
            step_s = p["step_time_ns"] / 1e9
            if p["label"] not in price:
                print("plan_clusters: planning.jsonl:%d: label %r names no option of %s"
                      % (no, p["label"], a.costs), file=sys.stderr)
                return 1
            cost = step_s * p["n_ranks"] * price[p["label"]] / 3600
            rows.append((cost, p["label"], p["step_time_ns"] / 1e6, p["n_ranks"], price[p["label"]]))
    rows.sort()
    print("%d cluster options for %s, ranked by cost per step (%s; sweep in %s)"
          % (len(rows), a.workload, currency, out))
    print("%-4s %-20s %14s %6s %14s %14s %14s" % ("rank", "option", "step (ms)", "GPUs", "GPU-hour", "per step",
                                                   "steps per unit"))
    for i, (cost, label, step_ms, n, pr) in enumerate(rows, 1):
        print("%-4d %-20s %14.6f %6d %14.4f %14.6g %14.6g" % (i, label, step_ms, n, pr, cost, 1 / cost))
    return 0 if len(rows) == len(opts) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
