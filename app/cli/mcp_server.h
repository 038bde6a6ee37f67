#pragma once
// `stallscope-cli mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message
// per line), written from the protocol's specification (modelcontextprotocol.io/specification,
// revisions 2024-11-05 to 2025-11-25): initialize, ping, tools/list, tools/call,
// resources/list, resources/read, resources/templates/list. Coding agents ask it why a GPU
// idles; it answers from the same analysis as `analyze --json` (docs/analysis-json.md's
// fields), in bounded pages. Read-only: it opens the traces the user named on the command line
// or that lie under a folder the user allowed, and writes nothing. docs/mcp.md.
#include "stallscope/base/json_writer.h"
#include "stallscope/workspace/workspace.h"

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::cli::mcp {

/// The most bytes of a tool's result text (the JSON an agent reads): pages shrink until they
/// fit. About 8,000 tokens. docs/mcp.md.
inline constexpr size_t kMaxResultBytes = 24 * 1024;
/// The longest request line read; a longer one is refused (Invalid Request).
inline constexpr size_t kMaxMessageBytes = 1 << 20;
/// Workspaces kept open at once; the least recently used is closed to make room.
inline constexpr size_t kMaxOpen = 4;

/// JSON-RPC 2.0's error codes, and MCP's for an unknown resource.
enum RpcCode : int {
    kParseError = -32700,
    kInvalidRequest = -32600,
    kMethodNotFound = -32601,
    kInvalidParams = -32602,
    kInternalError = -32603,
    kResourceNotFound = -32002,
};

/// A request that gets a JSON-RPC error (thrown by the tools, answered by the server).
struct RpcError : std::runtime_error {
    RpcError(int c, const std::string& message) : std::runtime_error(message), code(c) {}
    int code;
};

/// The paths a session may read: the files and folders named on the command line and the
/// --allow folders, each canonical (links resolved, so a link out of an allowed folder is
/// refused).
class AllowedPaths {
public:
    void addNamed(const std::string& path);  // a trace or folder the user named
    void addFolder(const std::string& path); // --allow FOLDER: everything under it
    /// The canonical path when `path` (relative to the working folder) is allowed; throws
    /// RpcError(kInvalidParams) naming the allowed roots when not.
    [[nodiscard]] std::string check(const std::string& path) const;
    [[nodiscard]] const std::vector<std::string>& named() const { return m_named; }
    [[nodiscard]] const std::vector<std::string>& folders() const { return m_folders; }
    [[nodiscard]] bool empty() const { return m_named.empty() && m_folders.empty(); }

private:
    std::vector<std::string> m_named, m_folders;
};

/// One opened path: its workspace and each trace's analysis as `analyze --json` writes it
/// (every table row and piece of evidence; pages are cut from it).
struct Opened {
    std::string path; // canonical
    workspace::Workspace ws;
    std::vector<std::unique_ptr<simdjson::dom::parser>> parsers; // per trace
    std::vector<simdjson::dom::element> analysis;                // per trace
    uint64_t lastUse = 0;
};

/// The traces a session has opened, at most kMaxOpen.
class Session {
public:
    Session(AllowedPaths paths, workspace::LoadOptions options)
        : m_paths(std::move(paths)), m_options(std::move(options)) {}
    const AllowedPaths& paths() const { return m_paths; }
    const workspace::LoadOptions& options() const { return m_options; }
    /// The path opened (once; later calls reuse it). Throws RpcError(kInvalidParams) for a
    /// path not allowed; a file that cannot be read throws std::runtime_error (a tool error).
    Opened& open(const std::string& path);
    [[nodiscard]] std::vector<std::string> openedPaths() const;

private:
    AllowedPaths m_paths;
    workspace::LoadOptions m_options;
    std::vector<std::unique_ptr<Opened>> m_open;
    uint64_t m_clock = 0;
};

/// A tool's answer: its JSON text and whether it is a tool error (isError).
struct ToolResult {
    std::string text;
    bool isError = false;
};

/// The tools: names, descriptions and input schemas for tools/list, and calls.
void writeToolList(base::JsonWriter& w);
/// Runs tool `name` on `arguments` (an object); throws RpcError for an unknown tool or bad
/// arguments. The result's text is at most kMaxResultBytes.
ToolResult callTool(Session& s, std::string_view name, simdjson::dom::object arguments);
/// The summary open_trace gives (resources/read's text).
std::string traceSummary(Session& s, const std::string& path);

/// The protocol: one request line in, one response line out (empty for a notification).
class Server {
public:
    explicit Server(Session& session) : m_session(session) {}
    std::string handle(std::string_view line);

private:
    std::string dispatch(std::string_view method, simdjson::dom::element params,
                         const std::string& id);
    Session& m_session;
    simdjson::dom::parser m_parser;
    bool m_initialized = false;
};

} // namespace stallscope::cli::mcp
