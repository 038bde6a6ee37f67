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
    /// A top-level key beside traceEvents (Kineto's "cuda_driver_version"; "host_cpu", ...):
    /// `rawJson` is its value's JSON text. docs/formats.md "Top-level keys".
    void topLevel(std::string_view key, std::string rawJson);

    /// A diagnostic the import adds (what the file lacks, records not read).
    void note(model::DiagnosticKind kind, std::string text) {
        m_notes.emplace_back(kind, std::move(text));
    }

    /// What `info` calls the file ("Nsight Systems SQLite export (nsys 2025.1.1)").
    void setFormatName(std::string name) { m_formatName = std::move(name); }
    [[nodiscard]] const std::string& formatName() const { return m_formatName; }

    [[nodiscard]] uint64_t events() const { return m_events; }
    /// The document; the writer is empty afterwards.
    [[nodiscard]] std::string take();

private:
    void begin(base::JsonWriter& w, char phase, std::string_view cat, std::string_view name,
               int64_t pid, int64_t tid, int64_t ns);
    void end(base::JsonWriter& w, const Args& args);

    std::string m_body;
    std::string m_devices;
    std::string m_topLevel; // "\"key\": value,\n" lines
    uint64_t m_events = 0;
    std::vector<std::pair<model::DiagnosticKind, std::string>> m_notes;
    std::string m_formatName;
    friend Result<std::shared_ptr<const model::Trace>>
    importTranslated(KinetoText, const std::filesystem::path&, const ImportOptions&);
};

/// "[[2, 3], []]": a list of shapes (brackets, digits, commas and spaces, balanced), which
/// can be written as Kineto's "Input Dims" raw.
bool isShapeList(std::string_view s);

/// The Kineto text imported as the trace of `source` (the file it was read from).
Result<std::shared_ptr<const model::Trace>> importTranslated(KinetoText text,
                                                             const std::filesystem::path& source,
                                                             const ImportOptions& options);

/// A format read through its Kineto form: reads the file into that form.
using Translator = Result<KinetoText> (*)(const std::filesystem::path&, const ImportOptions&);

/// A FileFormat's `import` for a translated format.
template <Translator translate>
Result<std::shared_ptr<const model::Trace>> importVia(const std::filesystem::path& path,
                                                      const ImportOptions& options) {
    auto text = translate(path, options);
    if (!text) return text.error();
    return importTranslated(std::move(text.value()), path, options);
}

/// A FileFormat's `kineto` for a translated format: the Kineto text itself.
template <Translator translate>
Result<std::string> kinetoTextVia(const std::filesystem::path& path, const ImportOptions& options) {
    auto text = translate(path, options);
    if (!text) return text.error();
    return text.value().take();
}

} // namespace stallscope::importers
