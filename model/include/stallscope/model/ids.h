#pragma once
// Strong id types: a TrackId cannot be passed where a StringId is expected.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

namespace stallscope::model {

template <class Tag, class Rep = uint32_t>
struct StrongId {
    using rep_type = Rep;
    static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();

    Rep value = kInvalid;

    constexpr StrongId() = default;
    constexpr explicit StrongId(Rep v) : value(v) {}
    [[nodiscard]] constexpr bool valid() const { return value != kInvalid; }
    [[nodiscard]] constexpr size_t index() const { return static_cast<size_t>(value); }
    constexpr auto operator<=>(const StrongId&) const = default;
};

using StringId = StrongId<struct StringTag>;
using TrackId = StrongId<struct TrackTag>;
using ProcessId = StrongId<struct ProcessTag>;
using SliceId = StrongId<struct SliceTag>;
using CounterId = StrongId<struct CounterTag>;

} // namespace stallscope::model

template <class Tag, class Rep>
struct std::hash<stallscope::model::StrongId<Tag, Rep>> {
    size_t operator()(stallscope::model::StrongId<Tag, Rep> id) const noexcept {
        return std::hash<Rep>{}(id.value);
    }
};
