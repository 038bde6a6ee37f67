#pragma once
// Item models of the Statistics tab: thin adapters over analysis::StatsTables (kernels,
// CPU operators, memory copies, runtime calls), one class per table.
#include "stats_table_model.h"

#include "stallscope/analysis/operator_groups.h"

namespace stallscope::gui {

/// GPU kernels by name.
class KernelStatsModel : public StatsTableModel {
    Q_OBJECT
public:
    enum Col {
        Name,
        Calls,
        Total,
        Mean,
        Min,
        Max,
        Share,
        BlocksPerSm,
        Occupancy,
        TensorCores,
        TcEligible,
        ColumnCount
    };
    explicit KernelStatsModel(QObject* parent = nullptr);
    [[nodiscard]] int totalColumn() const override { return Total; }
    [[nodiscard]] QString summary(const std::vector<int>& rows, bool filtered) const override;

protected:
    int load() override;
    [[nodiscard]] QString text(int row, int column) const override;
    [[nodiscard]] QVariant sortValue(int row, int column) const override;
    [[nodiscard]] model::SliceId example(int row) const override;
    [[nodiscard]] double bar(int row, int column) const override;
    [[nodiscard]] bool muted(int row, int column) const override;

private:
    int64_t m_totalNs = 0;
};

/// CPU operators by name, or by name and input shapes, or by name and call stack (the
/// TensorBoard plugin's "Group By"), with host and device self and total time.
class OperatorStatsModel : public StatsTableModel {
    Q_OBJECT
public:
    enum Col { Name, Detail, Calls, Self, Total, DeviceSelf, GpuTime, SelfShare, ColumnCount };
    explicit OperatorStatsModel(QObject* parent = nullptr);
    [[nodiscard]] int totalColumn() const override { return Total; }
    /// Self time: inclusive totals put ProfilerStep#N and the DataLoader on top.
    [[nodiscard]] int defaultSortColumn() const override { return Self; }
    [[nodiscard]] QString summary(const std::vector<int>& rows, bool filtered) const override;
    /// Regroups the rows (reading shapes or stacks from the trace's arguments).
    void setGrouping(analysis::OperatorGrouping g);
    [[nodiscard]] analysis::OperatorGrouping grouping() const { return m_grouping; }
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role = Qt::DisplayRole) const override;

protected:
    int load() override;
    [[nodiscard]] QString text(int row, int column) const override;
    [[nodiscard]] QVariant sortValue(int row, int column) const override;
    [[nodiscard]] model::SliceId example(int row) const override;
    [[nodiscard]] double bar(int row, int column) const override;
    [[nodiscard]] bool muted(int row, int column) const override;
    [[nodiscard]] QString toolTip(int row, int column) const override;

private:
    analysis::OperatorGrouping m_grouping = analysis::OperatorGrouping::Name;
    analysis::OperatorGroups m_groups;
    int64_t m_selfNs = 0;
};

/// Kernels by the operator that launched them.
class KernelOperatorStatsModel : public StatsTableModel {
    Q_OBJECT
public:
    enum Col { Operator, Kernel, Calls, Total, Mean, Min, Max, Share, ColumnCount };
    explicit KernelOperatorStatsModel(QObject* parent = nullptr);
    [[nodiscard]] int totalColumn() const override { return Total; }
    [[nodiscard]] QString summary(const std::vector<int>& rows, bool filtered) const override;

protected:
    int load() override;
    [[nodiscard]] QString text(int row, int column) const override;
    [[nodiscard]] QVariant sortValue(int row, int column) const override;
    [[nodiscard]] model::SliceId example(int row) const override;
    [[nodiscard]] double bar(int row, int column) const override;
    [[nodiscard]] bool muted(int row, int column) const override;
    [[nodiscard]] QString toolTip(int row, int column) const override;

private:
    std::vector<QString> m_kernels;
    int64_t m_totalNs = 0;
};

/// Collective communication by type: calls, sizes, algorithm and bus bandwidth.
class CollectiveStatsModel : public StatsTableModel {
    Q_OBJECT
public:
    enum Col {
        Type,
        Algorithms,
        Dtype,
        Calls,
        Total,
        Mean,
        Bytes,
        MeanBytes,
        Group,
        AlgBw,
        BusBw,
        ColumnCount
    };
    explicit CollectiveStatsModel(QObject* parent = nullptr);
    [[nodiscard]] int totalColumn() const override { return Total; }
    [[nodiscard]] QString summary(const std::vector<int>& rows, bool filtered) const override;

protected:
    int load() override;
    [[nodiscard]] QString text(int row, int column) const override;
    [[nodiscard]] QVariant sortValue(int row, int column) const override;
    [[nodiscard]] model::SliceId example(int row) const override;
    [[nodiscard]] double bar(int row, int column) const override;
    [[nodiscard]] bool muted(int row, int column) const override;
    [[nodiscard]] QString toolTip(int row, int column) const override;

private:
    int64_t m_totalNs = 0;
};

/// Memory copies by direction and memory kinds ("HtoD Pageable->Device").
class CopyStatsModel : public StatsTableModel {
    Q_OBJECT
public:
    enum Col { Kind, Count, Bytes, Total, Bandwidth, ColumnCount };
    explicit CopyStatsModel(QObject* parent = nullptr);
    [[nodiscard]] int totalColumn() const override { return Total; }
    [[nodiscard]] QString summary(const std::vector<int>& rows, bool filtered) const override;

protected:
    int load() override;
    [[nodiscard]] QString text(int row, int column) const override;
    [[nodiscard]] QVariant sortValue(int row, int column) const override;
    [[nodiscard]] model::SliceId example(int row) const override;
    [[nodiscard]] double bar(int row, int column) const override;
    [[nodiscard]] QString toolTip(int row, int column) const override;

private:
    int64_t m_totalNs = 0;
};

/// CUDA runtime and driver calls by name.
class RuntimeStatsModel : public StatsTableModel {
    Q_OBJECT
public:
    enum Col { Name, Calls, Total, Mean, Max, ColumnCount };
    explicit RuntimeStatsModel(QObject* parent = nullptr);
    [[nodiscard]] int totalColumn() const override { return Total; }
    [[nodiscard]] QString summary(const std::vector<int>& rows, bool filtered) const override;

protected:
    int load() override;
    [[nodiscard]] QString text(int row, int column) const override;
    [[nodiscard]] QVariant sortValue(int row, int column) const override;
    [[nodiscard]] model::SliceId example(int row) const override;
    [[nodiscard]] double bar(int row, int column) const override;

private:
    int64_t m_totalNs = 0;
};

} // namespace stallscope::gui
