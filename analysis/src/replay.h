#pragma once
// The replay engine behind replay.h: built once per device, run once per set of fixes.
#include "analysis_context.h"

#include <vector>

namespace stallscope::analysis::detail {

class Replay {
public:
    /// `dev` null: the step thread of a CPU-only trace. `commKeep`: the share of the
    /// device's communication already overlapped with compute (what OverlapComm keeps).
    /// `wanted`: the fixes run() will be asked for (what it needs no evidence for is skipped).
    Replay(const Context& c, const DeviceActivity* dev, double commKeep,
           FixSet wanted = ~FixSet(0));
    /// What one run needs besides the replay: kept by a caller that runs it many times (one
    /// per thread), so each run reuses the memory of the one before.
    struct Scratch {
        std::vector<std::pair<int64_t, int64_t>> shifts;
        std::vector<int32_t> inEdit;
        std::vector<int64_t> editStart, endAt;
        std::vector<uint8_t> editOn;
    };
    /// The predicted window length with `fixes` applied; -1 when there is nothing to replay.
    [[nodiscard]] int64_t run(FixSet fixes) const {
        Scratch scratch;
        return run(fixes, scratch);
    }
    [[nodiscard]] int64_t run(FixSet fixes, Scratch& scratch) const;
    [[nodiscard]] bool valid() const { return m_valid; }
    [[nodiscard]] size_t items() const { return m_items.size(); }

private:
    // A host interval whose time a fix shortens to `newLen` (DataLoader range, logging call,
    // dispatching operator). `parent`: the outer edit it lies in, -1 for none.
    struct Edit {
        int64_t a, b, newLen;
        Fix fix;
        int32_t thread;
        int32_t parent;
    };
    // A host call that waited for GPU work: it returns `wake` after item `awaited` ends.
    struct SyncPoint {
        int64_t a, b, wake;
        uint32_t awaited;
        Fix fix; // the fix that removes the wait
        int32_t parent;
    };
    struct Item { // 72 bytes: the flags fill the int32s' padding
        int64_t start, dur;
        int64_t launchEnd;         // the launch constraint's time; INT64_MIN: none
        int32_t launchThread = -1; // replayed thread of the launch, -1: kept as recorded
        int32_t launchEdit = -1;   // innermost edit around the launch constraint
        int32_t stream = 0;
        int32_t prev = -1;      // previous item on the stream
        int32_t dep = -1;       // item on another stream it waited for
        bool fixedTime = false; // started before the window: kept as recorded
        bool fp32Matmul = false, comm = false;
        bool fusedAway = false;   // a fused chain's kernel other than its longest
        bool pageableH2d = false; // staged through a bounce buffer: PinnedCopies drops the staging
        int64_t gapLaunch = 0, gapStream = 0, gapDep = 0;
    };
    enum EvType : uint8_t { kEditEnd, kEditStart, kSyncEnd };
    struct Ev {
        int64_t t;
        uint8_t type;
        uint32_t idx;
    };

    const Context& m_c;
    bool m_valid = false;
    int64_t m_w0 = 0, m_probe = INT64_MIN;
    double m_commKeep = 1;
    int64_t m_latency = 0; // the GPU's start latency after a launch (measured)
    int32_t m_threads = 0;
    std::vector<Edit> m_edits;
    std::vector<SyncPoint> m_syncs;
    std::vector<Item> m_items; // by start
    std::vector<Ev> m_events;  // edits and waits, by time; merged with the items in run()

    [[nodiscard]] bool active(int32_t edit, FixSet fixes) const;

    // build() and its phases, in the order it runs them (replay.cpp).
    struct BuildState; // what the phases hand each other
    struct ThreadScan; // one replayed thread's slices, while its edits and waits are found
    void build(const DeviceActivity* dev, FixSet wanted);
    [[nodiscard]] bool findStepThread(const DeviceActivity* dev, BuildState& state);
    void addGpuItems(const DeviceActivity* dev, FixSet wanted, BuildState& state);
    void measureLatency();
    void linkStreams(size_t nStreams);
    void indexStreams(BuildState& state) const;
    void findFirstLaunches(const DeviceActivity* dev, BuildState& state) const;
    void addHostEdits(const DeviceActivity* dev, FixSet wanted, const BuildState& state);
    void addThreadEditsAndWaits(const DeviceActivity* dev, FixSet wanted, const BuildState& state,
                                ThreadScan& t);
    void addGraphEdits(const BuildState& state, ThreadScan& t);
    void findLaunchEdits();
    void orderHostEvents();
    [[nodiscard]] int64_t endOf(int32_t item) const; // an item's recorded end
    [[nodiscard]] int32_t latestEnding(const BuildState& state, int64_t lo, int64_t hi) const;
};

} // namespace stallscope::analysis::detail
