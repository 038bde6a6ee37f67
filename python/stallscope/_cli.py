"""Finding and running the Stallscope programs (stallscope-cli, the stallscope GUI)."""
import os
import shutil
import subprocess

CLI_NAME = "stallscope-cli"
GUI_NAME = "stallscope"

CLI_INSTALL_HINT = (
    "install the Debian package from the release packages "
    "(sudo apt install ./stallscope-cli_*.deb), build it from a Stallscope checkout "
    "(./scripts/run.sh, or cmake --preset release && cmake --build build/release), "
    "or set STALLSCOPE_CLI to the program's path")
GUI_INSTALL_HINT = (
    "install the stallscope package from the release packages "
    "(sudo apt install ./stallscope_*.deb), build it from a Stallscope checkout "
    "(./scripts/run.sh), or set STALLSCOPE_GUI to the program's path")


class StallscopeError(RuntimeError):
    """stallscope-cli failed: unreadable input, unwritable output or a usage error.

    ``str(error)`` is the CLI's own message (its standard error). ``returncode``,
    ``stderr`` and ``command`` say how it ran.
    """

    def __init__(self, message, returncode=None, stderr="", command=None):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.command = list(command or [])


class CliNotFound(RuntimeError):
    """No stallscope-cli (or, from open(), no stallscope GUI) was found; the message says how to install it."""


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def _is_program(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _next_to_package(name):
    """Candidates beside the package: its own folder, then each parent's bin/ (a venv's
    bin/, /usr/bin for /usr/lib/python3/dist-packages), then the build folders of the
    Stallscope checkout the package sits in (python/stallscope of a source tree)."""
    here = _package_dir()
    out = [os.path.join(here, name)]
    d = os.path.dirname(here)
    while True:
        out.append(os.path.join(d, "bin", name))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    checkout = os.path.dirname(os.path.dirname(here))
    if os.path.isfile(os.path.join(checkout, "CMakePresets.json")):
        for preset in ("release", "headless", "debug"):
            out.append(os.path.join(checkout, "build", preset, "app", name))
    return out


def _find(name, env_var, hint):
    explicit = os.environ.get(env_var)
    if explicit:
        if _is_program(explicit):
            return os.path.abspath(explicit)
        raise CliNotFound(f"{env_var}={explicit} is not an executable file; {hint}")
    for candidate in _next_to_package(name):
        if _is_program(candidate):
            return candidate
    found = shutil.which(name)
    if found:
        return found
    raise CliNotFound(f"{name} was not found ({env_var} is not set, none beside the Python "
                      f"package in {_package_dir()}, none on PATH); {hint}")


def find_cli():
    """The path of stallscope-cli.

    Looked for in this order: the environment variable ``STALLSCOPE_CLI``; beside the
    package (its folder, each parent folder's ``bin/``, and ``build/<preset>/app/`` of the
    checkout when the package runs from one); ``PATH``. Raises :class:`CliNotFound`, whose
    message says how to install it, when there is none.
    """
    return _find(CLI_NAME, "STALLSCOPE_CLI", CLI_INSTALL_HINT)


def find_gui():
    """The path of the ``stallscope`` GUI, found like :func:`find_cli` (``STALLSCOPE_GUI``)."""
    return _find(GUI_NAME, "STALLSCOPE_GUI", GUI_INSTALL_HINT)


def run_cli(args, ok=(0,)):
    """Runs stallscope-cli with ``args`` (quiet); returns the CompletedProcess (text).

    An exit code outside ``ok`` raises :class:`StallscopeError` with the CLI's stderr.
    """
    command = [find_cli(), "-q", *[os.fspath(a) for a in args]]
    r = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, encoding="utf-8", errors="replace")
    if r.returncode not in ok:
        message = r.stderr.strip() or f"stallscope-cli exited with code {r.returncode}"
        raise StallscopeError(message, r.returncode, r.stderr, command)
    return r
