#pragma once
// The base of the Statistics tab's item models: column titles and tooltips, alignment and
// the roles every table answers. Display text is human-readable; SortRole gives the raw
// number (or the name) so a QSortFilterProxyModel sorts numerically, and ExampleSliceRole
// gives one slice of the row for "show in timeline".
#include "stallscope/analysis/analysis.h"
#include "stallscope/model/trace.h"

#include <QAbstractTableModel>
#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

namespace stallscope::gui {

/// Raw value of a cell for sorting: qlonglong/double for numbers, QString for names.
constexpr int SortRole = Qt::UserRole;
/// The example slice of a row, as qulonglong (SliceId::value); invalid when there is none.
constexpr int ExampleSliceRole = Qt::UserRole + 1;
/// The share (0..1) a cell's bar shows; only on "share" columns.
constexpr int BarRole = Qt::UserRole + 2;

/// Human-readable formatting shared by the statistics tables.
namespace statsformat {
QString duration(int64_t ns);         // "850 ns", "12.3 µs", "1.234 ms", "2.345 s"
QString durationShort(int64_t ns);    // four significant digits: "603.6 ms"
QString count(uint64_t n);            // "12,345"
QString bytes(int64_t n);             // "512 B", "4.19 MB", "1.20 GB" (decimal units)
QString percent(double pct);          // "12.3 %"
} // namespace statsformat

/// Common behaviour of the four tables: column titles and tooltips, alignment, roles.
class StatsTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    struct Column {
        QString title;
        QString toolTip;
        bool numeric = true;
    };

    explicit StatsTableModel(std::vector<Column> columns, QObject* parent = nullptr);

    using QAbstractTableModel::setData;
    void setData(std::shared_ptr<const model::Trace> trace,
                 std::shared_ptr<const analysis::AnalysisResult> analysis);

    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role = Qt::DisplayRole) const override;

    /// The column holding the row's name (the filter applies to it).
    [[nodiscard]] static constexpr int nameColumn() { return 0; }
    /// The column of the row's total time.
    [[nodiscard]] virtual int totalColumn() const = 0;
    /// The column the table is sorted on (descending) when it is first shown.
    [[nodiscard]] virtual int defaultSortColumn() const { return totalColumn(); }
    /// One line describing the given rows ("312 kernels, 603.6 ms total"); `filtered`
    /// when the rows are a subset of the table.
    [[nodiscard]] virtual QString summary(const std::vector<int>& rows, bool filtered) const = 0;
    [[nodiscard]] const QString& name(int row) const { return m_names[static_cast<size_t>(row)]; }
    [[nodiscard]] const analysis::AnalysisResult* analysis() const { return m_analysis.get(); }

protected:
    /// Rebuilds the per-row caches from the current analysis; returns the row count.
    virtual int load() = 0;
    /// Resets the model through load() on the same trace and analysis.
    void reload();
    [[nodiscard]] virtual QString text(int row, int column) const = 0;
    [[nodiscard]] virtual QVariant sortValue(int row, int column) const = 0;
    [[nodiscard]] virtual model::SliceId example(int row) const = 0;
    /// Share (0..1) drawn as a bar, or a negative value for none.
    [[nodiscard]] virtual double bar(int, int) const { return -1; }
    /// True for cells that hold "no data" and are drawn muted.
    [[nodiscard]] virtual bool muted(int, int) const { return false; }
    [[nodiscard]] virtual QString toolTip(int row, int column) const;

    [[nodiscard]] const model::Trace& trace() const { return *m_trace; }
    [[nodiscard]] const analysis::StatsTables& stats() const { return m_analysis->stats; }
    [[nodiscard]] bool haveData() const { return m_trace && m_analysis; }
    std::vector<QString> m_names;

private:
    std::vector<Column> m_columns;
    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    int m_rows = 0;
};

} // namespace stallscope::gui
