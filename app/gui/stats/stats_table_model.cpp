// StatsTableModel (the behaviour the four statistics tables share) and the number
// formatting they use.
#include "stats_table_model.h"

#include "gui_text.h"

#include "stallscope/base/text_format.h"

#include "theme.h"

#include <QLocale>

#include <cmath>

namespace stallscope::gui {

namespace statsformat {

namespace {
const QLocale& locale() {
    // Fixed English grouping so the tables read the same everywhere ("12,345").
    static const QLocale l(QLocale::English, QLocale::UnitedStates);
    return l;
}
} // namespace

QString duration(int64_t ns) {
    // Three decimals, one for µs, thousands grouped: "1,234.567 s".
    return QString::fromStdString(base::formatDuration(ns, {3, 3, 1, true, true}));
}

QString durationShort(int64_t ns) { return significantDuration(ns); }

QString count(uint64_t n) { return locale().toString(qulonglong(n)); }

QString bytes(int64_t n) {
    const double a = std::abs(double(n));
    if (a >= 1e9) return QString::number(double(n) / 1e9, 'f', 2) + QStringLiteral(" GB");
    if (a >= 1e6) return QString::number(double(n) / 1e6, 'f', 2) + QStringLiteral(" MB");
    if (a >= 1e3) return QString::number(double(n) / 1e3, 'f', 1) + QStringLiteral(" kB");
    return QString::number(n) + QStringLiteral(" B");
}

QString percent(double pct) {
    return QString::fromStdString(base::formatPercent(pct / 100, 1, true));
}

} // namespace statsformat

StatsTableModel::StatsTableModel(std::vector<Column> columns, QObject* parent)
    : QAbstractTableModel(parent), m_columns(std::move(columns)) {}

void StatsTableModel::setData(std::shared_ptr<const model::Trace> trace,
                              std::shared_ptr<const analysis::AnalysisResult> analysis) {
    beginResetModel();
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_names.clear();
    m_rows = haveData() ? load() : 0;
    endResetModel();
}

void StatsTableModel::reload() {
    beginResetModel();
    m_names.clear();
    m_rows = haveData() ? load() : 0;
    endResetModel();
}

int StatsTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_rows; }

int StatsTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_columns.size());
}

QVariant StatsTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const int row = index.row(), col = index.column();
    switch (role) {
    case Qt::DisplayRole: return text(row, col);
    case SortRole: return sortValue(row, col);
    case Qt::ToolTipRole: {
        const QString tip = toolTip(row, col);
        return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::Alignment(m_columns[size_t(col)].numeric ? Qt::AlignRight | Qt::AlignVCenter
                                                                                 : Qt::AlignLeft | Qt::AlignVCenter));
    case Qt::ForegroundRole:
        if (muted(row, col)) return Theme::current().mutedText;
        return {};
    case ExampleSliceRole: {
        const model::SliceId s = example(row);
        return s.valid() ? QVariant(qulonglong(s.value)) : QVariant();
    }
    case BarRole: {
        const double b = bar(row, col);
        return b >= 0 ? QVariant(b) : QVariant();
    }
    default: return {};
    }
}

QVariant StatsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= static_cast<int>(m_columns.size()))
        return QAbstractTableModel::headerData(section, orientation, role);
    const Column& c = m_columns[size_t(section)];
    switch (role) {
    case Qt::DisplayRole: return c.title;
    case Qt::ToolTipRole: return c.toolTip;
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::Alignment(c.numeric ? Qt::AlignRight | Qt::AlignVCenter
                                                           : Qt::AlignLeft | Qt::AlignVCenter));
    default: return {};
    }
}

QString StatsTableModel::toolTip(int row, int column) const {
    return column == nameColumn() ? name(row) : QString();
}

} // namespace stallscope::gui
