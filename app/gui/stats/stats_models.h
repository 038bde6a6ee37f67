#pragma once
// Item models of the Statistics tab: thin adapters over analysis::StatsTables (kernels,
// CPU operators, memory copies, runtime calls), one class per table.
#include "stats_table_model.h"

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

/// CPU operators by name.
class OperatorStatsModel : public StatsTableModel {
    Q_OBJECT
public:
    enum Col { Name, Calls, Self, Total, GpuTime, SelfShare, ColumnCount };
    explicit OperatorStatsModel(QObject* parent = nullptr);
    [[nodiscard]] int totalColumn() const override { return Total; }
    /// Self time: inclusive totals put ProfilerStep#N and the DataLoader on top.
    [[nodiscard]] int defaultSortColumn() const override { return Self; }
    [[nodiscard]] QString summary(const std::vector<int>& rows, bool filtered) const override;

protected:
    int load() override;
    [[nodiscard]] QString text(int row, int column) const override;
    [[nodiscard]] QVariant sortValue(int row, int column) const override;
    [[nodiscard]] model::SliceId example(int row) const override;
    [[nodiscard]] double bar(int row, int column) const override;

private:
    int64_t m_selfNs = 0;
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
