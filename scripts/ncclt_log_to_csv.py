#!/usr/bin/env python3
"""ncclt_log_to_csv.py: converts the raw stdout of nccl-tests binaries
(new format, with "# Collective test starting: NAME" and a root column)
into the CSV layout of ../shared/data/nccl-tests (one table per test
section, numbered from 1 in file order), keeping the log's header lines
(nccl-tests version, nThread/nGpus line, the first section's rank lines; verbatim) after the
caller's source/license header.  Numbers are copied as printed, not
recomputed.  Usage: ncclt_log_to_csv.py HEADER_FILE LOG > OUT.csv
Limits: old-format logs (no root column) are refused with a message."""
import re
import sys

COLS = ("test,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,"
        "ip_time_us,ip_algbw_GBps,ip_busbw_GBps")


def main():
    header, log = sys.argv[1], sys.argv[2]
    out = [l.rstrip("\n") for l in open(header)]
    rows, table, test, kept, seen = [], 0, None, [], set()
    for n, line in enumerate(open(log, errors="replace"), 1):
        line = line.rstrip("\n")
        m = re.match(r"# Collective test starting: (\S+)", line)
        if m:
            table, test = table + 1, m.group(1)
            kept.append("# LOG: " + line[2:])
            continue
        if line.startswith("# nThread") or line.startswith("# nccl-tests version") or \
           re.match(r"#\s+Rank\s+\d+ Group", line):
            # Each section repeats them (rank lines with new pids): the
            # first section's are kept, so the rank lines count the ranks.
            key = line if not line.startswith("# nThread") else "nThread"
            if table <= 1 and key not in seen:
                seen.add(key)
                kept.append(line)
            continue
        f = line.split()
        if len(f) >= 13 and f[0].isdigit() and test:
            if not re.match(r"-?\d+$", f[4]):
                sys.exit("%s:%d: no root column (old nccl-tests format); not converted" % (log, n))
            rows.append("%s,%d,%s" % (test, table, ",".join(f[0:8] + f[9:12])))
    out += kept
    out.append(COLS)
    out += rows
    print("\n".join(out))


if __name__ == "__main__":
    main()
