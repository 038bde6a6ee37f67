// Fuzz target: the MCP server's protocol and tools (app/cli/mcp_server.h), fed one message per
// line as a client would send them, on a session allowed one small trace (written at start;
// "@TRACE@" in an input stands for its path, so seeds can call tools on it).
// Promises:
//  * every answer is one line of JSON: {"jsonrpc": "2.0", "id": ..., "result" | "error"};
//  * a tool's result text stays under kMaxResultBytes;
//  * nothing is written (the session is read-only): the scratch folder holds the trace alone.
#include "fuzz_support.h"

#include "mcp_server.h"

#include <filesystem>

using namespace stallscope;
namespace mcp = stallscope::cli::mcp;

namespace {
constexpr const char* kTarget = "mcp";

constexpr std::string_view kTrace = R"J({"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 30},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"correlation": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 40, "dur": 20, "args": {"correlation": 7, "device": 0, "stream": 7}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 70, "dur": 10, "args": {"device": 0, "stream": 7, "bytes": 4096}}
], "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]})J";

struct Fixture {
    std::filesystem::path dir = fuzz::scratchDir() / "mcp";
    std::filesystem::path trace = dir / "t.json";
    std::unique_ptr<mcp::Session> session;
    Fixture() {
        std::filesystem::create_directories(dir);
        fuzz::writeFile(trace, kTrace);
        mcp::AllowedPaths paths;
        paths.addFolder(dir.string());
        session = std::make_unique<mcp::Session>(std::move(paths), workspace::LoadOptions{});
    }
};

void checkAnswer(const std::string& reply) {
    STALLSCOPE_FUZZ_CHECK(reply.find('\n') == std::string::npos, "an answer spans lines");
    simdjson::dom::parser p;
    simdjson::dom::element e;
    STALLSCOPE_FUZZ_CHECK(!p.parse(reply).get(e), "an answer is not JSON: " + reply.substr(0, 200));
    std::string_view v;
    STALLSCOPE_FUZZ_CHECK(!e["jsonrpc"].get(v) && v == "2.0", "no jsonrpc 2.0 in " + reply);
    STALLSCOPE_FUZZ_CHECK(!e["id"].error(), "an answer without an id");
    const bool result = !e["result"].error(), error = !e["error"].error();
    STALLSCOPE_FUZZ_CHECK(result != error, "an answer needs a result or an error");
    std::string_view text;
    if (result && !e["result"]["content"].at(0)["text"].get(text))
        STALLSCOPE_FUZZ_CHECK(text.size() <= mcp::kMaxResultBytes, "a result over the bound");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static Fixture f;
    std::string input(reinterpret_cast<const char*>(data), size);
    for (size_t at; (at = input.find("@TRACE@")) != std::string::npos;)
        input.replace(at, 7, f.trace.string());
    mcp::Server server(*f.session);
    size_t begin = 0;
    while (begin <= input.size()) {
        size_t end = input.find('\n', begin);
        if (end == std::string::npos) end = input.size();
        const std::string reply = server.handle(std::string_view(input).substr(begin, end - begin));
        if (!reply.empty()) checkAnswer(reply);
        begin = end + 1;
    }
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(f.dir)) ++files;
    STALLSCOPE_FUZZ_CHECK(files == 1, "a file was written beside the trace");
    return 0;
}
