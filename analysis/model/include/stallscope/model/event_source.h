#pragma once
// Where an event's full text lives after import. The model keeps only a (offset, length)
// reference per event; args and other rarely needed fields are read back on demand
// (spec/style.md: "args kept raw and parsed on demand"). Importers provide the
// format-specific implementation (Chrome JSON from a file, a gzip index, memory, ...).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stallscope::model {

struct SourceRef {
    uint64_t offset = 0;
    uint32_t length = 0;
    [[nodiscard]] bool valid() const { return length != 0; }
};

/// One argument as written: the key, and the value as JSON text (numbers and strings
/// exactly as in the file, arrays/objects verbatim).
struct ArgValue {
    std::string key;
    std::string json;
};

class EventSource {
public:
    virtual ~EventSource() = default;
    /// Human-readable origin ("resnet.json.gz (gzip, indexed)").
    [[nodiscard]] virtual std::string description() const = 0;
    /// The event's raw text. Returns false and sets `error` when it cannot be read.
    virtual bool rawEvent(SourceRef ref, std::string& out, std::string& error) const = 0;
    /// The event's arguments in file order. Returns false and sets `error` on failure.
    virtual bool args(SourceRef ref, std::vector<ArgValue>& out, std::string& error) const = 0;
    /// Bytes this source keeps resident (indexes, caches), for memory accounting.
    [[nodiscard]] virtual size_t memoryBytes() const { return 0; }
};

} // namespace stallscope::model
