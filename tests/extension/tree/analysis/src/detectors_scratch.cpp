// A detector added as one file (this) plus one line in detectors.def, by
// tests/extension/scratch_build.py: it notes every trace with GPU work.
#include "detector_registry.h"

namespace stallscope::analysis::detail {

namespace {

void detectScratch(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    if (c.devices.empty()) return;
    Finding f = makeFinding(c, FindingKind::Scratch, -1, 0);
    f.title = "The scratch detector ran";
    f.explanation = "A detector registered by one file and one line.";
    out.push_back(std::move(f));
}

} // namespace

extern const Detector kDetectorScratch{{FindingKind::Scratch, "scratch_note", DetectorStage::Cause,
                                        "a trace with GPU work", "none", ""},
                                       detectScratch};

} // namespace stallscope::analysis::detail
