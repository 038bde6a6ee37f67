#include "stallscope/base/result.h"

namespace stallscope::base {

const char* errorKindName(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::NotFound: return "not_found";
    case ErrorKind::Unreadable: return "unreadable";
    case ErrorKind::Empty: return "empty";
    case ErrorKind::UnknownFormat: return "unknown_format";
    case ErrorKind::InvalidJson: return "invalid_json";
    case ErrorKind::InvalidStructure: return "invalid_structure";
    case ErrorKind::Truncated: return "truncated";
    case ErrorKind::CorruptGzip: return "corrupt_gzip";
    case ErrorKind::TooLarge: return "too_large";
    case ErrorKind::NoTraces: return "no_traces";
    case ErrorKind::Cancelled: return "cancelled";
    case ErrorKind::OverMemoryBudget: return "over_memory_budget";
    case ErrorKind::Unwritable: return "unwritable";
    case ErrorKind::InvalidArgument: return "invalid_argument";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::StartFailed: return "start_failed";
    }
    return "unknown";
}

} // namespace stallscope::base
