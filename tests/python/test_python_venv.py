#!/usr/bin/env python3
"""`pip install ./python` offline into a fresh venv, then the package from that venv.

    test_python_venv.py [--cli STALLSCOPE_CLI] [--source CHECKOUT]

The interpreter running this script makes the venv (`python3 -m venv`, pip from ensurepip);
pip runs with PIP_NO_INDEX=1 (no network: pip's isolated build can fetch nothing, so this
checks the in-tree backend needs nothing). Checks: the install succeeds, the wheel holds
stallscope/*.py and a .dist-info whose RECORD hashes match the installed files,
`import stallscope` in the venv imports the installed copy (not the checkout's),
stallscope.analyze(trace) equals the CLI's JSON (STALLSCOPE_CLI set), and
`python -m stallscope TRACE` prints the finding. The sdist builds too and holds the backend.
Skips (77) when venv / ensurepip is unavailable.
"""
import base64
import csv
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import common  # noqa: E402

OPTS, REST = common.parse()
TRACE = common.DATA / "dataloader_stall.json"


def venv_problem():
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError as e:
        return f"no venv/ensurepip in {sys.executable}: {e} (Debian: apt install python3-venv)"
    return None


def pip_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1",
               PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1")
    return env


@unittest.skipIf(venv_problem() is not None, venv_problem() or "")
class Venv(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.venv = pathlib.Path(cls.tmp.name, "venv")
        r = subprocess.run([sys.executable, "-m", "venv", str(cls.venv)], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            raise unittest.SkipTest(f"python3 -m venv failed (no ensurepip?): {r.stderr.strip()[-300:]}")
        cls.python = cls.venv / "bin" / "python"
        # The checkout's python/ copied, so the build writes nothing into the source tree.
        cls.src = pathlib.Path(cls.tmp.name, "src")
        subprocess.run(["cp", "-r", str(common.SOURCE / "python"), str(cls.src)], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_venv(self, *args, **env):
        e = pip_env()
        e.update(STALLSCOPE_CLI=common.CLI, **env)
        return subprocess.run([str(self.python), *map(str, args)], capture_output=True, text=True, env=e,
                              timeout=120, cwd=self.tmp.name)

    def test_install_and_use(self):
        r = self.run_venv("-m", "pip", "install", "--no-index", str(self.src))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = self.run_venv("-c", "import json, stallscope; a = stallscope.analyze(%r); "
                                "print(json.dumps([stallscope.__file__, stallscope.__version__, a]))" % str(TRACE))
        self.assertEqual(r.returncode, 0, r.stderr)
        where, version, analysis = json.loads(r.stdout)
        self.assertTrue(where.startswith(str(self.venv)), where)
        expected = json.loads(subprocess.run([common.CLI, "-q", "analyze", "--json", str(TRACE)],
                                             capture_output=True, text=True).stdout)
        self.assertEqual(analysis, expected[0])
        r = self.run_venv("-m", "stallscope", TRACE)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(expected[0]["findings"][0]["title"], r.stdout)
        self.check_record(pathlib.Path(where).parent.parent, version)

    def check_record(self, site, version):
        dist_info = site / f"stallscope-{version}.dist-info"
        for name in ("METADATA", "WHEEL", "RECORD"):
            self.assertTrue((dist_info / name).is_file(), name)
        rows = list(csv.reader((dist_info / "RECORD").read_text().splitlines()))
        checked = 0
        for path, digest, size in rows:
            if not digest:
                continue
            data = (site / path).read_bytes()
            algo, value = digest.split("=", 1)
            self.assertEqual(algo, "sha256")
            self.assertEqual(value, base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode())
            self.assertEqual(int(size), len(data))
            checked += path.startswith("stallscope/")
        self.assertEqual(checked, len(list((common.SOURCE / "python" / "stallscope").glob("*.py"))))
        self.assertIn(f"Version: {version}", (dist_info / "METADATA").read_text())

    def test_sdist(self):
        out = pathlib.Path(self.tmp.name, "sdist")
        code = ("import sys; sys.path.insert(0, '_build'); import stallscope_build as b; "
                "print(b.build_sdist(sys.argv[1]))")
        r = subprocess.run([sys.executable, "-B", "-c", code, str(out)], capture_output=True, text=True,
                           cwd=self.src, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with tarfile.open(out / r.stdout.strip()) as tar:
            names = tar.getnames()
        base = r.stdout.strip()[:-len(".tar.gz")]
        for name in ("PKG-INFO", "pyproject.toml", "_build/stallscope_build.py", "stallscope/__init__.py"):
            self.assertIn(f"{base}/{name}", names)


if __name__ == "__main__":
    common.main(REST)
