#pragma once
// What the first opcodes of a Python pickle say, read without unpickling: the protocol,
// the kind of the top-level object and the first few strings (a dict's first keys). Only
// protocols 2 to 5 are recognised (they start with the PROTO opcode, 0x80); the walk stops
// at the first opcode it does not know. Nothing is ever constructed or called.
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::importers {

struct PickleHeader {
    bool pickle = false; // PROTO 2..5 first
    int protocol = 0;
    char top = 0; // '}' dict, ']' list, ')' tuple, '?' something else, 0 unknown
    std::vector<std::string> strings; // the first string literals, in order (at most kMaxStrings)

    static constexpr size_t kMaxStrings = 8;
    static constexpr size_t kMaxStringBytes = 256; // longer strings are skipped, not kept
};

PickleHeader readPickleHeader(std::string_view firstBytes);

/// torch.cuda.memory._dump_snapshot / _snapshot(): a dict whose first key is "segments"
/// (or "device_traces"); torch.cuda.memory_snapshot(): a list of segment dicts whose first
/// keys are "device", "address".
bool isAllocatorSnapshot(const PickleHeader& header);

} // namespace stallscope::importers
