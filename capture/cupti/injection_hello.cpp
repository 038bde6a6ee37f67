// The Hello message: who we are, what CUDA we run on, how the clock was mapped.
#include "injection_state.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstring>
#include <string_view>

namespace stallscope::capture::cupti {

namespace {

std::string commandLine() {
    std::string s;
    const int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return s;
    char buf[4096];
    ssize_t n = 0;
    while (s.size() < 64 * 1024 && (n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, n);
    ::close(fd);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    for (char& c : s)
        if (c == '\0') c = ' ';
    return s;
}

// 13000 -> "13.0", 12080 -> "12.8".
std::string cudaVersionText(int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The path of an already loaded library whose file name starts with `prefix`.
std::string loadedLibrary(const char* prefix) {
    struct Search {
        const char* prefix;
        std::string path;
    } search{prefix, {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto* s = static_cast<Search*>(data);
            const char* name = info->dlpi_name;
            if (name == nullptr || name[0] == '\0') return 0;
            const char* base = std::strrchr(name, '/');
            base = base ? base + 1 : name;
            if (std::strncmp(base, s->prefix, std::strlen(s->prefix)) != 0) return 0;
            s->path = name;
            return 1;
        },
        &search);
    return search.path;
}

// Calls `int fn(int*)` from a library the program already loaded (never loads one).
bool versionFrom(const char* libraryPrefix, const char* function, int& version) {
    const std::string path = loadedLibrary(libraryPrefix);
    if (path.empty()) return false;
    void* lib = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (lib == nullptr) return false;
    using Fn = int (*)(int*);
    auto fn = reinterpret_cast<Fn>(dlsym(lib, function));
    const bool ok = fn != nullptr && fn(&version) == 0;
    dlclose(lib);
    return ok;
}

} // namespace

pb::Hello makeHello(const Injection* inj, const std::string& note) {
    pb::Hello h;
    h.set_protocol_version(kProtocolVersion);
    h.set_source("cupti");
    h.set_pid(getpid());
    h.set_command_line(commandLine());
    std::string clock = inj != nullptr ? inj->clockNote : std::string();
    h.set_clock_note(note.empty() ? clock : clock.empty() ? note : note + "; " + clock);
    uint32_t cupti = 0;
    if (cuptiGetVersion(&cupti) == CUPTI_SUCCESS) h.set_cupti_version(std::to_string(cupti));
    // The driver and runtime are asked only from the flush thread (inj set): the Hello of a
    // failed start is sent from inside cuInit, where calling back into CUDA is not wise.
    int v = 0;
    if (inj != nullptr && versionFrom("libcuda.so", "cuDriverGetVersion", v))
        h.set_cuda_driver_version(cudaVersionText(v));
    if (inj != nullptr && versionFrom("libcudart.so", "cudaRuntimeGetVersion", v))
        h.set_cuda_runtime_version(cudaVersionText(v));
    return h;
}

} // namespace stallscope::capture::cupti
