// A command added as one file (this) plus one line in commands.def, by
// tests/extension/scratch_build.py.
#include "command.h"

namespace stallscope::cli {

extern const Command kScratchCommand; // defined below

namespace {

int scratchMain(Args& args, std::ostream& out, std::ostream& err) {
    if (args.more()) return usageError(kScratchCommand, "scratch takes no arguments", err);
    out << "the scratch command ran\n";
    return 0;
}

} // namespace

extern const Command kScratchCommand{
    "scratch", "  scratch                               a command added in a scratch build\n",
    scratchMain};

} // namespace stallscope::cli
