// Fuzz target: the restricted pickle reader (importers/src/pickle_reader.h) and the allocator
// snapshot import on top of it (importSnapshotBytes: the values into the model, the history
// replayed into memory samples). The input is the pickle's bytes.
// Promises:
//  * the reader returns a document or an error with a message, never a crash or a hang;
//  * every value it built is in bounds: the items of a container are values of the document
//    (walked to a bounded depth: values may share and may contain themselves);
//  * the snapshot import returns a trace or an error with a message; a trace's memory samples
//    are CUDA samples, and a snapshot with no segments and no history has none.
#include "fuzz_support.h"

#include "byte_stream.h"
#include "memory_snapshot_importer.h"
#include "pickle_reader.h"

#include <vector>

using namespace stallscope;
using importers::pickle::Document;

namespace {

constexpr const char* kTarget = "pickle";

void walk(const Document& d, Document::Id v, int depth, size_t& budget) {
    if (depth > Document::kMaxWalkDepth || budget == 0) return;
    --budget;
    for (Document::Id i : d.items(v)) {
        STALLSCOPE_FUZZ_CHECK(i < d.valueCount(), "an item outside the document");
        walk(d, i, depth + 1, budget);
    }
    (void)d.text(v);
    (void)d.integer(v);
    (void)d.number(v);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto bytes = std::make_shared<const std::string>(reinterpret_cast<const char*>(data), size);
    {
        importers::MemoryByteStream in(bytes);
        auto doc = importers::pickle::readPickle(in);
        if (doc) {
            STALLSCOPE_FUZZ_CHECK(doc.value().root() < doc.value().valueCount(),
                                  "the root is not a value");
            size_t budget = 100000;
            walk(doc.value(), doc.value().root(), 0, budget);
        } else {
            STALLSCOPE_FUZZ_CHECK(!doc.error().message.empty(), "an error without a message");
        }
    }
    auto r = importers::importSnapshotBytes(bytes);
    if (!r) {
        STALLSCOPE_FUZZ_CHECK(!r.error().message.empty(), "an error without a message");
        return 0;
    }
    const model::Trace& t = *r.value();
    STALLSCOPE_FUZZ_CHECK(t.allocatorSnapshot() != nullptr, "a trace without its snapshot");
    for (const model::MemorySample& m : t.memorySamples())
        STALLSCOPE_FUZZ_CHECK(m.deviceType == 1, "a memory sample that is not CUDA's");
    fuzz::checkModel(kTarget, t);
    return 0;
}
