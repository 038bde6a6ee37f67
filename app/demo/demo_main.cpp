// stallscope-demo: the LibTorch demo workloads as a program of their own, so that only it
// loads LibTorch (about 0.4 s of start-up and 300 MB of libraries that the CLI and the GUI
// should not pay for).
//
//   stallscope-demo NAME [--steps N] [-o OUT.json[.gz]]
//   stallscope-demo list
//
// Under `stallscope-cli record` (STALLSCOPE_CAPTURE_SOCKET set) the demo joins that
// recording, together with the CUPTI source in the same process when there is a GPU; this is
// what `stallscope-cli record --demo NAME` and File > Record... run. Alone it writes OUT.
#include "stallscope/capture/protocol.h"
#include "stallscope/torch/demos.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

int usage(const std::string& msg) {
    std::cerr << "stallscope-demo: " << msg << "\n"
              << "usage: stallscope-demo NAME [--steps N] [-o OUT.json[.gz]]   (stallscope-demo list: the demos)\n";
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    using namespace stallscope;
    if (argc < 2) return usage("which demo?");
    const std::string name = argv[1];
    if (name == "list" || name == "--list" || name == "help" || name == "--help") {
        std::cout << torchrec::demoListText();
        return 0;
    }
    torchrec::DemoOptions options;
    std::string output;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--steps" && v) {
            char* end = nullptr;
            const long n = std::strtol(v, &end, 10);
            if (*end || n < 1 || n > 100000) return usage("--steps needs a number of steps (1-100000)");
            options.steps = static_cast<int>(n), ++i;
        } else if ((a == "-o" || a == "--output") && v) {
            output = v, ++i;
        } else {
            return usage("unknown argument " + a);
        }
    }
    const char* socket = std::getenv(capture::kSocketEnv);
    if (output.empty() && !(socket && *socket)) return usage("-o OUT.json is needed outside stallscope-cli record");
    return torchrec::runDemoRecording(name, output, std::cout, std::cerr, options);
}
