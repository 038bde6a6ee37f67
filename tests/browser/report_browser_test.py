#!/usr/bin/env python3
"""The HTML reports in a real browser (headless Chromium over the DevTools protocol).

    report_browser_test.py --cli STALLSCOPE_CLI --traces SHARED_TRACES
                           [--chromium PATH] [--screenshot PNG] [--keep DIR] [--only TEXT]

Makes an HTML report of every real trace under SHARED_TRACES (files, and folders of
*.pt.trace.json[.gz] files as sessions), a comparison, and reports of traces whose every
string is hostile (hostile_trace.py), opens each in one headless Chromium (a new target
per page) and checks:

  * no script runs: no dialog, no exception, no console call, document.scripts is empty;
  * nothing is fetched: the only network request is the report itself (and data: URIs
    written in the report, of which there are none today);
  * no console error or warning (CSP violations are reported there) and no
    securitypolicyviolation event;
  * hostile text was not parsed: every element and attribute is one the report writes
    (page_probe.js), and the hostile strings are on the page as text;
  * the page renders: UTF-8, the title in <h1>, every finding's title in the text, our
    words read left to right (no unclosed U+202E), no page-wide horizontal overflow, and
    a screenshot with more than one colour.

Exit codes: 0 all good, 1 a check failed (each failure names the report, the check and
what was seen), 77 skipped (no Chromium or no shared traces).
"""
import argparse
import base64
import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cdp  # noqa: E402
import hostile_trace  # noqa: E402

PAGE_SECONDS = 20.0
VIEWPORT = (1280, 900)
TRIPWIRE = """(() => {
  const log = [];
  Object.defineProperty(window, '__stallscopeTripwire', {value: log});
  document.addEventListener('securitypolicyviolation', (e) =>
      log.push(`CSP ${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} ${e.sample || ''}`), true);
})();"""
PROBE = (HERE / "page_probe.js").read_text()


class Report:
    def __init__(self, name, args, hostile=False, comparison=False, inputs=()):
        self.name, self.args, self.hostile, self.comparison = name, args, hostile, comparison
        self.inputs = list(inputs)  # what the JSON analysis is made from (finding titles)
        self.html = None
        self.finding_titles = []


def find_chromium(explicit):
    for c in [explicit, os.environ.get("STALLSCOPE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"]:
        if c and shutil.which(c):
            return shutil.which(c)
    return None


def real_reports(traces):
    """Every trace file, every folder holding *.pt.trace.json[.gz] files, one comparison."""
    out = []
    # Kineto traces told apart by content (tests/expectations/corpus.py): the corpus also holds
    # rocprofv3 JSON and memory timelines, which are refused with their own line.
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "expectations"))
    import corpus
    kineto = corpus.kineto_traces(str(traces))
    for path in sorted(traces.rglob("*")):
        rel = path.relative_to(traces).as_posix()
        if path.is_file() and rel in kineto:
            out.append(Report(rel, [str(path)], inputs=[str(path)]))
        elif path.is_dir() and any(re.search(r"\.pt\.trace\.json(\.gz)?$", p.name) for p in path.iterdir()):
            out.append(Report(rel + "/", [str(path)], inputs=[str(path)]))
    tb = traces / "kineto-tb-plugin"
    before = tb / "resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"
    after = tb / "resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz"
    if before.exists() and after.exists():
        out.append(Report("comparison resnet50 num_workers 0 -> 4", ["--baseline", str(before), str(after)],
                          comparison=True))
    return out


def hostile_reports(folder):
    made = hostile_trace.make_all(str(folder))
    before, after = made["hostile-comparison"]
    return [Report("hostile-file", [made["hostile-file"]], hostile=True, inputs=[made["hostile-file"]]),
            Report("hostile-session", [made["hostile-session"]], hostile=True, inputs=[made["hostile-session"]]),
            Report("hostile-comparison", ["--baseline", before, after], hostile=True, comparison=True)]


def make_report(cli, report, out_dir, index):
    try:
        return run_cli(cli, report, out_dir, index)
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        return f"stallscope-cli failed: {e}"


def run_cli(cli, report, out_dir, index):
    """Runs the CLI: the HTML report, and the JSON analysis for the finding titles."""
    html = out_dir / f"{index:03d}.html"
    r = subprocess.run([cli, "report", "-o", str(html), *report.args], capture_output=True, timeout=120)
    if r.returncode != 0:
        return f"stallscope-cli report exited {r.returncode}: {r.stderr.decode(errors='replace').strip()[:500]}"
    report.html = html
    for i, inp in enumerate(report.inputs):
        js = out_dir / f"{index:03d}-{i}.json"
        r = subprocess.run([cli, "report", "-o", str(js), inp], capture_output=True, timeout=120)
        if r.returncode != 0:
            return f"stallscope-cli report (JSON) exited {r.returncode}: {r.stderr.decode(errors='replace')[:500]}"
        data = js.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            return f"the JSON report of {inp} is not UTF-8: {e} near {data[max(0, e.start - 60):e.start + 10]!r}"
        for trace in json.loads(data):
            report.finding_titles += [f["title"] for f in trace.get("findings", [])[:20]]
    return None


def squash(s):
    return " ".join(s.split())


class PageCheck:
    """Opens one report in a fresh target and collects what is wrong with it."""

    def __init__(self, browser, report, screenshot=None):
        self.b, self.r, self.screenshot = browser, report, screenshot
        self.problems = []
        self.deadline = time.monotonic() + PAGE_SECONDS

    def fail(self, check, seen):
        self.problems.append((check, seen))

    def send(self, method, params=None, session=None):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise cdp.CdpError(f"{method}: the page's {PAGE_SECONDS:.0f} s are up")
        return self.b.send(method, params, session, timeout=left)

    def run(self):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        try:
            session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            self.load_and_check(session)
        except cdp.CdpError as e:
            self.fail("page", str(e))
        finally:
            try:
                self.b.send("Target.closeTarget", {"targetId": target}, timeout=5)
            except cdp.CdpError:
                pass
        return self.problems

    def load_and_check(self, session):
        since = self.b.event_count()
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable", {}, session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False}, session)
        self.send("Page.addScriptToEvaluateOnNewDocument", {"source": TRIPWIRE}, session)
        url = self.r.html.resolve().as_uri()
        nav = self.send("Page.navigate", {"url": url}, session)
        if nav.get("errorText"):
            return self.fail("navigation", nav["errorText"])
        if self.b.wait_event(session, "Page.loadEventFired", since, self.deadline - time.monotonic()) is None:
            return self.fail("load", f"no load event within {PAGE_SECONDS:.0f} s")
        # Two animation frames: layout and paint are done, late console messages are in.
        self.evaluate(session, "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        probe = self.evaluate(session, PROBE)
        self.check_events(session, since, url)
        self.check_dom(probe)
        self.check_content(probe)
        self.check_pixels(session)

    def evaluate(self, session, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                      session)
        if "exceptionDetails" in r:
            raise cdp.CdpError(f"probe failed: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r.get("result", {}).get("value")

    def check_events(self, session, since, url):
        page = urllib.parse.unquote(url)
        source = self.r.html.read_text(encoding="utf-8", errors="replace")
        for method, p in self.b.session_events(session, since):
            if method == "Page.javascriptDialogOpening":
                self.fail("no script runs", f"a {p.get('type')} dialog opened: {p.get('message')!r}")
            elif method == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                self.fail("no script runs", f"exception: {d.get('text')} {d.get('exception', {}).get('description', '')}")
            elif method == "Runtime.consoleAPICalled":
                args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                self.fail("no script runs", f"console.{p.get('type')}({args[:300]})")
            elif method == "Log.entryAdded":
                e = p.get("entry", {})
                if e.get("level") in ("error", "warning"):
                    self.fail("no console errors or warnings", f"{e.get('level')} [{e.get('source')}] {e.get('text', '')[:400]}")
            elif method == "Network.requestWillBeSent":
                req = p.get("request", {}).get("url", "")
                if urllib.parse.unquote(req) != page and not (req.startswith("data:") and req in source):
                    self.fail("nothing is fetched", f"request for {req[:300]}")

    def check_dom(self, p):
        for problem in p["problems"]:
            self.fail("hostile text stays text", problem)
        if p["tripwire"] is None:
            self.fail("tripwire", "the securitypolicyviolation listener did not run")
        for v in p["tripwire"] or []:
            self.fail("no CSP violation", v)
        if p["scripts"]:
            self.fail("no script runs", f"document.scripts.length is {p['scripts']} (the report has no scripts)")
        for what in ("links", "images", "embeds"):
            if p[what]:
                self.fail("nothing is fetched", f"{p[what]} {what} in the document (the report has none)")
        for r in p["reversed"]:
            self.fail("text reads left to right", r)

    def check_content(self, p):
        text, svg = p["text"], p["svgText"]
        if p["charset"] != "UTF-8" or p["contentType"] != "text/html":
            self.fail("renders as UTF-8 HTML", f"charset {p['charset']}, content type {p['contentType']}")
        prefix = "Stallscope comparison: " if self.r.comparison else "Stallscope report: "
        if not p["title"].startswith(prefix):
            self.fail("title", f"document.title is {p['title'][:200]!r}")
        if squash(p["h1"]) != squash(p["title"]):
            self.fail("title", f"<h1> {p['h1'][:200]!r} is not the title {p['title'][:200]!r}")
        if squash(p["title"]) not in squash(text):
            self.fail("not blank", f"the title is not in the body text ({len(text)} characters)")
        if "\u00c3" in text or "\u00e2\u0080" in text:
            self.fail("renders as UTF-8 HTML", "mojibake (UTF-8 read as Latin-1) in the text")
        for heading in ("Summary", "Findings"):
            if not re.search(r"(^|\n)([^\n]*: )?" + heading + r"\n", text):
                self.fail("not blank", f"no {heading!r} heading in the body text")
        body = squash(text)
        for title in self.r.finding_titles:
            if squash(title) not in body:
                self.fail("not blank", f"finding {title!r} is not in the body text")
        if p["scrollWidth"] > p["innerWidth"] + 1:
            self.fail("layout", f"the page is {p['scrollWidth']} px wide in a {p['innerWidth']} px window")
        if p["bodyHeight"] < 200:
            self.fail("not blank", f"the body is {p['bodyHeight']} px high")
        if self.r.hostile:
            self.check_hostile_text(p, text, svg)

    def check_hostile_text(self, p, text, svg):
        h = hostile_trace
        if h.IMG not in p["title"]:  # in the file names (a session's title names its first file)
            self.fail("hostile text stays text", f"{h.IMG!r} is not in the title {p['title'][:200]!r}")
        if "\ufffd" not in p["title"] + text:
            self.fail("invalid UTF-8 shows as U+FFFD", "no U+FFFD on the page (the file name has a 0xFF byte)")
        if self.r.comparison:
            return
        for s in h.VISIBLE:
            if s not in text:
                self.fail("hostile text stays text", f"{s!r} is not in the body text")
        for s in (h.SVG, "'><svg onload=alert(1)>"):
            if s not in svg:
                self.fail("hostile text stays text", f"{s!r} is not in the pictures' text")
        if p["wordsChecked"] < 10:
            self.fail("text reads left to right", f"only {p['wordsChecked']} words could be measured")

    def check_pixels(self, session):
        shot = self.send("Page.captureScreenshot", {"format": "png", "clip": {
            "x": 0, "y": 0, "width": VIEWPORT[0], "height": VIEWPORT[1], "scale": 0.25}}, session)
        colours, share = cdp.pixel_variety(base64.b64decode(shot["data"]))
        if colours < 3 or share < 0.01:
            self.fail("not blank", f"screenshot has {colours} colours, {share:.2%} of pixels not the background")
        if self.screenshot:
            metrics = self.send("Page.getLayoutMetrics", {}, session)
            height = min(4000, int(metrics.get("cssContentSize", metrics.get("contentSize"))["height"]))
            full = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
                "x": 0, "y": 0, "width": VIEWPORT[0], "height": height, "scale": 1}}, session)
            pathlib.Path(self.screenshot).write_bytes(base64.b64decode(full["data"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--traces", required=True)
    ap.add_argument("--chromium")
    ap.add_argument("--screenshot", help="save the hostile file's report as Chromium renders it")
    ap.add_argument("--keep", help="write the reports here and keep them")
    ap.add_argument("--only", help="only reports whose name contains this")
    a = ap.parse_args()
    started = time.monotonic()
    # CTest's timeout and Ctrl-C: unwind, so Chromium is closed and the folder removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    chromium = find_chromium(a.chromium)
    traces = pathlib.Path(a.traces)
    if not chromium:
        print("SKIP: no Chromium (install Debian's chromium: scripts/setup-deps.sh)")
        return 77
    if not traces.is_dir() or not any(traces.rglob("*.json*")):
        print(f"SKIP: no shared traces at {traces} (see MANIFEST.md; tests that need them skip)")
        return 77
    if not os.access(a.cli, os.X_OK):
        print(f"FAIL: stallscope-cli not found at {a.cli}")
        return 1

    work = pathlib.Path(a.keep) if a.keep else pathlib.Path(tempfile.mkdtemp(prefix="stallscope-browser-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        hostile_dir = work / "hostile"
        shutil.rmtree(hostile_dir, ignore_errors=True)
        hostile_dir.mkdir()
        reports = real_reports(traces) + hostile_reports(hostile_dir)
        if a.only:
            reports = [r for r in reports if a.only in r.name]
        failures = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            errors = list(pool.map(lambda ir: make_report(a.cli, ir[1], work, ir[0]), enumerate(reports)))
        for r, err in zip(reports, errors):
            if err:
                failures.append((r.name, "report is written", err))
        made = time.monotonic()
        print(f"{len(reports)} reports made in {made - started:.1f} s; opening them in {chromium}")

        profile = work / "profile"
        shutil.rmtree(profile, ignore_errors=True)
        browser = cdp.Browser(chromium, str(profile), str(work / "chromium.log"))
        try:
            for r in [r for r in reports if r.html]:
                t0 = time.monotonic()
                shot = a.screenshot if r.name == "hostile-file" else None
                problems = PageCheck(browser, r, shot).run()
                failures += [(r.name, check, seen) for check, seen in problems]
                print(f"  {'ok  ' if not problems else 'FAIL'} {time.monotonic() - t0:5.2f} s  {r.name}")
                if browser.proc.poll() is not None:
                    failures.append((r.name, "browser", f"Chromium exited (rc {browser.proc.returncode}); "
                                                         f"log: {work / 'chromium.log'}"))
                    break
        finally:
            browser.close()
        print(f"browser checks {time.monotonic() - made:.1f} s, total {time.monotonic() - started:.1f} s")
        if failures:
            print(f"\n{len(failures)} problem(s):")
            shown = {}
            for name, check, seen in failures:
                shown[(name, check)] = shown.get((name, check), 0) + 1
                if shown[(name, check)] <= 5:
                    print(f"FAIL [{name}] {check}: {seen}")
            for (name, check), n in shown.items():
                if n > 5:
                    print(f"FAIL [{name}] {check}: ... and {n - 5} more like these")
            if not a.keep:
                print("(rerun with --keep DIR to keep the reports)")
            return 1
        print("all reports pass in Chromium")
        return 0
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
