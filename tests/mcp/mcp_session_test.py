#!/usr/bin/env python3
"""A scripted MCP client session against `stallscope-cli mcp` (standard library only).

Runs initialize -> tools/list -> tools/call on real traces and checks every answer against
`stallscope-cli analyze --json` (the findings, their order, texts and evidence; idle by cause;
the kernel table) and, for events_in_range, against the trace read independently with json.
Then the bad requests: malformed JSON, a batch, unknown methods and tools, bad arguments,
paths outside the allowed ones (plain, through "..", through a link), an unreadable file;
each gets a JSON-RPC error or a tool error, and the server keeps answering. Finally every
tool on the largest shared trace, asked for the most it allows, stays under the documented
bound (docs/mcp.md: 24 KiB of result text).

usage: mcp_session_test.py STALLSCOPE_CLI TRACES_DIR SOURCE_DIR
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

MAX_RESULT_BYTES = 24 * 1024
TOOLS = {"list_traces", "open_trace", "list_findings", "explain_finding", "idle_breakdown",
         "top_kernels", "top_operators", "events_in_range", "memory_at_peak", "compare_traces"}


class Server:
    def __init__(self, cli, args):
        self.proc = subprocess.Popen([cli, "mcp"] + args, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.next_id = 0

    def send_line(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("the server closed its output (crashed?): "
                                 + self.proc.stderr.read())
        return json.loads(line)

    def request(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_line(json.dumps(msg))
        reply = self.read()
        assert reply.get("id") == self.next_id, reply
        return reply

    def call(self, tool, **arguments):
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in reply, reply
        text = reply["result"]["content"][0]["text"]
        assert len(text.encode()) <= MAX_RESULT_BYTES, (tool, len(text))
        if reply["result"]["isError"]:
            return {"__error__": text}
        return json.loads(text)

    def error(self, method, params=None):
        reply = self.request(method, params)
        assert "error" in reply, reply
        return reply["error"]

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=60)
        assert rc == 0, ("exit code", rc, self.proc.stderr.read())


def analyze_json(cli, path):
    out = subprocess.run([cli, "analyze", "--json", path], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)[0]


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what)


def handshake(s):
    init = s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "test", "version": "1"}})["result"]
    check(init["protocolVersion"] == "2025-06-18", "initialize echoes a supported version")
    check("tools" in init["capabilities"] and "resources" in init["capabilities"],
          "initialize says tools and resources")
    s.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    check(s.request("ping")["result"] == {}, "a notification gets no answer; ping does")
    tools = s.request("tools/list")["result"]["tools"]
    check({t["name"] for t in tools} == TOOLS, "tools/list names the ten tools")
    check(all(t["inputSchema"]["type"] == "object" and t["annotations"]["readOnlyHint"]
              for t in tools), "each tool has an object schema and is read-only")
    old = Server.request(s, "initialize", {"protocolVersion": "1999-01-01"})["result"]
    check(old["protocolVersion"] == "2025-11-25", "an unknown version gets the newest")


def all_findings(s, path):
    out, offset = [], 0
    while offset is not None:
        page = s.call("list_findings", path=path, offset=offset, limit=3)
        out += page["findings"]
        offset = page["page"]["next_offset"]
    return out


def check_analysis_tools(s, cli, path):
    ref = analyze_json(cli, path)
    summary = s.call("open_trace", path=path)
    check(summary["window"]["start_ns"] == ref["window"]["start_ns"]
          and summary["window"]["end_ns"] == ref["window"]["end_ns"],
          f"open_trace's window equals analyze --json's ({os.path.basename(path)})")
    check(summary["findings"]["count"] == len(ref["findings"]), "open_trace counts the findings")
    findings = all_findings(s, path)
    check([f["id"] for f in findings] == [f["id"] for f in ref["findings"]],
          f"list_findings pages give every finding in analyze's order ({len(findings)})")
    for i, f in enumerate(ref["findings"]):
        got = s.call("explain_finding", path=path, finding=f["id"], evidence_limit=200)
        assert got["explanation"] == f["explanation"] or got["explanation"].endswith("…"), f["id"]
        assert got["fix"] == f["fix"] or got["fix"].endswith("…"), f["id"]
        n = min(len(f["evidence"]), got["evidence_page"]["page"]["returned"])
        assert got["evidence"][:n] == f["evidence"][:n], f["id"]
        by_index = s.call("explain_finding", path=path, finding=i, evidence_limit=1)
        assert by_index["id"] == f["id"]
    check(True, "explain_finding gives each finding's explanation, fix and evidence")
    idle = s.call("idle_breakdown", path=path)
    for d in idle["devices"]:
        mine = {c["cause"]: c["ns"] for c in d["causes"]}
        theirs = {k: v for k, v in ref["idle_causes"][d["device"]].items() if v}
        assert mine == theirs, (d["device"], mine, theirs)
    check(len(idle["devices"]) == len(ref["idle_causes"]), "idle_breakdown equals idle_causes")
    kernels = s.call("top_kernels", path=path, limit=5)
    ref_k = sorted(ref["stats"]["kernels"], key=lambda k: -k["total_ns"])[:5]
    check([k["total_ns"] for k in kernels["rows"]] == [k["total_ns"] for k in ref_k],
          "top_kernels' rows are the kernel table by total time")


def independent_events(path, start_ns, end_ns):
    """The trace's complete (X) events overlapping the range, read with json alone."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    n = 0
    for e in events:
        if e.get("ph") != "X":
            continue
        s = int(round(float(e["ts"]) * 1000))
        d = int(round(float(e.get("dur", 0)) * 1000))
        if s <= end_ns and s + d >= start_ns:
            n += 1
    return n


def check_events(s, path):
    f = s.call("list_findings", path=path, limit=1)["findings"][0]
    ev = f["evidence"][0]
    lo, hi = ev["start_ns"] - 200_000, ev["start_ns"] + ev["dur_ns"] + 200_000
    got = s.call("events_in_range", path=path, start_ns=lo, end_ns=hi, limit=200)
    check(got["matching"] == independent_events(path, lo, hi),
          f"events_in_range counts the events json reads in the range ({got['matching']})")
    check(any(e["name"] == ev["name"] and e["start_ns"] == ev["start_ns"] for e in got["events"]),
          "the finding's evidence event is among them")
    starts = [e["start_ns"] for e in got["events"]]
    check(starts == sorted(starts), "events come by start")
    longest = s.call("events_in_range", path=path, start_ns=lo, end_ns=hi, order="longest",
                     side="gpu", limit=5)
    durs = [e["dur_ns"] for e in longest["events"]]
    check(durs == sorted(durs, reverse=True) and all(e["kind"] in ("kernel", "gpu_memcpy",
          "gpu_memset", "gpu_user_annotation", "cuda_sync") or e["row"].startswith("GPU")
          for e in longest["events"]), "order=longest, side=gpu")


def check_bad_requests(s, allowed_dir, outside):
    s.send_line("{not json")
    e = s.read()
    check(e["id"] is None and e["error"]["code"] == -32700, "malformed JSON: parse error")
    s.send_line("[1, 2]")
    check(s.read()["error"]["code"] == -32600, "a batch: invalid request")
    s.send_line('{"jsonrpc": "2.0", "id": 99}')
    check(s.read()["error"]["code"] == -32600, "no method: invalid request")
    s.send_line('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}')
    check(s.read()["error"]["code"] == -32600, "an object id: invalid request")
    check(s.error("no/such/method")["code"] == -32601, "unknown method: method not found")
    check(s.error("tools/call", {"name": "rm_rf", "arguments": {}})["code"] == -32602,
          "unknown tool: invalid params")
    check(s.error("tools/call")["code"] == -32602, "tools/call without params: invalid params")
    check(s.error("tools/call", {"name": "open_trace"})["code"] == -32602,
          "missing required argument: invalid params")
    check(s.error("tools/call", {"name": "open_trace", "arguments": {"path": 5}})["code"]
          == -32602, "a number for a path: invalid params")
    check(s.error("tools/call", {"name": "list_findings",
                                 "arguments": {"path": outside, "limit": 0}})["code"] == -32602,
          "limit 0: invalid params")
    check(s.error("tools/call", {"name": "open_trace",
                                 "arguments": {"path": outside, "mode": "w"}})["code"] == -32602,
          "an unknown argument: invalid params")
    for bad in ["/etc/passwd", os.path.join(allowed_dir, "..", "..", "etc", "passwd"),
                os.path.join(allowed_dir, "link-out")]:
        err = s.error("tools/call", {"name": "open_trace", "arguments": {"path": bad}})
        check(err["code"] == -32602 and "not allowed" in err["message"],
              f"a path outside the allowed ones is refused: {bad}")
    err = s.error("resources/read", {"uri": "stallscope://summary/etc/passwd"})
    check(err["code"] == -32602, "resources/read outside the allowed paths is refused")
    check(s.error("resources/read", {"uri": "file:///x"})["code"] == -32002,
          "an unknown resource: resource not found")
    broken = s.call("open_trace", path=os.path.join(allowed_dir, "broken.json"))
    check("__error__" in broken, "an unreadable trace is a tool error: " + broken["__error__"][:80])
    check(s.request("ping")["result"] == {}, "the server still answers")


def check_bound(s, big):
    s.call("open_trace", path=big)
    calls = [("list_findings", {"limit": 50}), ("idle_breakdown", {}),
             ("top_kernels", {"limit": 100}), ("top_kernels", {"limit": 100, "by_operator": True}),
             ("top_operators", {"limit": 100}), ("memory_at_peak", {}),
             ("events_in_range", {"start_ns": -2**62, "end_ns": 2**62, "limit": 200})]
    n = s.call("open_trace", path=big)["findings"]["count"]
    calls += [("explain_finding", {"finding": i, "evidence_limit": 200}) for i in range(n)]
    largest = 0
    for tool, args in calls:
        reply = s.request("tools/call", {"name": tool, "arguments": dict(path=big, **args)})
        text = reply["result"]["content"][0]["text"]
        assert not reply["result"]["isError"], (tool, text)
        largest = max(largest, len(text.encode()))
        assert len(text.encode()) <= MAX_RESULT_BYTES, (tool, len(text))
    check(True, f"every tool on {os.path.basename(big)} stays under {MAX_RESULT_BYTES} bytes "
                f"(largest {largest})")
    page = s.call("events_in_range", path=big, start_ns=-2**62, end_ns=2**62, limit=200)
    check(page["page"]["next_offset"] is not None and page["matching"] > 100_000,
          f"the whole trace's {page['matching']} events come in pages")


def main():
    cli, traces, source = sys.argv[1:4]
    if not os.path.isdir(traces):
        print("skipped: no shared traces at", traces)
        sys.exit(77)
    small = os.path.join(source, "tests/data/traces/stream_wait_graph.json")
    resnet = os.path.join(traces, "hta/trace_diff/control/control.json.gz")
    big = os.path.join(traces, "hta/df_index_resolver/df_index_resolver.json.gz")
    memory = os.path.join(traces, "memory/kineto")
    with tempfile.TemporaryDirectory() as tmp:
        allowed = os.path.join(tmp, "allowed", "runs")
        os.makedirs(allowed)
        with open(os.path.join(allowed, "broken.json"), "w") as f:
            f.write('{"traceEvents": [ {"ph": "X", "name": ')
        os.symlink("/etc/passwd", os.path.join(allowed, "link-out"))
        s = Server(cli, ["--allow", allowed, "--allow", os.path.join(traces, "hta"),
                         small, memory, os.path.join(traces, "param-dlrm-8rank")])
        handshake(s)
        listed = s.call("list_traces", limit=200)
        check(any(p["path"].endswith("df_index_resolver.json.gz") for p in listed["paths"]),
              "list_traces lists the files under an allowed folder")
        check_analysis_tools(s, cli, small)
        check_analysis_tools(s, cli, resnet)
        check_events(s, small)
        check_events(s, resnet)
        dlrm = os.path.join(traces, "param-dlrm-8rank")
        ranks = s.call("open_trace", path=dlrm)
        check(ranks["traces"] == 8 and ranks["ranks"] == list(range(8))
              and "ranks_compared" in ranks, "open_trace on a folder of 8 ranks compares them")
        five = s.call("list_findings", path=dlrm, rank=5, limit=50)["findings"]
        check(five and all(f["device"] in (5, -1) for f in five), "rank 5's findings are its own")
        check(s.error("tools/call", {"name": "list_findings", "arguments": {"path": dlrm,
                                                                           "rank": 55}})
              ["code"] == -32602, "a rank the folder does not hold: invalid params")
        kineto = os.path.join(memory, os.listdir(memory)[0])
        mem = s.call("memory_at_peak", path=kineto)
        check(mem["memory"] is not None and mem["memory"]["devices"], "memory_at_peak on a "
              "profile_memory trace")
        check(s.call("memory_at_peak", path=small)["memory"] is None,
              "memory_at_peak without memory events says so")
        diff = s.call("compare_traces", before=resnet,
                      after=os.path.join(traces, "hta/trace_diff/test/test.json.gz"))
        check("step_time" in diff and "findings" in diff, "compare_traces")
        res = s.request("resources/list")["result"]["resources"]
        check(any(r["uri"].endswith("stream_wait_graph.json") for r in res), "resources/list")
        read = s.request("resources/read", {"uri": res[0]["uri"]})["result"]["contents"][0]
        check("window" in json.loads(read["text"]), "resources/read gives the summary")
        check_bad_requests(s, allowed, resnet)
        check_bound(s, big)
        s.close()
    print("all MCP session checks passed")


if __name__ == "__main__":
    main()
