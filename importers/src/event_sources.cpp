#include "event_sources.h"

#include "chrome_event_reader.h"  // trimToken, sjo

#include "stallscope/base/utf8.h"
#include "stallscope/importers/event_args.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace stallscope::importers {

using simdjson::SUCCESS;

bool parseEventArgs(std::string_view eventJson, std::vector<model::ArgValue>& out,
                    std::string& error) {
    std::string copy(eventJson);
    return parseEventArgsInPlace(copy, out, error);
}

bool parseEventArgsInPlace(std::string& text, std::vector<model::ArgValue>& out,
                           std::string& error) {
    out.clear();
    // Bytes that are not UTF-8 replaced one for one, as the import did (checked first: most
    // events are valid, and the check is vectorised).
    if (!simdjson::validate_utf8(text.data(), text.size()))
        base::replaceInvalidUtf8InPlace(text.data(), text.size(), nullptr);
    const size_t length = text.size();
    text.reserve(length + simdjson::SIMDJSON_PADDING);
    const simdjson::padded_string_view ps(text.data(), length, text.capacity());
    // One parser per thread, reused: its buffers are allocated once, not per event (the
    // operator tables by shape read the args of every operator, on several threads).
    thread_local simdjson::ondemand::parser parser;
    sjo::document doc;
    sjo::object obj;
    if (auto e = parser.iterate(ps).get(doc); e != SUCCESS) {
        error = simdjson::error_message(e);
        return false;
    }
    if (auto e = doc.get_object().get(obj); e != SUCCESS) {
        error = std::string("the event is not an object: ") + simdjson::error_message(e);
        return false;
    }
    for (auto fr : obj) {
        sjo::field f;
        if (auto e = std::move(fr).get(f); e != SUCCESS) {
            error = simdjson::error_message(e);
            return false;
        }
        std::string_view k;
        if (f.unescaped_key().get(k) != SUCCESS || k != "args") continue;
        sjo::object args;
        if (f.value().get_object().get(args) != SUCCESS) return true;  // args not an object
        for (auto ar : args) {
            // Every failure says why (the import does not validate args: they are read here).
            auto bad = [&](simdjson::error_code e) {
                error = std::string("invalid JSON in the args: ") + simdjson::error_message(e);
                return false;
            };
            sjo::field af;
            if (auto e = std::move(ar).get(af); e != SUCCESS) return bad(e);
            std::string_view key;
            if (auto e = af.unescaped_key().get(key); e != SUCCESS) return bad(e);
            sjo::value v = af.value();
            sjo::json_type t;
            if (auto e = v.type().get(t); e != SUCCESS) return bad(e);
            std::string_view raw;
            if (t == sjo::json_type::object) {
                sjo::object o;
                if (auto e = v.get_object().get(o); e != SUCCESS) return bad(e);
                if (auto e = o.raw_json().get(raw); e != SUCCESS) return bad(e);
            } else if (t == sjo::json_type::array) {
                sjo::array a;
                if (auto e = v.get_array().get(a); e != SUCCESS) return bad(e);
                if (auto e = a.raw_json().get(raw); e != SUCCESS) return bad(e);
            } else {
                raw = trimToken(v.raw_json_token());
            }
            out.push_back({std::string(key), std::string(raw)});
        }
        return true;
    }
    return true;
}

bool parseChromeEventArgs(std::string_view eventJson, std::vector<model::ArgValue>& out, std::string& error) {
    return parseEventArgs(eventJson, out, error);
}

ChromeFileEventSource::~ChromeFileEventSource() {
    if (m_fd >= 0) ::close(m_fd);
}

int ChromeFileEventSource::descriptor(std::string& error) const {
    std::lock_guard<std::mutex> lock(m_open);
    if (m_fd < 0) {
        m_fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0) error = "cannot reopen " + m_path + ": " + std::strerror(errno);
    }
    return m_fd;
}

bool ChromeFileEventSource::rawEvent(model::SourceRef ref, std::string& out,
                                     std::string& error) const {
    const int fd = descriptor(error);
    if (fd < 0) return false;
    out.resize(ref.length);
    size_t got = 0;
    while (got < ref.length) {
        const ssize_t r = ::pread(fd, out.data() + got, ref.length - got,
                                  static_cast<off_t>(ref.offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<size_t>(r);
    }
    if (got != ref.length) {
        error = m_path + " changed since it was opened (cannot read the event back)";
        return false;
    }
    return true;
}

bool ChromeFileEventSource::args(model::SourceRef ref, std::vector<model::ArgValue>& out,
                                 std::string& error) const {
    std::string text;
    return rawEvent(ref, text, error) && parseEventArgsInPlace(text, out, error);
}

namespace {
/// argsOfMany for a source that reads any stretch of its text (`read`): in file order, a
/// stretch of up to 4 MiB read at once for the events inside it.
void argsByStretch(const model::EventSource& source, const std::vector<model::SourceRef>& refs,
                   const model::EventSource::ArgsVisitor& each,
                   const std::function<bool(model::SourceRef, std::string&, std::string&)>& read) {
    constexpr uint64_t kStretch = 4 << 20;
    std::vector<size_t> order(refs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return refs[a].offset < refs[b].offset; });
    std::vector<model::ArgValue> values;
    std::string stretch, text, error;
    for (size_t k = 0; k < order.size();) {
        // The events from order[k] whose ends lie within kStretch of its start (one at least).
        const uint64_t from = refs[order[k]].offset;
        uint64_t to = from + refs[order[k]].length;
        size_t end = k + 1;
        while (end < order.size() &&
               refs[order[end]].offset + refs[order[end]].length - from <= kStretch)
            to = std::max(to, refs[order[end]].offset + refs[order[end++]].length);
        const model::SourceRef whole{from, uint32_t(to - from)};
        const bool whole_read = to - from <= UINT32_MAX && read(whole, stretch, error);
        for (; k < end; ++k) {
            const model::SourceRef r = refs[order[k]];
            bool ok;
            if (whole_read) {
                text.assign(stretch, size_t(r.offset - from), r.length);
                ok = parseEventArgsInPlace(text, values, error);
            } else {
                ok = source.args(r, values, error);
            }
            if (!ok) values.clear();
            each(order[k], ok, values);
        }
    }
}
} // namespace

void ChromeFileEventSource::argsOfMany(const std::vector<model::SourceRef>& refs,
                                       const ArgsVisitor& each) const {
    argsByStretch(*this, refs, each, [this](model::SourceRef r, std::string& out, std::string& e) {
        return rawEvent(r, out, e);
    });
}

void ChromeGzipEventSource::argsOfMany(const std::vector<model::SourceRef>& refs,
                                       const ArgsVisitor& each) const {
    argsByStretch(*this, refs, each, [this](model::SourceRef r, std::string& out, std::string& e) {
        return rawEvent(r, out, e);
    });
}

bool ChromeGzipEventSource::rawEvent(model::SourceRef ref, std::string& out, std::string& error) const {
    return m_index->read(ref.offset, ref.length, out, error);
}

bool ChromeGzipEventSource::args(model::SourceRef ref, std::vector<model::ArgValue>& out,
                                 std::string& error) const {
    std::string text;
    return rawEvent(ref, text, error) && parseEventArgsInPlace(text, out, error);
}

bool ChromeMemoryEventSource::rawEvent(model::SourceRef ref, std::string& out, std::string& error) const {
    if (ref.offset + ref.length > m_text->size()) {
        error = "event reference beyond the buffer";
        return false;
    }
    out.assign(*m_text, ref.offset, ref.length);
    return true;
}

bool ChromeMemoryEventSource::args(model::SourceRef ref, std::vector<model::ArgValue>& out,
                                   std::string& error) const {
    std::string text;
    return rawEvent(ref, text, error) && parseEventArgsInPlace(text, out, error);
}

} // namespace stallscope::importers
