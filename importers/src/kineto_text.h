#pragma once
// Other profilers' records in Kineto's vocabulary. The importers of Nsight Systems exports,
// RPD databases and rocprofv3 JSON read their own schema and write each record as the
// Kineto event that means the same (a CUPTI kernel row -> {"cat": "kernel", "pid": device,
// "tid": stream, "args": {"correlation", ...}}), then hand the text to the Chrome/Kineto
// importer: one model, one set of analysis rules, and an event's raw text and args are
// the translated event (what the file said, in Kineto's words; the original ids in args).
// docs/formats.md lists the mapping of each format.
#include "chrome_trace_importer.h"

#include "stallscope/base/json_writer.h"
#include "stallscope/importers/import_options.h"
#include "stallscope/importers/result.h"
#include "stallscope/model/trace.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::importers {

class KinetoText {
public:
    using Args = std::function<void(base::JsonWriter&)>;

    /// A complete event ("ph": "X") of `durNs` (negative: written as 0) at `startNs`.
    void slice(std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
               int64_t startNs, int64_t durNs, const Args& args = {});
    /// An instant event ("ph": "i", thread scope).
    void instant(std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t ns,
                 const Args& args = {});
    void processName(int64_t pid, std::string_view name, std::string_view labels = {});
    void threadName(int64_t pid, int64_t tid, std::string_view name);
    /// One entry of the top-level deviceProperties array.
    void device(const model::DeviceProperties& d);
    /// A top-level key with a raw JSON value (written after deviceProperties).
    void topLevel(std::string_view key, std::string_view rawJson);

    /// A diagnostic the import adds (what the file lacks, records not read).
    void note(model::DiagnosticKind kind, std::string text) {
        m_notes.emplace_back(kind, std::move(text));
    }

    [[nodiscard]] uint64_t events() const { return m_events; }
    /// The document; the writer is empty afterwards.
    [[nodiscard]] std::string take();

private:
    void begin(base::JsonWriter& w, char phase, std::string_view cat, std::string_view name,
               int64_t pid, int64_t tid, int64_t ns);
    void end(base::JsonWriter& w, const Args& args);

    std::string m_body;
    std::string m_devices;
    std::string m_top;
    uint64_t m_events = 0;
    std::vector<std::pair<model::DiagnosticKind, std::string>> m_notes;
    friend Result<std::shared_ptr<const model::Trace>>
    importTranslated(KinetoText, const std::filesystem::path&, std::string, uint64_t,
                     const ImportOptions&);
};

/// "[[2, 3], []]": a list of shapes (brackets, digits, commas and spaces, balanced), which
/// can be written as Kineto's "Input Dims" raw.
bool isShapeList(std::string_view s);

/// The Kineto text imported as the trace of `source`, called `formatName` in `info`
/// ("Nsight Systems SQLite export (nsys 2025.1.1)"); `inputBytes` is the file's size.
Result<std::shared_ptr<const model::Trace>>
importTranslated(KinetoText text, const std::filesystem::path& source, std::string formatName,
                 uint64_t inputBytes, const ImportOptions& options);

} // namespace stallscope::importers
