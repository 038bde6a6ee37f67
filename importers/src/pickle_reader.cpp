// The restricted pickle reader (pickle_reader.h). Opcodes and their operands follow
// CPython's Lib/pickle.py and pickletools.py (protocol 0 to 5).
#include "pickle_reader.h"

#include "stallscope/base/utf8.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_map>

namespace stallscope::importers::pickle {

std::string_view kindName(Kind k) {
    switch (k) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::BigInt: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
    }
    return "?";
}

std::optional<int64_t> Document::integer(Id v) const {
    const Node& n = m_nodes[v];
    if (n.kind == Kind::Int || n.kind == Kind::Bool) return n.value;
    return std::nullopt;
}

std::optional<double> Document::number(Id v) const {
    const Node& n = m_nodes[v];
    if (n.kind == Kind::Float) return std::bit_cast<double>(n.value);
    if (n.kind == Kind::Int || n.kind == Kind::Bool) return static_cast<double>(n.value);
    return std::nullopt;
}

std::optional<bool> Document::boolean(Id v) const {
    const Node& n = m_nodes[v];
    if (n.kind == Kind::Bool) return n.value != 0;
    return std::nullopt;
}

std::string_view Document::text(Id v) const {
    const Node& n = m_nodes[v];
    if (n.kind != Kind::Str && n.kind != Kind::Bytes) return {};
    return std::string_view(m_text).substr(static_cast<size_t>(n.value), n.aux);
}

std::span<const Document::Id> Document::items(Id v) const {
    const Node& n = m_nodes[v];
    if (n.kind != Kind::List && n.kind != Kind::Tuple && n.kind != Kind::Dict) return {};
    return m_containers[n.aux];
}

std::optional<Document::Id> Document::get(Id dict, std::string_view key) const {
    if (kind(dict) != Kind::Dict) return std::nullopt;
    const std::vector<Id>& kv = m_containers[m_nodes[dict].aux];
    for (size_t i = kv.size(); i >= 2; i -= 2)
        if (kind(kv[i - 2]) == Kind::Str && text(kv[i - 2]) == key) return kv[i - 1];
    return std::nullopt;
}

size_t Document::memoryBytes() const {
    size_t n = m_nodes.capacity() * sizeof(Node) + m_text.capacity() +
               m_containers.capacity() * sizeof(std::vector<Id>);
    for (const auto& c : m_containers) n += c.capacity() * sizeof(Id);
    return n;
}

namespace {

constexpr size_t kChunk = size_t(1) << 20;
// A str, bytes or int longer than this is refused (the text pool's offsets are 32-bit
// lengths; no allocator snapshot holds one string of 4 GiB).
constexpr uint64_t kMaxOperand = UINT32_MAX;
constexpr size_t kMaxLine = 1 << 16; // protocol 0's text operands (numbers, memo keys)

/// A step's outcome: handled, with its error if any.
bool done(std::optional<Error>& out, std::optional<Error> e) {
    out = std::move(e);
    return true;
}

std::string hex(unsigned char op) {
    static const char* d = "0123456789abcdef";
    return std::string("0x") + d[op >> 4] + d[op & 15];
}

} // namespace

class Reader {
public:
    explicit Reader(ByteStream& in) : m_in(in) {
        m_buf.resize(kChunk);
        // About one value per 12 bytes in allocator snapshots: reserved (virtual until used)
        // so that growing does not copy the table again and again.
        if (const uint64_t total = in.inputTotal(); total > 0 && total < (uint64_t(1) << 40))
            m_doc.m_nodes.reserve(static_cast<size_t>(total / 12));
    }

    Result<Document> run(ReadStats* stats);

private:
    using Id = Document::Id;

    // --- input ---
    bool fill(size_t need);
    bool byte(unsigned char& c);
    bool bytes(size_t n, char* out);
    bool le(size_t width, uint64_t& out);
    bool appendText(uint64_t n); // n bytes from the input onto m_doc.m_text
    bool line(std::string& out);

    // --- values ---
    Id node(Kind k, int64_t value = 0, uint32_t aux = 0);
    Id container(Kind k, std::vector<Id> items = {});
    Id integerFrom(std::string_view littleEndian);
    Id textNode(Kind k, uint64_t length);
    bool pop(Id& out);
    bool popMark(std::vector<Id>& out);
    bool top(Id& out) const;

    Error error(std::string what) const {
        return Error{ErrorKind::InvalidStructure,
                     "pickle: " + what + " (opcode at byte " + std::to_string(m_opAt) + ")",
                     m_opAt};
    }
    Error truncated() const {
        if (m_in.state() != StreamState::Ok && m_in.state() != StreamState::End)
            return Error{ErrorKind::Unreadable, m_in.message(), m_opAt};
        return Error{ErrorKind::Truncated,
                     "pickle: the file ends inside the opcode at byte " + std::to_string(m_opAt) +
                         " (before STOP): the file is cut short",
                     m_opAt};
    }
    std::optional<Error> refused(unsigned char op);
    std::optional<Error> memoPut(uint64_t index);
    std::optional<Error> memoGet(uint64_t index);
    std::optional<Error> setItems(Id dict, std::span<const Id> kv);
    std::optional<Error> step(unsigned char op, bool& stop);
    bool fastStep();
    // The opcodes by family; each returns whether it knew `op` (its error in `out`).
    bool stackStep(unsigned char op, bool& stop, std::optional<Error>& out);
    bool scalarStep(unsigned char op, std::optional<Error>& out);
    bool containerStep(unsigned char op, std::optional<Error>& out);

    ByteStream& m_in;
    std::vector<char> m_buf;
    size_t m_pos = 0, m_end = 0;
    uint64_t m_consumed = 0; // bytes before m_buf[0]
    uint64_t m_opAt = 0;
    bool m_eof = false;

    Document m_doc;
    std::vector<Id> m_stack;
    std::vector<size_t> m_marks;
    std::vector<Id> m_memo; // dense memo (kNoValue: unset)
    std::unordered_map<uint64_t, Id> m_sparseMemo;
    uint64_t m_memoCount = 0;
    int m_protocol = 0;
};

bool Reader::fill(size_t need) {
    if (m_end - m_pos >= need) return true;
    if (m_pos > 0) {
        std::memmove(m_buf.data(), m_buf.data() + m_pos, m_end - m_pos);
        m_consumed += m_pos;
        m_end -= m_pos;
        m_pos = 0;
    }
    if (m_buf.size() < need) m_buf.resize(need);
    while (m_end < need && !m_eof) {
        const size_t got = m_in.read(m_buf.data() + m_end, m_buf.size() - m_end);
        if (got == 0) m_eof = true;
        m_end += got;
    }
    return m_end - m_pos >= need;
}

bool Reader::byte(unsigned char& c) {
    if (!fill(1)) return false;
    c = static_cast<unsigned char>(m_buf[m_pos++]);
    return true;
}

bool Reader::bytes(size_t n, char* out) {
    if (!fill(n)) return false;
    std::memcpy(out, m_buf.data() + m_pos, n);
    m_pos += n;
    return true;
}

bool Reader::le(size_t width, uint64_t& out) {
    unsigned char b[8];
    if (!bytes(width, reinterpret_cast<char*>(b))) return false;
    out = 0;
    for (size_t k = 0; k < width; ++k) out |= static_cast<uint64_t>(b[k]) << (8 * k);
    return true;
}

bool Reader::appendText(uint64_t n) {
    while (n > 0) {
        if (!fill(1)) return false;
        const size_t take = static_cast<size_t>(std::min<uint64_t>(n, m_end - m_pos));
        m_doc.m_text.append(m_buf.data() + m_pos, take);
        m_pos += take;
        n -= take;
    }
    return true;
}

bool Reader::line(std::string& out) {
    out.clear();
    unsigned char c = 0;
    while (out.size() <= kMaxLine) {
        if (!byte(c)) return false;
        if (c == '\n') return true;
        out.push_back(static_cast<char>(c));
    }
    return false;
}

Document::Id Reader::node(Kind k, int64_t value, uint32_t aux) {
    m_doc.m_nodes.push_back({k, aux, value});
    return static_cast<Id>(m_doc.m_nodes.size() - 1);
}

Document::Id Reader::container(Kind k, std::vector<Id> items) {
    m_doc.m_containers.push_back(std::move(items));
    return node(k, 0, static_cast<uint32_t>(m_doc.m_containers.size() - 1));
}

/// A little-endian two's-complement integer (LONG1, LONG4): Int when it fits int64.
Document::Id Reader::integerFrom(std::string_view b) {
    const auto at = [&](size_t i) { return static_cast<unsigned char>(b[i]); };
    const bool negative = !b.empty() && (at(b.size() - 1) & 0x80);
    size_t n = b.size();
    // Sign-extension bytes above the eighth carry no value.
    while (n > 8 && at(n - 1) == (negative ? 0xff : 0x00)) --n;
    if (n > 8 || (n == 8 && ((at(7) & 0x80) != 0) != negative)) return node(Kind::BigInt);
    uint64_t v = negative ? ~uint64_t(0) : 0;
    for (size_t k = 0; k < n; ++k) {
        v &= ~(uint64_t(0xff) << (8 * k));
        v |= static_cast<uint64_t>(at(k)) << (8 * k);
    }
    return node(Kind::Int, static_cast<int64_t>(v));
}

Document::Id Reader::textNode(Kind k, uint64_t length) {
    const size_t offset = m_doc.m_text.size();
    return node(k, static_cast<int64_t>(offset), static_cast<uint32_t>(length));
}

bool Reader::pop(Id& out) {
    const size_t floor = m_marks.empty() ? 0 : m_marks.back();
    if (m_stack.size() <= floor) return false;
    out = m_stack.back();
    m_stack.pop_back();
    return true;
}

bool Reader::popMark(std::vector<Id>& out) {
    if (m_marks.empty()) return false;
    const size_t mark = m_marks.back();
    m_marks.pop_back();
    out.assign(m_stack.begin() + static_cast<std::ptrdiff_t>(mark), m_stack.end());
    m_stack.resize(mark);
    return true;
}

bool Reader::top(Id& out) const {
    const size_t floor = m_marks.empty() ? 0 : m_marks.back();
    if (m_stack.size() <= floor) return false;
    out = m_stack.back();
    return true;
}

std::optional<Error> Reader::memoPut(uint64_t index) {
    Id v = 0;
    if (!top(v)) return error("PUT with nothing on the stack");
    const bool dense = index < m_memo.size() + (size_t(1) << 16);
    if (dense) {
        if (index >= m_memo.size())
            m_memo.resize(static_cast<size_t>(index) + 1, Document::kNoValue);
        if (m_memo[index] == Document::kNoValue) ++m_memoCount;
        m_memo[index] = v;
    } else {
        if (m_sparseMemo.emplace(index, v).second)
            ++m_memoCount;
        else
            m_sparseMemo[index] = v;
    }
    return std::nullopt;
}

std::optional<Error> Reader::memoGet(uint64_t index) {
    Id v = Document::kNoValue;
    if (index < m_memo.size())
        v = m_memo[index];
    else if (auto it = m_sparseMemo.find(index); it != m_sparseMemo.end())
        v = it->second;
    if (v == Document::kNoValue)
        return error("GET of memo entry " + std::to_string(index) + ", which was never set");
    m_stack.push_back(v);
    return std::nullopt;
}

std::optional<Error> Reader::setItems(Id dict, std::span<const Id> kv) {
    if (m_doc.kind(dict) != Kind::Dict)
        return error("SETITEM(S) on a " + std::string(kindName(m_doc.kind(dict))) + ", not a dict");
    if (kv.size() % 2) return error("SETITEMS with an odd number of items");
    for (size_t i = 0; i < kv.size(); i += 2) {
        const Kind k = m_doc.kind(kv[i]);
        if (k == Kind::List || k == Kind::Dict)
            return error("a dict key that is a " + std::string(kindName(k)) + " (unhashable)");
    }
    std::vector<Id>& items = m_doc.m_containers[m_doc.m_nodes[dict].aux];
    items.insert(items.end(), kv.begin(), kv.end());
    return std::nullopt;
}

std::optional<Error> Reader::refused(unsigned char op) {
    const char* what = nullptr;
    switch (op) {
    case 'c': {
        std::string module, name;
        if (!line(module) || !line(name)) return truncated();
        return Error{ErrorKind::Unsupported,
                     "pickle: refused GLOBAL " +
                         base::truncateUtf8(base::sanitizeUtf8(module), 80) + "." +
                         base::truncateUtf8(base::sanitizeUtf8(name), 80) + " at byte " +
                         std::to_string(m_opAt) +
                         ": the file asks to import a Python object; Stallscope reads only "
                         "builtins (dict, list, tuple, str, bytes, int, float, bool, None) and "
                         "never runs code from a file",
                     m_opAt};
    }
    case 0x93: what = "STACK_GLOBAL (import a class or function)"; break;
    case 'R': what = "REDUCE (call a function)"; break;
    case 'b': what = "BUILD (set an object's state)"; break;
    case 'i': what = "INST (make an object of a class)"; break;
    case 'o': what = "OBJ (make an object of a class)"; break;
    case 0x81: what = "NEWOBJ (make an object of a class)"; break;
    case 0x92: what = "NEWOBJ_EX (make an object of a class)"; break;
    case 'P':
    case 'Q': what = "PERSID (a persistent id: an object kept outside the file)"; break;
    case 0x82:
    case 0x83:
    case 0x84: what = "EXT (an object of the extension registry)"; break;
    case 0x97:
    case 0x98: what = "an out-of-band buffer (protocol 5's NEXT_BUFFER)"; break;
    case 0x8f:
    case 0x90:
    case 0x91: what = "a set (not in an allocator snapshot)"; break;
    case 'S': what = "protocol 0's quoted STRING"; break;
    default: return std::nullopt;
    }
    return Error{ErrorKind::Unsupported,
                 "pickle: refused " + std::string(what) + " at byte " + std::to_string(m_opAt) +
                     ": Stallscope reads only builtins (dict, list, tuple, str, bytes, int, "
                     "float, bool, None) and never runs code from a file",
                 m_opAt};
}

bool Reader::stackStep(unsigned char op, bool& stop, std::optional<Error>& out) {
    uint64_t n = 0;
    Id v = 0;
    std::vector<Id> items;
    std::string text;
    switch (op) {
    case 0x80: // PROTO
        if (!le(1, n)) return done(out, truncated());
        if (n > 5)
            return done(out,
                        error("protocol " + std::to_string(n) + " (this reader knows 0 to 5)"));
        m_protocol = static_cast<int>(n);
        return done(out, std::nullopt);
    case 0x95: // FRAME: a hint of the next frame's size; the reader streams anyway
        if (!le(8, n)) return done(out, truncated());
        return done(out, std::nullopt);
    case '.': // STOP
        if (!pop(v)) return done(out, error("STOP with nothing on the stack"));
        m_doc.m_root = v;
        stop = true;
        return done(out, std::nullopt);
    case '(': m_marks.push_back(m_stack.size()); return done(out, std::nullopt);
    case '0': // POP (or POP the mark when the stack above it is empty, as Python does)
        if (pop(v)) return done(out, std::nullopt);
        if (!popMark(items)) return done(out, error("POP with nothing on the stack"));
        return done(out, std::nullopt);
    case '1':
        if (!popMark(items)) return done(out, error("POP_MARK without a MARK"));
        return done(out, std::nullopt);
    case '2':
        if (!top(v)) return done(out, error("DUP with nothing on the stack"));
        m_stack.push_back(v);
        return done(out, std::nullopt);
    case 'N': m_stack.push_back(node(Kind::None)); return done(out, std::nullopt);
    case 0x88: m_stack.push_back(node(Kind::Bool, 1)); return done(out, std::nullopt);
    case 0x89: m_stack.push_back(node(Kind::Bool, 0)); return done(out, std::nullopt);
    case 'p': // PUT (text index)
        if (!line(text)) return done(out, truncated());
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
            text.size() > 18)
            return done(out, error("PUT with an index that is not a number"));
        return done(out, memoPut(std::stoull(text)));
    case 'q':
    case 'r':
        if (!le(op == 'q' ? 1 : 4, n)) return done(out, truncated());
        return done(out, memoPut(n));
    case 0x94: return done(out, memoPut(m_memoCount)); // MEMOIZE: the next index is the memo's size
    case 'g':
        if (!line(text)) return done(out, truncated());
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
            text.size() > 18)
            return done(out, error("GET with an index that is not a number"));
        return done(out, memoGet(std::stoull(text)));
    case 'h':
    case 'j':
        if (!le(op == 'h' ? 1 : 4, n)) return done(out, truncated());
        return done(out, memoGet(n));
    default: return false;
    }
}

bool Reader::scalarStep(unsigned char op, std::optional<Error>& out) {
    uint64_t n = 0;
    std::string text;
    char raw[8];
    switch (op) {
    case 'K':
    case 'M':
        if (!le(op == 'K' ? 1 : 2, n)) return done(out, truncated());
        m_stack.push_back(node(Kind::Int, static_cast<int64_t>(n)));
        return done(out, std::nullopt);
    case 'J':
        if (!le(4, n)) return done(out, truncated());
        m_stack.push_back(node(Kind::Int, static_cast<int32_t>(static_cast<uint32_t>(n))));
        return done(out, std::nullopt);
    case 0x8a:
    case 0x8b: { // LONG1, LONG4
        if (!le(op == 0x8a ? 1 : 4, n)) return done(out, truncated());
        if (n > kMaxOperand) return done(out, error("an int of " + std::to_string(n) + " bytes"));
        std::string b;
        for (uint64_t got = 0; got < n;) { // grows as bytes arrive
            if (!fill(1)) return done(out, truncated());
            const size_t take = static_cast<size_t>(std::min<uint64_t>(n - got, m_end - m_pos));
            b.append(m_buf.data() + m_pos, take);
            m_pos += take;
            got += take;
        }
        m_stack.push_back(integerFrom(b));
        return done(out, std::nullopt);
    }
    case 'I':
    case 'L': { // protocol 0 INT / LONG: decimal text ("I01" is True, "I00" False)
        if (!line(text)) return done(out, truncated());
        if (op == 'I' && (text == "01" || text == "00")) {
            m_stack.push_back(node(Kind::Bool, text == "01"));
            return done(out, std::nullopt);
        }
        if (op == 'L' && !text.empty() && text.back() == 'L') text.pop_back();
        errno = 0;
        char* end = nullptr;
        const long long x = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0')
            return done(out, error("INT/LONG text that is not a number"));
        m_stack.push_back(errno == ERANGE ? node(Kind::BigInt) : node(Kind::Int, x));
        return done(out, std::nullopt);
    }
    case 'G': { // BINFLOAT: big-endian IEEE double
        if (!bytes(8, raw)) return done(out, truncated());
        uint64_t bits = 0;
        for (char c : raw) bits = (bits << 8) | static_cast<unsigned char>(c);
        m_stack.push_back(node(Kind::Float, static_cast<int64_t>(bits)));
        return done(out, std::nullopt);
    }
    case 'F': { // protocol 0 FLOAT: repr text
        if (!line(text)) return done(out, truncated());
        char* end = nullptr;
        const double d = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0')
            return done(out, error("FLOAT text that is not a number"));
        m_stack.push_back(node(Kind::Float, std::bit_cast<int64_t>(d)));
        return done(out, std::nullopt);
    }
    case 0x8c:
    case 'X':
    case 0x8d: // SHORT_BINUNICODE, BINUNICODE, BINUNICODE8
    case 'U':
    case 'T': // SHORT_BINSTRING, BINSTRING (Python 2 str, read as text as Python 3 does)
    case 'C':
    case 'B':
    case 0x8e:
    case 0x96: { // SHORT_BINBYTES, BINBYTES, BINBYTES8, BYTEARRAY8
        const size_t width = (op == 0x8c || op == 'U' || op == 'C')     ? 1
                             : (op == 0x8d || op == 0x8e || op == 0x96) ? 8
                                                                        : 4;
        if (!le(width, n)) return done(out, truncated());
        if (n > kMaxOperand) return done(out, error("a string of " + std::to_string(n) + " bytes"));
        const bool isText = op == 0x8c || op == 'X' || op == 0x8d || op == 'U' || op == 'T';
        const Id s = textNode(isText ? Kind::Str : Kind::Bytes, n);
        if (!appendText(n)) return done(out, truncated());
        if (isText) {
            // Text as UTF-8 (the binary strings as Python 3 reads them: ASCII, else bytes as
            // Latin-1 would be; replaced here when invalid, never trusted as UTF-8).
            std::string_view t = m_doc.text(s);
            if (!base::isValidUtf8(t)) {
                const std::string clean = base::sanitizeUtf8(t);
                m_doc.m_text.resize(m_doc.m_text.size() - t.size());
                m_doc.m_nodes[s].value = static_cast<int64_t>(m_doc.m_text.size());
                m_doc.m_nodes[s].aux = static_cast<uint32_t>(clean.size());
                m_doc.m_text += clean;
            }
        }
        m_stack.push_back(s);
        return done(out, std::nullopt);
    }
    case 'V': { // protocol 0 UNICODE: raw-unicode-escape text on one line
        if (!line(text)) return done(out, truncated());
        const std::string clean = base::sanitizeUtf8(text);
        const Id s = textNode(Kind::Str, clean.size());
        m_doc.m_text += clean;
        m_stack.push_back(s);
        return done(out, std::nullopt);
    }
    default: return false;
    }
}

bool Reader::containerStep(unsigned char op, std::optional<Error>& out) {
    Id v = 0, w = 0;
    std::vector<Id> items;
    switch (op) {
    case ']': m_stack.push_back(container(Kind::List)); return done(out, std::nullopt);
    case ')': m_stack.push_back(container(Kind::Tuple)); return done(out, std::nullopt);
    case '}': m_stack.push_back(container(Kind::Dict)); return done(out, std::nullopt);
    case 'l':
    case 't':
        if (!popMark(items)) return done(out, error("LIST/TUPLE without a MARK"));
        m_stack.push_back(container(op == 'l' ? Kind::List : Kind::Tuple, std::move(items)));
        return done(out, std::nullopt);
    case 0x85:
    case 0x86:
    case 0x87: { // TUPLE1..3
        const size_t k = static_cast<size_t>(op - 0x84);
        items.resize(k);
        for (size_t i = k; i-- > 0;)
            if (!pop(items[i]))
                return done(out, error("TUPLE" + std::to_string(k) + " with too few items"));
        m_stack.push_back(container(Kind::Tuple, std::move(items)));
        return done(out, std::nullopt);
    }
    case 'a': // APPEND
        if (!pop(v) || !top(w)) return done(out, error("APPEND without a list"));
        if (m_doc.kind(w) != Kind::List)
            return done(
                out, error("APPEND to a " + std::string(kindName(m_doc.kind(w))) + ", not a list"));
        m_doc.m_containers[m_doc.m_nodes[w].aux].push_back(v);
        return done(out, std::nullopt);
    case 'e': // APPENDS
        if (!popMark(items) || !top(w))
            return done(out, error("APPENDS without a MARK and a list"));
        if (m_doc.kind(w) != Kind::List)
            return done(out, error("APPENDS to a " + std::string(kindName(m_doc.kind(w))) +
                                   ", not a list"));
        {
            std::vector<Id>& into = m_doc.m_containers[m_doc.m_nodes[w].aux];
            into.insert(into.end(), items.begin(), items.end());
        }
        return done(out, std::nullopt);
    case 'd': { // DICT
        if (!popMark(items)) return done(out, error("DICT without a MARK"));
        const Id d = container(Kind::Dict);
        if (auto e = setItems(d, items)) return done(out, e);
        m_stack.push_back(d);
        return done(out, std::nullopt);
    }
    case 's': // SETITEM
        if (!pop(v) || !pop(w)) return done(out, error("SETITEM without a key and a value"));
        {
            Id d = 0;
            if (!top(d)) return done(out, error("SETITEM without a dict"));
            const Id kv[2] = {w, v};
            return done(out, setItems(d, kv));
        }
    case 'u': { // SETITEMS
        if (!popMark(items)) return done(out, error("SETITEMS without a MARK"));
        Id d = 0;
        if (!top(d)) return done(out, error("SETITEMS without a dict"));
        return done(out, setItems(d, items));
    }
    default: return false;
    }
}

std::optional<Error> Reader::step(unsigned char op, bool& stop) {
    std::optional<Error> out;
    if (stackStep(op, stop, out) || scalarStep(op, out) || containerStep(op, out)) return out;
    if (auto e = refused(op)) return e;
    return error("unknown opcode " + hex(op) + ": not a pickle, or a damaged one");
}

/// The opcodes most of a snapshot is made of (memo GETs, MEMOIZE, small ints, MARK, short
/// strings, empty containers, booleans), done in place when their operands are in the buffer
/// and nothing can go wrong; anything else (or any doubt) is left to step(), which says why.
bool Reader::fastStep() {
    if (m_end - m_pos < 16) return false;
    const auto* b = reinterpret_cast<const unsigned char*>(m_buf.data()) + m_pos;
    const size_t floor = m_marks.empty() ? 0 : m_marks.back();
    auto le32 = [](const unsigned char* p) {
        return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    };
    switch (b[0]) {
    case 'h':
    case 'j': { // BINGET, LONG_BINGET
        const uint64_t index = b[0] == 'h' ? b[1] : le32(b + 1);
        if (index >= m_memo.size() || m_memo[index] == Document::kNoValue) return false;
        m_stack.push_back(m_memo[index]);
        m_pos += b[0] == 'h' ? 2 : 5;
        return true;
    }
    case 0x94: // MEMOIZE, appending to a dense memo
        if (m_stack.size() <= floor || m_memoCount != m_memo.size()) return false;
        m_memo.push_back(m_stack.back());
        ++m_memoCount;
        m_pos += 1;
        return true;
    case '(':
        m_marks.push_back(m_stack.size());
        m_pos += 1;
        return true;
    case 'K':
        m_stack.push_back(node(Kind::Int, b[1]));
        m_pos += 2;
        return true;
    case 'M':
        m_stack.push_back(node(Kind::Int, int64_t(b[1]) | int64_t(b[2]) << 8));
        m_pos += 3;
        return true;
    case 'J':
        m_stack.push_back(node(Kind::Int, static_cast<int32_t>(le32(b + 1))));
        m_pos += 5;
        return true;
    case 0x88:
    case 0x89:
        m_stack.push_back(node(Kind::Bool, b[0] == 0x88));
        m_pos += 1;
        return true;
    case 'N':
        m_stack.push_back(node(Kind::None));
        m_pos += 1;
        return true;
    case '}':
    case ']':
        m_stack.push_back(container(b[0] == '}' ? Kind::Dict : Kind::List));
        m_pos += 1;
        return true;
    case 0x8c: { // SHORT_BINUNICODE of ASCII text
        const size_t n = b[1];
        if (m_end - m_pos < 2 + n) return false;
        for (size_t k = 0; k < n; ++k)
            if (b[2 + k] & 0x80) return false; // UTF-8 is checked on the slow path
        const Id v = textNode(Kind::Str, n);
        m_doc.m_text.append(reinterpret_cast<const char*>(b + 2), n);
        m_stack.push_back(v);
        m_pos += 2 + n;
        return true;
    }
    default: return false;
    }
}

Result<Document> Reader::run(ReadStats* stats) {
    uint64_t opcodes = 0;
    for (bool stop = false; !stop;) {
        if (fastStep()) {
            ++opcodes;
            continue;
        }
        m_opAt = m_consumed + m_pos;
        unsigned char op = 0;
        if (!byte(op)) {
            if (opcodes == 0 &&
                (m_in.state() == StreamState::Ok || m_in.state() == StreamState::End))
                return Error{ErrorKind::Empty, "pickle: the file is empty", 0};
            return truncated();
        }
        ++opcodes;
        if (auto e = step(op, stop)) return std::move(*e);
    }
    if (stats) {
        stats->bytes = m_consumed + m_pos;
        stats->opcodes = opcodes;
        stats->protocol = m_protocol;
    }
    return std::move(m_doc);
}

Result<Document> readPickle(ByteStream& in, ReadStats* stats) {
    Reader r(in);
    return r.run(stats);
}

} // namespace stallscope::importers::pickle
