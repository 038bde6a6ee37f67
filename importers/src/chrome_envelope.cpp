#include "chrome_envelope.h"

#include "chrome_event_reader.h"  // trimToken, sjo
#include "json_number.h"

#include "stallscope/base/utf8.h"

#include <algorithm>
#include <cstring>
#include <simdjson.h>
#include <string>

namespace stallscope::importers {

using model::DiagnosticKind;
using simdjson::error_code;
using simdjson::SUCCESS;

namespace {

constexpr size_t kMaxRawMetadata = 64 * 1024;

inline bool isBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t skipBlank(std::string_view t, size_t i) {
    while (i < t.size() && isBlank(t[i])) ++i;
    return i;
}

/// The first `max` keys of the object that opens at text[open] ('{'), as they are written
/// (escapes kept), each cut to 40 bytes and made safe to show: "\"a\", \"b\"", with ", ..."
/// when there are more. Scans the text; nothing is parsed or allocated per value.
std::string objectKeys(std::string_view text, size_t open, size_t max) {
    std::string out;
    size_t shown = 0;
    int depth = 0;
    for (size_t i = open; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth <= 0) break;
        } else if (c == '"') {
            size_t end = i + 1;
            while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
            if (end >= text.size()) break;
            const size_t after = skipBlank(text, end + 1);
            if (depth == 1 && after < text.size() && text[after] == ':') {
                if (shown == max) return out + ", ...";
                std::string key = base::closeBidi(base::truncateUtf8(
                    base::sanitizeUtf8(text.substr(i + 1, std::min<size_t>(end - i - 1, 40))), 40));
                for (char& k : key)
                    if (k == '\n' || k == '\r' || k == '\t') k = ' ';
                out += (shown++ ? ", \"" : "\"") + key + "\"";
            }
            i = end;
        }
    }
    return out;
}

bool getInt(sjo::value v, int64_t& out) {
    sjo::json_type t;
    if (v.type().get(t) != SUCCESS) return false;
    std::string_view text;
    if (t == sjo::json_type::number) text = trimToken(v.raw_json_token());
    else if (t == sjo::json_type::string) {
        if (v.get_string().get(text) != SUCCESS) return false;
    } else {
        return false;
    }
    const IntResult r = parseInt64(text);
    if (r.status != NumberStatus::Ok) return false;
    out = r.value;
    return true;
}

std::string rawOf(sjo::value v) {
    sjo::json_type t;
    if (v.type().get(t) != SUCCESS) return {};
    std::string_view raw;
    if (t == sjo::json_type::object) {
        sjo::object o;
        if (v.get_object().get(o) != SUCCESS || o.raw_json().get(raw) != SUCCESS) return {};
    } else if (t == sjo::json_type::array) {
        sjo::array a;
        if (v.get_array().get(a) != SUCCESS || a.raw_json().get(raw) != SUCCESS) return {};
    } else {
        raw = trimToken(v.raw_json_token());
    }
    return std::string(raw.substr(0, kMaxRawMetadata));
}

void readDevice(sjo::object obj, model::DeviceProperties& d) {
    for (auto fr : obj) {
        sjo::field f;
        if (std::move(fr).get(f) != SUCCESS) return;
        std::string_view k;
        if (f.unescaped_key().get(k) != SUCCESS) return;
        int64_t v = 0;
        if (k == "name") {
            std::string_view s;
            if (f.value().get_string().get(s) == SUCCESS) d.name = std::string(s);
            continue;
        }
        if (!getInt(f.value(), v)) continue;
        const auto i32 = static_cast<int32_t>(v);
        if (k == "id") d.id = i32;
        else if (k == "totalGlobalMem") d.totalGlobalMem = v;
        else if (k == "computeMajor" || k == "major") d.computeMajor = i32;
        else if (k == "computeMinor" || k == "minor") d.computeMinor = i32;
        else if (k == "numSms" || k == "multiProcessorCount") d.numSms = i32;
        else if (k == "maxThreadsPerBlock") d.maxThreadsPerBlock = i32;
        else if (k == "maxThreadsPerMultiprocessor" || k == "maxThreadsPerMultiProcessor")
            d.maxThreadsPerMultiprocessor = i32;
        else if (k == "regsPerBlock") d.regsPerBlock = i32;
        else if (k == "regsPerMultiprocessor") d.regsPerMultiprocessor = i32;
        else if (k == "warpSize") d.warpSize = i32;
        else if (k == "sharedMemPerBlock") d.sharedMemPerBlock = v;
        else if (k == "sharedMemPerMultiprocessor") d.sharedMemPerMultiprocessor = v;
    }
}

void readDistributed(sjo::value v, model::DistributedInfo& di) {
    di.rawJson = rawOf(v);
    // Re-parse the raw text: rawOf consumed the value.
    simdjson::ondemand::parser p;
    simdjson::padded_string ps(di.rawJson);
    sjo::document doc;
    sjo::object obj;
    if (p.iterate(ps).get(doc) != SUCCESS || doc.get_object().get(obj) != SUCCESS) return;
    di.present = true;
    for (auto fr : obj) {
        sjo::field f;
        if (std::move(fr).get(f) != SUCCESS) return;
        std::string_view k;
        if (f.unescaped_key().get(k) != SUCCESS) return;
        int64_t n = 0;
        if (k == "backend") {
            std::string_view s;
            if (f.value().get_string().get(s) == SUCCESS) di.backend = std::string(s);
        } else if (k == "rank" && getInt(f.value(), n)) {
            di.rank = static_cast<int32_t>(n);
        } else if (k == "world_size" && getInt(f.value(), n)) {
            di.worldSize = static_cast<int32_t>(n);
        }
    }
}

/// Applies one top-level key of the trace object.
error_code applyTopLevel(std::string_view key, sjo::value v, model::TraceMetadata& md,
                         model::Diagnostics& diags, uint64_t offset) {
    int64_t n = 0;
    if (key == "schemaVersion") {
        if (getInt(v, n)) md.schemaVersion = n;
        return SUCCESS;
    }
    if (key == "deviceProperties" || key == "computeProperties") {
        sjo::array arr;
        if (v.get_array().get(arr) != SUCCESS) {
            diags.add(DiagnosticKind::InvalidMetadata, offset, std::string(key) + " is not an array");
            return SUCCESS;
        }
        for (auto er : arr) {
            sjo::object o;
            if (std::move(er).get_object().get(o) != SUCCESS) continue;
            model::DeviceProperties d;
            readDevice(o, d);
            md.devices.push_back(std::move(d));
        }
        return SUCCESS;
    }
    if (key == "distributedInfo") {
        readDistributed(v, md.distributed);
        return SUCCESS;
    }
    if (key == "baseTimeNanoseconds") {
        if (getInt(v, n)) md.baseTimeNs = n;
        else diags.add(DiagnosticKind::InvalidMetadata, offset, "baseTimeNanoseconds is not an integer");
        return SUCCESS;
    }
    if (key == "displayTimeUnit" || key == "traceName") {
        std::string_view s;
        if (v.get_string().get(s) == SUCCESS)
            (key == "traceName" ? md.traceName : md.displayTimeUnit) = std::string(s);
        return SUCCESS;
    }
    md.other.emplace_back(std::string(key), rawOf(v));
    return SUCCESS;
}

} // namespace

HeaderOutcome parseEnvelopeHeader(std::string_view text, bool complete, model::TraceMetadata& md,
                                  model::Diagnostics& diags) {
    HeaderOutcome out;
    size_t i = 0;
    if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) i = 3;  // BOM
    i = skipBlank(text, i);
    if (i >= text.size()) {
        if (!complete) return out;
        out.status = HeaderStatus::Failed;
        out.error = {text.empty() ? ErrorKind::Empty : ErrorKind::InvalidStructure,
                     text.empty() ? "the file is empty"
                                  : "byte " + std::to_string(i) +
                                        ": the file holds only whitespace; expected a JSON array "
                                        "or an object with a traceEvents array",
                     i};
        return out;
    }
    if (text[i] == '[') {
        out.status = HeaderStatus::Found;
        out.header.bareArray = true;
        out.header.eventsBegin = i + 1;
        return out;
    }
    if (text[i] != '{') {
        out.status = HeaderStatus::Failed;
        out.error = {ErrorKind::InvalidStructure,
                     "byte " + std::to_string(i) +
                         ": expected a JSON array or an object with a traceEvents array",
                     i};
        return out;
    }
    // Candidate: each textual "traceEvents" key followed by ':' and '['. Confirm it by
    // parsing the object's keys up to it (the text may contain the word elsewhere).
    bool sawNonArray = false;
    uint64_t nonArrayAt = 0;
    for (size_t q = text.find("\"traceEvents\"", i); q != std::string_view::npos;
         q = text.find("\"traceEvents\"", q + 1)) {
        size_t r = skipBlank(text, q + 13);
        if (r >= text.size() || text[r] != ':') continue;
        r = skipBlank(text, r + 1);
        if (r >= text.size()) break;
        if (text[r] != '[') {
            sawNonArray = true;
            nonArrayAt = r;
            continue;
        }
        std::string buf(text.substr(0, r + 1));
        buf += "]}";
        base::replaceInvalidUtf8InPlace(buf.data(), buf.size(), nullptr);
        simdjson::padded_string ps(buf);
        simdjson::ondemand::parser parser;
        sjo::document doc;
        sjo::object obj;
        if (parser.iterate(ps).get(doc) != SUCCESS || doc.get_object().get(obj) != SUCCESS) continue;
        model::TraceMetadata trial;
        model::Diagnostics trialDiags;
        bool confirmed = false;
        for (auto fr : obj) {
            sjo::field f;
            if (std::move(fr).get(f) != SUCCESS) break;
            std::string_view k;
            if (f.unescaped_key().get(k) != SUCCESS) break;
            if (k == "traceEvents") {
                confirmed = f.value().raw_json_token().data() == ps.data() + r;
                break;
            }
            if (applyTopLevel(k, f.value(), trial, trialDiags, 0) != SUCCESS) break;
        }
        if (!confirmed) continue;
        // Keep what came before traceEvents.
        md.schemaVersion = trial.schemaVersion;
        md.devices = std::move(trial.devices);
        md.distributed = std::move(trial.distributed);
        md.baseTimeNs = trial.baseTimeNs;
        md.displayTimeUnit = std::move(trial.displayTimeUnit);
        md.traceName = std::move(trial.traceName);
        md.other = std::move(trial.other);
        diags.merge(trialDiags);
        out.status = HeaderStatus::Found;
        out.header.eventsBegin = r + 1;
        return out;
    }
    if (!complete) return out;
    out.status = HeaderStatus::Failed;
    if (sawNonArray)
        out.error = {ErrorKind::InvalidStructure,
                     "byte " + std::to_string(nonArrayAt) + ": \"traceEvents\" must be an array",
                     nonArrayAt};
    else {
        const std::string keys = objectKeys(text, i, 8);
        out.error = {ErrorKind::InvalidStructure,
                     "byte " + std::to_string(i) +
                         ": expected a JSON array or an object with a traceEvents array (the "
                         "object has no \"traceEvents\" key" +
                         (keys.empty() ? std::string() : "; its keys: " + keys) + ")",
                     i};
    }
    return out;
}

void parseEnvelopeSuffix(std::string_view text, uint64_t offset, bool bareArray,
                         model::TraceMetadata& md, model::Diagnostics& diags) {
    size_t i = skipBlank(text, 0);
    if (bareArray) return;  // nothing may follow; trailing bytes are ignored
    if (i >= text.size()) {
        diags.add(DiagnosticKind::TruncatedInput, offset + i,
                  "the input ends before the trace object is closed");
        return;
    }
    if (text[i] == '}') return;
    if (text[i] != ',') {
        diags.add(DiagnosticKind::InvalidMetadata, offset + i,
                  "unexpected text after the event array");
        return;
    }
    std::string buf = "{";
    buf.append(text.substr(i + 1));
    base::replaceInvalidUtf8InPlace(buf.data(), buf.size(), nullptr);
    simdjson::padded_string ps(buf);
    simdjson::ondemand::parser parser;
    sjo::document doc;
    sjo::object obj;
    if (parser.iterate(ps).get(doc) != SUCCESS || doc.get_object().get(obj) != SUCCESS) {
        diags.add(DiagnosticKind::TruncatedInput, offset + i,
                  "the keys after the event array are incomplete or invalid");
        return;
    }
    for (auto fr : obj) {
        sjo::field f;
        if (std::move(fr).get(f) != SUCCESS) {
            diags.add(DiagnosticKind::TruncatedInput, offset + i,
                      "the keys after the event array are incomplete or invalid");
            return;
        }
        std::string_view k;
        if (f.unescaped_key().get(k) != SUCCESS) return;
        if (applyTopLevel(k, f.value(), md, diags, offset + i) != SUCCESS) return;
    }
}

} // namespace stallscope::importers
