#!/usr/bin/env python3
"""Seed inputs for the fuzz targets, cut from the real traces (../shared/traces) at fuzz
time into the build folder; nothing here is committed (docs/fuzzing.md).

    make_seeds.py --traces ../shared/traces --out build/fuzz/seeds

writes
    OUT/json/         small valid traces (chrome_json, annotated_trace): per real trace its
                      head, a few windows of consecutive events, and a sampler of one event
                      per (ph, cat) with the launches, flows and GPU work that share its
                      correlation id; each with the trace's own top-level keys, events cut
                      from the original text (its number formatting kept)
    OUT/chrome_gzip/  the same texts behind a mode byte (fuzz_chrome_gzip.cpp), and raw gzip
    OUT/tensorboard/  folder listings with the real traces' file names
    OUT/formats/      every corpus file's first 60 kB behind mode byte 0 (fuzz_formats.cpp):
                      the files that are not traces (pickles, SQLite, HTML, ...) and traces
    OUT/foreign/      each Nsight / RPD database cut to its schema and the first rows of every
                      table (page size 512), and each rocprofv3 JSON cut to its first records
                      (fuzz_foreign.cpp); the committed seeds/foreign are this folder
Deterministic (a fixed random seed), standard library only.
"""
import argparse
import gzip
import shutil
import sqlite3
import tempfile
import json
import os
import random
import re

MAX_SEED = 24 * 1024       # bytes of one seed (the JSON targets run with -max_len=65536)
WINDOWS = 3                # random windows per trace
SCAN_EVENTS = 20000        # events read per trace for the sampler

DECODER = json.JSONDecoder()
BLANK = re.compile(r'[\s,]*')


def read_text(path):
    raw = open(path, 'rb').read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    return raw.decode('utf-8', errors='replace')


def events_array(text):
    """(start of the first event, top-level object or None for a bare array)."""
    s = text.lstrip('\ufeff \t\r\n')
    off = len(text) - len(s)
    if s.startswith('['):
        return off + 1, None
    doc = json.loads(text)
    m = re.search(r'"traceEvents"\s*:\s*\[', text)
    if not m:
        return None, None
    return m.end(), doc


def iter_events(text, pos, limit):
    """(start, end, event) of consecutive events from `pos` (an event boundary)."""
    n = 0
    while n < limit:
        pos = BLANK.match(text, pos).end()
        if pos >= len(text) or text[pos] == ']':
            return
        try:
            ev, end = DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            return
        yield pos, end, ev
        pos = end
        n += 1


def boundary_after(text, pos, first):
    """An event boundary at or after `pos`: a line starting with '{' that decodes."""
    while True:
        nl = text.find('\n', pos)
        if nl < 0:
            return None
        p = nl + 1
        q = BLANK.match(text, p).end()
        if q < len(text) and text[q] == '{':
            try:
                DECODER.raw_decode(text, q)
                return q
            except json.JSONDecodeError:
                pass
        pos = p


def document(doc, events_text, bare):
    if bare:
        return '[' + ',\n'.join(events_text) + ']\n'
    parts = []
    for k, v in doc.items():
        if k == 'traceEvents':
            parts.append('"traceEvents": [\n' + ',\n'.join(events_text) + '\n]')
        else:
            parts.append(json.dumps(k) + ': ' + json.dumps(v))
    return '{\n' + ',\n'.join(parts) + '\n}\n'


def fit(doc, events_text, bare):
    while events_text:
        d = document(doc, events_text, bare)
        if len(d.encode()) <= MAX_SEED:
            return d
        events_text = events_text[:max(1, len(events_text) * 3 // 4)] if len(events_text) > 1 else []
    return None


def seeds_of(path, rng):
    text = read_text(path)
    first, doc = events_array(text)
    if first is None:
        return []
    bare = doc is None
    out = []
    head = [text[s:e] for s, e, _ in iter_events(text, first, 24)]
    out.append(('head', head))
    for w in range(WINDOWS):
        at = boundary_after(text, rng.randrange(first, max(first + 1, len(text) - 1)), first)
        if at is None:
            continue
        out.append(('window%d' % w, [text[s:e] for s, e, _ in iter_events(text, at, rng.randrange(8, 40))]))
    # One event per (ph, cat), plus everything sharing its correlation id.
    seen, picked, by_corr, scanned = set(), [], {}, []
    for s, e, ev in iter_events(text, first, SCAN_EVENTS):
        if not isinstance(ev, dict):
            continue
        scanned.append((s, e, ev))
        args = ev.get('args') if isinstance(ev.get('args'), dict) else {}
        corr = args.get('correlation', ev.get('id') if ev.get('cat') == 'ac2g' else None)
        if isinstance(corr, int):
            by_corr.setdefault(corr, []).append(len(scanned) - 1)
    for i, (s, e, ev) in enumerate(scanned):
        key = (ev.get('ph'), ev.get('cat'))
        if key in seen:
            continue
        seen.add(key)
        picked.append(i)
        args = ev.get('args') if isinstance(ev.get('args'), dict) else {}
        if isinstance(args.get('correlation'), int):
            picked.extend(by_corr.get(args['correlation'], [])[:6])
    picked = sorted(set(picked))[:120]
    out.append(('sampler', [text[scanned[i][0]:scanned[i][1]] for i in picked]))
    result = []
    for name, evs in out:
        d = fit(doc, evs, bare)
        if d:
            result.append((name, d))
    return result


FOREIGN_ROWS = 12           # rows kept per table of a database seed
FOREIGN_RECORDS = 12       # records kept per list of a rocprofv3 seed
FOREIGN_STRINGS = 200      # strings kept of a database seed (160 characters each at most)
FOREIGN_TABLES = {         # besides CUPTI_ACTIVITY_KIND_* and rocpd_*: what the importers read
    'StringIds', 'META_DATA_EXPORT', 'TARGET_INFO_GPU', 'TARGET_INFO_CUDA_DEVICE', 'PROCESSES',
    'ThreadNames', 'NVTX_EVENTS', 'OSRT_API', 'CUDA_GRAPH_EVENTS', 'ENUM_NSYS_EVENT_CLASS',
    'ENUM_NSYS_EVENT_TYPE', 'ENUM_CUDA_MEMCPY_OPER', 'ENUM_CUDA_MEM_KIND', 'ENUM_CUPTI_SYNC_TYPE',
    'ext_autogradapi', 'TARGET_INFO_SYSTEM_ENV'}


def cut_database(src, dst):
    """The schema of SQLite file `src` and the first rows of each table, into `dst`."""
    if os.path.exists(dst):
        os.remove(dst)
    con = sqlite3.connect('file:%s?mode=ro&immutable=1' % src, uri=True)
    out = sqlite3.connect(dst)
    out.execute('PRAGMA page_size = 512')
    tables = [r for r in con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                                     "AND name NOT LIKE 'sqlite_%' AND sql IS NOT NULL")]
    for name, sql in tables:
        if not (name in FOREIGN_TABLES or name.startswith('CUPTI_ACTIVITY_KIND_') or
                name.startswith('rocpd_')):
            continue
        out.execute(sql)
        # The enums whole, the first strings (rows refer to them by id) and the first rows of
        # the other tables.
        limit = '' if name.startswith('ENUM_') else ' LIMIT %d' % (
            FOREIGN_STRINGS if name in ('StringIds', 'rocpd_string') else FOREIGN_ROWS)
        rows = con.execute('SELECT * FROM "%s"%s' % (name, limit))
        for row in rows:
            row = tuple(v[:160] if isinstance(v, (str, bytes)) else v for v in row)
            out.execute('INSERT INTO "%s" VALUES (%s)' % (name, ','.join('?' * len(row))), row)
    out.commit()
    out.execute('VACUUM')
    out.close()
    con.close()


def foreign_seeds(traces, out):
    os.makedirs(out, exist_ok=True)
    n = 0
    for sub in ('nsight', 'rocm'):
        for f in sorted(os.listdir(os.path.join(traces, sub))) if os.path.isdir(os.path.join(traces, sub)) else []:
            path = os.path.join(traces, sub, f)
            tag = re.sub(r'[^A-Za-z0-9_.-]', '_', f)
            with open(path, 'rb') as fh:
                head = fh.read(2)
            opener = gzip.open if head == b'\x1f\x8b' else open
            with opener(path, 'rb') as fh:
                magic = fh.read(16)
            if magic.startswith(b'SQLite format 3'):
                with tempfile.TemporaryDirectory() as tmp:
                    plain = os.path.join(tmp, 'plain.sqlite')
                    with opener(path, 'rb') as src, open(plain, 'wb') as dst:
                        shutil.copyfileobj(src, dst)
                    cut = os.path.join(tmp, 'cut.sqlite')
                    cut_database(plain, cut)
                    shutil.copy(cut, os.path.join(out, tag + '.sqlite.bin'))
            else:
                with opener(path, 'rt', encoding='utf-8') as fh:
                    doc = json.load(fh)
                for entry in doc.get('rocprofiler-sdk-tool', []):
                    for k, v in entry.get('buffer_records', {}).items():
                        entry['buffer_records'][k] = v[:FOREIGN_RECORDS]
                    used = {r['dispatch_info']['kernel_id'] for r in entry['buffer_records'].get('kernel_dispatch', [])}
                    entry['kernel_symbols'] = [k for k in entry.get('kernel_symbols', []) if k.get('kernel_id') in used]
                    for k in ('code_objects', 'host_functions', 'counters', 'callback_records', 'summary'):
                        entry.pop(k, None)
                    entry['metadata'] = {k: v for k, v in entry.get('metadata', {}).items()
                                         if k in ('pid', 'init_time', 'fini_time', 'node')}
                    agents = entry.get('agents', [])
                    entry['agents'] = [{k: v for k, v in a.items() if not isinstance(v, list)}
                                       for a in ([a for a in agents if a.get('type') == 1][:2] +
                                                 [a for a in agents if a.get('type') == 2][:2])]
                    kinds = entry.get('strings', {}).get('buffer_records', [])
                    entry['strings'] = {'buffer_records': [dict(k, operations=k.get('operations', [])[:8])
                                                           for k in kinds]}
                with open(os.path.join(out, tag + '.json.bin'), 'w') as fh:
                    json.dump(doc, fh, separators=(',', ':'))
            n += 1
    print('make_seeds: %d foreign-format seeds in %s' % (n, out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--traces', required=True)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    rng = random.Random(20240601)
    dirs = {k: os.path.join(a.out, k) for k in ('json', 'chrome_gzip', 'tensorboard', 'formats')}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    names, count = [], 0
    for dp, _, files in sorted(os.walk(a.traces)):
        for f in sorted(files):
            # Every file's head, whatever it holds, for the format table (mode byte 0: as is).
            rel = os.path.relpath(os.path.join(dp, f), a.traces)
            with open(os.path.join(dp, f), 'rb') as fh:
                head = fh.read(60 * 1024)
            with open(os.path.join(dirs['formats'], re.sub(r'[^A-Za-z0-9_.-]', '_', rel) + '.bin'), 'wb') as fh:
                fh.write(b'\x00' + head)
            if not (f.endswith('.json') or f.endswith('.json.gz')):
                continue
            path = os.path.join(dp, f)
            rel = os.path.relpath(path, a.traces)
            names.append(rel)
            tag = re.sub(r'[^A-Za-z0-9_.-]', '_', rel)
            try:
                seeds = seeds_of(path, rng)
            except (ValueError, UnicodeError, EOFError, OSError) as e:
                print('make_seeds: skipped %s (%s)' % (rel, e))
                continue
            for i, (name, text) in enumerate(seeds):
                data = text.encode()
                with open(os.path.join(dirs['json'], '%s.%s.json' % (tag, name)), 'wb') as fh:
                    fh.write(data)
                # One gzip-target variant per seed: mode (0..3) and level from the counter.
                mode = count % 4
                flags = mode | ((count * 7 % 10) << 2) | (64 if count % 5 == 0 else 0)
                payload = gzip.compress(data, mtime=0) if mode == 1 else data
                with open(os.path.join(dirs['chrome_gzip'], '%s.%s.bin' % (tag, name)), 'wb') as fh:
                    fh.write(bytes([flags]) + payload)
                count += 1
    # TensorBoard listings: the real file names as files of one folder and of sub-folders.
    base = [os.path.basename(n) for n in names]
    tiny = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}'
    with open(os.path.join(dirs['tensorboard'], 'real-names.txt'), 'w') as fh:
        fh.write('\n'.join(b + '\t' + tiny for b in base[:40]) + '\n')
    with open(os.path.join(dirs['tensorboard'], 'real-paths.txt'), 'w') as fh:
        fh.write('\n'.join(n.replace(os.sep, '_', n.count(os.sep) - 1) + '\t' for n in names[:40]) + '\n')
    print('make_seeds: %d trace seeds from %d traces in %s' % (count, len(names), a.out))
    foreign_seeds(a.traces, os.path.join(a.out, 'foreign'))


if __name__ == '__main__':
    main()
