#!/usr/bin/env python3
"""Analysis._repr_html_() as a notebook shows it, rendered by headless Chromium.

    test_python_notebook_html.py [--cli STALLSCOPE_CLI] [--source CHECKOUT] [--chromium PATH]
                                 [--screenshot PNG]

Jupyter puts a text/html output inside a <div> of the notebook page. The test writes such a
page (a cell's input, the output <div> holding _repr_html_(), a paragraph after it) and opens
it in headless Chromium with the flags of tests/browser (cdp.py): once with --dump-dom (the
parsed page keeps the output's <iframe>, its srcdoc holds every finding's title, the
paragraph after the output is still there), once over the DevTools protocol: inside the
frame the report rendered (its <h1>, every finding's title in its text, its stylesheet
applied there) while the notebook page's own styles are untouched (the report's `body`
rule would restyle the whole notebook without the frame), the frame is as tall as asked,
and a screenshot has more than one colour. --screenshot saves it (docs/screenshots/
python-notebook-report.png is made so). Skips (77) without Chromium.
"""
import base64
import html
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402

OPTS, REST = common.parse([(("--chromium",), {}), (("--screenshot",), {})])
sys.path.insert(0, str(common.SOURCE / "tests" / "browser"))
import cdp  # noqa: E402  (the project's DevTools client, standard library only)
import stallscope  # noqa: E402

TRACE = common.DATA / "mha_attention_weights.json"
VIEWPORT = (1200, 900)
NOTEBOOK = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>notebook</title>
<style>
body {{ font: 13px/1.4 "DejaVu Sans", sans-serif; background: #f5f5f5; margin: 8px 24px; color: #222; }}
.jp-Cell {{ background: #fff; border: 1px solid #ddd; padding: 8px; }}
.jp-InputArea {{ font-family: "DejaVu Sans Mono", monospace; background: #f7f7f7; padding: 6px; margin-bottom: 8px; }}
</style></head><body>
<div class="jp-Cell">
<div class="jp-InputArea">In [1]: stallscope.analyze("{trace}")</div>
<div class="jp-OutputArea-output" data-mime-type="text/html">{output}</div>
</div>
<p id="after">The notebook goes on after the output.</p>
</body></html>
"""
PROBE = """(() => {
  const f = document.querySelector('.jp-OutputArea-output iframe');
  const d = f && f.contentDocument;
  return {
    frame: !!f, height: f ? f.getBoundingClientRect().height : 0,
    width: f ? f.getBoundingClientRect().width : 0,
    frameText: d && d.body ? d.body.innerText : '',
    frameH1: d && d.querySelector('h1') ? d.querySelector('h1').textContent : '',
    frameBodyFont: d && d.body ? getComputedStyle(d.body).fontSize : '',
    pageBodyFont: getComputedStyle(document.body).fontSize,
    pageBodyBackground: getComputedStyle(document.body).backgroundColor,
    after: !!document.getElementById('after'),
  };
})()"""


def find_chromium():
    for c in (OPTS.chromium, os.environ.get("STALLSCOPE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if c and shutil.which(c):
            return shutil.which(c)
    return None


CHROMIUM = find_chromium()


@unittest.skipIf(CHROMIUM is None, "no Chromium (install Debian's chromium: scripts/setup-deps.sh)")
class NotebookHtml(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.analysis = stallscope.analyze(TRACE)
        cls.titles = [f["title"] for f in cls.analysis.findings]
        assert cls.titles, "the trace should have findings"
        cls.page = pathlib.Path(cls.tmp.name, "notebook.html")
        cls.page.write_text(NOTEBOOK.format(trace=html.escape(TRACE.name), output=cls.analysis._repr_html_()),
                            encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_dump_dom(self):
        flags = [f for f in cdp.LAUNCH_FLAGS if f != "--remote-debugging-pipe"]
        profile = pathlib.Path(self.tmp.name, "profile-dump")
        r = subprocess.run([CHROMIUM, *flags, f"--user-data-dir={profile}", "--dump-dom", self.page.as_uri()],
                           capture_output=True, text=True, timeout=60, start_new_session=True)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        dom = r.stdout
        self.assertIn('<div class="jp-OutputArea-output" data-mime-type="text/html"><iframe', dom)
        self.assertIn('id="after"', dom)
        srcdoc = html.unescape(dom.split('srcdoc="', 1)[1].split('"', 1)[0])
        self.assertTrue(srcdoc.startswith("<!DOCTYPE html>"))
        for title in self.titles:
            self.assertIn(html.escape(title, quote=False), srcdoc)

    def test_rendered(self):
        profile = pathlib.Path(self.tmp.name, "profile-cdp")
        with cdp.Browser(CHROMIUM, str(profile), str(pathlib.Path(self.tmp.name, "chromium.log"))) as b:
            target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            since = b.event_count()
            b.send("Page.enable", {}, session)
            b.send("Emulation.setDeviceMetricsOverride", {"width": VIEWPORT[0], "height": VIEWPORT[1],
                                                          "deviceScaleFactor": 1, "mobile": False}, session)
            b.send("Page.navigate", {"url": self.page.as_uri()}, session)
            self.assertIsNotNone(b.wait_event(session, "Page.loadEventFired", since, 30), "no load event")
            b.send("Runtime.evaluate", {"expression": "new Promise(r => requestAnimationFrame(() => "
                                                      "requestAnimationFrame(r)))", "awaitPromise": True}, session)
            p = b.send("Runtime.evaluate", {"expression": PROBE, "returnByValue": True}, session)["result"]["value"]
            shot = b.send("Page.captureScreenshot", {"format": "png"}, session, timeout=30)["data"]
        self.assertTrue(p["frame"])
        self.assertTrue(p["after"])
        self.assertEqual(p["height"], stallscope.NOTEBOOK_FRAME_HEIGHT)
        self.assertGreater(p["width"], 1000)
        self.assertTrue(p["frameH1"].strip(), "the report's <h1> did not render in the frame")
        text = common.squash(p["frameText"])
        for title in self.titles:
            self.assertIn(common.squash(title), text)
        # The report's stylesheet applies inside the frame and nowhere else.
        self.assertEqual(p["frameBodyFont"], "15px")
        self.assertEqual(p["pageBodyFont"], "13px")
        self.assertEqual(p["pageBodyBackground"], "rgb(245, 245, 245)")
        png = base64.b64decode(shot)
        colours, share = cdp.pixel_variety(png)
        self.assertGreater(colours, 8)
        self.assertGreater(share, 0.02)
        if OPTS.screenshot:
            pathlib.Path(OPTS.screenshot).write_bytes(png)
            print(f"screenshot: {OPTS.screenshot} ({len(png)} bytes)")


if __name__ == "__main__":
    common.main(REST)
