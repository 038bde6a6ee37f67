// The Model Context Protocol server (mcp_server.h): the allowed paths, the opened traces and
// the JSON-RPC 2.0 protocol, one message per line. The tools are in mcp_tools.cpp, the
// command that runs it on stdin/stdout in mcp_command.cpp.
#include "mcp_server.h"

#include "stallscope/analysis/analysis_json.h"
#include "stallscope/base/json_writer.h"

#include <algorithm>
#include <filesystem>

namespace stallscope::cli::mcp {

namespace fs = std::filesystem;
namespace dom = simdjson::dom;
using base::JsonWriter;

namespace {

std::string canonical(const std::string& path) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? std::string() : p.lexically_normal().string();
}

/// `child` is `root` or lies under it (whole components: /a/bc is not under /a/b).
bool under(const std::string& child, const std::string& root) {
    if (child == root) return true;
    const std::string prefix = root.ends_with('/') ? root : root + "/";
    return child.starts_with(prefix);
}

// The protocol revisions this server speaks, newest first (the specification's dates).
constexpr std::string_view kVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

} // namespace

void AllowedPaths::addNamed(const std::string& path) {
    const std::string c = canonical(path);
    if (!c.empty()) m_named.push_back(c);
}

void AllowedPaths::addFolder(const std::string& path) {
    const std::string c = canonical(path);
    if (!c.empty()) m_folders.push_back(c);
}

std::string AllowedPaths::check(const std::string& path) const {
    const std::string c = path.empty() ? std::string() : canonical(path);
    if (!c.empty()) {
        for (const std::string& n : m_named) {
            std::error_code ec;
            if (c == n || (fs::is_directory(n, ec) && under(c, n))) return c;
        }
        for (const std::string& f : m_folders)
            if (under(c, f)) return c;
    }
    std::string roots;
    for (const std::string& n : m_named) roots += (roots.empty() ? "" : ", ") + n;
    for (const std::string& f : m_folders) roots += (roots.empty() ? "" : ", ") + f + "/";
    throw RpcError(
        kInvalidParams,
        "path not allowed: " + path + " (this server reads only " +
            (roots.empty() ? std::string("the paths given on its command line") : roots) +
            "; start it with --allow FOLDER to allow more)");
}

Opened& Session::open(const std::string& path) {
    const std::string c = m_paths.check(path);
    for (auto& o : m_open)
        if (o->path == c) {
            o->lastUse = ++m_clock;
            return *o;
        }
    auto r = workspace::open(c, m_options);
    if (!r) throw std::runtime_error(path + ": " + r.error().message);
    auto o = std::make_unique<Opened>();
    o->path = c;
    o->ws = std::move(r.value());
    o->lastUse = ++m_clock;
    analysis::JsonOptions jo;
    jo.maxTableRows = 1'000'000;
    jo.maxEvidence = 100'000;
    jo.utilizationSeries = false;
    for (const workspace::AnalysedTrace& at : o->ws.traces) {
        JsonWriter w(false);
        analysis::writeAnalysisJson(w, *at.entry.trace, *at.analysis, at.entry.path, at.entry.rank,
                                    jo);
        o->parsers.push_back(std::make_unique<dom::parser>());
        dom::element e;
        if (o->parsers.back()->parse(w.str()).get(e))
            throw std::runtime_error(path + ": the analysis could not be read back");
        o->analysis.push_back(e);
    }
    if (m_open.size() >= kMaxOpen) {
        auto oldest = std::min_element(m_open.begin(), m_open.end(),
                                       [](auto& a, auto& b) { return a->lastUse < b->lastUse; });
        m_open.erase(oldest);
    }
    m_open.push_back(std::move(o));
    return *m_open.back();
}

std::vector<std::string> Session::openedPaths() const {
    std::vector<std::string> out;
    for (const auto& o : m_open) out.push_back(o->path);
    return out;
}

namespace {

std::string response(const std::string& id, std::string_view resultJson) {
    return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":" + std::string(resultJson) + "}";
}

std::string errorResponse(const std::string& id, int code, std::string_view message) {
    JsonWriter w(false);
    w.beginObject();
    w.key("jsonrpc").value("2.0");
    w.key("id").raw(id);
    w.key("error").beginObject();
    w.key("code").value(code);
    w.key("message").value(message);
    w.endObject();
    w.endObject();
    return w.str();
}

/// `{}`: the params of a request that has none (a default dom::element refers to no document).
dom::element emptyObject() {
    static dom::parser parser;
    static const dom::element empty = parser.parse("{}", 2).value();
    return empty;
}

std::string_view stringOr(dom::element e, std::string_view key, std::string_view fallback) {
    std::string_view v;
    if (e.is_object() && !e[key].get(v)) return v;
    return fallback;
}

std::string initializeResult(dom::element params) {
    const std::string_view asked = stringOr(params, "protocolVersion", kVersions[0]);
    std::string_view version = kVersions[0];
    for (std::string_view v : kVersions)
        if (v == asked) version = v;
    JsonWriter w(false);
    w.beginObject();
    w.key("protocolVersion").value(version);
    w.key("capabilities").beginObject();
    w.key("tools").beginObject().key("listChanged").value(false).endObject();
    w.key("resources").beginObject().key("listChanged").value(false).endObject();
    w.endObject();
    w.key("serverInfo").beginObject();
    w.key("name").value("stallscope");
    w.key("title").value("Stallscope");
    w.key("version").value(STALLSCOPE_VERSION);
    w.endObject();
    w.key("instructions")
        .value("Stallscope explains why a GPU sits idle in a PyTorch profiler trace. Start "
               "with open_trace (a summary: window, devices, idle by cause, the top "
               "findings), then list_findings and explain_finding; idle_breakdown, "
               "top_kernels, top_operators, events_in_range, memory_at_peak and "
               "compare_traces go deeper. Times are nanoseconds on the trace's clock. Every "
               "result is at most 24 KiB: page with offset/limit. list_traces says which "
               "paths may be read.");
    w.endObject();
    return w.str();
}

std::string resourceUri(const std::string& path) {
    return "stallscope://summary" + path;
}

std::string resourceList(const Session& s) {
    std::vector<std::string> paths = s.paths().named();
    for (const std::string& p : s.openedPaths())
        if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
    JsonWriter w(false);
    w.beginObject().key("resources").beginArray();
    for (const std::string& p : paths) {
        w.beginObject();
        w.key("uri").value(resourceUri(p));
        w.key("name").value(fs::path(p).filename().string());
        w.key("description").value("Stallscope's summary of " + p + " (what open_trace gives)");
        w.key("mimeType").value("application/json");
        w.endObject();
    }
    w.endArray().endObject();
    return w.str();
}

std::string resourceRead(Session& s, dom::element params) {
    const std::string uri(stringOr(params, "uri", ""));
    const std::string prefix = "stallscope://summary";
    if (!uri.starts_with(prefix) || uri.size() == prefix.size())
        throw RpcError(kResourceNotFound, "Resource not found: " + uri);
    const std::string text = traceSummary(s, uri.substr(prefix.size()));
    JsonWriter w(false);
    w.beginObject().key("contents").beginArray().beginObject();
    w.key("uri").value(uri);
    w.key("mimeType").value("application/json");
    w.key("text").value(text);
    w.endObject().endArray().endObject();
    return w.str();
}

std::string toolCall(Session& s, dom::element params) {
    std::string_view name;
    if (!params.is_object() || params["name"].get(name))
        throw RpcError(kInvalidParams, "tools/call needs params.name (a tool's name)");
    dom::element args;
    dom::object argsObject;
    if (params["arguments"].get(args) == simdjson::SUCCESS) {
        if (args.get(argsObject))
            throw RpcError(kInvalidParams, "tools/call's params.arguments must be an object");
    } else
        argsObject = emptyObject().get_object().value();
    ToolResult r;
    try {
        r = callTool(s, name, argsObject);
    } catch (const RpcError&) {
        throw;
    } catch (const std::exception& e) { // a trace that cannot be read: the tool's own error
        r = {e.what(), true};
    }
    JsonWriter w(false);
    w.beginObject().key("content").beginArray().beginObject();
    w.key("type").value("text");
    w.key("text").value(r.text);
    w.endObject().endArray();
    w.key("isError").value(r.isError);
    w.endObject();
    return w.str();
}

} // namespace

std::string Server::dispatch(std::string_view method, dom::element params, const std::string& id) {
    if (method == "initialize") {
        m_initialized = true;
        return response(id, initializeResult(params));
    }
    if (method == "ping") return response(id, "{}");
    if (method == "tools/list") {
        JsonWriter w(false);
        w.beginObject().key("tools");
        writeToolList(w);
        w.endObject();
        return response(id, w.str());
    }
    if (method == "tools/call") return response(id, toolCall(m_session, params));
    if (method == "resources/list") return response(id, resourceList(m_session));
    if (method == "resources/templates/list") return response(id, "{\"resourceTemplates\":[]}");
    if (method == "resources/read") return response(id, resourceRead(m_session, params));
    throw RpcError(kMethodNotFound, "Method not found: " + std::string(method));
}

std::string Server::handle(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) return {};
    if (line.size() > kMaxMessageBytes)
        return errorResponse("null", kInvalidRequest,
                             "message longer than " + std::to_string(kMaxMessageBytes) + " bytes");
    dom::element msg;
    if (const auto e = m_parser.parse(line.data(), line.size()).get(msg))
        return errorResponse("null", kParseError,
                             std::string("Parse error: ") + simdjson::error_message(e));
    if (msg.is_array())
        return errorResponse("null", kInvalidRequest, "JSON-RPC batches are not supported");
    if (!msg.is_object()) return errorResponse("null", kInvalidRequest, "not a JSON-RPC request");
    std::string id = "null";
    dom::element idElement;
    const bool hasId = msg["id"].get(idElement) == simdjson::SUCCESS;
    if (hasId) {
        if (!idElement.is_string() && !idElement.is_int64() && !idElement.is_uint64())
            return errorResponse("null", kInvalidRequest, "id must be a string or an integer");
        id = simdjson::minify(idElement);
    }
    std::string_view method;
    if (stringOr(msg, "jsonrpc", "") != "2.0" || msg["method"].get(method)) {
        if (!hasId && !msg["method"].error()) return {};
        // A response from the client (it sends none we asked for) or a malformed request.
        if (!msg["result"].error() || !msg["error"].error()) return {};
        return errorResponse(id, kInvalidRequest,
                             "a request needs \"jsonrpc\": \"2.0\" and a string \"method\"");
    }
    dom::element params;
    if (msg["params"].get(params)) params = emptyObject();
    if (!hasId) return {}; // notifications (initialized, cancelled, ...) need no answer
    try {
        return dispatch(method, params, id);
    } catch (const RpcError& e) {
        return errorResponse(id, e.code, e.what());
    } catch (const std::exception& e) {
        return errorResponse(id, kInternalError, std::string("Internal error: ") + e.what());
    }
}

} // namespace stallscope::cli::mcp
