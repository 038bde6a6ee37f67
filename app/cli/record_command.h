#pragma once
// stallscope-cli record: run a program with live capture, write a Kineto-compatible trace,
// analyse it and print the top findings.
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
};

/// Parses the arguments after "record". False with `error` on a usage error.
bool parseRecordArgs(int argc, char** argv, int first, RecordCommandOptions& out, std::string& error);

/// Records, writes, analyses. Returns the target's exit code when the recording was
/// written (0 without a target), 1 when it could not be started or written.
int runRecord(RecordCommandOptions options, std::ostream& out, std::ostream& err);

} // namespace stallscope::cli
