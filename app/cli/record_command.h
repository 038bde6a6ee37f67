#pragma once
// stallscope-cli record: run a program with live capture, write a Kineto-compatible trace,
// analyse it and print the top findings.
#include "stallscope/capture/kineto_daemon.h"
#include "stallscope/capture/recorder.h"

#include <ostream>
#include <string>

namespace stallscope::cli {

struct RecordCommandOptions {
    capture::RecordOptions record;  // command, output (default: stallscope-<time>.pt.trace.json.gz)
    bool fakeSource = false;        // development: a scripted training loop joins as a source
    int fakeSteps = 20;
    std::string demo;               // record --demo NAME: a built-in LibTorch workload ("list": the demos)
    int demoSteps = 0;              // --steps N (0: the demo's default)
    // record --attach: ask a running PyTorch job (KINETO_USE_DAEMON=1) for Kineto's own trace.
    bool attach = false;
    bool attachList = false; // --list: show the polling processes and stop
    bool outputGiven = false;
    bool waitGiven = false; // --wait (--list: how long to listen)
    capture::kineto::AttachOptions attachOptions;
    capture::kineto::DaemonOptions daemonOptions; // --allow-user: other users served
};

/// record --attach (attach_command.cpp): serves Kineto's daemon protocol, requests the trace,
/// writes it to the output (a file, or a folder when several processes were traced) and
/// analyses it. 0 when every requested trace came, 1 otherwise.
int runAttach(const RecordCommandOptions& options, std::ostream& out, std::ostream& err);

/// Parses the arguments after "record". False with `error` on a usage error.
bool parseRecordArgs(int argc, char** argv, int first, RecordCommandOptions& out, std::string& error);

/// Records, writes, analyses. Returns the target's exit code when the recording was
/// written (0 without a target), 1 when it could not be started or written.
int runRecord(RecordCommandOptions options, std::ostream& out, std::ostream& err);

} // namespace stallscope::cli
