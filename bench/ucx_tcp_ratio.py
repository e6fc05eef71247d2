#!/usr/bin/env python3
"""ucx_tcp_ratio.py RESULTS.csv: per pattern of a run-bench.sh run with
methods ddio-ucx and ddio-tcp, UCX's rate over TCP's in each repetition,
their median, the servers' CPU seconds (medians) of each, and the
geometric mean of the medians."""
import collections
import csv
import math
import statistics
import sys


def main(path):
    by_rep = collections.defaultdict(dict)
    for r in csv.DictReader(open(path)):
        if r['status'] == 'ok':
            by_rep[(r['pattern'], r['rep'])][r['method']] = (float(r['MiB_s']),
                                                             float(r['server_cpu_s']))
    pats = collections.defaultdict(list)
    for (pat, _), m in by_rep.items():
        if 'ddio-ucx' in m and 'ddio-tcp' in m:
            pats[pat].append((m['ddio-ucx'][0] / m['ddio-tcp'][0], m['ddio-ucx'][1],
                              m['ddio-tcp'][1]))
    print('| pattern | UCX / TCP per repetition | median | servers\' CPU s, UCX / TCP |')
    print('|---|---|---|---|')
    medians = []
    for pat in sorted(pats):
        v = [x[0] for x in pats[pat]]
        medians.append(statistics.median(v))
        print('| %s | %s | %.2f | %.2f / %.2f |' % (
            pat, ' '.join('%.2f' % x for x in v), medians[-1],
            statistics.median(x[1] for x in pats[pat]), statistics.median(x[2] for x in pats[pat])))
    if medians:
        print('\ngeometric mean of the medians: %.2f' %
              math.exp(sum(math.log(x) for x in medians) / len(medians)))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
