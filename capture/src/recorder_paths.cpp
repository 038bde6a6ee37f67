// Where the CUPTI injection library is, and what `stallscope-cli --version` says about it.
#include "stallscope/capture/recorder.h"

#include <cstdlib>

namespace stallscope::capture {

namespace {

constexpr const char* kInjectionFile = "libstallscope_cupti_injection.so";

} // namespace

std::filesystem::path injectionLibraryPath() {
    if (const char* e = std::getenv("STALLSCOPE_CUPTI_INJECTION"); e && *e) return e;
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    const std::filesystem::path dir = exe.parent_path();
    // Installed next to the executable or in its lib folder; in a build tree, the CLI and
    // the tests are one level below the build root and the library is in capture/cupti.
    for (const std::filesystem::path& candidate :
         {dir / kInjectionFile, dir / "../lib/stallscope" / kInjectionFile, dir / "../lib" / kInjectionFile,
          dir / "../capture/cupti" / kInjectionFile}) {
        if (std::filesystem::is_regular_file(candidate, ec))
            return std::filesystem::weakly_canonical(candidate, ec);
    }
    return {};
}

std::string captureFeatureLine() {
#ifdef STALLSCOPE_HAVE_CUPTI
    const std::filesystem::path p = injectionLibraryPath();
    if (p.empty()) return "live GPU capture: built (the injection library was not found: set STALLSCOPE_CUPTI_INJECTION)";
    return "live GPU capture: built (" + p.string() + ")";
#else
    return "live GPU capture: not built (no CUDA toolkit at build time)";
#endif
}

} // namespace stallscope::capture
