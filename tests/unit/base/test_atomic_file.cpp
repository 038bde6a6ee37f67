// base::AtomicFile, the writer of every report, summary and annotated trace: only a new path
// or a regular file is written (a device, FIFO, socket, folder or link is left as it is), the
// temporary file is its own (O_EXCL | O_NOFOLLOW), a replaced file keeps its permissions, and
// nothing half-written ever takes a good file's place (docs/security.md).
#include "stallscope/base/atomic_file.h"

#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace stallscope::base;
namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

size_t entries(const QTemporaryDir& dir) {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path().toStdString())) ++n;
    return n;
}

} // namespace

class TestAtomicFile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void writesNewAndRegularFiles() {
        QTemporaryDir dir;
        const fs::path p = dir.filePath("new.txt").toStdString();
        std::string error;
        QVERIFY2(writeFileAtomically(p, "one", error), error.c_str());
        QCOMPARE(readAll(p), std::string("one"));
        QVERIFY2(writeFileAtomically(p, "two", error), error.c_str());
        QCOMPARE(readAll(p), std::string("two"));
        QCOMPARE(entries(dir), size_t(1)); // no temporary file left
        QVERIFY(outputTargetProblem(p).empty());
        QVERIFY(outputTargetProblem(dir.filePath("not-yet").toStdString()).empty());
    }

    void refusesWhatIsNotARegularFile() {
        QTemporaryDir dir;
        const fs::path fifo = dir.filePath("fifo").toStdString(),
                       folder = dir.filePath("folder").toStdString(),
                       target = dir.filePath("target").toStdString(),
                       link = dir.filePath("link").toStdString();
        QVERIFY(::mkfifo(fifo.c_str(), 0600) == 0);
        fs::create_directory(folder);
        std::ofstream(target) << "precious";
        QVERIFY(::symlink(target.c_str(), link.c_str()) == 0);
        struct Case {
            fs::path path;
            const char* says;
        };
        std::vector<Case> cases = {{fifo, "is a FIFO, not a regular file: it was left as it is"},
                                   {folder, "is a folder, not a regular file"},
                                   {link, "is a symbolic link, not a regular file"}};
        // A device node like /dev/null (made here, so that a failure cannot harm the real one).
        const fs::path device = dir.filePath("null").toStdString();
        if (::geteuid() == 0 && ::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0)
            cases.push_back({device, "is a character device, not a regular file"});
        for (const Case& c : cases) {
            struct stat before {};
            QVERIFY(::lstat(c.path.c_str(), &before) == 0);
            std::string error;
            QVERIFY2(!writeFileAtomically(c.path, "x", error), c.path.c_str());
            QVERIFY2(error.find(c.says) != std::string::npos, error.c_str());
            QCOMPARE(outputTargetProblem(c.path), error);
            struct stat after {};
            QVERIFY(::lstat(c.path.c_str(), &after) == 0);
            QCOMPARE(after.st_mode, before.st_mode); // still what it was
            QCOMPARE(after.st_ino, before.st_ino);
        }
        QCOMPARE(readAll(target), std::string("precious")); // not written through the link
        QCOMPARE(entries(dir), cases.size() + 1);           // no temporary file left
    }

    void keepsPermissions() {
        QTemporaryDir dir;
        const fs::path p = dir.filePath("private.html").toStdString();
        std::ofstream(p) << "old";
        QVERIFY(::chmod(p.c_str(), 0600) == 0);
        std::string error;
        QVERIFY2(writeFileAtomically(p, "new", error), error.c_str());
        struct stat st {};
        QVERIFY(::stat(p.c_str(), &st) == 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0600));
        QCOMPARE(readAll(p), std::string("new"));
        // A new file gets the usual mode (0666 less the umask).
        const mode_t mask = ::umask(022);
        const fs::path q = dir.filePath("fresh.html").toStdString();
        QVERIFY2(writeFileAtomically(q, "x", error), error.c_str());
        ::umask(mask);
        QVERIFY(::stat(q.c_str(), &st) == 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0644));
    }

    void aPlantedTemporaryNameIsNotFollowed() {
        // Whoever guesses a temporary name and plants a link there gains nothing: the open is
        // O_EXCL | O_NOFOLLOW, so another name is taken and the link's target is untouched.
        QTemporaryDir dir;
        const fs::path victim = dir.filePath("victim").toStdString();
        std::ofstream(victim) << "keep";
        AtomicFile f;
        QVERIFY(f.open(dir.filePath("out.json").toStdString()));
        const fs::path tmp = f.temporaryPath();
        QVERIFY(f.write("data") && f.commit());
        // The same name planted as a link before a second write: refused by O_EXCL, not followed.
        QVERIFY(::symlink(victim.c_str(), tmp.c_str()) == 0);
        std::string error;
        QVERIFY2(writeFileAtomically(dir.filePath("out.json").toStdString(), "more", error),
                 error.c_str());
        QCOMPARE(readAll(victim), std::string("keep"));
    }

    void anAbandonedWriteLeavesTheOldFile() {
        // A write that fails half-way (a full disk: every writer stops at its first failed
        // write and never commits) leaves the old file as it was and no temporary file.
        QTemporaryDir dir;
        const fs::path p = dir.filePath("summary.json").toStdString();
        std::ofstream(p) << "good";
        {
            AtomicFile f;
            QVERIFY(f.open(p));
            QVERIFY(f.write("half"));
            QCOMPARE(readAll(p), std::string("good"));
        }
        QCOMPARE(readAll(p), std::string("good"));
        QCOMPARE(entries(dir), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestAtomicFile)
#include "test_atomic_file.moc"
