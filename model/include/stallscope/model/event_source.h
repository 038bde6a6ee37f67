#pragma once
// Where an event's full text lives after import. The model keeps only a (offset, length)
// reference per event; args and other rarely needed fields are read back on demand
// (../shared/spec/style.md: "args kept raw and parsed on demand"). Importers provide the
// format-specific implementation (Chrome JSON from a file, a gzip index, memory, ...).
#include <cstddef>
#include <cstdint>
#include <functional>
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
    /// Called with each event of a batch: its index in the batch, whether its args could be
    /// read, and the args.
    using ArgsVisitor = std::function<void(size_t, bool, std::vector<ArgValue>&)>;
    /// The args of many events (the operator tables by shape read every operator's): `each`
    /// is called once per ref, in any order. Sources that can read a stretch of the file at
    /// once override it; this one reads the events one by one.
    virtual void argsOfMany(const std::vector<SourceRef>& refs, const ArgsVisitor& each) const {
        std::vector<ArgValue> args;
        std::string error;
        for (size_t i = 0; i < refs.size(); ++i) {
            const bool ok = this->args(refs[i], args, error);
            each(i, ok, args);
        }
    }
};

/// A trace's text read again from its first byte, in chunks, exactly as its importer saw
/// it (inflated, each byte that is not UTF-8 replaced one for one, so the importer's byte
/// offsets hold): for writers that copy the original (the annotated trace) without
/// depending on the importers.
class TextReader {
public:
    virtual ~TextReader() = default;
    /// Up to `n` bytes (`n` >= 4); 0 at the end of the text or on an error.
    virtual size_t read(char* dst, size_t n) = 0;
    /// After read() returned 0: true when the whole text was read without a problem.
    [[nodiscard]] virtual bool complete() const = 0;
    [[nodiscard]] virtual std::string problem() const = 0;
};

/// Set by the importer that read a file (TraceMetadata::reopenText): opens its text again,
/// or returns null with `error` set.
using TextOpener = std::function<std::unique_ptr<TextReader>(std::string& error)>;

} // namespace stallscope::model
