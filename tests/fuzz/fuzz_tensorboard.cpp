// Fuzz target: TensorBoard log folders (importers/tensorboard_folder.h) and importPath on
// them. The input is a list of lines, each one entry of a temporary folder:
//   NAME[\tCONTENT]       a file in the folder (CONTENT: its bytes, with \n written as \x01)
//   SUB/NAME[\tCONTENT]   a file in the sub-folder SUB (made on first use)
//   SUB/                  an empty sub-folder
//   @NAME\tTARGET         a symbolic link NAME -> TARGET (dangling, a loop, a folder, ...;
//                         relative and inside the folder)
// Promises:
//  * parseTraceFileName splits every string as ^(.*?)(\.[0-9]+)?\.pt\.trace\.json(\.gz)?$
//    does (checked against std::regex), except that a bare suffix is no trace name, and
//    worker + '.' + span + suffix gives the name back;
//  * findTensorBoardRuns finds exactly the matching regular files: the folder itself when it
//    has any, else each sub-folder that has some, files sorted by (worker, span); with none
//    anywhere, the folder's own *.json / *.json.gz files but *.summary.json (one run, each
//    file's worker its name without the extension, sorted);
//  * importPath returns a session or an error value, and every trace keeps the model's
//    invariants.
#include "fuzz_support.h"

#include "stallscope/importers/importer.h"
#include "stallscope/importers/tensorboard_folder.h"

#include <map>
#include <regex>
#include <set>
#include <system_error>

using namespace stallscope;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTarget = "tensorboard";
constexpr size_t kMaxEntries = 48;
constexpr size_t kMaxName = 255;  // NAME_MAX

const std::string kSuffixGz = ".pt.trace.json.gz";
const std::string kSuffix = ".pt.trace.json";

void checkName(const std::string& name) {
    const importers::TraceFileName n = importers::parseTraceFileName(name);
    if (n.matches) {
        STALLSCOPE_FUZZ_CHECK(n.spanTag.find_first_not_of("0123456789") == std::string::npos, "span tag not digits");
        const std::string stem = n.spanTag.empty() ? n.worker : n.worker + "." + n.spanTag;
        STALLSCOPE_FUZZ_CHECK(stem + kSuffix == name || stem + kSuffixGz == name,
                              "worker '" + n.worker + "' + span '" + n.spanTag + "' do not give back '" + name + "'");
    } else {
        STALLSCOPE_FUZZ_CHECK(n.worker.empty() && n.spanTag.empty(), "no match but a worker or span");
    }
    if (name.size() > 4 * kMaxName) return;  // std::regex recurses per character
    static const std::regex re(R"(^([\s\S]*?)(\.[0-9]+)?\.pt\.trace\.json(\.gz)?$)");
    std::smatch m;
    bool want = std::regex_match(name, m, re);
    if (name == kSuffix || name == kSuffixGz) want = false;  // nothing before the suffix
    STALLSCOPE_FUZZ_CHECK(want == n.matches, "'" + name + "': the regex says " + (want ? "match" : "no match"));
    if (!want) return;
    const std::string span = m[2].matched ? m[2].str().substr(1) : std::string();
    STALLSCOPE_FUZZ_CHECK(m[1].str() == n.worker && span == n.spanTag,
                          "'" + name + "': regex worker '" + m[1].str() + "' span '" + span + "', parsed '" +
                              n.worker + "' '" + n.spanTag + "'");
}

/// A name usable as one path component, or empty.
std::string component(std::string s) {
    if (s.size() > kMaxName) s.resize(kMaxName);
    for (char& c : s)
        if (c == '\0') c = '_';
    if (s.empty() || s == "." || s == "..") return {};
    return s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    checkName(input);

    const fs::path root = fuzz::scratchDir() / "tb";
    std::error_code ec;
    fs::remove_all(root, ec);
    fs::create_directories(root, ec);
    if (ec) fuzz::fail(kTarget, "cannot create " + root.string());

    // What the folder holds: matching regular files per folder ("" = root).
    std::map<std::string, std::set<std::string>> expected;
    std::set<std::string> subFolders;
    size_t entries = 0;
    size_t at = 0;
    while (at <= input.size() && entries < kMaxEntries) {
        size_t nl = input.find('\n', at);
        if (nl == std::string::npos) nl = input.size();
        std::string line = input.substr(at, nl - at);
        at = nl + 1;
        ++entries;
        std::string content;
        if (const size_t tab = line.find('\t'); tab != std::string::npos) {
            content = line.substr(tab + 1);
            line.resize(tab);
            for (char& c : content)
                if (c == '\x01') c = '\n';
        }
        checkName(line);
        const bool link = !line.empty() && line[0] == '@';
        if (link) line.erase(0, 1);
        std::string sub, name = line;
        if (const size_t slash = line.find('/'); slash != std::string::npos) {
            sub = component(line.substr(0, slash));
            name = line.substr(slash + 1);
            for (char& c : name)
                if (c == '/') c = '_';
            if (sub.empty()) continue;
            if (!subFolders.count(sub)) {
                fs::create_directory(root / sub, ec);
                if (ec) continue;  // a file of that name exists
                subFolders.insert(sub);
            }
        }
        name = component(name);
        if (name.empty()) continue;
        const fs::path path = sub.empty() ? root / name : root / sub / name;
        if (fs::symlink_status(path, ec).type() != fs::file_type::not_found) continue;  // first entry wins
        if (link) {
            // Inside the folder only (nothing like /dev/zero): relative, without "..".
            std::string target = content;
            while (!target.empty() && target[0] == '/') target.erase(0, 1);
            for (size_t p = target.find(".."); p != std::string::npos; p = target.find("..", p)) target.replace(p, 2, "__");
            for (char& c : target)
                if (c == '\0') c = '_';
            if (target.empty()) target = name;  // a link to itself
            fs::create_symlink(target, path, ec);
            continue;  // what it points to is checked through the file system below
        }
        fuzz::writeFile(path, content);
    }
    // Matching regular files (following links), as the scan must see them.
    auto scan = [&](const std::string& sub) {
        std::set<std::string>& out = expected[sub];
        const fs::path dir = sub.empty() ? root : root / sub;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            std::error_code e2;
            if (!fs::is_regular_file(it->path(), e2)) continue;
            if (importers::parseTraceFileName(it->path().filename().string()).matches)
                out.insert(it->path().filename().string());
        }
    };
    scan("");
    std::set<std::string> allDirs;  // sub-folders, links to folders included
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (fs::is_directory(it->path(), e2)) allDirs.insert(it->path().filename().string());
    }
    for (const auto& d : allDirs) scan(d);

    // The fallback run: the folder's own regular *.json[.gz] files, rank summaries excluded.
    std::set<std::string> plainFiles;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (!fs::is_regular_file(it->path(), e2)) continue;
        const std::string n = it->path().filename().string();
        auto endsWith = [&](const std::string& x) {
            return n.size() > x.size() && n.compare(n.size() - x.size(), x.size(), x) == 0;
        };
        if ((endsWith(".json") || endsWith(".json.gz")) && !endsWith(".summary.json"))
            plainFiles.insert(n);
    }
    bool anyTensorBoard = !expected[""].empty();
    for (const auto& d : allDirs) anyTensorBoard = anyTensorBoard || !expected[d].empty();
    const bool plainRun = !anyTensorBoard && !plainFiles.empty();

    const auto runs = importers::findTensorBoardRuns(root);
    if (!anyTensorBoard) {
        STALLSCOPE_FUZZ_CHECK(
            plainRun ? runs.size() == 1 && runs[0].folder == root : runs.empty(),
            "without TensorBoard files the run is the folder's own *.json[.gz] files");
        if (plainRun) {
            std::set<std::string> names;
            for (size_t i = 0; i < runs[0].files.size(); ++i) {
                const auto& f = runs[0].files[i];
                const std::string n = f.path.filename().string();
                names.insert(n);
                const size_t ext =
                    n.size() -
                    (n.size() > 8 && n.compare(n.size() - 8, 8, ".json.gz") == 0 ? 8 : 5);
                STALLSCOPE_FUZZ_CHECK(f.worker == n.substr(0, ext),
                                      "a plain file's worker is its name without the extension");
                STALLSCOPE_FUZZ_CHECK(i == 0 || runs[0].files[i - 1].worker <= f.worker,
                                      "plain files not sorted");
            }
            STALLSCOPE_FUZZ_CHECK(
                names == plainFiles && names.size() == runs[0].files.size(),
                "the plain run's files differ from the folder's *.json[.gz] files");
        }
    } else if (!expected[""].empty()) {
        STALLSCOPE_FUZZ_CHECK(runs.size() == 1 && runs[0].folder == root, "the folder's own trace files are not the run");
    } else {
        std::set<std::string> want, got;
        for (const auto& d : allDirs)
            if (!expected[d].empty()) want.insert(d);
        for (const auto& r : runs) {
            STALLSCOPE_FUZZ_CHECK(r.folder.parent_path() == root, "a run outside the folder: " + r.folder.string());
            got.insert(r.folder.filename().string());
        }
        STALLSCOPE_FUZZ_CHECK(got == want && runs.size() == want.size(), "runs differ from the sub-folders with traces");
    }
    for (const auto& r : runs) {
        if (plainRun) break; // checked above
        const std::string sub = r.folder == root ? std::string() : r.folder.filename().string();
        std::set<std::string> names;
        for (size_t i = 0; i < r.files.size(); ++i) {
            const auto& f = r.files[i];
            const auto n = importers::parseTraceFileName(f.path.filename().string());
            STALLSCOPE_FUZZ_CHECK(n.matches && n.worker == f.worker && n.spanTag == f.spanTag, "a file's worker/span");
            STALLSCOPE_FUZZ_CHECK(f.path.parent_path() == r.folder, "a file outside its run's folder");
            names.insert(f.path.filename().string());
            if (i > 0) {
                const auto& p = r.files[i - 1];
                const bool sorted = p.worker < f.worker ||
                                    (p.worker == f.worker && (p.spanTag.size() < f.spanTag.size() ||
                                                              (p.spanTag.size() == f.spanTag.size() && p.spanTag <= f.spanTag)));
                STALLSCOPE_FUZZ_CHECK(sorted, "files not sorted by (worker, span)");
            }
        }
        STALLSCOPE_FUZZ_CHECK(names == expected[sub] && names.size() == r.files.size(),
                              "the run's files differ from the matching files of " + r.folder.string());
    }

    importers::ImportOptions options;
    options.threads = 1;
    auto session = importers::importPath(root, options);
    if (!session) {
        STALLSCOPE_FUZZ_CHECK(!session.error().message.empty(), "an error without a message");
        STALLSCOPE_FUZZ_CHECK(runs.empty() || session.error().kind == importers::ErrorKind::NoTraces,
                              "a folder with runs failed: " + session.error().message);
        return 0;
    }
    STALLSCOPE_FUZZ_CHECK(!runs.empty() && !session.value().traces.empty(), "a session without traces");
    STALLSCOPE_FUZZ_CHECK(session.value().traces.size() + session.value().problems.size() == runs[0].files.size(),
                          "every file of the run is a trace or a problem");
    for (const auto& e : session.value().traces) {
        STALLSCOPE_FUZZ_CHECK(e.trace != nullptr, "a session entry without a trace");
        fuzz::checkModel(kTarget, *e.trace);
    }
    return 0;
}
