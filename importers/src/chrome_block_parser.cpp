#include "chrome_block_parser.h"

#include "chrome_event_reader.h"
#include "framed_text.h"

#include "stallscope/base/utf8.h"

#include <algorithm>
#include <cstring>

namespace stallscope::importers {

using model::DiagnosticKind;
using simdjson::error_code;
using simdjson::SUCCESS;

namespace {
inline bool isBlank(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
inline bool isSeparator(char c) {
    return isBlank(c) || c == ',';
}
} // namespace

size_t findArrayClose(std::string_view text) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if (c == ']' || c == '}') {
            if (depth == 0) return c == ']' ? i : std::string_view::npos;
            --depth;
        }
    }
    return std::string_view::npos;
}

size_t findEventLineStart(std::string_view text, size_t from) {
    size_t pos = from;
    while (pos < text.size()) {
        const bool lineStart = pos == 0 || text[pos - 1] == '\n';
        if (lineStart) {
            size_t p = pos;
            while (p < text.size() &&
                   (text[p] == ' ' || text[p] == '\t' || text[p] == '\r' || text[p] == ','))
                ++p;
            if (p < text.size() && text[p] == '{') return p;
        }
        const void* nl = std::memchr(text.data() + pos, '\n', text.size() - pos);
        if (!nl) break;
        pos = static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1;
    }
    return std::string_view::npos;
}

struct ChromeBlockParser::Impl {
    simdjson::ondemand::parser parser;
    std::unique_ptr<FramedText> scratch; // for parse(): a framed copy of the caller's text
};

static_assert(FramedText::kTail >= 1 + simdjson::SIMDJSON_PADDING,
              "room for ']' and simdjson's padding");

namespace {
/// Writes the "[" and "]" that turn a run of events into one JSON array, and puts the
/// two overwritten bytes back when parsing is done.
class Frame {
public:
    Frame(char* body, size_t len)
        : m_head(body - 1), m_tail(body + len), m_savedHead(*m_head), m_savedTail(*m_tail) {
        *m_head = '[';
        *m_tail = ']';
    }
    ~Frame() {
        *m_head = m_savedHead;
        *m_tail = m_savedTail;
    }
    Frame(const Frame&) = delete;
    Frame& operator=(const Frame&) = delete;

private:
    char* m_head;
    char* m_tail;
    char m_savedHead, m_savedTail;
};
} // namespace

ChromeBlockParser::ChromeBlockParser() : m_impl(std::make_unique<Impl>()) {}
ChromeBlockParser::~ChromeBlockParser() = default;

ChromeBlockParser::Outcome ChromeBlockParser::parse(std::string_view text, uint64_t baseOffset,
                                                    bool knownStart, EventBatch& out) {
    auto& scratch = m_impl->scratch;
    if (!scratch || scratch->capacity() < text.size())
        scratch = std::make_unique<FramedText>(std::max(text.size(), size_t(1) << 16));
    std::memcpy(scratch->data(), text.data(), text.size());
    std::memset(scratch->data() + text.size(), 0, FramedText::kTail);
    scratch->setSize(text.size());
    return parseInPlace(scratch->data(), text.size(), baseOffset, knownStart, out, out.diagnostics);
}

namespace {
using Outcome = ChromeBlockParser::Outcome;
using End = ChromeBlockParser::End;
constexpr uint64_t kNone = ChromeBlockParser::kNone;

/// parseInPlace() when simdjson found a string left open in the framed `body` (`bodyLen`
/// bytes at `bodyOffset`).
Outcome parseUnclosedString(ChromeBlockParser& parser, char* body, size_t bodyLen,
                            uint64_t bodyOffset, EventBatch& out,
                            model::Diagnostics& textDiagnostics) {
    Outcome res;
    // The text ends inside a string (a truncated file, or a block of minified JSON cut
    // mid-string): parse up to the last line break, else up to the last quote, and
    // report the rest as truncated. simdjson reports the open string before invalid
    // UTF-8: replace (and count) it in all of the text now, the carried rest included,
    // so every byte is counted once whichever block it is parsed in.
    base::replaceInvalidUtf8InPlace(body, bodyLen, [&](size_t at) {
        textDiagnostics.add(DiagnosticKind::InvalidUtf8, bodyOffset + at, "byte replaced by '?'");
    });
    const std::string_view b(body, bodyLen);
    size_t cut = b.rfind('\n');
    if (cut == std::string_view::npos || cut == 0) cut = b.rfind('"');
    if (cut == std::string_view::npos || cut == 0) {
        res.end = End::Truncated;
        res.stop = bodyOffset;
        return res;
    }
    FramedText copy(cut);
    std::memcpy(copy.data(), body, cut);
    std::memset(copy.data() + cut, 0, FramedText::kTail);
    Outcome inner = parser.parseInPlace(copy.data(), cut, bodyOffset, true, out, textDiagnostics);
    if (inner.end != End::Consumed)
        return inner; // ArrayClosed: the caller takes the suffix from the full text
    // The cut is an event boundary; the event array may close after it, before the
    // open string (`...}\n]"`: an unclosed string after the array belongs to the
    // envelope, which reports it).
    const std::string_view rest = b.substr(cut);
    if (const size_t close = findArrayClose(rest); close != std::string_view::npos) {
        FramedText tail(close);
        std::memcpy(tail.data(), rest.data(), close);
        std::memset(tail.data() + close, 0, FramedText::kTail);
        Outcome last =
            parser.parseInPlace(tail.data(), close, bodyOffset + cut, true, out, textDiagnostics);
        if (last.end != End::Consumed) return last;
        if (inner.firstElement == kNone) inner.firstElement = last.firstElement;
        if (last.lastElementEnd != kNone) inner.lastElementEnd = last.lastElementEnd;
        inner.end = End::ArrayClosed;
        inner.afterArray = bodyOffset + cut + close + 1;
        inner.stop = inner.afterArray;
        return inner;
    }
    inner.end = End::Truncated;
    inner.stop = bodyOffset + cut;
    return inner;
}

/// parseInPlace() when simdjson refused the framed `body` (`bodyLen` bytes at
/// `bodyOffset`) with `err`, other than for an open string.
Outcome parseBeforeError(ChromeBlockParser& parser, const char* body, size_t bodyLen,
                         uint64_t bodyOffset, error_code err, EventBatch& out,
                         model::Diagnostics& textDiagnostics) {
    Outcome res;
    // simdjson checks all of the text before parsing any of it, so an error in what
    // follows the event array's ']' (read by the envelope parser, and not part of this
    // block when the block is cut at that line) would fail the events: parse up to the
    // ']' when the error lies after it.
    if (const size_t close = findArrayClose(std::string_view(body, bodyLen));
        close != std::string_view::npos) {
        FramedText copy(close);
        std::memcpy(copy.data(), body, close);
        std::memset(copy.data() + close, 0, FramedText::kTail);
        Outcome inner =
            parser.parseInPlace(copy.data(), close, bodyOffset, true, out, textDiagnostics);
        if (inner.end == End::Consumed) {
            inner.end = End::ArrayClosed;
            inner.afterArray = bodyOffset + close + 1;
            inner.stop = inner.afterArray;
        }
        if (inner.end != End::SyntaxError) return inner;
    }
    res.end = End::SyntaxError;
    res.errorOffset = bodyOffset;
    res.stop = bodyOffset;
    res.error = simdjson::error_message(err);
    return res;
}

/// Reads the elements of `arr`, the framed `body` (`bodyLen` bytes at `bodyOffset`, which
/// `doc` iterates), into `out`, up to the frame's ']' or the event array's own.
Outcome readElements(simdjson::ondemand::document& doc, simdjson::ondemand::array& arr,
                     const char* body, size_t bodyLen, uint64_t bodyOffset, EventBatch& out) {
    Outcome res;
    const char* bodyEnd = body + bodyLen;
    auto absolute = [&](const char* p) { return bodyOffset + static_cast<uint64_t>(p - body); };
    error_code err = SUCCESS;
    ChromeEventReader reader(out);
    const char* next = body; // start of the next unparsed element
    for (auto elr : arr) {
        simdjson::ondemand::value el;
        err = std::move(elr).get(el);
        const char* elemStart = next;
        while (elemStart < bodyEnd && isSeparator(*elemStart)) ++elemStart;
        bool isObject = false;
        const char* scalarEnd = nullptr; // type() does not consume a scalar: where its token ends
        if (!err) {
            simdjson::ondemand::json_type t;
            err = el.type().get(t);
            if (!err) {
                elemStart = el.raw_json_token().data();
                if (t == simdjson::ondemand::json_type::object) {
                    isObject = true;
                    simdjson::ondemand::object obj;
                    err = el.get_object().get(obj);
                    if (!err) err = reader.read(obj, absolute(elemStart));
                } else if (t == simdjson::ondemand::json_type::array) {
                    simdjson::ondemand::array inner;
                    std::string_view skipped;
                    err = el.get_array().get(inner);
                    if (!err) err = inner.raw_json().get(skipped);
                    if (!err && skipped.data() + skipped.size() > bodyEnd) {
                        // It was closed by our ']': the block ends inside this array.
                        res.end = End::Truncated;
                        res.stop = absolute(elemStart);
                        return res;
                    }
                } else {
                    const std::string_view token = el.raw_json_token();
                    scalarEnd = token.data() + token.size();
                }
            }
        }
        if (err) {
            const char* loc = nullptr;
            if (elemStart >= bodyEnd) break; // only separators were left
            if (doc.current_location().get(loc) != SUCCESS || loc >= bodyEnd) {
                // Failed on our closing bracket: the block ends inside this event.
                res.end = End::Truncated;
                res.stop = absolute(elemStart);
                return res;
            }
            res.end = End::SyntaxError;
            res.errorOffset = absolute(loc);
            res.error = simdjson::error_message(err);
            res.stop = absolute(elemStart);
            return res;
        }
        // Where this element ends: the next token (',' or ']'); for a scalar, which the
        // iterator has not moved past, the end of its token (and the blanks after it).
        const char* loc = nullptr;
        const char* elemEnd = bodyEnd;
        if (scalarEnd)
            elemEnd = std::min(scalarEnd, bodyEnd);
        else if (doc.current_location().get(loc) == SUCCESS && loc < bodyEnd)
            elemEnd = loc;
        const char* trimmed = elemEnd;
        while (trimmed > elemStart && isSeparator(trimmed[-1])) --trimmed;
        if (res.firstElement == kNone) res.firstElement = absolute(elemStart);
        res.lastElementEnd = absolute(trimmed);
        ++out.entries;
        if (isObject) {
            reader.commit(absolute(elemStart), static_cast<uint32_t>(trimmed - elemStart));
        } else {
            out.diagnostics.add(
                DiagnosticKind::EventNotObject, absolute(elemStart),
                std::string(std::string_view(elemStart, trimmed - elemStart).substr(0, 40)));
        }
        next = elemEnd;
        if (next >= bodyEnd) break;
    }
    // The loop ended: either our closing bracket (everything consumed) or the real end
    // of the event array inside this block; anything else is not JSON (simdjson's
    // iterator can stop at a token that is neither ',' nor ']').
    const char* p = next;
    while (p < bodyEnd && isSeparator(*p)) ++p;
    if (p < bodyEnd) {
        const char* loc = nullptr;
        if (*p == ']' && doc.current_location().get(loc) == SUCCESS && loc <= bodyEnd) {
            res.end = End::ArrayClosed; // `p` is the real ']' of traceEvents
            res.afterArray = absolute(p + 1);
            res.stop = res.afterArray;
            return res;
        }
        res.end = End::SyntaxError;
        res.errorOffset = absolute(p);
        res.stop = absolute(p);
        res.error = "expected ',' or ']' after an event";
        return res;
    }
    res.end = End::Consumed;
    res.stop = bodyOffset + bodyLen; // the end of the text
    return res;
}
} // namespace

ChromeBlockParser::Outcome ChromeBlockParser::parseInPlace(char* text, size_t len,
                                                           uint64_t baseOffset, bool knownStart,
                                                           EventBatch& out,
                                                           model::Diagnostics& textDiagnostics) {
    Outcome res;
    const std::string_view all(text, len);
    size_t begin = 0;
    if (!knownStart) {
        begin = findEventLineStart(all);
        if (begin == std::string_view::npos) {
            res.end = End::NoStart;
            res.stop = baseOffset;
            return res;
        }
    }
    while (begin < len && isSeparator(text[begin])) ++begin;
    if (begin == len) {
        res.end = End::Consumed;
        res.stop = baseOffset + len;
        return res;
    }
    char* body = text + begin;
    const size_t bodyLen = len - begin;
    const uint64_t bodyOffset = baseOffset + begin;
    // "[" + body + "]": the closing bracket satisfies simdjson's root check; an event cut
    // by the block's end still fails on that bracket, at the end position.
    Frame frame(body, bodyLen);

    simdjson::ondemand::document doc;
    const size_t docLen = bodyLen + 2;
    error_code err =
        m_impl->parser.iterate(body - 1, docLen, docLen + simdjson::SIMDJSON_PADDING).get(doc);
    if (err == simdjson::UTF8_ERROR) {
        base::replaceInvalidUtf8InPlace(body, bodyLen, [&](size_t at) {
            textDiagnostics.add(DiagnosticKind::InvalidUtf8, bodyOffset + at,
                                "byte replaced by '?'");
        });
        err =
            m_impl->parser.iterate(body - 1, docLen, docLen + simdjson::SIMDJSON_PADDING).get(doc);
    }
    simdjson::ondemand::array arr;
    if (!err) err = doc.get_array().get(arr);
    if (err == simdjson::UNCLOSED_STRING)
        return parseUnclosedString(*this, body, bodyLen, bodyOffset, out, textDiagnostics);
    if (err) return parseBeforeError(*this, body, bodyLen, bodyOffset, err, out, textDiagnostics);
    return readElements(doc, arr, body, bodyLen, bodyOffset, out);
}

} // namespace stallscope::importers
