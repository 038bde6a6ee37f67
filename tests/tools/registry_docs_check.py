#!/usr/bin/env python3
"""The registries' .def lists against docs/architecture.md's "registered pieces" list.

Each registry is one X-macro list (STALLSCOPE_<KIND>(Name) per line); the architecture page
names what is registered today. This check fails when a line is added to a .def file without
the page saying so (or the page names a piece that is not registered), and when a .def line
is not of the one form the macros expect.

usage: registry_docs_check.py SOURCE_DIR
"""
import re
import sys
from pathlib import Path

REGISTRIES = {  # the docs list's label: (the .def file, its macro)
    "commands": ("app/cli/commands.def", "STALLSCOPE_COMMAND"),
    "detectors": ("analysis/include/stallscope/analysis/detectors.def", "STALLSCOPE_DETECTOR"),
    "report formats": ("reports/include/stallscope/reports/report_formats.def",
                       "STALLSCOPE_REPORT_FORMAT"),
    "file formats": ("importers/include/stallscope/importers/file_formats.def",
                     "STALLSCOPE_FILE_FORMAT"),
    "panels": ("app/gui/panels.def", "STALLSCOPE_PANEL"),
}


def def_names(path, macro):
    names, bad = [], []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split("//", 1)[0].strip()
        if not code:
            continue
        m = re.fullmatch(re.escape(macro) + r"\((\w+)\)", code)
        if m:
            names.append(m.group(1))
        else:
            bad.append(f"{path}:{n}: not one {macro}(Name): {line.strip()}")
    return names, bad


def main():
    root = Path(sys.argv[1])
    doc = (root / "docs/architecture.md").read_text()
    problems = []
    for label, (rel, macro) in REGISTRIES.items():
        names, bad = def_names(root / rel, macro)
        problems += bad
        if not names:
            problems.append(f"{rel}: no {macro} lines")
        m = re.search(r"^- " + re.escape(label) + r": (.*)$", doc, re.M)
        if not m:
            problems.append(f"docs/architecture.md: no '- {label}: ...' line")
            continue
        listed = [x.strip() for x in m.group(1).split(",")]
        if listed != names:
            problems.append(f"docs/architecture.md '{label}': {', '.join(listed)}\n"
                            f"  but {rel} registers: {', '.join(names)}")
    for p in problems:
        print(p)
    print(f"registry_docs_check: {len(REGISTRIES)} registries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
