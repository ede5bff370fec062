#!/usr/bin/env python3
"""ncclt_log_to_csv.py: converts the raw stdout of nccl-tests binaries
(new format, with "# Collective test starting: NAME" and a root column)
into the CSV layout of ../shared/data/nccl-tests (one table per test
section, numbered from 1 in file order), keeping the log's header lines
(nccl-tests version, nThread/nGpus line, the first section's rank lines; verbatim) after the
caller's source/license header.  Numbers are copied as printed, not
recomputed.  Usage: ncclt_log_to_csv.py HEADER_FILE LOG > OUT.csv
Old-format logs (no root column, an "error" column instead of #wrong;
nccl-tests before 2.10) get root -1, and a file without "Collective test
starting" lines is one table named by the caller (third argument).
mpirun's "[1,0]<stdout>:" tags are dropped.  Limits: one binary per file
without section lines."""
import re
import sys

COLS = ("test,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,"
        "ip_time_us,ip_algbw_GBps,ip_busbw_GBps")


def main():
    header, log = sys.argv[1], sys.argv[2]
    default_test = sys.argv[3] if len(sys.argv) > 3 else None
    out = [l.rstrip("\n") for l in open(header)]
    rows, table, test, kept, seen = [], 0, None, [], set()
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
        if f and f[0].isdigit() and test is None and default_test:
            table, test = 1, default_test
        if len(f) >= 13 and f[0].isdigit() and test and re.match(r"-?\d+$", f[4]):
            rows.append("%s,%d,%s" % (test, table, ",".join(f[0:8] + f[9:12])))
        elif len(f) == 12 and f[0].isdigit() and test:  # old format: no root
            rows.append("%s,%d,%s" % (test, table, ",".join(f[0:4] + ["-1"] + f[4:7] + f[8:11])))
        elif f and f[0].isdigit() and len(f) >= 8 and test:
            sys.exit("%s:%d: a data row of %d fields, neither format; not converted" % (log, n, len(f)))
    out += kept
    out.append(COLS)
    out += rows
    print("\n".join(out))


if __name__ == "__main__":
    main()
