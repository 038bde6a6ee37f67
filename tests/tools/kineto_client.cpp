// A stand-in for libkineto's daemon client (what a PyTorch job started with
// KINETO_USE_DAEMON=1 runs), written from libkineto's sources, not from Stallscope's
// (docs/decisions.md "Attach through Kineto's daemon protocol"):
//  * ipcfabric Endpoint/FabricManager: a SOCK_DGRAM socket bound to
//    "\0dynoconfigclient<uuid>\0" (or $KINETO_IPC_SOCKET_DIR/dynoconfigclient<uuid>); a message
//    is one sendmsg of two iovecs, struct Metadata {size_t size; char type[32];} and the payload;
//    replies are read by peeking the Metadata, then receiving the whole datagram;
//  * IpcFabricConfigClient: "req" = struct LibkinetoRequest {int type; int n; int64_t jobid;
//    int32_t pids[n]} with the pids of the process and its ancestors (leaf first, at most 11,
//    stopping before pid 1), jobid from SLURM_JOB_ID; the reply's payload is the config text;
//    "ctxt" = struct LibkinetoContext {int32_t gpu; pid_t pid; int64_t jobid}, answered with an
//    int32 count; a reply is awaited 9 x 10 ms;
//  * Config: KEY=VALUE lines; ACTIVITIES_LOG_FILE gets "_<pid>" before ".pt.trace.json" (else
//    ".json"); the trace is written to "<file>.tmp" and renamed (Kineto 2.x), or written in
//    place (--old-kineto).
// The trace it writes is a small Kineto-style training trace: steps whose GPU waits on a
// slow single-process DataLoader.
//
// Usage: kineto_client [--interval-ms N] [--lifetime-ms N] [--exit-after-trace] [--busy]
//                      [--old-kineto] [--ctxt GPU] [--config-type N] [--daemon-name NAME]
//                      [--warmup-ms N] [--step-ms N] [--claim-pids P,P...] [--as-uid U]
//                      [--flood N]
// The last three play an attacker (docs/security.md): --claim-pids sends these pids instead of
// its own ancestry; --as-uid drops to that user first (root only); --flood sends N polls, each
// with another made-up pid and job, as fast as it can, then exits.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Metadata { // libkineto ipcfabric/FabricManager.h
    size_t size = 0;
    char type[32] = "";
};
struct LibkinetoRequest { // ipcfabric/Utils.h
    int type;
    int n;
    int64_t jobid;
    int32_t pids[];
};
struct LibkinetoContext {
    int32_t gpu;
    pid_t pid;
    int64_t jobid;
};

std::string uuid4() {
    std::random_device rd;
    std::mt19937 gen(rd());
    std::uniform_int_distribution<int> hex(0, 15), variant(8, 11);
    const char* digits = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < 36; ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            s += '-';
        else if (i == 14)
            s += '4';
        else if (i == 19)
            s += digits[variant(gen)];
        else
            s += digits[hex(gen)];
    }
    return s;
}

socklen_t address(const std::string& name, sockaddr_un& a) { // Endpoint::setAddress_
    std::memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    const char* dir = std::getenv("KINETO_IPC_SOCKET_DIR");
    if (dir && dir[0]) {
        const std::string full = std::string(dir) + "/" + name;
        full.copy(a.sun_path, full.size());
        return socklen_t(sizeof(sa_family_t) + full.size() + 1);
    }
    name.copy(a.sun_path + 1, name.size());
    return socklen_t(sizeof(sa_family_t) + name.size() + 2);
}

std::vector<int32_t> ancestry() { // IpcFabricConfigClient getPids
    std::vector<int32_t> pids;
    int32_t pid = getpid();
    while (pid > 1 && pids.size() < 11) {
        pids.push_back(pid);
        std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
        std::string line;
        std::getline(f, line);
        const size_t close = line.rfind(')');
        if (close == std::string::npos) break;
        char state = 0;
        int ppid = 0;
        if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) != 2) break;
        pid = ppid;
    }
    return pids;
}

int g_fd = -1;
std::string g_daemon = "dynolog";

bool send(const char* type, const void* payload, size_t size) {
    Metadata m;
    m.size = size;
    std::strncpy(m.type, type, sizeof m.type - 1);
    iovec iov[2] = {{&m, sizeof m}, {const_cast<void*>(payload), size}};
    sockaddr_un to{};
    msghdr h{};
    h.msg_name = &to;
    h.msg_namelen = address(g_daemon, to);
    h.msg_iov = iov;
    h.msg_iovlen = 2;
    return ::sendmsg(g_fd, &h, MSG_DONTWAIT) == ssize_t(sizeof m + size);
}

bool receive(std::string& type, std::string& payload) { // poll_recv(9, 10 ms)
    for (int i = 0; i < 9; ++i) {
        Metadata m;
        const ssize_t peek = ::recv(g_fd, &m, sizeof m, MSG_PEEK | MSG_DONTWAIT);
        if (peek == ssize_t(sizeof m)) {
            std::vector<char> buf(sizeof m + m.size);
            iovec iov[1] = {{buf.data(), buf.size()}};
            msghdr h{};
            h.msg_iov = iov;
            h.msg_iovlen = 1;
            if (::recvmsg(g_fd, &h, MSG_DONTWAIT) != ssize_t(buf.size())) return false;
            type.assign(m.type, strnlen(m.type, sizeof m.type));
            payload.assign(buf.data() + sizeof m, m.size);
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

std::map<std::string, std::string> parseConfig(const std::string& text) { // AbstractConfig::parse
    std::map<std::string, std::string> kv;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(at, end - at);
        at = end + 1;
        if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        const size_t eq = line.find('=');
        if (eq == std::string::npos) continue;
        auto trim = [](std::string s) {
            while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
                s.erase(s.begin());
            while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
            return s;
        };
        kv[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
    return kv;
}

std::string tracePath(std::string file) { // Config::handleOption, kActivitiesLogFileKey
    const std::string pid = "_" + std::to_string(getpid());
    if (size_t j = file.find(".pt.trace.json"); j != std::string::npos) return file.insert(j, pid);
    if (size_t j = file.find(".json"); j != std::string::npos) return file.insert(j, pid);
    return file;
}

/// Steps of 40 ms: a 28 ms DataLoader wait on the CPU (the GPU idles), then forward/backward
/// launching 12 kernels of ~0.9 ms.
std::string traceJson(int steps, int64_t startUs) {
    std::string ev;
    auto add = [&](const std::string& e) {
        if (!ev.empty()) ev += ",\n";
        ev += e;
    };
    char b[512];
    const int pid = getpid();
    int64_t t = startUs;
    int corr = 1;
    for (int s = 0; s < steps; ++s) {
        std::snprintf(
            b, sizeof b,
            R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":%d,"tid":1,"ts":%lld,"dur":40000})",
            s + 1, pid, static_cast<long long>(t));
        add(b);
        std::snprintf(
            b, sizeof b,
            R"({"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":%d,"tid":1,"ts":%lld,"dur":28000})",
            pid, static_cast<long long>(t + 10));
        add(b);
        int64_t k = t + 28100;
        for (int i = 0; i < 12; ++i, ++corr) {
            const int64_t launch = t + 28050 + i * 900;
            std::snprintf(
                b, sizeof b,
                R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":%d,"tid":1,"ts":%lld,"dur":40})",
                pid, static_cast<long long>(launch));
            add(b);
            std::snprintf(
                b, sizeof b,
                R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":%d,"tid":1,"ts":%lld,"dur":8,"args":{"correlation":%d}})",
                pid, static_cast<long long>(launch + 10), corr);
            add(b);
            std::snprintf(
                b, sizeof b,
                R"({"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":%lld,"dur":850,"args":{"device":0,"stream":7,"correlation":%d}})",
                static_cast<long long>(std::max(k, launch + 20)), corr);
            add(b);
            k = std::max(k, launch + 20) + 880;
        }
        t += 40000;
    }
    std::snprintf(
        b, sizeof b,
        R"({"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"GPU 0"}}, {"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":"python"}})",
        pid);
    add(b);
    return "{\n\"schemaVersion\": 1,\n\"deviceProperties\": [{\"id\": 0, \"name\": \"Stand-in "
           "GPU\", \"computeMajor\": 9, "
           "\"computeMinor\": 0, \"numSms\": 132}],\n\"traceEvents\": [\n" +
           ev + "\n]\n}\n";
}

} // namespace

int main(int argc, char** argv) {
    int intervalMs = 5000, lifetimeMs = 60000, ctxtGpu = -1, configType = 2, warmupMs = 300,
        stepMs = 40;
    bool exitAfterTrace = false, busy = false, oldKineto = false;
    std::vector<int32_t> claimed;
    int asUid = -1, flood = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
        if (a == "--interval-ms")
            intervalMs = next();
        else if (a == "--lifetime-ms")
            lifetimeMs = next();
        else if (a == "--exit-after-trace")
            exitAfterTrace = true;
        else if (a == "--busy")
            busy = true;
        else if (a == "--old-kineto")
            oldKineto = true;
        else if (a == "--ctxt")
            ctxtGpu = next();
        else if (a == "--config-type")
            configType = next();
        else if (a == "--warmup-ms")
            warmupMs = next();
        else if (a == "--step-ms")
            stepMs = next();
        else if (a == "--daemon-name" && i + 1 < argc)
            g_daemon = argv[++i];
        else if (a == "--claim-pids" && i + 1 < argc) {
            // Comma-separated pids; "self" is this process's own.
            std::string list = argv[++i];
            for (size_t at = 0; at <= list.size();) {
                const size_t comma = std::min(list.find(',', at), list.size());
                const std::string one = list.substr(at, comma - at);
                claimed.push_back(one == "self" ? int32_t(getpid())
                                                : int32_t(std::atoi(one.c_str())));
                at = comma + 1;
            }
        } else if (a == "--as-uid")
            asUid = next();
        else if (a == "--flood")
            flood = next();
        else {
            std::fprintf(stderr, "kineto_client: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    if (asUid >= 0 && (::setgid(gid_t(asUid)) != 0 || ::setuid(uid_t(asUid)) != 0)) {
        std::perror("kineto_client: setuid");
        return 4;
    }
    g_fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    sockaddr_un self{};
    const socklen_t selfLen = address("dynoconfigclient" + uuid4(), self);
    if (g_fd < 0 || ::bind(g_fd, reinterpret_cast<sockaddr*>(&self), selfLen) != 0) {
        std::perror("kineto_client: bind");
        return 3;
    }
    const std::vector<int32_t> pids = claimed.empty() ? ancestry() : claimed;
    if (flood > 0) { // made-up processes and jobs, one poll each, no waiting for answers
        for (int k = 0; k < flood; ++k) {
            std::vector<char> req(sizeof(LibkinetoRequest) + sizeof(int32_t));
            auto* r = reinterpret_cast<LibkinetoRequest*>(req.data());
            r->type = 2;
            r->n = 1;
            r->jobid = k;
            r->pids[0] = 100000 + k;
            if (!send("req", req.data(), req.size())) ::usleep(1000);
            const LibkinetoContext c{k % 8, 200000 + k, k};
            send("ctxt", &c, sizeof c);
        }
        std::printf("flooded %d\n", flood);
        return 0;
    }
    const char* slurm = std::getenv("SLURM_JOB_ID");
    const int64_t jobid = slurm ? std::atoll(slurm) : 0;

    if (ctxtGpu >= 0) {
        const LibkinetoContext c{ctxtGpu, getpid(), jobid};
        std::string type, payload;
        if (send("ctxt", &c, sizeof c) && receive(type, payload) &&
            payload.size() == sizeof(int32_t)) {
            int32_t count = 0;
            std::memcpy(&count, payload.data(), sizeof count);
            std::printf("ctxt %s %d\n", type.c_str(), count);
        } else {
            std::printf("ctxt no reply\n");
        }
        std::fflush(stdout);
    }

    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(lifetimeMs);
    std::vector<char> req(sizeof(LibkinetoRequest) + sizeof(int32_t) * pids.size());
    auto* r = reinterpret_cast<LibkinetoRequest*>(req.data());
    r->n = static_cast<int>(pids.size());
    r->jobid = jobid;
    for (size_t i = 0; i < pids.size(); ++i) r->pids[i] = pids[i];
    while (std::chrono::steady_clock::now() < until) {
        r->type = busy ? 0 : configType;
        std::string type, payload;
        if (!send("req", req.data(), req.size())) {
            std::printf("poll: send failed\n");
        } else if (!receive(type, payload)) {
            std::printf("poll: no reply\n");
        } else if (!payload.empty()) {
            const auto kv = parseConfig(payload);
            std::printf("config received (%zu keys)\n", kv.size());
            std::fflush(stdout);
            auto it = kv.find("ACTIVITIES_LOG_FILE");
            const std::string path =
                tracePath(it != kv.end() ? it->second : "/tmp/libkineto_activities.json");
            int steps = 3;
            int64_t traceMs = 0;
            if (auto n = kv.find("ACTIVITIES_ITERATIONS"); n != kv.end()) {
                steps = std::max(1, std::atoi(n->second.c_str()));
                traceMs = int64_t(steps) * stepMs;
            } else if (auto d = kv.find("ACTIVITIES_DURATION_MSECS"); d != kv.end()) {
                traceMs = std::atoll(d->second.c_str());
                steps = std::max<int>(1, int(traceMs / 40));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(warmupMs + traceMs));
            const std::string text = traceJson(steps, 1'700'000'000'000'000LL);
            const std::string target = oldKineto ? path : path + ".tmp";
            {
                std::ofstream f(target, std::ios::binary | std::ios::trunc);
                // Written in two halves, as a profiler flushing a long trace would.
                f.write(text.data(), std::streamsize(text.size() / 2));
                f.flush();
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                f.write(text.data() + text.size() / 2,
                        std::streamsize(text.size() - text.size() / 2));
            }
            if (!oldKineto) {
                std::remove(path.c_str());
                std::rename(target.c_str(), path.c_str());
            }
            std::printf("wrote %s\n", path.c_str());
            std::fflush(stdout);
            if (exitAfterTrace) return 0;
        }
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::milliseconds(intervalMs));
    }
    return 0;
}
