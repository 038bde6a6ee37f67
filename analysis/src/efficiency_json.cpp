// The analysis JSON's "efficiency" section (docs/analysis-json.md), apart from the rest of
// analysis_json.cpp.
#include "efficiency_json.h"

namespace stallscope::analysis::detail {

using base::JsonWriter;

/// The efficiency section (docs/analysis-json.md "efficiency"): at most kOperatorRows rows of
/// the operator cost table, the largest FLOPs first.
void writeEfficiencyJson(JsonWriter& w, const Efficiency& e) {
    constexpr size_t kOperatorRows = 1000;
    auto positive = [&](double v, int decimals) {
        if (v < 0)
            w.null();
        else
            w.value(v, decimals);
    };
    w.beginObject();
    w.key("shapes").value(e.shapes);
    w.key("costed_calls").value(e.costedCalls);
    w.key("unsized_calls").value(e.unsizedCalls);
    w.key("unshaped_calls").value(e.unshapedCalls);
    w.key("model_flops").value(e.modelFlops, 1);
    w.key("model_flops_per_step");
    positive(e.modelFlopsPerStep, 1);
    w.key("operators").beginArray();
    for (size_t i = 0; i < e.operators.size() && i < kOperatorRows; ++i) {
        const OperatorCostRow& o = e.operators[i];
        w.beginObject();
        w.key("name").value(o.name);
        w.key("formula").value(flopFormulaName(o.formula));
        w.key("model").value(tensorMath(o.formula));
        for (const auto& [k, v] :
             {std::pair<const char*, const std::string*>{"input_dims", &o.dims},
              {"input_types", &o.types},
              {"concrete_inputs", &o.concrete}}) {
            w.key(k);
            if (v->empty())
                w.null();
            else
                w.raw(*v);
        }
        w.key("calls").value(o.calls);
        w.key("outermost_calls").value(o.outermostCalls);
        w.key("flops");
        if (o.cost.sized)
            w.value(o.cost.flops, 1);
        else
            w.null();
        w.key("bytes");
        if (o.cost.sized && o.cost.bytes)
            w.value(*o.cost.bytes, 1);
        else
            w.null();
        w.key("exact").value(o.cost.sized && o.cost.exact);
        if (!o.cost.sized) w.key("why").value(o.cost.why);
        w.key("kernel_ns").value(o.kernelNs);
        w.key("device").value(o.device);
        w.endObject();
    }
    w.endArray();
    w.key("operators_more")
        .value(
            uint64_t(e.operators.size() > kOperatorRows ? e.operators.size() - kOperatorRows : 0));
    w.key("devices").beginObject();
    for (const DeviceEfficiency& d : e.devices) {
        w.key(std::to_string(d.device)).beginObject();
        w.key("gpu").value(d.gpu);
        w.key("gpu_note").value(d.gpuNote);
        w.key("peak");
        if (d.peak) {
            w.beginObject();
            w.key("key").value(d.peak->key);
            w.key("source").value(d.peak->source);
            w.key("bw_tbps").value(d.peak->bandwidthTbps, 3);
            w.key("tflops").beginObject();
            for (size_t p = 1; p < size_t(Precision::Count); ++p)
                if (d.peak->tflops[p] > 0)
                    w.key(precisionName(Precision(p))).value(d.peak->tflops[p], 3);
            w.endObject();
            w.endObject();
        } else {
            w.null();
        }
        w.key("dtype");
        if (d.dtype == Precision::Unknown)
            w.null();
        else
            w.value(precisionName(d.dtype));
        w.key("dtype_from").value(d.dtypeFrom);
        w.key("peak_tflops").value(d.peakTflops, 3);
        w.key("model_flops").value(d.modelFlops, 1);
        w.key("upper_bound_flops").value(d.upperBoundFlops, 1);
        w.key("window_ns").value(d.windowNs);
        w.key("busy_ns").value(d.busyNs);
        w.key("mfu");
        positive(d.mfu, 6);
        w.key("achieved_tflops");
        positive(d.achievedTflops, 3);
        w.key("why").value(d.why);
        w.key("notes").beginArray();
        for (const std::string& n : d.notes) w.value(n);
        w.endArray();
        w.key("families").beginArray();
        for (const FamilyEfficiency& f : d.families) {
            w.beginObject();
            w.key("family").value(f.family);
            w.key("kernels").value(f.kernels);
            w.key("busy_ns").value(f.busyNs);
            w.key("costed_ns").value(f.costedNs);
            w.key("flops").value(f.flops, 1);
            w.key("bytes").value(f.bytes, 1);
            w.key("tflops");
            positive(f.tflops, 4);
            w.key("tbps");
            positive(f.tbps, 4);
            w.key("intensity");
            positive(f.intensity, 4);
            w.key("bound").value(f.bound);
            w.endObject();
        }
        w.endArray();
        w.key("steps").beginArray();
        for (const StepEfficiency& st : d.steps) {
            w.beginObject();
            w.key("number").value(st.number);
            w.key("start_ns").value(st.startNs);
            w.key("duration_ns").value(st.durationNs);
            w.key("model_flops").value(st.modelFlops, 1);
            w.key("mfu");
            positive(st.mfu, 6);
            w.endObject();
        }
        w.endArray();
        w.endObject();
    }
    w.endObject();
    w.key("notes").beginArray();
    for (const std::string& n : e.notes) w.value(n);
    w.endArray();
    w.endObject();
}

} // namespace stallscope::analysis::detail
