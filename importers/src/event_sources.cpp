#include "event_sources.h"

#include "chrome_event_reader.h"  // trimToken, sjo

#include "stallscope/base/utf8.h"
#include "stallscope/importers/event_args.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace stallscope::importers {

using simdjson::SUCCESS;

bool parseEventArgs(std::string_view eventJson, std::vector<model::ArgValue>& out, std::string& error) {
    out.clear();
    std::string copy(eventJson);
    base::replaceInvalidUtf8InPlace(copy.data(), copy.size(), nullptr);
    simdjson::padded_string ps(copy);
    simdjson::ondemand::parser parser;
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

bool ChromeFileEventSource::rawEvent(model::SourceRef ref, std::string& out, std::string& error) const {
    const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = "cannot reopen " + m_path + ": " + std::strerror(errno);
        return false;
    }
    out.resize(ref.length);
    size_t got = 0;
    while (got < ref.length) {
        const ssize_t r = ::pread(fd, out.data() + got, ref.length - got,
                                  static_cast<off_t>(ref.offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<size_t>(r);
    }
    ::close(fd);
    if (got != ref.length) {
        error = m_path + " changed since it was opened (cannot read the event back)";
        return false;
    }
    return true;
}

bool ChromeFileEventSource::args(model::SourceRef ref, std::vector<model::ArgValue>& out,
                                 std::string& error) const {
    std::string text;
    return rawEvent(ref, text, error) && parseEventArgs(text, out, error);
}

bool ChromeGzipEventSource::rawEvent(model::SourceRef ref, std::string& out, std::string& error) const {
    return m_index->read(ref.offset, ref.length, out, error);
}

bool ChromeGzipEventSource::args(model::SourceRef ref, std::vector<model::ArgValue>& out,
                                 std::string& error) const {
    std::string text;
    return rawEvent(ref, text, error) && parseEventArgs(text, out, error);
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
    return rawEvent(ref, text, error) && parseEventArgs(text, out, error);
}

} // namespace stallscope::importers
