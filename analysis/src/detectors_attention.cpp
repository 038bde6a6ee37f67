// unfused_attention: attention computed as separate operators, a batched matrix multiply for
// the scores, a softmax over them and a second matrix multiply with the values, which writes
// the whole [.., L_q, L_k] score matrix to GPU memory and reads it back several times. A fused
// kernel (FlashAttention, memory-efficient attention: what scaled_dot_product_attention picks)
// keeps the scores on the chip. Evidence, from the recorded shapes (record_shapes=True): a
// softmax over a tensor of rank >= 3 whose nearest matrix-multiply sibling before it makes
// its shape and whose nearest one after it takes that shape as its first operand.
#include "arg_values.h"
#include "args_reader.h"
#include "detector_registry.h"
#include "detectors.h"

#include "stallscope/analysis/flop_model.h"
#include "stallscope/base/text_format.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

using Dims = std::vector<int64_t>;

bool softmaxName(std::string_view n) {
    return n == "aten::softmax" || n == "aten::_softmax" || n == "aten::_safe_softmax";
}
/// The matrix-multiply operators of attention's two products, and where their operands are.
int firstOperand(std::string_view n) {
    if (n == "aten::matmul" || n == "aten::bmm") return 0;
    if (n == "aten::baddbmm") return 1;
    return -1;
}
/// How far from the softmax its matrix multiplies may be (scale, mask, dropout, views).
constexpr int kMaxSiblings = 12;

/// A sibling (same parent, same track) of slice i, `step` -1 back or +1 forward, that is a
/// matrix multiply of attention; invalid when none is near.
uint32_t matmulSibling(const Context& c, uint32_t i, int step) {
    const SliceTable& s = c.trace.slices();
    const TrackInfo& tr = c.trace.tracks()[s.track[i].index()];
    const SliceId parent = s.parent[i];
    int seen = 0;
    for (int64_t j = int64_t(i) + step; j >= int64_t(tr.sliceBegin) && j < int64_t(tr.sliceEnd);
         j += step) {
        const uint32_t u = uint32_t(j);
        if (parent.valid() && u == parent.index()) break; // walked out of the parent
        if (s.parent[u] != parent) {
            if (step > 0 && s.depth[u] < s.depth[i]) break; // past the parent's end
            continue;                                       // deeper: inside a sibling
        }
        if (firstOperand(c.name(u)) >= 0) return u;
        if (++seen > kMaxSiblings) break;
    }
    return UINT32_MAX;
}

struct Inputs {
    std::vector<Dims> dims;
    std::vector<std::string> types;
};

double numel(const Dims& d) {
    double n = 1;
    for (int64_t x : d) n *= double(x);
    return n;
}

/// The product's shape of a matmul/bmm/baddbmm (batch, rows, columns) from its inputs.
std::optional<std::array<double, 3>> productOf(std::string_view name, const Inputs& in) {
    const int a = firstOperand(name);
    if (a < 0 || size_t(a) + 1 >= in.dims.size()) return std::nullopt;
    const Dims &x = in.dims[size_t(a)], &y = in.dims[size_t(a) + 1];
    if (x.size() < 3 || y.size() < 2) return std::nullopt;
    const Dims bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
    return std::array<double, 3>{std::max(numel(bx), numel(by)), double(x[x.size() - 2]),
                                 double(y.back())};
}

struct Block {
    uint32_t softmax, before, after;
    Dims scores;
    std::string type;
    std::string within; // "aten::_native_multi_head_attention", the SDPA math path, or ""
};

std::string withinOf(const Context& c, uint32_t i) {
    const SliceTable& s = c.trace.slices();
    for (SliceId p = s.parent[i]; p.valid(); p = s.parent[p.index()]) {
        const std::string_view n = c.name(p.index());
        if (n == "aten::_native_multi_head_attention" ||
            n == "aten::_scaled_dot_product_attention_math")
            return std::string(n);
    }
    return {};
}

/// The blocks of the window: each softmax (not inside another) between its two products.
std::vector<Block> attentionBlocks(const Context& c) {
    const SliceTable& s = c.trace.slices();
    const int64_t lo = c.window.startNs, hi = c.window.endNs;
    std::vector<std::array<uint32_t, 3>> found;
    for (uint32_t ti = 0; ti < c.trace.tracks().size(); ++ti) {
        const TrackInfo& tr = c.trace.tracks()[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        for (uint32_t i = c.trace.firstSliceEndingAtOrAfter(TrackId(ti), lo);
             i < tr.sliceEnd && s.start[i] < hi; ++i) {
            if (s.start[i] < lo || s.kind[i] != EventKind::CpuOp || !softmaxName(c.name(i)))
                continue;
            if (s.parent[i].valid() && softmaxName(c.name(s.parent[i].index()))) continue;
            const uint32_t before = matmulSibling(c, i, -1), after = matmulSibling(c, i, +1);
            if (before != UINT32_MAX && after != UINT32_MAX) found.push_back({i, before, after});
        }
    }
    std::vector<uint32_t> slices;
    for (const auto& f : found) slices.insert(slices.end(), f.begin(), f.end());
    std::sort(slices.begin(), slices.end());
    slices.erase(std::unique(slices.begin(), slices.end()), slices.end());
    std::vector<uint32_t> order = slices; // readArgsInFileOrder reorders its argument
    std::vector<Inputs> read(slices.size());
    readArgsInFileOrder(
        c.trace, order,
        [&](size_t k, bool ok, std::vector<ArgValue>& args) {
            if (!ok) return;
            const size_t at =
                size_t(std::lower_bound(slices.begin(), slices.end(), order[k]) - slices.begin());
            for (const ArgValue& a : args)
                if (a.key == "Input Dims" || a.key == "Input dims")
                    read[at].dims = parseDims(a.json);
                else if (a.key == "Input type")
                    read[at].types = parseStrings(a.json);
        },
        c.options.cancel);
    const auto inputsOf = [&](uint32_t i) -> const Inputs& {
        return read[size_t(std::lower_bound(slices.begin(), slices.end(), i) - slices.begin())];
    };
    std::vector<Block> blocks;
    for (const auto& [sm, before, after] : found) {
        const Inputs& x = inputsOf(sm);
        if (x.dims.empty() || x.dims[0].size() < 3) continue;
        const Dims& scores = x.dims[0];
        const double lq = double(scores[scores.size() - 2]), lk = double(scores.back());
        const double batch = numel(scores) / std::max(1.0, lq * lk);
        const auto made = productOf(c.name(before), inputsOf(before));
        if (!made || (*made)[0] != batch || (*made)[1] != lq || (*made)[2] != lk) continue;
        const Inputs& next = inputsOf(after);
        const int a = firstOperand(c.name(after));
        if (size_t(a) >= next.dims.size()) continue;
        const Dims& p = next.dims[size_t(a)];
        if (p.size() < 2 || double(p[p.size() - 2]) != lq || double(p.back()) != lk ||
            numel(p) != numel(scores))
            continue;
        blocks.push_back(
            {sm, before, after, scores, x.types.empty() ? "" : x.types[0], withinOf(c, sm)});
    }
    return blocks;
}

std::string dimsText(const Dims& d) {
    std::string t = "[";
    for (size_t i = 0; i < d.size(); ++i) t += (i ? ", " : "") + std::to_string(d[i]);
    return t + "]";
}

} // namespace

void detectUnfusedAttention(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    const std::vector<Block> blocks = attentionBlocks(c);
    if (blocks.empty()) return;
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d || d->busyNs <= 0) continue;
        // The kernels each block launched: launch calls on its thread between the start of
        // its first product and the end of its second.
        std::vector<std::tuple<uint32_t, int64_t, int64_t>> launched; // thread, launch, kernel ns
        for (size_t w = 0; w < dev.work.size(); ++w) {
            const SliceId l = dev.launch[w];
            if (l.valid() && s.kind[dev.work[w]] == EventKind::Kernel)
                launched.emplace_back(s.track[l.index()].index(), s.start[l.index()],
                                      s.dur[dev.work[w]]);
        }
        std::sort(launched.begin(), launched.end());
        int64_t ns = 0;
        size_t kernels = 0, mine = 0;
        std::map<std::string, size_t> within;
        for (const Block& b : blocks) {
            const int64_t a = s.start[b.before], e = s.end(b.after);
            const uint32_t thread = s.track[b.softmax].index();
            size_t n = 0;
            for (auto it = std::lower_bound(launched.begin(), launched.end(),
                                            std::make_tuple(thread, a, INT64_MIN));
                 it != launched.end() && std::get<0>(*it) == thread && std::get<1>(*it) < e; ++it) {
                ns += std::get<2>(*it);
                ++n;
            }
            kernels += n;
            if (n > 0) ++mine, ++within[b.within];
        }
        if (mine == 0 || double(ns) < c.options.thresholds.attentionMinShare * double(d->busyNs))
            continue;
        Finding f = makeFinding(c, FindingKind::UnfusedAttention, dev.device, ns);
        if (f.severity == FindingSeverity::High) f.severity = FindingSeverity::Medium;
        f.confidence = 0.5;
        const Block& first = blocks.front();
        for (const Block& b : blocks)
            if (f.evidence.size() < 30) f.evidence.push_back(SliceId(b.softmax));
        const ClaimParams p = ClaimParams().device(dev.device);
        const auto stat = [&](const char* st) { return ClaimParams(p).str("stat", st); };
        const std::string shape = dimsText(first.scores);
        const int bytes = tensorTypeBytes(first.type);
        const ClaimParams sp = ClaimParams(p).str("name", shape);
        std::string text =
            said(f, std::to_string(mine), "attention_blocks", stat("blocks"), double(mine)) +
            " times attention ran as separate operators: " +
            saidName(f, c.name(first.before), "attention_blocks",
                     ClaimParams(p).str("stat", "calls").str("name", c.name(first.before)), 1) +
            " for the scores, " +
            saidName(f, c.name(first.softmax), "attention_blocks",
                     ClaimParams(p).str("stat", "calls").str("name", c.name(first.softmax)), 1) +
            " over them, " +
            saidName(f, c.name(first.after), "attention_blocks",
                     ClaimParams(p).str("stat", "calls").str("name", c.name(first.after)), 1) +
            " with the values. Each writes the score matrix (" +
            saidName(f, shape, "attention_blocks", ClaimParams(sp).str("stat", "shape_calls"), 1);
        if (bytes > 0)
            text += ", " + said(f, base::formatBytes(int64_t(numel(first.scores) * bytes)),
                                "attention_blocks", ClaimParams(sp).str("stat", "shape_bytes"),
                                numel(first.scores) * bytes);
        text +=
            ") to GPU memory and reads it back. Their " +
            said(f, std::to_string(kernels), "attention_blocks", stat("kernels"), double(kernels)) +
            " kernels ran " + saidNs(f, ns, "attention_blocks", stat("ns")) + " (" +
            saidShare(f, double(ns) / double(d->busyNs), "attention_blocks", stat("ns"), "busy_ns",
                      p) +
            " of GPU busy time). A fused attention kernel keeps the scores on the chip and "
            "launches once. What it saves is not replayed: the fused kernel is not in the "
            "trace.";
        f.title = "Attention runs as separate operators, not a fused kernel";
        f.explanation = std::move(text);
        const std::string mha = "aten::_native_multi_head_attention";
        if (within.count(mha) && within[mha] == mine) {
            f.fix = "These run inside " +
                    saidName(f, mha, "attention_blocks",
                             ClaimParams(p).str("stat", "calls").str("name", mha), 1) +
                    ": nn.MultiheadAttention was asked for its attention weights "
                    "(need_weights=True, the default), so it computes them. Pass "
                    "need_weights=False and it calls the fused scaled_dot_product_attention.";
            f.snippet = "out, _ = self.attn(q, k, v, need_weights=False)";
        } else if (within.count("aten::_scaled_dot_product_attention_math") &&
                   within["aten::_scaled_dot_product_attention_math"] == mine) {
            const std::string math = "aten::_scaled_dot_product_attention_math";
            f.fix = "These run inside " +
                    saidName(f, math, "attention_blocks",
                             ClaimParams(p).str("stat", "calls").str("name", math), 1) +
                    ": scaled_dot_product_attention found no fused kernel for these inputs. "
                    "Fused kernels need 16-bit inputs (FlashAttention), a supported mask and "
                    "head size; run the model in bfloat16 or float16 (autocast) and check which "
                    "backends refuse with torch.nn.attention.sdpa_kernel.";
            f.snippet = "from torch.nn.attention import sdpa_kernel, SDPBackend\n"
                        "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # raises with the reason\n"
                        "    out = F.scaled_dot_product_attention(q, k, v)";
        } else {
            f.fix = "Replace the two products and the softmax with "
                    "torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=..., "
                    "dropout_p=..., is_causal=...): PyTorch picks a fused kernel for the inputs "
                    "(FlashAttention for 16-bit types on compute capability " +
                    saidConstant(f, "8.0", "the first GPUs with FlashAttention in PyTorch") +
                    " and newer, memory-efficient attention otherwise).";
            f.snippet = "out = F.scaled_dot_product_attention(q, k, v, is_causal=True)";
        }
        out.push_back(std::move(f));
    }
}

extern const Detector kDetectorUnfusedAttention;
const Detector kDetectorUnfusedAttention{
    {FindingKind::UnfusedAttention, "unfused_attention", DetectorStage::Cause,
     "a softmax over a rank >= 3 tensor between two matrix multiplies (matmul/bmm/baddbmm, "
     "siblings) that make and take its shape; their kernels >= 2 % of busy time",
     "none (the fused kernel's time is not in the trace)", "attentionMinShare"},
    detectUnfusedAttention};

} // namespace stallscope::analysis::detail
