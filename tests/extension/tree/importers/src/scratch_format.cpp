// A file format added as one file (this) plus one line in file_formats.def, by
// tests/extension/scratch_build.py: recognised by its first line, not read.
#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/input_format.h"

namespace stallscope::importers {

namespace {

bool isScratch(const ContentProbe& p) {
    return p.content().substr(0, 14) == "SCRATCH-TRACE\n";
}

} // namespace

extern const FileFormat kFormatScratch{InputFormat::Scratch,
                                       "scratch trace",
                                       isScratch,
                                       nullptr,
                                       "a scratch trace (tests/extension)",
                                       "the scratch format is recognised, not read"};

} // namespace stallscope::importers
