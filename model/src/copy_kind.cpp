#include "stallscope/model/copy_kind.h"

#include <array>

namespace stallscope::model {

namespace {
MemoryKind parseKind(std::string_view s) {
    struct E {
        std::string_view name;
        MemoryKind kind;
    };
    static constexpr std::array<E, 6> kKinds{{{"Pageable", MemoryKind::Pageable},
                                              {"Pinned", MemoryKind::Pinned},
                                              {"Device", MemoryKind::Device},
                                              {"Managed", MemoryKind::Managed},
                                              {"Array", MemoryKind::Array},
                                              {"Host", MemoryKind::Host}}};
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    for (const auto& e : kKinds)
        if (s == e.name) return e.kind;
    return MemoryKind::Unknown;
}
} // namespace

CopyInfo parseCopyName(std::string_view name) {
    CopyInfo info;
    auto pos = name.find("Memcpy ");
    if (pos == std::string_view::npos) return info;
    std::string_view rest = name.substr(pos + 7);
    struct D {
        std::string_view tag;
        CopyDirection dir;
    };
    static constexpr std::array<D, 5> kDirs{{{"HtoD", CopyDirection::HtoD},
                                             {"DtoH", CopyDirection::DtoH},
                                             {"DtoD", CopyDirection::DtoD},
                                             {"HtoH", CopyDirection::HtoH},
                                             {"PtoP", CopyDirection::PtoP}}};
    for (const auto& d : kDirs)
        if (rest.substr(0, d.tag.size()) == d.tag) info.direction = d.dir;
    const auto open = rest.find('(');
    const auto arrow = rest.find("->");
    const auto close = rest.find(')');
    if (open != std::string_view::npos && arrow != std::string_view::npos &&
        close != std::string_view::npos && open < arrow && arrow < close) {
        info.src = parseKind(rest.substr(open + 1, arrow - open - 1));
        info.dst = parseKind(rest.substr(arrow + 2, close - arrow - 2));
    }
    return info;
}

std::string_view copyDirectionName(CopyDirection d) {
    switch (d) {
    case CopyDirection::HtoD: return "HtoD";
    case CopyDirection::DtoH: return "DtoH";
    case CopyDirection::DtoD: return "DtoD";
    case CopyDirection::HtoH: return "HtoH";
    case CopyDirection::PtoP: return "PtoP";
    case CopyDirection::Unknown: break;
    }
    return "unknown";
}

std::string_view memoryKindName(MemoryKind k) {
    switch (k) {
    case MemoryKind::Pageable: return "Pageable";
    case MemoryKind::Pinned: return "Pinned";
    case MemoryKind::Device: return "Device";
    case MemoryKind::Managed: return "Managed";
    case MemoryKind::Array: return "Array";
    case MemoryKind::Host: return "Host";
    case MemoryKind::Unknown: break;
    }
    return "unknown";
}

} // namespace stallscope::model
