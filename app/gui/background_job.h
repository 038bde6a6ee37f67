#pragma once
// Work that would stall the GUI thread (a flame graph of millions of events, a search over
// every name) runs on Qt's thread pool; its result comes back to the GUI thread. Only the
// latest request of a job counts: starting a new one cancels the previous one and drops
// its result, so a user typing a search or dragging a range never queues stale work.
#include <QCoreApplication>
#include <QMetaObject>
#include <QPointer>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <memory>

namespace stallscope::gui {

template <class T>
class LatestJob {
public:
    /// Results are delivered while `owner` lives (they are dropped once it is destroyed).
    explicit LatestJob(QObject* owner) : m_owner(owner), m_state(std::make_shared<State>()) {}
    ~LatestJob() { cancel(); }
    LatestJob(const LatestJob&) = delete;
    LatestJob& operator=(const LatestJob&) = delete;

    /// Runs work(cancelFlag) on the pool, then done(result) on the GUI thread unless a later
    /// start() or cancel() came first. `work` must only read shared, immutable data.
    void start(std::function<T(const std::atomic<bool>&)> work, std::function<void(T)> done) {
        cancel();
        auto flag = std::make_shared<std::atomic<bool>>(false);
        m_cancel = flag;
        const uint64_t generation = ++m_state->generation;
        m_state->running.fetch_add(1);
        QPointer<QObject> owner(m_owner);
        auto state = m_state;
        QThreadPool::globalInstance()->start(
            [owner, state, flag, generation, work = std::move(work), done = std::move(done)]() mutable {
                auto result = std::make_shared<T>(work(*flag));
                // Posted to the application object (always alive); the owner is checked on
                // the GUI thread, where it is destroyed.
                QMetaObject::invokeMethod(
                    QCoreApplication::instance(),
                    [owner, state, flag, generation, result, done = std::move(done)]() mutable {
                        state->running.fetch_sub(1);
                        if (!owner || flag->load() || generation != state->generation) return;
                        done(std::move(*result));
                    },
                    Qt::QueuedConnection);
            });
    }
    void cancel() {
        if (m_cancel) m_cancel->store(true);
        m_cancel.reset();
    }
    /// True while a started job has not yet delivered (or dropped) its result.
    [[nodiscard]] bool busy() const { return m_state->running.load() > 0; }

private:
    struct State {
        std::atomic<uint64_t> generation{0};
        std::atomic<int> running{0};
    };
    QObject* m_owner;
    std::shared_ptr<State> m_state;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

} // namespace stallscope::gui
