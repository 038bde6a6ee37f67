#pragma once
// The MCP server's tools, their shared helpers (mcp_tools.cpp: the table and the tools read
// from the analysis JSON; mcp_trace_tools.cpp: those read from the trace itself — events in a
// range, memory at the peak, two traces compared, the readable paths).
#include "mcp_server.h"

#include <string>
#include <string_view>
#include <vector>

namespace stallscope::cli::mcp {

/// A tool call's arguments, checked against the tool's parameters: a wrong type or an
/// unknown name throws RpcError(kInvalidParams).
class Call {
public:
    Call(simdjson::dom::object args, std::string_view tool) : m_args(args), m_tool(tool) {}
    [[nodiscard]] std::string string(std::string_view key, bool required = false) const;
    [[nodiscard]] int64_t integer(std::string_view key, int64_t fallback, int64_t min,
                                  int64_t max) const;
    [[nodiscard]] bool has(std::string_view key) const;
    [[nodiscard]] bool boolean(std::string_view key, bool fallback) const;
    [[nodiscard]] simdjson::dom::element element(std::string_view key) const;
    [[noreturn]] void invalid(const std::string& message) const;

private:
    simdjson::dom::object m_args;
    std::string_view m_tool;
};

/// How much a result may hold: each try after one too large halves the rows and the string
/// length (callTool), so every result ends under kMaxResultBytes.
struct Caps {
    unsigned shrink = 0;
    [[nodiscard]] size_t rows(size_t asked) const { return std::max<size_t>(1, asked >> shrink); }
    [[nodiscard]] size_t text() const { return std::max<size_t>(80, size_t(1200) >> shrink); }
    [[nodiscard]] size_t array() const { return std::max<size_t>(1, size_t(12) >> shrink); }
};

/// `e` copied into `w` with every array cut to caps.array() items (an object then says
/// "KEY_omitted": N beside it) and every string to caps.text() characters.
void copyBounded(base::JsonWriter& w, simdjson::dom::element e, const Caps& caps);
/// A JSON document read back and copied bounded (copyBounded), as text.
std::string dumpParsedBounded(const std::string& json, const Caps& caps);
/// A page's bookkeeping: "page": {"offset", "returned", "total", "next_offset" (null at the
/// end)}.
void writePage(base::JsonWriter& w, size_t offset, size_t returned, size_t total);
/// The trace of an opened workspace that a call's "rank" names (else its representative).
size_t selectTrace(const Opened& o, const Call& c);

/// The tools read from the trace and the workspace (mcp_trace_tools.cpp).
std::string eventsInRange(Session& s, const Call& c, const Caps& caps);
std::string memoryAtPeak(Session& s, const Call& c, const Caps& caps);
std::string compareTraces(Session& s, const Call& c, const Caps& caps);
std::string listTraces(Session& s, const Call& c, const Caps& caps);

} // namespace stallscope::cli::mcp
