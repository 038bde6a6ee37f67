"""The compact text form of an analysis: every figure and sentence comes from the CLI's JSON."""
import textwrap

WIDTH = 100


def duration(ns):
    """Nanoseconds as stallscope-cli writes them: "18.000 ms", "962.000 us", "0 ns"."""
    ns = int(ns)
    a = abs(ns)
    if a < 1000:
        return f"{ns} ns"
    if a < 1000000:
        return f"{ns / 1e3:.3f} us"
    if a < 1000000000:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e9:.3f} s"


def share_base(trace):
    """What saving_pct is a share of: step time in a window of steps, else the window."""
    window = trace.get("window") or {}
    steps = trace.get("steps") or {}
    if window.get("kind") in ("steps", "step") and steps.get("count"):
        return "step time"
    return "the window"


def cost(finding, base="step time"):
    """A finding's cost from its saving_ns / saving_pct / idle_ns."""
    if finding.get("replay_fix"):
        return (f"saves {duration(finding.get('saving_ns', 0))} "
                f"({finding.get('saving_pct', 0)}% of {base}) by the replay")
    if finding.get("idle_ns"):
        return f"no fix to replay; {duration(finding['idle_ns'])} of idle time charged to it"
    return f"no time to save (saving_ns {finding.get('saving_ns', 0)})"


def _wrap(text, indent="    "):
    out = []
    for paragraph in str(text).splitlines() or [""]:
        out.append(textwrap.fill(paragraph, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                                 break_long_words=False, break_on_hyphens=False) or indent.rstrip())
    return "\n".join(out)


def format_trace(trace, top=3):
    """One trace's analysis (an object of ``analyze --json``) as a few lines of text."""
    lines = [f"stallscope: {trace.get('path', '')}"]
    window = trace.get("window") or {}
    if window.get("description"):
        lines.append(f"  window: {window['description']} ({duration(window.get('duration_ns', 0))})")
    for dev, d in sorted((trace.get("devices") or {}).items(), key=lambda kv: int(kv[0])):
        util = d.get("utilization")
        if util is not None:
            lines.append(f"  GPU {dev} {d.get('name', '')}: utilisation {util * 100:.1f}%, "
                         f"idle {duration(d.get('idle_ns', 0))}")
    findings = trace.get("findings") or []
    if not findings:
        lines.append("  no findings")
        return "\n".join(lines)
    base = share_base(trace)
    shown = findings if top is None or top < 0 else findings[:top]
    lines.append(f"  {len(findings)} finding{'s' if len(findings) != 1 else ''}"
                 + (f", the top {len(shown)}:" if len(shown) < len(findings) else ":"))
    for n, f in enumerate(shown, 1):
        where = f"  (GPU {f['device']})" if isinstance(f.get("device"), int) and f["device"] >= 0 else ""
        lines.append(f"  {n}. [{str(f.get('severity', '')).upper()}] {f.get('title', '')}{where}")
        lines.append(f"     {cost(f, base)}; id {f.get('id', '')}")
        if f.get("fix"):
            lines.append(_wrap("Fix: " + f["fix"], "     "))
    if len(shown) < len(findings):
        lines.append(f"  ({len(findings) - len(shown)} more finding{'s' if len(findings) - len(shown) != 1 else ''})")
    return "\n".join(lines)


def format_analysis(traces, top=3):
    """Every trace of an analysis, one block each."""
    if not traces:
        return "stallscope: no trace analysed"
    return "\n\n".join(format_trace(t, top) for t in traces)
