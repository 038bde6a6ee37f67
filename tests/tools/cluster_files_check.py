#!/usr/bin/env python3
"""Checks the cluster files of packaging/cluster/ as their users run them.

* The Slurm array script: shellcheck (bash -n where shellcheck is absent), then run once per
  rank of the 8 DLRM traces with SLURM_ARRAY_TASK_ID set, as Slurm would.
* The Kubernetes Indexed Job: parsed as YAML (PyYAML) and checked for the fields an Indexed
  Job needs; its container script checked with shellcheck -s sh (sh -n without it) and run
  once per index with JOB_COMPLETION_INDEX set, as the Job controller would.
* `stallscope-cli merge --json` of either set of summaries must equal `analyze --ranks --json`
  of the folder in one process.

    cluster_files_check.py SOURCE_DIR CLI DLRM_FOLDER
Exit 77 (skipped) when the traces or PyYAML are absent.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(args, env=None, **kw):
    p = subprocess.run(args, capture_output=True, text=True, env=env, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(args)} exited {p.returncode}: {(p.stdout + p.stderr).strip()[-2000:]}")
    return p.stdout


def lint(path_or_text, shell, is_text=False):
    tool = shutil.which("shellcheck")
    if is_text:
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
            f.write(path_or_text)
            path = f.name
    else:
        path = path_or_text
    if tool:
        run([tool, "-s", shell, path])
        how = "shellcheck"
    else:
        run([shell, "-n", path])
        how = f"{shell} -n"
    if is_text:
        os.unlink(path)
    return how


def main():
    src, cli, dlrm = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    if not os.path.isdir(dlrm):
        print("SKIP: no", dlrm)
        sys.exit(77)
    try:
        import yaml
    except ImportError:
        print("SKIP: PyYAML (python3-yaml) is absent")
        sys.exit(77)
    cluster = os.path.join(src, "packaging", "cluster")
    sbatch = os.path.join(cluster, "stallscope-ranks.sbatch")
    job = os.path.join(cluster, "stallscope-ranks-job.yaml")
    n = len([f for f in os.listdir(dlrm) if f.endswith(".pt.trace.json")])
    whole = run([cli, "analyze", "--ranks", "--json", dlrm])

    # Slurm.
    how = lint(sbatch, "bash")
    text = open(sbatch).read()
    for directive in ("#SBATCH --job-name", "#SBATCH --cpus-per-task", "#SBATCH --mem", "#SBATCH --time"):
        if directive not in text:
            fail(f"{sbatch}: no {directive}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "summaries")
        env = dict(os.environ, STALLSCOPE_CLI=cli)
        for i in range(n):
            run(["bash", sbatch, dlrm, out], env=dict(env, SLURM_ARRAY_TASK_ID=str(i)))
        # Outside an array job it says how to run it.
        p = subprocess.run(["bash", sbatch, dlrm, out], capture_output=True, text=True, env=env)
        if p.returncode == 0 or "--array=0-" + str(n - 1) not in p.stderr:
            fail(f"{sbatch} without SLURM_ARRAY_TASK_ID: {p.returncode} {p.stderr.strip()}")
        merged = run([cli, "merge", "--json", out])
        if merged != whole:
            fail("merge of the Slurm tasks' summaries differs from analyze --ranks")
    print(f"ok: Slurm array script ({how}; {n} tasks run; merge equals analyze --ranks)")

    # Kubernetes.
    docs = list(yaml.safe_load_all(open(job)))
    if len(docs) != 1:
        fail(f"{job}: {len(docs)} documents")
    d = docs[0]
    expect = [("apiVersion", "batch/v1"), ("kind", "Job")]
    for k, v in expect:
        if d.get(k) != v:
            fail(f"{job}: {k} is {d.get(k)!r}, not {v!r}")
    spec = d["spec"]
    if spec.get("completionMode") != "Indexed":
        fail(f"{job}: completionMode is not Indexed")
    if not isinstance(spec.get("completions"), int) or spec["completions"] < 1:
        fail(f"{job}: completions")
    pod = spec["template"]["spec"]
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        fail(f"{job}: a Job's pods need restartPolicy Never or OnFailure")
    (c,) = pod["containers"]
    for k in ("name", "image", "command", "args"):
        if k not in c:
            fail(f"{job}: the container has no {k}")
    mounts = {m["name"] for m in c.get("volumeMounts", [])}
    vols = {v["name"] for v in pod.get("volumes", [])}
    if not mounts <= vols:
        fail(f"{job}: volumeMounts {mounts - vols} have no volume")
    if c["command"][:2] != ["/bin/sh", "-c"]:
        fail(f"{job}: the command is not /bin/sh -c")
    script = c["args"][0]
    how = lint(script, "sh", is_text=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "summaries")
        env = dict(os.environ, STALLSCOPE_CLI=cli, PROFILES=dlrm, SUMMARIES=out)
        for e in c.get("env", []):
            env.setdefault(e["name"], e["value"])
        env["PROFILES"] = dlrm
        for i in range(n):
            run(["/bin/sh", "-c", script], env=dict(env, JOB_COMPLETION_INDEX=str(i)))
        p = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True,
                           env=dict(env, JOB_COMPLETION_INDEX=str(n)))
        if p.returncode == 0 or "only" not in p.stderr:
            fail(f"{job}: an index past the files: {p.returncode} {p.stderr.strip()}")
        merged = run([cli, "merge", "--json", out])
        if merged != whole:
            fail("merge of the Job's summaries differs from analyze --ranks")
    print(f"ok: Kubernetes Indexed Job (YAML fields; script {how}; {n} indexes run; merge equals analyze --ranks)")


if __name__ == "__main__":
    main()
