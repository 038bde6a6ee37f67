#include "pickle_header.h"

#include <cstdint>

namespace stallscope::importers {

namespace {

/// A little-endian unsigned length of `width` bytes at `at`; false when the bytes end first.
bool lengthAt(std::string_view b, size_t at, size_t width, uint64_t& out) {
    if (width > b.size() || at > b.size() - width) return false;
    out = 0;
    for (size_t k = 0; k < width; ++k)
        out |= static_cast<uint64_t>(static_cast<unsigned char>(b[at + k])) << (8 * k);
    return true;
}

/// Bytes of operand after each argument-taking opcode (fixed width), or -1 when unknown.
int fixedOperand(unsigned char op) {
    switch (op) {
    case 'q':
    case 'h':
    case 'K': return 1; // BINPUT, BINGET, BININT1
    case 'M': return 2; // BININT2
    case 'r':
    case 'j':
    case 'J': return 4; // LONG_BINPUT, LONG_BINGET, BININT
    case 'G':
    case 0x95: return 8; // BINFLOAT, FRAME
    case 0x94:
    case '(':
    case 'N':
    case 0x88:
    case 0x89: // MEMOIZE, MARK, NONE, NEWTRUE/FALSE
    case 's':
    case 'u':
    case 'a':
    case 'e':
    case 't': // SETITEM(S), APPEND(S), TUPLE
    case 0x85:
    case 0x86:
    case 0x87: // TUPLE1..3
    case '}':
    case ']':
    case ')': return 0; // EMPTY_DICT/LIST/TUPLE
    default: return -1;
    }
}

/// Width of the length of a counted operand (strings, LONG1/LONG4), or 0.
size_t countedOperand(unsigned char op, bool& isString) {
    isString = true;
    switch (op) {
    case 0x8c:
    case 'U': return 1; // SHORT_BINUNICODE, SHORT_BINSTRING
    case 'X':
    case 'T': return 4;  // BINUNICODE, BINSTRING
    case 0x8d: return 8; // BINUNICODE8
    default: break;
    }
    isString = false;
    switch (op) {
    case 0x8a:
    case 'C': return 1; // LONG1, SHORT_BINBYTES
    case 0x8b:
    case 'B': return 4; // LONG4, BINBYTES
    default: return 0;
    }
}

bool isBookkeeping(unsigned char op) {
    return op == 0x95 || op == 0x94 || op == '(' || op == 'q' || op == 'r';
}

} // namespace

PickleHeader readPickleHeader(std::string_view b) {
    PickleHeader h;
    if (b.size() < 2 || static_cast<unsigned char>(b[0]) != 0x80) return h;
    const int proto = static_cast<unsigned char>(b[1]);
    if (proto < 2 || proto > 5) return h;
    h.pickle = true;
    h.protocol = proto;
    size_t i = 2;
    while (i < b.size() && h.strings.size() < PickleHeader::kMaxStrings) {
        const auto op = static_cast<unsigned char>(b[i++]);
        if (h.top == 0 && !isBookkeeping(op))
            h.top = op == '}' || op == ']' || op == ')' ? static_cast<char>(op) : '?';
        if (const int fixed = fixedOperand(op); fixed >= 0) {
            if (static_cast<size_t>(fixed) > b.size() - i) break;
            i += static_cast<size_t>(fixed);
            continue;
        }
        bool isString = false;
        const size_t width = countedOperand(op, isString);
        uint64_t len = 0;
        if (width == 0 || !lengthAt(b, i, width, len)) break;
        i += width;
        if (len > b.size() - i) break; // cut by the end of the bytes read
        if (isString && len <= PickleHeader::kMaxStringBytes)
            h.strings.emplace_back(b.substr(i, static_cast<size_t>(len)));
        i += static_cast<size_t>(len);
    }
    return h;
}

bool isAllocatorSnapshot(const PickleHeader& h) {
    if (!h.pickle || h.strings.empty()) return false;
    if (h.top == '}') return h.strings[0] == "segments" || h.strings[0] == "device_traces";
    return h.top == ']' && h.strings.size() >= 2 && h.strings[0] == "device" &&
           h.strings[1] == "address";
}

} // namespace stallscope::importers
