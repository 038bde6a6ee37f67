#pragma once
// What a host-side call's name says it does: its family (launch, allocation, resource
// creation, module loading, synchronisation, copies, run-time code generation, ...), from the
// rules in analysis/data/call_catalogue.txt (data, not code: the file is compiled in, and the
// same parser reads any other catalogue text for tests). The idle attribution charges the
// GPU's idle time by these families (docs/analysis.md "Idle-gap cause attribution").
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::analysis {

enum class CallFamily : uint8_t {
    None,     // no rule: an operator, a Python frame or an unknown call
    Launch,   // kernel / graph launches, async memsets
    Copy,     // an asynchronous copy call
    CopySync, // a synchronous copy call
    Stream,   // event records, stream waits: ordering, the host does not wait
    Sync,     // synchronize, .item(): the host waits for the GPU
    Alloc,    // memory allocated or freed
    Resource, // streams, events, contexts, library handles created or destroyed
    Module,   // code loaded or looked up
    Jit,      // run-time code generation or tuning (NVRTC, cuDNN find, TorchScript fusion)
    Compile,  // torch.compile at work (Dynamo, AOTAutograd, Inductor, Triton's compiler)
    Capture,  // stream capture into a graph, graph instantiation
    Query,    // reads state: attributes, errors, occupancy, event queries
    Count
};

std::string_view callFamilyName(CallFamily f); // "alloc"

class CallCatalogue {
public:
    struct Rule {
        CallFamily family;
        enum class Match : uint8_t { Exact, Prefix, Contains } match;
        std::string pattern;
        int line;
    };
    /// Parses catalogue text; nullopt with `error` ("line N: ...") on a malformed rule.
    static std::optional<CallCatalogue> parse(std::string_view text, std::string& error);
    /// The built-in catalogue (analysis/data/call_catalogue.txt).
    static const CallCatalogue& builtIn();

    /// The family of the first rule matching `name`, in file order; None when none does.
    [[nodiscard]] CallFamily classify(std::string_view name) const;
    [[nodiscard]] const std::vector<Rule>& rules() const { return m_rules; }

private:
    std::vector<Rule> m_rules;
};

/// CallCatalogue::builtIn().classify(name).
CallFamily classifyCall(std::string_view name);

} // namespace stallscope::analysis
