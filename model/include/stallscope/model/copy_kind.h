#pragma once
// Memory copies: direction and memory kinds, from the copy's name
// ("Memcpy HtoD (Pageable -> Device)", ROCm "Memcpy HtoD (Host -> Device)").
#include <string_view>

namespace stallscope::model {

enum class CopyDirection { Unknown, HtoD, DtoH, DtoD, HtoH, PtoP };
enum class MemoryKind { Unknown, Pageable, Pinned, Device, Managed, Array, Host };

struct CopyInfo {
    CopyDirection direction = CopyDirection::Unknown;
    MemoryKind src = MemoryKind::Unknown;
    MemoryKind dst = MemoryKind::Unknown;
};

CopyInfo parseCopyName(std::string_view name);
std::string_view copyDirectionName(CopyDirection d);
std::string_view memoryKindName(MemoryKind k);

} // namespace stallscope::model
