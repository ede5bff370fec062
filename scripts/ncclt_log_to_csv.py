#!/usr/bin/env python3
"""ncclt_log_to_csv.py: converts the raw stdout of nccl-tests binaries
(new format, with "# Collective test starting: NAME" and a root column)
into the CSV layout of ../shared/data/nccl-tests (one table per test
section, numbered from 1 in file order), keeping the log's header lines
(nccl-tests version, nThread/nGpus line, the first section's rank lines; verbatim) after the
caller's source/license header.  Numbers are copied as printed, not
recomputed.  Usage: ncclt_log_to_csv.py HEADER_FILE LOG > OUT.csv
Old-format logs (no root column, an "error" column instead of #wrong, no
redop for all_gather, an empty one for alltoall;
nccl-tests before 2.10) get root -1, and a file without "Collective test
starting" lines is one table named by the caller (third argument).
mpirun's "[1,0]<stdout>:" tags are dropped.  Limits: one binary per file
without section lines."""
import re
import sys

COLS = ("test,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,"
        "ip_time_us,ip_algbw_GBps,ip_busbw_GBps")


def data_row(f, middle_names):
    """One data row as CSV fields: size, count and type first, then the
    columns the header names between type and time (redop and/or root;
    nccl-tests before 2.10 omit root, all_gather omits redop, and old
    alltoall prints an empty redop), then time, algbw, busbw and an error
    count for out-of-place and in-place (the last eight fields).  A
    missing redop is written "none" (as new nccl-tests print it for
    collectives without one), a missing root -1.  None when the middle
    does not fit the header."""
    middle = f[3:-8]
    tail = f[-8:]
    named = dict(zip(middle_names, middle)) if len(middle) == len(middle_names) else None
    if named is None and len(middle) == 0:
        named = {}
    if named is None and len(middle) == 1 and "redop" in middle_names and middle_names[-1] == "root" \
            and re.match(r"-?\d+$", middle[0]):
        named = {"root": middle[0]}
    if named is None and len(middle) == 1 and middle_names == ["redop", "root"]:
        named = {"redop": middle[0]}
    if named is None:
        return None
    return ",".join(f[0:3] + [named.get("redop", "none"), named.get("root", "-1")] + tail[0:3] + tail[4:7])


def main():
    header, log = sys.argv[1], sys.argv[2]
    default_test = sys.argv[3] if len(sys.argv) > 3 else None
    out = [l.rstrip("\n") for l in open(header)]
    rows, table, test, kept, seen = [], 0, None, [], set()
    middle_names = ["redop", "root"]
    for n, line in enumerate(open(log, errors="replace"), 1):
        line = re.sub(r"\[\d+,\d+\]<std(out|err)>:", "", line.rstrip("\n"))
        m = re.match(r"# Collective test starting: (\S+)", line)
        if m:
            table, test = table + 1, m.group(1)
            kept.append("# LOG: " + line[2:])
            continue
        if line.startswith("# nThread") or line.startswith("# nccl-tests version") or \
           re.match(r"#\s+Rank\s+\d+ (Group|Pid)", line):
            # Each section repeats them (rank lines with new pids): the
            # first section's are kept, so the rank lines count the ranks.
            key = line if not line.startswith("# nThread") else "nThread"
            if table <= 1 and key not in seen:
                seen.add(key)
                kept.append(line)
            continue
        f = line.split()
        m = re.match(r"#\s+size\s+count\s+type\s+(.*)", line)
        if m:
            middle_names = [w for w in m.group(1).split() if w in ("redop", "root")]
            continue
        if f and f[0].isdigit() and test is None and default_test:
            table, test = 1, default_test
        if f and f[0].isdigit() and len(f) >= 11 and test:
            row = data_row(f, middle_names)
            if row is None:
                sys.exit("%s:%d: a data row of %d fields that does not match its column header; not converted"
                         % (log, n, len(f)))
            rows.append("%s,%d,%s" % (test, table, row))
        elif f and f[0].isdigit() and len(f) >= 8 and test:
            sys.exit("%s:%d: a data row of %d fields, neither format; not converted" % (log, n, len(f)))
    out += kept
    out.append(COLS)
    out += rows
    print("\n".join(out))


if __name__ == "__main__":
    main()
