#include "stallscope/base/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace stallscope::base {

bool looksMangled(std::string_view name) {
    return name.size() > 2 && name[0] == '_' && name[1] == 'Z';
}

std::string demangle(std::string_view name) {
    // A bound: a hostile name of megabytes is shown as written, not demangled.
    constexpr size_t kMaxMangled = 16 * 1024;
    if (!looksMangled(name) || name.size() > kMaxMangled) return std::string(name);
    const std::string z(name); // __cxa_demangle needs a terminated string
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> out(
        abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status), std::free);
    return status == 0 && out ? std::string(out.get()) : z;
}

} // namespace stallscope::base
