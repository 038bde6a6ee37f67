#include "chrome_trace_importer.h"

#include "batch_merger.h"
#include "block_reader.h"
#include "chrome_block_parser.h"
#include "chrome_envelope.h"
#include "event_sources.h"

#include "stallscope/base/text_format.h"
#include "stallscope/importers/memory_budget.h"
#include "stallscope/importers/source_text.h"
#include "stallscope/model/trace_builder.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace stallscope::importers {

using base::Status;
using model::DiagnosticKind;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kMaxHeaderBytes = size_t(1) << 30;
constexpr size_t kMaxCarryBytes = size_t(1) << 30;
/// A carried partial element this long that a parse could not finish waits for more blocks.
constexpr size_t kDeferCarryBytes = size_t(64) << 10;

struct Parsed {
    TextBlock block;
    EventBatch batch;
    ChromeBlockParser::Outcome outcome;
};

/// Worker threads parse blocks speculatively; results are collected by block index.
class ParallelParser {
public:
    ParallelParser(BlockReader& reader, unsigned workers, size_t maxPending)
        : m_reader(reader), m_maxPending(maxPending) {
        for (unsigned i = 0; i < workers; ++i) m_threads.emplace_back([this] { work(); });
    }
    ~ParallelParser() {
        stop();
        for (auto& t : m_threads) t.join();
    }
    /// Hands a merged result back so its batch's allocations are reused.
    void recycle(std::unique_ptr<Parsed> p) {
        p->batch.clear();
        p->block = TextBlock();
        std::lock_guard lock(m_mutex);
        m_free.push_back(std::move(p));
    }
    void stop() {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_cv.notify_all();
    }
    /// The parsed block `index`, or null when the input has no such block.
    std::unique_ptr<Parsed> take(uint64_t index) {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] {
            return m_results.count(index) || m_stop || (m_idle == m_threads.size() && m_drained);
        });
        auto it = m_results.find(index);
        if (it == m_results.end()) return nullptr;
        auto p = std::move(it->second);
        m_results.erase(it);
        m_cv.notify_all();
        return p;
    }

private:
    void work() {
        ChromeBlockParser parser;
        while (true) {
            std::unique_ptr<Parsed> p;
            {
                std::unique_lock lock(m_mutex);
                m_cv.wait(lock, [&] { return m_results.size() < m_maxPending || m_stop; });
                if (m_stop) break;
                if (!m_free.empty()) {
                    p = std::move(m_free.back());
                    m_free.pop_back();
                }
            }
            if (!p) p = std::make_unique<Parsed>();
            if (!m_reader.next(p->block)) break;
            FramedText& t = *p->block.text;
            p->outcome = parser.parseInPlace(t.data(), t.size(), p->block.offset,
                                             p->block.index == 0, p->batch, p->block.diagnostics);
            std::lock_guard lock(m_mutex);
            m_results.emplace(p->block.index, std::move(p));
            m_cv.notify_all();
        }
        std::lock_guard lock(m_mutex);
        ++m_idle;
        m_drained = true;
        m_cv.notify_all();
    }

    BlockReader& m_reader;
    size_t m_maxPending;
    std::vector<std::thread> m_threads;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::map<uint64_t, std::unique_ptr<Parsed>> m_results;
    std::vector<std::unique_ptr<Parsed>> m_free;
    size_t m_idle = 0;
    bool m_drained = false;
    bool m_stop = false;
};

/// Validates speculative results against the true event boundaries and merges them in
/// file order; re-parses sequentially whatever could not be validated.
class Merger {
public:
    Merger(model::TraceBuilder& builder, uint64_t eventsBegin,
           std::shared_ptr<const PidSelection> pids)
        : m_merger(builder, std::move(pids)), m_carryOffset(eventsBegin), m_eventsEnd(eventsBegin) {
    }

    /// Returns false on a fatal error (see error()).
    bool add(TextBlock& block, Parsed* spec) {
        if (m_closed) {
            m_suffix.append(block.text->view());
            return true;
        }
        // Problems found in the block's own bytes belong to it whatever parse is kept.
        m_merger.mergeDiagnostics(block.diagnostics);
        const std::string_view text = block.text->view();
        // One element longer than many blocks (a name of 500 MB): parsing the carry again
        // with every block would read it once per block, quadratic in its length. After a
        // parse that ended inside that one element, the next waits until the carry has
        // doubled (or the input ends): each byte is parsed a bounded number of times.
        if (m_deferUntil && !block.last && m_carry.size() + text.size() < m_deferUntil) {
            m_carry.append(text);
            if (m_carry.size() > kMaxCarryBytes) {
                m_error = {ErrorKind::TooLarge,
                           "byte " + std::to_string(m_carryOffset) +
                               ": an event larger than 1 GiB (or an unterminated string)",
                           m_carryOffset};
                return false;
            }
            return true;
        }
        m_deferUntil = 0;
        if (spec && spec->outcome.end != ChromeBlockParser::End::NoStart &&
            spec->outcome.end != ChromeBlockParser::End::SyntaxError &&
            spec->outcome.firstElement != ChromeBlockParser::kNone &&
            spec->outcome.firstElement >= block.offset) {
            // The text between the true boundary (carry) and the speculative start must be
            // exactly complete events.
            std::string gap = m_carry;
            gap.append(text.substr(0, spec->outcome.firstElement - block.offset));
            m_batch.clear();
            const auto g = m_seq.parse(gap, m_carryOffset, true, m_batch);
            if (g.end == ChromeBlockParser::End::Consumed) {
                noteElements(g);
                noteElements(spec->outcome);
                m_merger.merge(m_batch);
                m_merger.merge(spec->batch);
                return applyEnd(spec->outcome, text, block.offset);
            }
        }
        // Sequential, from the known boundary: the carried partial event goes in front of
        // the block's text (in place when it fits in the headroom).
        m_batch.clear();
        FramedText& t = *block.text;
        if (t.prepend(m_carry)) {
            m_carry.clear();
            const uint64_t offset = m_carryOffset;
            model::Diagnostics textDiags;
            const auto s = m_seq.parseInPlace(t.data(), t.size(), offset, true, m_batch, textDiags);
            noteElements(s);
            m_merger.merge(m_batch);
            m_merger.mergeDiagnostics(textDiags);
            return applyEnd(s, t.view(), offset);
        }
        // Parsed in place (not through a copy) so that what is carried on is the text with
        // its invalid UTF-8 replaced, and no byte is counted twice.
        FramedText joined(m_carry.size() + text.size());
        std::memcpy(joined.data(), m_carry.data(), m_carry.size());
        std::memcpy(joined.data() + m_carry.size(), text.data(), text.size());
        joined.setSize(m_carry.size() + text.size());
        std::memset(joined.data() + joined.size(), 0, FramedText::kTail);
        const uint64_t joinedOffset = m_carryOffset;
        m_carry.clear();
        model::Diagnostics textDiags;
        const auto s = m_seq.parseInPlace(joined.data(), joined.size(), joinedOffset, true, m_batch,
                                          textDiags);
        noteElements(s);
        m_merger.merge(m_batch);
        m_merger.mergeDiagnostics(textDiags);
        return applyEnd(s, joined.view(), joinedOffset);
    }

    [[nodiscard]] bool closed() const { return m_closed; }
    [[nodiscard]] const std::string& carry() const { return m_carry; }
    [[nodiscard]] uint64_t carryOffset() const { return m_carryOffset; }
    /// Just after the last complete array element (or the array's '['): where an array
    /// that is never closed ends for a copy of the text (what follows is separators, an
    /// incomplete event, or commas the parser tolerates at the end, such as `[{},,`).
    [[nodiscard]] uint64_t eventsEnd() const { return m_eventsEnd; }
    [[nodiscard]] const std::string& suffix() const { return m_suffix; }
    [[nodiscard]] uint64_t suffixOffset() const { return m_suffixOffset; }
    [[nodiscard]] const Error& error() const { return m_error; }
    [[nodiscard]] uint64_t events() const { return m_merger.events(); }

private:
    void noteElements(const ChromeBlockParser::Outcome& o) {
        if (o.lastElementEnd != ChromeBlockParser::kNone)
            m_eventsEnd = std::max(m_eventsEnd, o.lastElementEnd);
    }

    bool applyEnd(const ChromeBlockParser::Outcome& o, std::string_view text, uint64_t textOffset) {
        using End = ChromeBlockParser::End;
        switch (o.end) {
        case End::Consumed:
        case End::NoStart:
            m_carry.clear();
            m_carryOffset = textOffset + text.size();
            return true;
        case End::Truncated:
            // Nothing of it complete, and long: wait for twice as much before parsing again.
            if (o.stop == textOffset && text.size() >= kDeferCarryBytes)
                m_deferUntil = 2 * text.size();
            m_carry.assign(text.substr(o.stop - textOffset));
            m_carryOffset = o.stop;
            if (m_carry.size() > kMaxCarryBytes) {
                m_error = {ErrorKind::TooLarge,
                           "byte " + std::to_string(o.stop) +
                               ": an event larger than 1 GiB (or an unterminated string)",
                           o.stop};
                return false;
            }
            return true;
        case End::ArrayClosed:
            m_closed = true;
            m_suffix.assign(text.substr(o.afterArray - textOffset));
            m_suffixOffset = o.afterArray;
            return true;
        case End::SyntaxError:
            m_error = {ErrorKind::InvalidJson,
                       "byte " + std::to_string(o.errorOffset) + ": invalid JSON in an event (" +
                           o.error + ")",
                       o.errorOffset};
            return false;
        }
        return true;
    }

    BatchMerger m_merger;
    ChromeBlockParser m_seq;
    EventBatch m_batch; // reused for sequential parses
    std::string m_carry;
    size_t m_deferUntil = 0; // the carry's size before the next parse (0: every block)
    uint64_t m_carryOffset;
    uint64_t m_eventsEnd;
    bool m_closed = false;
    std::string m_suffix;
    uint64_t m_suffixOffset = 0;
    Error m_error;
};

/// Progressive open (ImportOptions::partial): now and then a copy of the builder, taken on the
/// importing thread (a copy of the columns) and finished on a thread of its own while the
/// import goes on. One at a time; the last one is waited for when the publisher goes.
class PartialPublisher {
public:
    PartialPublisher(const ImportOptions& options, Clock::time_point start)
        : m_options(options), m_last(start) {}
    ~PartialPublisher() {
        m_stale = true;
        if (m_thread.joinable()) m_thread.join();
    }
    PartialPublisher(const PartialPublisher&) = delete;
    PartialPublisher& operator=(const PartialPublisher&) = delete;

    /// The import is over (done, failed or cancelled): a copy being finished is not handed on.
    void end() { m_stale = true; }

    /// After each merged block. `prepare` gives the copy what the finished trace would have
    /// (source path, format name, sizes so far).
    template <typename Prepare>
    void poll(const model::TraceBuilder& builder, const ImportProgress& progress,
              Prepare&& prepare) {
        if (!m_options.partial || m_busy.load(std::memory_order_acquire) || progress.events == 0)
            return;
        const auto now = Clock::now();
        if (now - m_last < std::chrono::milliseconds(m_options.partialFirstMs)) return;
        if (progress.events < 2 * m_lastEvents) return;
        // Most of the input read: the whole trace is near, a copy would only delay it.
        if (progress.bytesTotal && progress.bytesRead * 4 > progress.bytesTotal * 3) return;
        // The copy and its analysis come on top of the whole trace's memory: none where
        // both together could pass the memory budget (the whole one is what matters). The
        // whole is projected from the share read, with half again for the events per byte
        // varying along a file (a Kineto file's host part is wordier than its GPU part).
        if (const uint64_t budget = m_options.memoryBudgetBytes; budget && progress.bytesRead) {
            const double copy = double(progress.events) * double(kPeakBytesPerEvent);
            const double whole = progress.bytesTotal ? copy * double(progress.bytesTotal) /
                                                           double(progress.bytesRead)
                                                     : copy;
            if (copy + 1.5 * whole > double(budget)) return;
        }
        if (m_thread.joinable()) m_thread.join(); // finished (not busy)
        auto copy = std::make_shared<model::TraceBuilder>(builder.clone());
        prepare(*copy);
        m_last = now;
        m_lastEvents = progress.events;
        m_busy.store(true, std::memory_order_release);
        m_thread = std::thread([this, copy = std::move(copy), progress]() mutable {
            if (!m_stale) {
                auto trace = copy->finish(&m_stale); // nullptr when the import ended meanwhile
                copy.reset();
                if (trace && !m_stale) m_options.partial(std::move(trace), progress);
            }
            m_busy.store(false, std::memory_order_release);
        });
    }

private:
    const ImportOptions& m_options;
    Clock::time_point m_last;
    uint64_t m_lastEvents = 0;
    std::atomic<bool> m_busy{false};
    std::atomic<bool> m_stale{false};
    std::thread m_thread;
};

std::string describeFormat(model::TraceBuilder& b, bool bareArray) {
    const auto& cats = b.stats().byCategory;
    bool legacy = false;
    for (size_t i = 0; i < b.processCount(); ++i) {
        const auto& key = b.processInfo(model::ProcessId(static_cast<uint32_t>(i))).key;
        if (key.isString() && b.strings().view(key.text) == "CPU functions") legacy = true;
    }
    if (legacy && cats.empty()) return "legacy autograd profiler JSON";
    std::string f;
    if (cats.count("Operator") || cats.count("Kernel") || cats.count("Runtime"))
        f = "Kineto JSON (2021 categories)";
    else if (cats.count("cpu_op") || cats.count("kernel") || cats.count("cuda_runtime") ||
             cats.count("user_annotation"))
        f = "Kineto JSON";
    else
        f = "Chrome trace JSON";
    if (bareArray) f += ", bare array";
    if (b.metadata().baseTimeNs) f += ", timestamps relative to baseTimeNanoseconds";
    return f;
}

/// The message of a refused trace: what it needs, what the budget is, what to do.
Error overBudget(uint64_t need, uint64_t budget, const std::string& what) {
    return {ErrorKind::OverMemoryBudget,
            what + " needs about " + base::formatMemory(need) +
                " of memory to open, more than the " + base::formatMemory(budget) +
                " it may use (80 % of the memory available, or STALLSCOPE_MEMORY_BUDGET); open one "
                "rank or a "
                "shorter profile, or a machine with more memory",
            UINT64_MAX};
}

Error streamError(const ByteStream& s, bool gzip) {
    if (s.state() == StreamState::IoError)
        return {ErrorKind::Unreadable, s.message(), s.problemOffset()};
    if (gzip && s.state() == StreamState::Corrupt)
        return {ErrorKind::CorruptGzip,
                "compressed byte " + std::to_string(s.problemOffset()) + ": " + s.message(),
                s.problemOffset()};
    return {ErrorKind::Truncated, "byte " + std::to_string(s.problemOffset()) + ": " + s.message(),
            s.problemOffset()};
}

/// One import's phases (the numbered steps of importChromeTrace) and what they share.
struct ChromeImport {
    ChromeInput& input;
    const ImportOptions& options;
    const Clock::time_point t0;
    ByteStream& stream;
    const bool gzip;
    const uint64_t budget;
    model::TraceBuilder& builder;
    EnvelopeHeader envelope{}; // set by readHeader()

    [[nodiscard]] bool cancelled() const {
        return options.cancel && options.cancel->load(std::memory_order_relaxed);
    }

    /// 1. Header: read until the event array is found. `head` is what was read.
    Status readHeader(std::string& head) {
        model::TraceMetadata& md = builder.metadata();
        HeaderOutcome header;
        bool eof = false;
        size_t want = std::max<size_t>(options.blockBytes, 1 << 16);
        while (true) {
            while (!eof && head.size() < want) {
                const size_t old = head.size();
                head.resize(want);
                const size_t got = stream.read(head.data() + old, want - old);
                head.resize(old + got);
                if (got == 0) eof = true;
            }
            if (eof && head.empty() && stream.state() != StreamState::End &&
                stream.state() != StreamState::Ok)
                return streamError(stream, gzip);
            header = parseEnvelopeHeader(head, eof, md, builder.diagnostics());
            if (header.status == HeaderStatus::Found) break;
            if (header.status == HeaderStatus::Failed) {
                if (stream.state() == StreamState::Corrupt ||
                    stream.state() == StreamState::IoError)
                    return streamError(stream, gzip);
                if (stream.state() == StreamState::Truncated &&
                    header.error.kind != ErrorKind::Empty) {
                    Error e = header.error;
                    e.kind = ErrorKind::Truncated;
                    e.message =
                        "the input ends before the event array starts (" + stream.message() + ")";
                    return e;
                }
                return header.error;
            }
            if (head.size() >= kMaxHeaderBytes)
                return Error{ErrorKind::TooLarge, "no event array in the first 1 GiB of the input",
                             0};
            want *= 2;
            if (cancelled()) return Error{ErrorKind::Cancelled, "import cancelled", UINT64_MAX};
        }
        envelope = header.header;
        return {};
    }

    /// 2. Events: takes the blocks in file order (parsed by `pool`, or here when it is
    /// null) and merges them; stops the reader and the pool when done.
    Status mergeBlocks(BlockReader& reader, ParallelParser* pool, Merger& merger,
                       PartialPublisher& partials) {
        auto lastProgress = Clock::now();
        // What a partial trace has of what finish() below gives the whole one.
        auto preparePartial = [&](model::TraceBuilder& copy) {
            model::TraceMetadata& cmd = copy.metadata();
            cmd.sourcePath = input.describedAs.empty() ? input.path : input.originalPath;
            cmd.compressed = gzip;
            cmd.bareArray = envelope.bareArray;
            cmd.eventsArrayEnd = merger.eventsEnd();
            cmd.formatName = (input.describedAs.empty() ? describeFormat(copy, envelope.bareArray)
                                                        : input.describedAs) +
                             ", partly read";
            if (cmd.baseTimeNs) copy.setTimeBase(*cmd.baseTimeNs);
            // Args are read back from a plain file's text (a .gz's index is not complete yet).
            if (options.keepEventSource && !gzip && !input.memory && !input.path.empty())
                copy.setEventSource(std::make_shared<ChromeFileEventSource>(input.path));
            copy.stats().inputBytes = stream.inputConsumed();
            copy.stats().textBytes = merger.carryOffset();
            copy.stats().seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        };
        bool ok = true;
        for (uint64_t index = 0;; ++index) {
            if (cancelled()) {
                reader.stop();
                if (pool) pool->stop();
                return Error{ErrorKind::Cancelled, "import cancelled", UINT64_MAX};
            }
            std::unique_ptr<Parsed> parsed;
            TextBlock block;
            if (pool) {
                parsed = pool->take(index);
                if (!parsed) break;
                block = std::move(parsed->block);
            } else if (!reader.next(block)) {
                break;
            }
            const bool last = block.last;
            if (!merger.add(block, parsed.get())) {
                ok = false;
                break;
            }
            reader.recycle(std::move(block.text));
            if (pool && parsed) pool->recycle(std::move(parsed));
            // Compressed input, or a file denser than usual: stop before the model passes the
            // budget.
            if (budget && merger.events() * kPeakBytesPerEvent > budget) {
                reader.stop();
                if (pool) pool->stop();
                const uint64_t total = stream.inputTotal(),
                               done = std::max<uint64_t>(1, stream.inputConsumed());
                const uint64_t need = total > done
                                          ? uint64_t(double(merger.events() * kPeakBytesPerEvent) *
                                                     double(total) / double(done))
                                          : merger.events() * kPeakBytesPerEvent;
                return overBudget(
                    need, budget,
                    "this trace (" + std::to_string(merger.events()) + " events in the first " +
                        std::to_string(total ? done * 100 / total : 0) + " % of the input)");
            }
            partials.poll(builder, {stream.inputConsumed(), stream.inputTotal(), merger.events()},
                          preparePartial);
            if (options.progress && Clock::now() - lastProgress >=
                                        std::chrono::milliseconds(options.progressIntervalMs)) {
                lastProgress = Clock::now();
                options.progress({stream.inputConsumed(), stream.inputTotal(), merger.events()});
            }
            if (last) break;
        }
        reader.stop();
        if (pool) pool->stop();
        partials.end();
        if (!ok) return merger.error();
        return {};
    }

    /// 3. End of input: truncation, the suffix after the array.
    Status readEndOfInput(const Merger& merger) {
        model::TraceMetadata& md = builder.metadata();
        auto& diags = builder.diagnostics();
        const bool streamBroken = stream.state() == StreamState::Truncated ||
                                  stream.state() == StreamState::Corrupt ||
                                  stream.state() == StreamState::IoError;
        if (stream.state() == StreamState::IoError) return streamError(stream, gzip);
        if (merger.closed()) {
            parseEnvelopeSuffix(merger.suffix(), merger.suffixOffset(), envelope.bareArray, md,
                                diags);
        } else {
            const std::string& carry = merger.carry();
            const bool pendingEvent = carry.find_first_not_of(" \t\r\n,") != std::string::npos;
            if (pendingEvent)
                diags.add(DiagnosticKind::TruncatedInput, merger.carryOffset(),
                          "the input ends inside an event (the incomplete event is not loaded)");
            if (streamBroken)
                diags.add(stream.state() == StreamState::Corrupt
                              ? DiagnosticKind::CorruptCompression
                              : DiagnosticKind::TruncatedInput,
                          stream.problemOffset(), stream.message());
            else if (envelope.bareArray && !pendingEvent)
                diags.add(DiagnosticKind::UnterminatedArray, merger.carryOffset(),
                          "no closing ']' (allowed by the Chrome trace format)");
            else if (!pendingEvent)
                diags.add(DiagnosticKind::TruncatedInput, merger.carryOffset(),
                          "the input ends before the traceEvents array is closed");
            if (merger.events() == 0 && (pendingEvent || streamBroken)) {
                if (gzip && stream.state() == StreamState::Corrupt)
                    return streamError(stream, gzip);
                return Error{ErrorKind::Truncated,
                             "byte " + std::to_string(merger.carryOffset()) +
                                 ": the input ends inside the first event; nothing could be read" +
                                 (streamBroken ? " (" + stream.message() + ")" : std::string()),
                             merger.carryOffset()};
            }
        }

        // An array none of whose elements is an event object (numbers, strings, arrays: someone
        // else's JSON) is not a trace, not an empty one.
        if (const uint64_t n = builder.stats().entries;
            n > 0 && diags.count(DiagnosticKind::EventNotObject) == n) {
            const uint64_t at = diags.examples(DiagnosticKind::EventNotObject).front().byteOffset;
            const std::string array = envelope.bareArray ? "array" : "traceEvents array";
            return Error{ErrorKind::InvalidStructure,
                         "byte " + std::to_string(at) + ": not a trace: " +
                             (n == 1 ? "the only element of the " + array + " is not"
                                     : "none of the " + std::to_string(n) + " elements of the " +
                                           array + " is") +
                             " an event object ({\"ph\": ..., \"ts\": ...})",
                         at};
        }
        return {};
    }

    /// 4. Finalize.
    std::shared_ptr<const model::Trace> finalize(const Merger& merger) {
        model::TraceMetadata& md = builder.metadata();
        model::ImportStats& st = builder.stats();
        st.inputBytes = stream.inputConsumed();
        st.textBytes = merger.closed() ? merger.suffixOffset() + merger.suffix().size()
                                       : merger.carryOffset() + merger.carry().size();
        md.sourcePath = input.path;
        md.compressed = gzip;
        md.bareArray = envelope.bareArray;
        md.eventsArrayClosed = merger.closed();
        md.eventsArrayEnd = merger.closed() ? merger.suffixOffset() - 1 : merger.eventsEnd();
        if (!input.path.empty())
            md.reopenText = SourceText::opener(input.path, gzip);
        else if (input.memory && !input.originalPath.empty() && options.keepEventSource)
            md.reopenText = SourceText::memoryOpener(input.memory); // a translated file
        if (md.baseTimeNs) builder.setTimeBase(*md.baseTimeNs);
        if (options.keepEventSource) {
            if (input.memory)
                builder.setEventSource(std::make_shared<ChromeMemoryEventSource>(input.memory));
            else if (gzip) {
                auto index = input.gzip->takeIndex();
                if (index) {
                    index->setPath(input.path);
                    builder.setEventSource(
                        std::make_shared<ChromeGzipEventSource>(std::move(index)));
                }
            } else if (!input.path.empty()) {
                builder.setEventSource(std::make_shared<ChromeFileEventSource>(input.path));
            }
        }
        md.formatName = describeFormat(builder, envelope.bareArray);
        if (!input.describedAs.empty()) {
            md.formatName = input.describedAs;
            md.translated = true;
            md.sourcePath = input.originalPath;
            st.inputBytes = input.originalBytes;
        }
        for (const auto& [kind, text] : input.notes)
            builder.diagnostics().add(kind, model::Diagnostics::kNoOffset, text);
        st.seconds =
            std::chrono::duration<double>(Clock::now() - t0).count(); // finish() adds finalize
        auto trace = builder.finish();
        if (options.progress)
            options.progress({stream.inputConsumed(), stream.inputTotal(), st.entries});
        return trace;
    }
};

} // namespace

Result<std::shared_ptr<const model::Trace>> importChromeTrace(ChromeInput input,
                                                              const ImportOptions& options) {
    const auto t0 = Clock::now();
    ByteStream& stream = *input.stream;
    const bool gzip = input.gzip != nullptr;
    // A plain file's size tells its model's size before anything is read.
    const uint64_t budget = options.memoryBudgetBytes;
    // (Not for one rank's read of a file of several ranks: the file's size is all of them.)
    if (budget && !gzip && stream.inputTotal() > 0 && !options.pids) {
        const auto need =
            static_cast<uint64_t>(double(stream.inputTotal()) * kPeakBytesPerTextByte);
        if (need > budget)
            return overBudget(need, budget,
                              "this trace (" + base::formatMemory(stream.inputTotal()) +
                                  " of JSON)");
    }

    model::TraceBuilder builder;
    ChromeImport run{input, options, t0, stream, gzip, budget, builder};

    // 1. Header: read until the event array is found.
    std::string head;
    if (Status s = run.readHeader(head); !s) return s.error();

    // 2. Events: reader thread -> (parallel) parsers -> in-order merge.
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const unsigned threads = options.threads ? options.threads : hw;
    const uint64_t eventsBegin = run.envelope.eventsBegin;
    std::string initial = head.substr(eventsBegin);
    head.clear();
    head.shrink_to_fit();
    BlockReader reader(stream, std::move(initial), eventsBegin, options.blockBytes,
                       2 + 2 * threads);
    Merger merger(builder, eventsBegin, options.pids);
    std::unique_ptr<ParallelParser> pool;
    if (threads > 1) pool = std::make_unique<ParallelParser>(reader, threads, 4 + 2 * threads);
    PartialPublisher partials(options, t0);
    if (Status s = run.mergeBlocks(reader, pool.get(), merger, partials); !s) return s.error();

    // 3. End of input: truncation, the suffix after the array.
    if (Status s = run.readEndOfInput(merger); !s) return s.error();

    // 4. Finalize.
    return run.finalize(merger);
}

} // namespace stallscope::importers
