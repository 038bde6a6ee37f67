#include "chrome_event_reader.h"

#include <cstring>

namespace stallscope::importers {

using model::DiagnosticKind;
using simdjson::error_code;
using simdjson::SUCCESS;

namespace {

// The key text starts right after its opening quote; keys we look for have no escapes,
// so a byte compare plus the closing quote is an exact match.
template <size_t N>
inline bool keyIs(const char* k, const char (&lit)[N]) {
    return std::memcmp(k, lit, N - 1) == 0 && k[N - 1] == '"';
}

inline bool allDigits(std::string_view s) {
    if (s.empty()) return false;
    size_t i = (s[0] == '-') ? 1 : 0;
    if (i == s.size()) return false;
    for (; i < s.size(); ++i)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

inline uint64_t hashText(std::string_view s) { return model::StringPool::hash(s); }

} // namespace

ChromeEventReader::ChromeEventReader(EventBatch& batch) : m_b(batch) {}

namespace {
inline bool isHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/// The value of the \uXXXX escape at `s[i]` (s[i] == '\\'), or -1.
int utf16At(std::string_view s, size_t i) {
    if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
    int v = 0;
    for (size_t k = i + 2; k < i + 6; ++k) {
        if (!isHex(s[k])) return -1;
        const char c = s[k];
        v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/// The body of a JSON string token (between its quotes) with every escape that JSON does
/// not allow or that is not valid UTF-16 replaced by '?'; `replaced` counts them. The result
/// is unescaped by simdjson like any other string.
std::string repairEscapes(std::string_view body, uint64_t& replaced) {
    std::string out;
    out.reserve(body.size() + 2);
    out += '"';
    for (size_t i = 0; i < body.size(); ++i) {
        if (body[i] != '\\') {
            out += body[i];
            continue;
        }
        const char c = i + 1 < body.size() ? body[i + 1] : '\0';
        if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
            out.append(body.substr(i, 2));
            ++i;
            continue;
        }
        const int u = utf16At(body, i);
        if (u >= 0 && (u < 0xD800 || u > 0xDFFF)) {
            out.append(body.substr(i, 6));
            i += 5;
            continue;
        }
        if (u >= 0xD800 && u <= 0xDBFF) {
            const int low = utf16At(body, i + 6);
            if (low >= 0xDC00 && low <= 0xDFFF) {
                out.append(body.substr(i, 12));
                i += 11;
                continue;
            }
        }
        // A lone surrogate, a \u without four hex digits or an unknown escape.
        out += '?';
        ++replaced;
        i += u >= 0 ? 5 : (i + 1 < body.size() ? 1 : 0);
    }
    out += '"';
    return out;
}
} // namespace

error_code ChromeEventReader::getString(sjo::value& v, std::string_view& out, uint64_t offset) {
    const error_code e = v.get_string().get(out);
    if (e != simdjson::STRING_ERROR) return e;
    // simdjson has moved past the token; its text is still where the value starts.
    const std::string_view tok = trimToken(v.raw_json_token());
    if (tok.size() < 2 || tok.front() != '"' || tok.back() != '"') return e;
    uint64_t replaced = 0;
    std::string repaired = repairEscapes(tok.substr(1, tok.size() - 2), replaced);
    if (replaced == 0) return e;  // not an escape problem: report it as before
    const simdjson::padded_string padded(repaired);
    sjo::document doc;
    std::string_view text;
    if (m_repairParser.iterate(padded).get(doc) || doc.get_string().get(text)) return e;
    m_repaired.emplace_back(text);
    out = m_repaired.back();
    note(model::DiagnosticKind::InvalidEscape, offset,
         std::to_string(replaced) + " invalid escape(s) in a string replaced by '?'");
    return SUCCESS;
}

error_code ChromeEventReader::readString(sjo::value& v, uint32_t& id, bool& ok) {
    std::string_view s;
    sjo::json_type t;
    if (auto e = v.type().get(t)) return e;
    if (t == sjo::json_type::string) {
        if (auto e = getString(v, s, m_offset)) return e;
    } else {
        // Numbers or literals where a name belongs: keep their text.
        s = trimToken(v.raw_json_token());
        if (t == sjo::json_type::object || t == sjo::json_type::array) {
            ok = false;
            return SUCCESS;
        }
    }
    id = m_b.strings.intern(s).value;
    ok = true;
    return SUCCESS;
}

error_code ChromeEventReader::readRowKey(sjo::value& v, LocalKey& key, bool isTid) {
    sjo::json_type t;
    if (auto e = v.type().get(t)) return e;
    if (t == sjo::json_type::number) {
        const std::string_view tok = trimToken(v.raw_json_token());
        const IntResult r = parseInt64(tok);
        if (r.status == NumberStatus::Ok) key = {r.value, UINT32_MAX};
        else key = {0, m_b.strings.intern(tok).value};
        return SUCCESS;
    }
    if (t == sjo::json_type::string) {
        std::string_view s;
        if (auto e = getString(v, s, m_offset)) return e;
        if (allDigits(s)) {
            const IntResult r = parseInt64(s);
            if (r.status == NumberStatus::Ok) {
                key = {r.value, UINT32_MAX};
                return SUCCESS;
            }
        }
        // 2021 Kineto wrote GPU rows as "stream 7": the same row as tid 7 later.
        if (isTid && s.size() > 7 && s.substr(0, 7) == "stream " && allDigits(s.substr(7))) {
            const IntResult r = parseInt64(s.substr(7));
            if (r.status == NumberStatus::Ok) {
                key = {r.value, UINT32_MAX};
                return SUCCESS;
            }
        }
        key = {0, m_b.strings.intern(s).value};
        return SUCCESS;
    }
    key = {0, m_b.strings.intern(trimToken(v.raw_json_token())).value};
    if (m_ev.wrongType.empty()) m_ev.wrongType = isTid ? "tid" : "pid";
    return SUCCESS;
}

error_code ChromeEventReader::readTime(sjo::value& v, int64_t& out, NumberStatus& status) {
    sjo::json_type t;
    if (auto e = v.type().get(t)) return e;
    std::string_view text;
    if (t == sjo::json_type::number) {
        text = trimToken(v.raw_json_token());
    } else if (t == sjo::json_type::string) {
        if (auto e = getString(v, text, m_offset)) return e;
    } else {
        status = NumberStatus::NotANumber;
        return SUCCESS;
    }
    const NsResult r = parseMicrosToNs(text);
    status = r.status;
    out = r.ns;
    return SUCCESS;
}

error_code ChromeEventReader::readInt(sjo::value& v, int64_t& out, bool& ok) {
    sjo::json_type t;
    if (auto e = v.type().get(t)) return e;
    std::string_view text;
    if (t == sjo::json_type::number) text = trimToken(v.raw_json_token());
    else if (t == sjo::json_type::string) {
        if (auto e = getString(v, text, m_offset)) return e;
    } else {
        ok = false;
        return SUCCESS;
    }
    const IntResult r = parseInt64(text);
    if (r.status == NumberStatus::Ok) {
        out = r.value;
        ok = true;
        return SUCCESS;
    }
    double d = 0;  // integers written as 12.0
    ok = parseDouble(text, d) && d >= -9.2e18 && d <= 9.2e18;
    if (ok) out = static_cast<int64_t>(d);
    return SUCCESS;
}

error_code ChromeEventReader::readNumber(sjo::value& v, double& out, bool& ok) {
    sjo::json_type t;
    if (auto e = v.type().get(t)) return e;
    std::string_view text;
    if (t == sjo::json_type::number) text = trimToken(v.raw_json_token());
    else if (t == sjo::json_type::string) {
        if (auto e = getString(v, text, m_offset)) return e;
    } else if (t == sjo::json_type::boolean) {
        bool b = false;
        if (auto e = v.get_bool().get(b)) return e;
        out = b ? 1.0 : 0.0;
        ok = true;
        return SUCCESS;
    } else {
        ok = false;
        return SUCCESS;
    }
    ok = parseDouble(text, out);
    return SUCCESS;
}

error_code ChromeEventReader::readId(sjo::value& v, uint64_t& out, bool& ok) {
    sjo::json_type t;
    if (auto e = v.type().get(t)) return e;
    ok = true;
    if (t == sjo::json_type::number) {
        const std::string_view tok = trimToken(v.raw_json_token());
        const IntResult r = parseInt64(tok);
        out = r.status == NumberStatus::Ok ? static_cast<uint64_t>(r.value) : hashText(tok);
        return SUCCESS;
    }
    if (t == sjo::json_type::string) {
        std::string_view s;
        if (auto e = getString(v, s, m_offset)) return e;
        const IntResult r = parseInt64(s);
        out = r.status == NumberStatus::Ok ? static_cast<uint64_t>(r.value) : hashText(s);
        return SUCCESS;
    }
    if (t == sjo::json_type::object || t == sjo::json_type::array) {
        // id2 {"local": ...} / {"global": ...}: identity is the text.
        std::string_view raw;
        if (t == sjo::json_type::object) {
            sjo::object o;
            if (auto e = v.get_object().get(o)) return e;
            if (auto e = o.raw_json().get(raw)) return e;
        } else {
            sjo::array a;
            if (auto e = v.get_array().get(a)) return e;
            if (auto e = a.raw_json().get(raw)) return e;
        }
        out = hashText(raw);
        return SUCCESS;
    }
    ok = false;
    return SUCCESS;
}

error_code ChromeEventReader::readArgs(sjo::value& v, uint64_t offset) {
    sjo::json_type t;
    if (auto e = v.type().get(t)) return e;
    if (t != sjo::json_type::object) return SUCCESS;  // args kept raw; nothing to extract
    sjo::object args;
    if (auto e = v.get_object().get(args)) return e;
    const bool wantAll = !m_ev.hasPh || m_ev.ph == "C";
    for (auto fr : args) {
        sjo::field f;
        if (auto e = std::move(fr).get(f)) return e;
        const char* k = f.key().raw();
        sjo::value& val = f.value();
        bool ok = false;
        int64_t iv = 0;
        switch (k[0]) {
        case 'c':
            if (keyIs(k, "correlation")) {
                if (auto e = readInt(val, iv, ok)) return e;
                if (ok && iv >= 0 && iv < static_cast<int64_t>(model::SliceTable::kNoCorrelation))
                    m_ev.correlation = static_cast<uint32_t>(iv);
                else if (ok)
                    note(DiagnosticKind::NumberOutOfRange, offset, "correlation " + std::to_string(iv));
                continue;
            }
            break;
        case 'E':
        case 'e':
            if (keyIs(k + 1, "xternal id")) {
                if (auto e = readInt(val, iv, ok)) return e;
                if (ok) m_ev.externalId = static_cast<uint64_t>(iv);
                continue;
            }
            if (keyIs(k, "est. achieved occupancy %")) {
                double d = 0;
                if (auto e = readNumber(val, d, ok)) return e;
                if (ok) m_ev.occupancy = static_cast<float>(d);
                continue;
            }
            break;
        case 'b':
            if (keyIs(k, "bytes")) {
                if (auto e = readInt(val, iv, ok)) return e;
                if (ok) m_ev.bytes = iv;
                continue;
            }
            if (keyIs(k, "blocks per SM")) {
                double d = 0;
                if (auto e = readNumber(val, d, ok)) return e;
                if (ok) m_ev.blocksPerSm = static_cast<float>(d);
                continue;
            }
            break;
        case 'n':
            if (keyIs(k, "name")) {
                if (auto e = readString(val, m_ev.metaText, ok)) return e;
                continue;
            }
            break;
        case 'l':
            if (keyIs(k, "labels")) {
                if (auto e = readString(val, m_ev.metaText, ok)) return e;
                continue;
            }
            break;
        case 's':
            if (keyIs(k, "sort_index")) {
                if (auto e = readInt(val, m_ev.sortIndex, m_ev.hasSortIndex)) return e;
                continue;
            }
            break;
        case 'D':
            if (keyIs(k, "Device Type")) {
                if (auto e = readInt(val, iv, ok)) return e;
                if (ok) m_ev.deviceType = static_cast<int16_t>(iv), m_ev.memoryFields = true;
                continue;
            }
            if (keyIs(k, "Device Id")) {
                if (auto e = readInt(val, iv, ok)) return e;
                if (ok) m_ev.deviceId = static_cast<int16_t>(iv), m_ev.memoryFields = true;
                continue;
            }
            break;
        case 'A':
            if (keyIs(k, "Addr")) {
                if (auto e = readInt(val, iv, ok)) return e;
                if (ok) m_ev.memAddr = static_cast<uint64_t>(iv);
                continue;
            }
            break;
        case 'B':
            if (keyIs(k, "Bytes")) {
                if (auto e = readInt(val, iv, ok)) return e;
                if (ok) m_ev.memBytes = iv, m_ev.memoryFields = true;
                continue;
            }
            break;
        case 'T':
            if (keyIs(k, "Total Allocated")) {
                if (auto e = readInt(val, m_ev.totalAllocated, ok)) return e;
                continue;
            }
            if (keyIs(k, "Total Reserved")) {
                if (auto e = readInt(val, m_ev.totalReserved, ok)) return e;
                continue;
            }
            break;
        default:
            break;
        }
        if (wantAll) {
            // Counter values: every numeric argument is a series.
            sjo::json_type vt;
            if (auto e = val.type().get(vt)) return e;
            if (vt == sjo::json_type::number) {
                double d = 0;
                if (auto e = readNumber(val, d, ok)) return e;
                std::string_view key;
                if (auto e = f.unescaped_key().get(key)) return e;
                if (ok) m_ev.numerics.emplace_back(m_b.strings.intern(key).value, d);
            }
        }
    }
    return SUCCESS;
}

error_code ChromeEventReader::readField(sjo::field& f, uint64_t offset) {
    const char* k = f.key().raw();
    sjo::value& v = f.value();
    bool ok = false;
    switch (k[0]) {
    case 'p':
        if (keyIs(k, "ph")) {
            sjo::json_type t;
            if (auto e = v.type().get(t)) return e;
            if (t == sjo::json_type::string) {
                if (auto e = getString(v, m_ev.ph, m_offset)) return e;
                m_ev.hasPh = true;
            } else if (m_ev.wrongType.empty()) {
                m_ev.wrongType = "ph";
            }
            return SUCCESS;
        }
        if (keyIs(k, "pid")) {
            m_ev.hasPid = true;
            return readRowKey(v, m_ev.pid, false);
        }
        break;
    case 'n':
        if (keyIs(k, "name")) {
            if (auto e = readString(v, m_ev.name, ok)) return e;
            m_ev.hasName = ok;
            if (!ok && m_ev.wrongType.empty()) m_ev.wrongType = "name";
            return SUCCESS;
        }
        break;
    case 'c':
        if (keyIs(k, "cat")) {
            if (auto e = readString(v, m_ev.cat, ok)) return e;
            m_ev.hasCat = ok;
            return SUCCESS;
        }
        break;
    case 't':
        if (keyIs(k, "ts")) {
            m_ev.hasTs = true;
            return readTime(v, m_ev.ts, m_ev.tsStatus);
        }
        if (keyIs(k, "tid")) {
            m_ev.hasTid = true;
            return readRowKey(v, m_ev.tid, true);
        }
        break;
    case 'd':
        if (keyIs(k, "dur")) {
            m_ev.hasDur = true;
            return readTime(v, m_ev.dur, m_ev.durStatus);
        }
        break;
    case 'a':
        if (keyIs(k, "args")) return readArgs(v, offset);
        break;
    case 'i':
        if (keyIs(k, "id") || keyIs(k, "id2")) return readId(v, m_ev.id, m_ev.hasId);
        break;
    case 'b':
        if (keyIs(k, "bp")) {
            std::string_view s;
            if (getString(v, s, m_offset) == SUCCESS && !s.empty()) m_ev.bp = s[0];
            return SUCCESS;
        }
        if (keyIs(k, "bind_id")) return readId(v, m_ev.bindId, m_ev.hasBindId);
        break;
    case 's':
        if (keyIs(k, "s")) {
            std::string_view s;
            if (getString(v, s, m_offset) == SUCCESS && !s.empty()) m_ev.scope = s[0];
            return SUCCESS;
        }
        break;
    case 'f': {
        // A non-boolean value is skipped by the iterator (syntax is still checked).
        bool flag = false;
        if (keyIs(k, "flow_in") && v.get_bool().get(flag) == SUCCESS) m_ev.flowIn = flag;
        else if (keyIs(k, "flow_out") && v.get_bool().get(flag) == SUCCESS) m_ev.flowOut = flag;
        return SUCCESS;
    }
        break;
    default:
        break;
    }
    return SUCCESS;  // other fields (tts, sf, cname, ...) are skipped
}

error_code ChromeEventReader::read(sjo::object& obj, uint64_t offset) {
    // Reset the event but keep the numerics buffer's capacity.
    std::vector<std::pair<uint32_t, double>> numerics;
    numerics.swap(m_ev.numerics);
    numerics.clear();
    m_ev = Event{};
    m_ev.numerics.swap(numerics);
    m_offset = offset;
    m_repaired.clear();
    m_pending.clear();
    for (auto fr : obj) {
        sjo::field f;
        if (auto e = std::move(fr).get(f)) return e;
        if (auto e = readField(f, offset)) return e;
    }
    return SUCCESS;
}

} // namespace stallscope::importers
