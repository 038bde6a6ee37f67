// stallscope-cli mcp: the Model Context Protocol server (mcp_server.h) on stdin/stdout, over
// the paths named on the command line and the --allow folders.
#include "command.h"
#include "mcp_server.h"

#include <filesystem>
#include <iostream>

namespace stallscope::cli {

extern const Command kMcpCommand; // defined at the end of this file

namespace {

int mcpMain(Args& args, std::ostream& out, std::ostream& err) {
    const Command& me = kMcpCommand;
    mcp::AllowedPaths paths;
    workspace::LoadOptions lo;
    lo.detailRanks = workspace::kDetailRanks;
    while (args.more()) {
        const std::string a = args.take();
        std::string v;
        if (a == "--allow") {
            if (!args.value(v)) return usageError(me, "--allow needs a folder", err);
            std::error_code ec;
            if (!std::filesystem::is_directory(v, ec))
                return usageError(me, "--allow " + v + ": not a folder", err);
            paths.addFolder(v);
        } else if (a == "--threads") {
            if (!args.unsignedValue(lo.threads, kMaxThreads))
                return usageError(me, "--threads needs a number from 0 (one per core) to 1024",
                                  err);
        } else if (a == "-")
            return usageError(me, "standard input carries the protocol: name trace files", err);
        else if (a.size() > 1 && a[0] == '-')
            return usageError(me, "unknown option " + a, err);
        else {
            std::error_code ec;
            if (!std::filesystem::exists(a, ec))
                return usageError(me, a + ": no such file or folder", err);
            paths.addNamed(a);
        }
    }
    if (paths.empty())
        return usageError(me, "name the traces (or folders) it may read, or --allow FOLDER", err);
    setQuiet(true);
    mcp::Session session(std::move(paths), lo);
    mcp::Server server(session);
    std::string line;
    while (std::getline(std::cin, line)) {
        const std::string reply = server.handle(line);
        if (!reply.empty()) out << reply << "\n" << std::flush;
    }
    return 0;
}

} // namespace

extern const Command kMcpCommand{
    "mcp",
    "  mcp [--allow FOLDER]... [--threads N] [PATH...]\n"
    "                                        a Model Context Protocol server on stdin/stdout\n"
    "                                        for coding agents: read-only tools over the\n"
    "                                        traces named and those under each --allow FOLDER\n"
    "                                        (docs/mcp.md)\n",
    mcpMain};

} // namespace stallscope::cli
