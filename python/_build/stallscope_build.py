"""The in-tree PEP 517 build backend of the stallscope Python package (standard library only).

pip builds in an isolated environment and would download setuptools for a setuptools
backend; this one needs nothing (``requires = []``), so ``pip install ./python`` works
offline. It writes a pure-Python wheel (stallscope/*.py and the .dist-info with METADATA,
WHEEL and RECORD), an sdist, and an editable wheel (a .pth file naming this folder).
Files are stored with a fixed date (SOURCE_DATE_EPOCH when set) so builds are reproducible.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "stallscope"
SUMMARY = "Why the GPU sits idle: PyTorch profiler / Kineto traces analysed by stallscope-cli"
TAG = "py3-none-any"


def _version():
    with open(os.path.join(ROOT, NAME, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M)
    if not m:
        raise RuntimeError("stallscope/__init__.py has no __version__")
    return m.group(1)


def _epoch():
    """SOURCE_DATE_EPOCH, or 1980-01-01 (the first date a zip file can hold)."""
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _date_time():
    return time.gmtime(_epoch())[:6]


def _sources():
    """(archive name, bytes) of every module of the package, sorted."""
    pkg = os.path.join(ROOT, NAME)
    out = []
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), "rb") as f:
                out.append((f"{NAME}/{name}", f.read()))
    return out


def _dist_info():
    return f"{NAME}-{_version()}.dist-info"


def _metadata():
    readme = os.path.join(ROOT, "README.md")
    text = (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.8\n")
    if os.path.isfile(readme):
        with open(readme, encoding="utf-8") as f:
            text += "Description-Content-Type: text/markdown\n\n" + f.read()
    return text.encode("utf-8")


def _wheel_file():
    return (f"Wheel-Version: 1.0\nGenerator: stallscope_build {_version()}\n"
            f"Root-Is-Purelib: true\nTag: {TAG}\n").encode("utf-8")


def _record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"sha256={digest}"


def _write_wheel(wheel_directory, files):
    """Writes files (name, bytes) plus the .dist-info into a wheel; returns its file name."""
    dist_info = _dist_info()
    files = list(files) + [(f"{dist_info}/METADATA", _metadata()), (f"{dist_info}/WHEEL", _wheel_file())]
    record_name = f"{dist_info}/RECORD"
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in files)
    record += f"{record_name},,\n"
    files.append((record_name, record.encode("utf-8")))
    wheel_name = f"{NAME}-{_version()}-{TAG}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_date_time())
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel_name


def _write_metadata_dir(metadata_directory):
    dist_info = _dist_info()
    path = os.path.join(metadata_directory, dist_info)
    os.makedirs(path, exist_ok=True)
    for name, data in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    return dist_info


# ---- PEP 517 hooks --------------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    """Nothing to install before building."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    """Nothing to install before building."""
    return []


def get_requires_for_build_editable(config_settings=None):
    """Nothing to install before building."""
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """Writes stallscope-VERSION.dist-info (METADATA, WHEEL); returns its name."""
    return _write_metadata_dir(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    """As for the wheel."""
    return _write_metadata_dir(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """The pure-Python wheel: stallscope/*.py and its .dist-info; returns the file name."""
    return _write_wheel(wheel_directory, _sources())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose stallscope.pth puts this folder on sys.path (PEP 660)."""
    return _write_wheel(wheel_directory, [(f"{NAME}.pth", (ROOT + "\n").encode("utf-8"))])


def build_sdist(sdist_directory, config_settings=None):
    """stallscope-VERSION.tar.gz: pyproject.toml, the backend, the package, PKG-INFO."""
    base = f"{NAME}-{_version()}"
    files = [("PKG-INFO", _metadata())]
    for rel in ("pyproject.toml", "README.md", "_build/stallscope_build.py"):
        path = os.path.join(ROOT, rel)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                files.append((rel, f.read()))
    files += _sources()
    sdist_name = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    mtime = _epoch()
    with tarfile.open(os.path.join(sdist_directory, sdist_name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel, data in files:
            info = tarfile.TarInfo(f"{base}/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, mtime
            tar.addfile(info, io.BytesIO(data))
    return sdist_name
