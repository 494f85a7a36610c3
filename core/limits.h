// Physical ranges of every model, hardware and job field (DESIGN.md "Accepted ranges") and checks.
#pragma once
#include <cstdint>
#include <string>

#include "core/error.h"

namespace meshplan::limits {

// Model files. Generous: the largest published models are ~100x below every bound.
constexpr int64_t kMaxHidden = int64_t{1} << 20;         // hidden_size (GPT-3: 12288)
constexpr int64_t kMaxLayers = 100000;                   // num_hidden_layers (GPT-3: 96)
constexpr int64_t kMaxHeads = int64_t{1} << 16;          // attention and key/value heads
constexpr int64_t kMaxIntermediate = int64_t{1} << 22;   // intermediate_size
constexpr int64_t kMaxVocab = int64_t{1} << 24;          // vocab_size (16.7M; Gemma: 256k)
constexpr int64_t kMaxPositions = int64_t{1} << 24;      // max_position_embeddings (16.7M tokens)
constexpr int64_t kMaxParameters = 1000000000000000;     // 1e15 parameters (100x a 10T model)
constexpr int64_t kMaxHeadDim = int64_t{1} << 16;        // head_dim and MLA head dims (Gemma: 256)
constexpr int64_t kMaxExperts = int64_t{1} << 16;        // routed experts per layer (DeepSeek-V3: 256)
constexpr int64_t kMaxSharedExperts = 1024;              // shared experts (DeepSeek: 1..2)
constexpr int64_t kMaxMtpLayers = 64;                   // MTP modules (DeepSeek-V3: 1)
constexpr int64_t kMaxLoraRank = int64_t{1} << 20;       // MLA q/kv_lora_rank (DeepSeek-V3: 1536, 512)

// Jobs (flags and plan files).
constexpr int64_t kMaxGpus = int64_t{1} << 24;           // 16.7M GPUs
constexpr int64_t kMaxGlobalBatch = int64_t{1} << 30;    // sequences per optimizer step
constexpr int64_t kMaxSeq = int64_t{1} << 24;            // tokens per sequence
constexpr int64_t kMaxTokensPerStep = int64_t{1} << 40;  // global_batch * seq (1.1T tokens)
constexpr int64_t kMaxDegree = int64_t{1} << 24;         // tp, pp, virtual stages (<= kMaxGpus)

// Hardware profiles, in the file's units.
constexpr double kMinMemoryGb = 1, kMaxMemoryGb = 100000;          // 1 GB .. 100 TB per GPU
// HBM down to 1 MB/s like the links: `calibrate --backend cpu` measured 0.43 GB/s per rank on a
// loaded 2-core VM (sanitizer build), and its profile must load back.
constexpr double kMinHbmGbPerS = 1e-3, kMaxHbmGbPerS = 1e6;        // 1 MB/s .. 1 PB/s
constexpr double kMinPeakTflops = 1e-3, kMaxPeakTflops = 1e6;      // 1 GFLOP/s .. 1 EFLOP/s
constexpr double kMinLinkGbPerS = 1e-3, kMaxLinkGbPerS = 1e5;      // 1 MB/s .. 100 TB/s
constexpr double kMaxLatencyUs = 1e6;                              // 0 .. 1 s per message
constexpr double kMinGemmGflop = 1e-9, kMaxGemmGflop = 1e12;       // one GEMM call
constexpr int64_t kMaxGpusPerNode = 4096;
constexpr double kMinEfficiency = 1e-4;                            // every efficiency: 1e-4..1
constexpr double kMaxDollarsPerGpuHour = 1e4;
constexpr double kMaxComputeCapability = 100.0;  // gpu.compute_capability (Blackwell: 10.0, 12.0)
constexpr double kMinFp8RelativeEfficiency = 0.05, kMaxFp8RelativeEfficiency = 2.0;  // FP8 vs BF16 GEMM share of peak
constexpr double kMaxGroupedMmRelativeEfficiency = 2.0;  // torch._grouped_mm over the dense curve
constexpr double kMaxGroupedMmMxfp8Speedup = 4.0;        // MXFP8 over bf16 grouped GEMMs (the FP8 peak is 2x)

// Simulated micro-batch passes (pp * v * M, each a forward, a backward and their sends/receives):
// simulate refuses above it, so a step stays under a second and bounded memory.
constexpr int64_t kMaxSimulatedPasses = 100000;
// Input files: only regular files, at most this many bytes; nesting of YAML/JSON at most this deep.
constexpr int64_t kMaxInputFileBytes = int64_t{64} << 20;
constexpr int kMaxNestingDepth = 64;

/// "lo..hi" with integers printed exactly, doubles in shortest form.
std::string range_text(int64_t lo, int64_t hi);
std::string range_text(double lo, double hi);

/// Appends "must be in lo..hi" to `errors` when v is outside [lo, hi].
void check_int(ErrorList& errors, const std::string& file, const std::string& field, int64_t v,
               int64_t lo, int64_t hi, const std::string& hint);
/// Same for a double in the file's units (NaN is out of range).
void check_real(ErrorList& errors, const std::string& file, const std::string& field, double v,
                double lo, double hi, const std::string& hint);

}  // namespace meshplan::limits
