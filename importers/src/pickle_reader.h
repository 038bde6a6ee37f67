#pragma once
// A reader of the Python pickle protocol (0 to 5) that builds builtins only: None, bool,
// int, float, str, bytes (and bytearray), list, tuple and dict. It refuses, with the opcode
// and its byte offset, everything that would make an object of another type or call
// something: GLOBAL / STACK_GLOBAL (a class or function), REDUCE, BUILD, INST, OBJ, NEWOBJ,
// NEWOBJ_EX, PERSID / BINPERSID, the extension registry (EXT1/2/4), out-of-band buffers,
// sets, and protocol 0's quoted STRING. Nothing is ever constructed but the values below and
// nothing is ever called: it is a stack machine over a table of values, not an unpickler.
//
// Streaming: the input is read in chunks from a ByteStream; a length in the file is never
// trusted for an allocation (a string grows as its bytes arrive, so a lying length ends in
// "truncated", not in a huge buffer). Memory is linear in the input: every value costs at
// least one opcode byte. The walk has no recursion, so deep nesting costs nothing; values
// may share (memo) and may even contain themselves, as in Python: a consumer that walks
// values must bound its depth (Document::kMaxWalkDepth).
#include "byte_stream.h"

#include "stallscope/importers/result.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::importers::pickle {

enum class Kind : uint8_t { None, Bool, Int, BigInt, Float, Str, Bytes, List, Tuple, Dict };

std::string_view kindName(Kind k);

/// The values one pickle built, and its top-level value.
class Document {
public:
    using Id = uint32_t;
    static constexpr Id kNoValue = UINT32_MAX;
    static constexpr int kMaxWalkDepth = 64;

    [[nodiscard]] Id root() const { return m_root; }
    [[nodiscard]] Kind kind(Id v) const { return m_nodes[v].kind; }
    /// int or bool as int64 (nullopt for other kinds and ints beyond int64).
    [[nodiscard]] std::optional<int64_t> integer(Id v) const;
    /// int or float as double.
    [[nodiscard]] std::optional<double> number(Id v) const;
    [[nodiscard]] std::optional<bool> boolean(Id v) const;
    /// The UTF-8 text of a str, the bytes of a bytes value; empty for other kinds.
    [[nodiscard]] std::string_view text(Id v) const;
    /// Items of a list or tuple; a dict's keys and values, alternating; empty otherwise.
    [[nodiscard]] std::span<const Id> items(Id v) const;
    /// The value of `key` (a str key) in a dict: the last one set, as in Python.
    [[nodiscard]] std::optional<Id> get(Id dict, std::string_view key) const;
    [[nodiscard]] bool isList(Id v) const {
        return kind(v) == Kind::List || kind(v) == Kind::Tuple;
    }
    [[nodiscard]] size_t valueCount() const { return m_nodes.size(); }
    [[nodiscard]] size_t memoryBytes() const;

private:
    friend class Reader;
    struct Node {
        Kind kind = Kind::None;
        uint32_t aux = 0;  // str/bytes: length; containers: index in m_containers
        int64_t value = 0; // int, bool; float bits; str/bytes: offset in m_text
    };
    std::vector<Node> m_nodes;
    std::vector<std::vector<Id>> m_containers;
    std::string m_text;
    Id m_root = kNoValue;
};

struct ReadStats {
    uint64_t bytes = 0;   // input bytes read
    uint64_t opcodes = 0; // opcodes executed
    int protocol = 0;
};

/// Reads one pickle from `in` (up to its STOP). The error says which opcode was refused or
/// what was malformed, with the byte offset of the opcode.
Result<Document> readPickle(ByteStream& in, ReadStats* stats = nullptr);

} // namespace stallscope::importers::pickle
