#!/usr/bin/env python3
"""The table scripts/fuzz.sh prints after a run: per target executions, exec/s, coverage
(cov/ft of libFuzzer's last status line), corpus size, time and crashes, then where each
crashing input is and how to reproduce it. Exits 1 when any target crashed."""
import argparse
import os
import re
import sys

CRASH_PREFIXES = ('crash-', 'leak-', 'timeout-', 'oom-')


WRONG = re.compile(r'==stallscope fuzz oracle==|ERROR: |SUMMARY: |runtime error: |terminate called|'
                   r'what\(\): |deadly signal|^\s+#\d+ 0x')


def what_went_wrong(path, limit=24):
    """The oracle's message, the sanitizer's report and the first frames of its stack."""
    try:
        lines = open(path, errors='replace').read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        if WRONG.search(line) and line not in out:
            out.append(line[:300])
        if len(out) >= limit:
            break
    return out


def parse_log(path):
    r = {'execs': None, 'eps': None, 'cov': None, 'ft': None}
    try:
        text = open(path, errors='replace').read()
    except OSError:
        return r
    for line in text.splitlines():
        m = re.search(r'cov: (\d+) ft: (\d+)', line)
        if m:
            r['cov'], r['ft'] = int(m.group(1)), int(m.group(2))
            m2 = re.match(r'#(\d+)', line.strip())
            if m2:
                r['execs'] = int(m2.group(1))
            m3 = re.search(r'exec/s:? (\d+)', line)
            if m3:
                r['eps'] = int(m3.group(1))
    m = re.search(r'stat::number_of_executed_units: (\d+)', text)
    if m:
        r['execs'] = int(m.group(1))
    m = re.search(r'stat::average_exec_per_sec: (\d+)', text)
    if m:
        r['eps'] = int(m.group(1))
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--corpus-root', default='corpus', help='folder of the corpora under --build')
    ap.add_argument('targets', nargs='+')
    a = ap.parse_args()
    rows, crashes = [], []
    for t in a.targets:
        log = parse_log(os.path.join(a.build, 'logs', t + '.log'))
        rc, secs = '?', '?'
        try:
            rc, secs = open(os.path.join(a.build, 'logs', t + '.status')).read().split()
        except (OSError, ValueError):
            pass
        corpus = os.path.join(a.build, a.corpus_root, t)
        files = [f for f in os.listdir(corpus)] if os.path.isdir(corpus) else []
        size = sum(os.path.getsize(os.path.join(corpus, f)) for f in files)
        art = os.path.join(a.build, 'artifacts', t)
        found = sorted(os.path.join(art, f) for f in os.listdir(art)
                       if f.startswith(CRASH_PREFIXES)) if os.path.isdir(art) else []
        # Artifacts of earlier runs stay until removed; count those newer than this log.
        logm = os.path.getmtime(os.path.join(a.build, 'logs', t + '.log')) if os.path.exists(
            os.path.join(a.build, 'logs', t + '.log')) else 0
        merge = os.path.join(a.build, 'logs', t + '.merge.log')
        since = os.path.getmtime(merge) if os.path.exists(merge) else 0
        new = [f for f in found if os.path.getmtime(f) >= since - 1]
        failed = rc not in ('0', '?') or new
        if failed:
            crashes.append((t, new, rc, logm))
        fmt = lambda v: '-' if v is None else str(v)
        rows.append((t, fmt(log['execs']), fmt(log['eps']), fmt(log['cov']), fmt(log['ft']),
                     '%d / %d kB' % (len(files), size // 1024), secs + ' s', str(len(new)) if not
                     (rc not in ('0', '?') and not new) else 'exit %s' % rc))
    head = ('target', 'executions', 'exec/s', 'cov', 'ft', 'corpus', 'time', 'crashes')
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: '  '.join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
    print()
    print(line(head))
    print(line(tuple('-' * w for w in widths)))
    for r in rows:
        print(line(r))
    if not crashes:
        print('\nno crashes')
        return 0
    print()
    for t, new, rc, _ in crashes:
        log_path = os.path.join(a.build, 'logs', t + '.log')
        print('%s FAILED (libFuzzer exit %s); log: %s' % (t, rc, log_path))
        # What went wrong, in the summary itself: a CI run shows only the tail of its output.
        for l in what_went_wrong(log_path):
            print('  | ' + l)
        for f in new:
            print('  input: %s' % f)
            print('    reproduce: %s/tests/fuzz/fuzz_%s %s' % (a.build, t, f))
            print('    minimise:  %s/tests/fuzz/fuzz_%s -minimize_crash=1 -max_total_time=60 '
                  '-exact_artifact_path=tests/fuzz/regressions/%s/NAME %s' % (a.build, t, t, f))
    return 1


if __name__ == '__main__':
    sys.exit(main())
