// The operator cost table's formulas (docs/analysis.md "Operator FLOPs and bytes"). Every
// formula reads the shapes at the argument positions its rule gives; a shape of the wrong
// rank leaves the call unsized (never a guess), an assumption marks it inexact.
#include "stallscope/analysis/flop_model.h"

#include "arg_values.h"
#include "catalogue_lines.h"

#include <algorithm>
#include <cctype>

namespace stallscope::analysis {

namespace detail {
extern const char* const kOperatorFlopsText;
} // namespace detail

namespace {

using Dims = std::vector<int64_t>;

constexpr std::array<std::string_view, size_t(FlopFormula::Count)> kFormulaNames{
    "mm",
    "bmm",
    "matmul",
    "linear",
    "conv",
    "conv_backward",
    "conv_backward_input",
    "sdpa",
    "sdpa_backward",
    "norm",
    "softmax",
    "elementwise",
    "reduction",
    "embedding"};

constexpr std::array<std::string_view, FlopModel::ParamCount> kParamNames{
    "a",   "b",      "x",       "w",        "gout",       "q",      "k",    "v",
    "idx", "stride", "padding", "dilation", "transposed", "groups", "mask", "causal"};

double numel(const Dims& d) {
    double n = 1;
    for (int64_t v : d) n *= double(v);
    return n;
}

double numelFrom(const Dims& d, size_t from) {
    double n = 1;
    for (size_t i = from; i < d.size(); ++i) n *= double(d[i]);
    return n;
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\'' || s.front() == '"'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\'' || s.back() == '"'))
        s.remove_suffix(1);
    return s;
}

/// "[2, 2]" or "2" -> the integers; empty when the text is not that.
std::vector<int64_t> intList(std::string_view s) {
    s = trimmed(s);
    std::vector<int64_t> out;
    if (s.empty()) return out;
    if (s.front() == '[' || s.front() == '(') s.remove_prefix(1);
    if (!s.empty() && (s.back() == ']' || s.back() == ')')) s.remove_suffix(1);
    int64_t v = 0;
    bool digits = false, neg = false;
    for (size_t i = 0; i <= s.size(); ++i) {
        const char ch = i < s.size() ? s[i] : ',';
        if (ch >= '0' && ch <= '9') {
            v = v * 10 + (ch - '0');
            digits = true;
        } else if (ch == '-' && !digits) {
            neg = true;
        } else if (ch == ',') {
            if (!digits) return {};
            out.push_back(neg ? -v : v);
            v = 0;
            digits = neg = false;
        } else if (ch != ' ') {
            return {};
        }
    }
    return out;
}

/// "True"/"False" (also "[True, False, True]" one by one) -> the booleans.
std::vector<bool> boolList(std::string_view s) {
    std::vector<bool> out;
    size_t at = 0;
    while (at < s.size()) {
        const size_t t = s.find("True", at), f = s.find("False", at);
        if (t == std::string_view::npos && f == std::string_view::npos) break;
        if (f == std::string_view::npos || (t != std::string_view::npos && t < f)) {
            out.push_back(true);
            at = t + 4;
        } else {
            out.push_back(false);
            at = f + 5;
        }
    }
    return out;
}

/// Whether torch broadcasts two shapes (each pair of sizes, aligned at the last
/// dimension, equal or one of them 1).
bool broadcastable(const Dims& a, const Dims& b) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        const int64_t x = a[a.size() - 1 - i], y = b[b.size() - 1 - i];
        if (x != y && x != 1 && y != 1) return false;
    }
    return true;
}

/// torch's broadcasting of two shapes, aligned at their last dimension.
Dims broadcast(const Dims& a, const Dims& b) {
    Dims out(std::max(a.size(), b.size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
        const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
        const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
        out[out.size() - 1 - i] = x == 1 ? y : x;
    }
    return out;
}

struct Reader {
    const FlopModel::Rule& r;
    const OperatorInputs& in;
    const Dims* dims(FlopModel::Param p) const {
        const int i = r.at[p];
        return i >= 0 && size_t(i) < in.dims.size() ? &in.dims[size_t(i)] : nullptr;
    }
    /// The concrete value at p's position: nullopt when the rule gives no position, "" when
    /// the trace does not say it.
    std::optional<std::string_view> concrete(FlopModel::Param p) const {
        const int i = r.at[p];
        if (i < 0) return std::nullopt;
        if (size_t(i) >= in.concrete.size()) return std::string_view();
        return trimmed(in.concrete[size_t(i)]);
    }
    bool flag(FlopModel::Param p, bool byDefault, bool& exact) const {
        const auto c = concrete(p);
        if (!c || c->empty()) return byDefault; // not said: the usual case (not transposed)
        const std::vector<bool> b = boolList(*c);
        if (b.size() != 1) {
            exact = false;
            return byDefault;
        }
        return b[0];
    }
    double typeBytesOf(size_t i) const {
        return i < in.types.size() ? double(tensorTypeBytes(in.types[i])) : 0.0;
    }
    /// Every tensor input's bytes plus `outNumel` elements of the first tensor input's type.
    std::optional<double> bytes(double outNumel) const {
        if (in.types.empty()) return std::nullopt;
        double sum = 0, outSize = 0;
        for (size_t i = 0; i < in.dims.size(); ++i) {
            const double b = typeBytesOf(i);
            if (b <= 0) continue;
            if (outSize == 0) outSize = b;
            sum += numel(in.dims[i]) * b;
        }
        if (outSize == 0) return std::nullopt;
        return sum + outNumel * outSize;
    }
};

OperatorCost unsized(std::string why) {
    OperatorCost c;
    c.why = std::move(why);
    return c;
}

OperatorCost sized(double flops, std::optional<double> bytes, bool exact) {
    OperatorCost c;
    c.sized = true;
    c.flops = flops;
    c.bytes = bytes;
    c.exact = exact;
    return c;
}

/// A matrix multiply's cost with its product's sizes and its first matrix's element type.
OperatorCost withMatrix(OperatorCost c, const Reader& rd, FlopModel::Param first, int64_t m,
                        int64_t n, int64_t k) {
    c.m = m;
    c.n = n;
    c.k = k;
    const int i = rd.r.at[first];
    if (i >= 0 && size_t(i) < rd.in.types.size()) c.matrixType = rd.in.types[size_t(i)];
    return c;
}

/// Output spatial sizes of a convolution from its concrete stride, padding and dilation;
/// the input's sizes (stride 1, "same" padding) when the trace does not say them.
Dims convOutSpatial(const Reader& rd, const Dims& x, const Dims& w, bool& exact) {
    const size_t nd = x.size() - 2;
    Dims in(x.begin() + 2, x.end());
    auto values = [&](FlopModel::Param p, int64_t byDefault, bool& known) -> Dims {
        const auto c = rd.concrete(p);
        if (!c) return Dims(nd, byDefault);
        Dims v = intList(*c);
        if (v.size() == 1) v.assign(nd, v[0]);
        if (v.size() != nd) {
            known = false;
            return Dims(nd, byDefault);
        }
        return v;
    };
    bool known = true;
    const Dims stride = values(FlopModel::Stride, 1, known);
    const auto pc = rd.concrete(FlopModel::Padding);
    if (pc && *pc == "same") return in;
    const Dims pad = pc && *pc == "valid" ? Dims(nd, 0) : values(FlopModel::Padding, 0, known);
    const Dims dil = values(FlopModel::Dilation, 1, known);
    if (!known) {
        if (rd.in.outSpatial.size() == nd) return rd.in.outSpatial; // from its backward
        exact = false;
        return in;
    }
    Dims out(nd);
    for (size_t i = 0; i < nd; ++i) {
        const int64_t k = w[i + 2];
        const int64_t num = in[i] + 2 * pad[i] - dil[i] * (k - 1) - 1;
        out[i] = stride[i] > 0 && num >= 0 ? num / stride[i] + 1 : 0;
        if (out[i] <= 0) return {}; // the shapes do not fit these parameters
    }
    return out;
}

OperatorCost convCost(const Reader& rd) {
    const Dims* x = rd.dims(FlopModel::X);
    const Dims* w = rd.dims(FlopModel::W);
    if (!x || !w || x->size() < 3 || w->size() != x->size())
        return unsized("input and weight of the same rank (3 to 5) expected");
    bool exact = true;
    const bool transposed = rd.flag(FlopModel::Transposed, rd.r.transposed, exact);
    double conv, out;
    if (transposed) {
        conv = numelFrom(*x, 2);
        const auto g = rd.concrete(FlopModel::Groups);
        Dims groups = g ? intList(*g) : Dims{1};
        if (groups.size() != 1) {
            exact = false;
            groups = {1};
        }
        Dims stride =
            rd.concrete(FlopModel::Stride) ? intList(*rd.concrete(FlopModel::Stride)) : Dims{1};
        if (stride.size() == 1) stride.assign(x->size() - 2, stride[0]);
        if (stride.size() != x->size() - 2) {
            exact = false;
            stride.assign(x->size() - 2, 1);
        }
        out = double((*x)[0]) * double((*w)[1]) * double(groups[0]) * conv * numel(stride);
    } else {
        const Dims spatial = convOutSpatial(rd, *x, *w, exact);
        if (spatial.empty()) return unsized("no output for this input, kernel, stride and padding");
        conv = numel(spatial);
        out = double((*x)[0]) * double((*w)[0]) * conv;
    }
    const double flops = 2 * double((*x)[0]) * conv * numel(*w);
    return sized(flops, rd.bytes(out), exact);
}

OperatorCost convBackwardCost(const Reader& rd, bool inputOnly) {
    const Dims* g = rd.dims(FlopModel::Gout);
    const Dims* w = rd.dims(FlopModel::W);
    const Dims* x = rd.dims(FlopModel::X);
    if (!g || !w || g->size() < 3 || w->size() != g->size())
        return unsized("grad_output and weight of the same rank (3 to 5) expected");
    bool exact = true;
    const bool transposed = rd.flag(FlopModel::Transposed, false, exact);
    if (transposed && (!x || x->size() != g->size()))
        return unsized("a transposed convolution's input expected");
    const double spatial = transposed ? numelFrom(*x, 2) : numelFrom(*g, 2);
    const double forward = 2 * double((*g)[0]) * numel(*w) * spatial;
    if (inputOnly) // the input's gradient: its size is not recorded (an estimate)
        return sized(forward, rd.bytes(double((*g)[0]) * double((*w)[1]) * numelFrom(*g, 2)),
                     false);
    bool gradInput = true, gradWeight = true;
    if (const auto m = rd.concrete(FlopModel::Mask); m && !m->empty()) {
        const std::vector<bool> b = boolList(*m);
        if (b.size() >= 2) {
            gradInput = b[0];
            gradWeight = b[1];
        } else {
            exact = false;
        }
    }
    const double out = (gradInput && x ? numel(*x) : 0) + (gradWeight ? numel(*w) : 0);
    return sized(forward * (int(gradInput) + int(gradWeight)), rd.bytes(out), exact);
}

OperatorCost sdpaCost(const Reader& rd, bool backward) {
    const Dims* q = rd.dims(FlopModel::Q);
    const Dims* k = rd.dims(FlopModel::K);
    const Dims* v = rd.dims(FlopModel::V);
    if (!q || !k || !v || q->size() != 4 || k->size() != 4 || v->size() != 4)
        return unsized("query, key and value of rank 4 expected");
    const bool bshd = rd.r.bshd;
    const double b = double((*q)[0]), h = double((*q)[bshd ? 2 : 1]);
    const double sq = double((*q)[bshd ? 1 : 2]), sk = double((*k)[bshd ? 1 : 2]);
    const double dq = double((*q)[3]), dv = double((*v)[3]);
    bool exact = true;
    bool causal = false;
    if (const auto c = rd.concrete(FlopModel::Causal)) {
        const std::vector<bool> f = boolList(*c);
        if (f.size() == 1)
            causal = f[0];
        else
            exact = false; // not said: counted in full, as FlopCounterMode does
    }
    // Backward: FlopCounterMode's sdpa_backward_flop_count, five batched matrix multiplies
    // (q k^T recomputed; dO v^T; P^T dO; dS k; q^T dS).
    double flops =
        backward ? 2 * b * h * sq * sk * (3 * dq + 2 * dv) : 2 * b * h * sq * sk * (dq + dv);
    if (causal) flops /= 2;
    const double out = backward ? numel(*q) + numel(*k) + numel(*v) : b * h * sq * dv;
    return sized(flops, rd.bytes(out), exact);
}

OperatorCost mmCost(const Reader& rd, size_t rank) {
    const Dims* a = rd.dims(FlopModel::A);
    const Dims* b = rd.dims(FlopModel::B);
    if (!a || !b || a->size() != rank || b->size() != rank || (*a)[rank - 1] != (*b)[rank - 2] ||
        (rank == 3 && (*a)[0] != (*b)[0]))
        return unsized(rank == 2 ? "two matrices of matching inner size expected"
                                 : "two batches of matrices of matching sizes expected");
    const double batch = rank == 3 ? double((*a)[0]) : 1.0;
    const double m = double((*a)[rank - 2]), k = double((*a)[rank - 1]), n = double((*b)[rank - 1]);
    return withMatrix(sized(2 * batch * m * k * n, rd.bytes(batch * m * n), true), rd, FlopModel::A,
                      (*a)[rank - 2], (*b)[rank - 1], (*a)[rank - 1]);
}

OperatorCost matmulCost(const Reader& rd) {
    const Dims* pa = rd.dims(FlopModel::A);
    const Dims* pb = rd.dims(FlopModel::B);
    if (!pa || !pb || pa->empty() || pb->empty())
        return unsized("two tensors of rank 1 or more expected");
    if (pa->size() == 1 && pb->size() == 1) return sized(2 * double((*pa)[0]), rd.bytes(1), true);
    Dims a = *pa, b = *pb;
    if (a.size() == 1) a.insert(a.begin(), 1);
    if (b.size() == 1) b.push_back(1);
    if (a.back() != b[b.size() - 2]) return unsized("matching inner sizes expected");
    const Dims ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    if (!broadcastable(ba, bb)) return unsized("batch sizes that broadcast expected");
    const Dims batch = broadcast(ba, bb);
    const double m = double(a[a.size() - 2]), k = double(a.back()), n = double(b.back());
    const double nb = numel(batch);
    return withMatrix(sized(2 * nb * m * k * n, rd.bytes(nb * m * n), true), rd, FlopModel::A,
                      a[a.size() - 2], b.back(), a.back());
}

} // namespace

std::string_view flopFormulaName(FlopFormula f) {
    return f < FlopFormula::Count ? kFormulaNames[size_t(f)] : std::string_view("?");
}

bool tensorMath(FlopFormula f) {
    return f <= FlopFormula::SdpaBackward;
}

int tensorTypeBytes(std::string_view t) {
    if (t == "float" || t == "int" || t == "unsigned int") return 4;
    // "long int" from GCC-built PyTorch, "long" from Clang-built (the HTA traces)
    if (t == "double" || t == "long int" || t == "int64_t" || t == "long" ||
        t == "c10::complex<float>")
        return 8;
    if (t == "c10::Half" || t == "Half" || t == "c10::BFloat16" || t == "BFloat16" ||
        t == "short int" || t == "short")
        return 2;
    if (t == "signed char" || t == "unsigned char" || t == "bool" ||
        t.find("Float8") != std::string_view::npos)
        return 1;
    return 0;
}

std::optional<FlopModel> FlopModel::parse(std::string_view text, std::string& error) {
    FlopModel m;
    const bool ok = detail::forEachCatalogueLine(
        text, 2,
        [&](const detail::CatalogueLine& l) -> std::string {
            Rule r;
            r.op = std::string(l.words[0]);
            r.line = l.number;
            r.at.fill(-1);
            const auto f = std::find(kFormulaNames.begin(), kFormulaNames.end(), l.words[1]);
            if (f == kFormulaNames.end())
                return "unknown formula '" + std::string(l.words[1]) + "'";
            r.formula = FlopFormula(f - kFormulaNames.begin());
            std::string_view rest = l.rest;
            while (!rest.empty()) {
                const size_t sp = rest.find(' ');
                const std::string_view kv = rest.substr(0, sp);
                rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
                if (kv.empty()) continue;
                const size_t eq = kv.find('=');
                if (eq == std::string_view::npos)
                    return "PARAM=VALUE expected, not '" + std::string(kv) + "'";
                const std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
                if (key == "per") {
                    const auto v = detail::argInteger(value);
                    if (!v) return "per= takes a whole number";
                    r.per = double(*v);
                } else if (key == "layout") {
                    if (value != "bshd" && value != "bhsd") return "layout is bshd or bhsd";
                    r.bshd = value == "bshd";
                } else if (key == "transposed" && value == "true") {
                    r.transposed = true;
                } else {
                    const auto p = std::find(kParamNames.begin(), kParamNames.end(), key);
                    const auto v = detail::argInteger(value);
                    if (p == kParamNames.end())
                        return "unknown parameter '" + std::string(key) + "'";
                    if (!v || *v > 64)
                        return "a position (0 to 64) expected for " + std::string(key);
                    r.at[size_t(p - kParamNames.begin())] = int8_t(*v);
                }
            }
            if (m.m_byName.count(r.op)) return "'" + r.op + "' is listed twice";
            m.m_byName.emplace(r.op, m.m_rules.size());
            m.m_rules.push_back(std::move(r));
            return {};
        },
        error);
    if (!ok) return std::nullopt;
    return m;
}

const FlopModel& FlopModel::builtIn() {
    static const FlopModel m = [] {
        std::string error;
        auto parsed = parse(detail::kOperatorFlopsText, error);
        return parsed ? std::move(*parsed) : FlopModel();
    }();
    return m;
}

const FlopModel::Rule* FlopModel::find(std::string_view op) const {
    const auto it = m_byName.find(std::string(op));
    return it == m_byName.end() ? nullptr : &m_rules[it->second];
}

OperatorCost FlopModel::cost(const Rule& rule, const OperatorInputs& in) {
    if (in.dims.empty())
        return unsized("no input shapes recorded (record_shapes=True records them)");
    const Reader rd{rule, in};
    switch (rule.formula) {
    case FlopFormula::Mm: return mmCost(rd, 2);
    case FlopFormula::Bmm: return mmCost(rd, 3);
    case FlopFormula::Matmul: return matmulCost(rd);
    case FlopFormula::Linear: {
        const Dims* x = rd.dims(X);
        const Dims* w = rd.dims(W);
        if (!x || !w || x->empty() || w->size() != 2 || x->back() != (*w)[1])
            return unsized("an input and a 2-D weight of matching inner size expected");
        const double rows = numel(*x) / double(x->back() == 0 ? 1 : x->back());
        const double k = double(x->back()), n = double((*w)[0]);
        return withMatrix(sized(2 * rows * k * n, rd.bytes(rows * n), true), rd, X, int64_t(rows),
                          (*w)[0], x->back());
    }
    case FlopFormula::Conv: return convCost(rd);
    case FlopFormula::ConvBackward: return convBackwardCost(rd, false);
    case FlopFormula::ConvBackwardInput: return convBackwardCost(rd, true);
    case FlopFormula::Sdpa: return sdpaCost(rd, false);
    case FlopFormula::SdpaBackward: return sdpaCost(rd, true);
    case FlopFormula::Norm:
    case FlopFormula::Softmax:
    case FlopFormula::Reduction: {
        const Dims* x = rd.dims(X);
        if (!x) return unsized("the input's shape expected");
        const double n = numel(*x);
        return sized(rule.per * n, rd.bytes(rule.formula == FlopFormula::Reduction ? 0 : n), true);
    }
    case FlopFormula::Elementwise: {
        Dims shape;
        bool any = false;
        for (size_t i = 0; i < in.dims.size(); ++i) {
            // Without "Input type" every input counts (a Scalar's [] broadcasts away).
            const bool tensor = in.types.empty() || rd.typeBytesOf(i) > 0;
            if (!tensor) continue;
            if (any && !broadcastable(shape, in.dims[i]))
                return unsized("inputs that broadcast expected");
            shape = any ? broadcast(shape, in.dims[i]) : in.dims[i];
            any = true;
        }
        if (!any) return unsized("no tensor input");
        const double n = numel(shape);
        return sized(rule.per * n, rd.bytes(n), true);
    }
    case FlopFormula::Embedding: {
        const Dims* w = rd.dims(W);
        const Dims* idx = rd.dims(Idx);
        if (!w || !idx || w->size() != 2) return unsized("a 2-D weight and indices expected");
        std::optional<double> bytes;
        const double wb = rd.typeBytesOf(size_t(rule.at[W])),
                     ib = rd.typeBytesOf(size_t(rule.at[Idx]));
        if (wb > 0 && ib > 0) bytes = numel(*idx) * ib + 2 * numel(*idx) * double((*w)[1]) * wb;
        return sized(0, bytes, true);
    }
    case FlopFormula::Count: break;
    }
    return unsized("no formula");
}

} // namespace stallscope::analysis
