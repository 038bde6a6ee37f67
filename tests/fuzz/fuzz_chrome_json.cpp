// Fuzz target: the Chrome/Kineto JSON importer on plain text (importers::importBuffer).
// Promises checked on every input:
//  * the import returns a trace or an error value with a message (never a crash, a hang or
//    undefined behaviour);
//  * the trace keeps the model's invariants, and every slice's args and raw text read back
//    through the event source or fail with a message;
//  * the parallel block pipeline gives exactly the one-block result: the same text cut into
//    small blocks (64 B .. 4 KiB) and parsed on two threads yields the same model, or the
//    same kind of error, for every text that is JSON or JSON cut short (fuzz::jsonShape);
//    for other text both imports only keep the invariants.
#include "fuzz_support.h"

#include "stallscope/importers/importer.h"

using namespace stallscope;

namespace {
constexpr const char* kTarget = "chrome_json";
constexpr size_t kSmallBlocks[] = {64, 300, 1000, 4096};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    importers::ImportOptions whole;
    whole.threads = 1;
    whole.blockBytes = size_t(1) << 20;
    auto a = importers::importBuffer(text, whole);

    importers::ImportOptions split;
    split.threads = 2;
    split.blockBytes = kSmallBlocks[fuzz::inputHash(text) % std::size(kSmallBlocks)];
    auto b = importers::importBuffer(text, split);

    // Text that is not JSON (nor JSON cut short): simdjson's on-demand parser validates
    // only what it reads, and what it reads depends on where blocks are cut, so only the
    // invariants are promised for both imports.
    const bool compare = fuzz::jsonShape(text) != fuzz::JsonShape::Invalid;
    if (!a) {
        STALLSCOPE_FUZZ_CHECK(!a.error().message.empty(), "an error without a message");
        if (!compare) {
            if (b) fuzz::checkModel(kTarget, *b.value());
            return 0;
        }
        STALLSCOPE_FUZZ_CHECK(!b, "small blocks imported what one block could not: " + a.error().message);
        STALLSCOPE_FUZZ_CHECK(a.error().kind == b.error().kind,
                              std::string("error kinds differ: ") + importers::errorKindName(a.error().kind) +
                                  " vs " + importers::errorKindName(b.error().kind) + " (" + a.error().message +
                                  " | " + b.error().message + ")");
        return 0;
    }
    STALLSCOPE_FUZZ_CHECK(a.value() != nullptr, "ok without a trace");
    const model::Trace& t = *a.value();
    fuzz::checkModel(kTarget, t);
    fuzz::readBackEvents(kTarget, t, 16);
    if (!compare) {
        if (b) fuzz::checkModel(kTarget, *b.value());
        return 0;
    }
    STALLSCOPE_FUZZ_CHECK(b, "small blocks failed where one block succeeded: " + b.error().message);
    const std::string diff = fuzz::compareTraces(t, *b.value());
    STALLSCOPE_FUZZ_CHECK(diff.empty(), "block size " + std::to_string(split.blockBytes) +
                                            " on two threads gives another model: " + diff);
    return 0;
}
