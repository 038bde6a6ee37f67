// The kernel catalogue (analysis/data/kernel_catalogue.txt): real kernel names of NVIDIA,
// AMD and communication libraries, and what the catalogue must say about each; the parser's
// errors; and the precision read from an operator's input types.
#include "stallscope/analysis/kernel_catalogue.h"

#include <QTest>

using namespace stallscope::analysis;

namespace {
using F = KernelFamily;
using P = Precision;
using T = TensorCoreUse;
struct Case {
    const char* name;
    F family;
    P precision;
    T tensorCore;
};

// Names as they appear in real traces (../shared/traces and public profiles), shortened
// where the template arguments do not matter.
const Case kCases[] = {
    // NVIDIA: cuDNN / cuBLAS / CUTLASS
    {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float "
     "const*)",
     F::Conv, P::FP32, T::No},
    {"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int)",
     F::Conv, P::FP32, T::No},
    {"volta_scudnn_128x128_relu_interior_nn_v1", F::Conv, P::FP32, T::No},
    {"volta_sgemm_128x64_nn", F::Gemm, P::FP32, T::No},
    {"volta_h884gemm_64x128_ldg8_nn", F::Gemm, P::FP16, T::Yes},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3", F::Gemm, P::FP32, T::No},
    {"sm86_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32", F::Conv,
     P::TF32, T::Yes},
    {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>(Params)", F::Gemm,
     P::Unknown, T::Yes},
    {"void "
     "cutlass__5x_cudnn::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_64x64_32x5_nhwc_align4>",
     F::Conv, P::TF32, T::Yes},
    {"ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn", F::Gemm, P::BF16, T::Yes},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     F::Gemm, P::BF16, T::Yes},
    {"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", F::Gemm, P::Unknown, T::Unknown},
    // FP8 grouped GEMMs (MoE experts: CUTLASS device kernels, DeepGEMM)
    {"void "
     "cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<"
     "cute::tuple<int, int, int>>, "
     "cutlass::float_e4m3_t, cutlass::float_e4m3_t, cutlass::bfloat16_t>>",
     F::GroupedGemm, P::FP8, T::Yes},
    {"void deep_gemm::fp8_gemm_kernel<128u, 128u, 128u, 1u, "
     "deep_gemm::GemmType::GroupedMasked>(__nv_bfloat16*)",
     F::GroupedGemm, P::FP8, T::Yes},
    {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", F::GroupedGemm, P::FP4, T::Yes},
    // Attention
    {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::half_t>>",
     F::Attention, P::FP16, T::Yes},
    {"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, "
     "(vllm::Fp8KVCacheDataType)0, 1>",
     F::Attention, P::BF16, T::Yes},
    {"kernel_unified_attention_3d", F::Attention, P::Unknown, T::Unknown},
    // AMD: Tensile (rocBLAS / hipBLASLt), CK, aiter
    {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1", F::Gemm,
     P::BF16, T::Yes},
    {"Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0", F::Gemm, P::FP32,
     T::Yes}, // MFMA f32
    {"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SE_1LDSB0", F::Gemm, P::FP16, T::Yes},
    // Communication, with names that would otherwise look like compute
    {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", F::Comm,
     P::INT8, T::Unknown},
    {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", F::Comm,
     P::BF16, T::Unknown},
    {"void deep_ep::internode::combine<__nv_bfloat16, 8, 4, 8>(int4*, float*)", F::Comm, P::BF16,
     T::Unknown},
    {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)", F::Comm, P::FP32,
     T::Unknown}, // float* args
    {"void multimem_all_reduce_kernel<__nv_bfloat16>(...)", F::Comm, P::BF16, T::Unknown},
    {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*)", F::Comm, P::BF16,
     T::Unknown},
    {"rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)", F::Comm, P::Unknown,
     T::Unknown},
    // The rest
    {"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
     F::Elementwise, P::FP32, T::Unknown},
    {"void cudnn::engines_precompiled::convertTensor_kernel<float, float, float, "
     "(cudnnKernelDataType_t)2>",
     F::Elementwise, P::FP32, T::Unknown},
    {"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float)", F::Norm,
     P::FP32, T::Unknown},
    {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float>",
     F::Optimizer, P::FP32, T::Unknown},
    {"triton_poi_fused__to_copy_1", F::Elementwise, P::Unknown, T::Unknown},
    {"triton_red_fused_native_layer_norm_0", F::Reduction, P::Unknown, T::Unknown},
    {"Memcpy HtoD (Pageable -> Device)", F::Copy, P::Unknown, T::Unknown},
    {"Memset (Device)", F::Memset, P::Unknown, T::Unknown},
    {"triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14", F::Other, P::Unknown, T::Unknown},
};
} // namespace

class TestKernelCatalogue : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realNames() {
        for (const Case& c : kCases) {
            const KernelClass k = classifyKernel(c.name);
            const QString what = QString("%1: family %2 precision %3 tensor core %4")
                                     .arg(c.name)
                                     .arg(QString::fromUtf8(kernelFamilyName(k.family).data()))
                                     .arg(QString::fromUtf8(precisionName(k.precision).data()))
                                     .arg(int(k.tensorCore));
            QVERIFY2(k.family == c.family && k.precision == c.precision &&
                         k.tensorCore == c.tensorCore,
                     qPrintable(what));
        }
    }

    // Vendor libraries' kernels (picked by the data type) against kernels of one's own: only
    // the former's fp32 names count as evidence for mixed precision.
    void libraryKernels() {
        for (const char* name :
             {"volta_sgemm_128x64_nn", "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8",
              "void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, "
              "true>(int)",
              "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int)",
              "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0",
              "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>(Params)",
              "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", "triton_tem_fused_mm_0"})
            QVERIFY2(classifyKernel(name).library, name);
        for (const char* name : {"matmul_k(float*, float*, float*, int)", "my_gemm_kernel<float>",
                                 "triton_poi_fused_add_0", "sgemm_naive"})
            QVERIFY2(!classifyKernel(name).library, name);
        std::string error;
        QVERIFY(!KernelCatalogue::parse("library perhaps prefix volta_\n", error));
    }

    void builtInParsesAndEveryFieldHasRules() {
        std::string error;
        const auto& cat = KernelCatalogue::builtIn();
        QVERIFY(cat.rules().size() > 100);
        bool family = false, precision = false, tc = false, library = false;
        for (const auto& r : cat.rules()) {
            family |= r.field == KernelCatalogue::Rule::Field::Family;
            precision |= r.field == KernelCatalogue::Rule::Field::Precision;
            tc |= r.field == KernelCatalogue::Rule::Field::TensorCore;
            library |= r.field == KernelCatalogue::Rule::Field::Library;
        }
        QVERIFY(family && precision && tc && library);
    }

    void parseErrorsNameTheLine() {
        std::string error;
        QVERIFY(!KernelCatalogue::parse("# ok\nfamily gemm contains gemm\nfamily blas contains x\n",
                                        error));
        QVERIFY2(error.find("line 3") != std::string::npos &&
                     error.find("blas") != std::string::npos,
                 error.c_str());
        QVERIFY(!KernelCatalogue::parse("precision fp32 like float\n", error));
        QVERIFY2(error.find("match") != std::string::npos, error.c_str());
        QVERIFY(!KernelCatalogue::parse("tensor_core maybe contains x\n", error));
        QVERIFY(!KernelCatalogue::parse("family gemm contains\n", error));
        QVERIFY(!KernelCatalogue::parse("colour gemm contains x\n", error));
        // First match wins per field; icontains ignores case; prefix is anchored.
        const auto cat =
            KernelCatalogue::parse("family conv icontains CONV\nfamily gemm icontains gemm\n"
                                   "precision fp16 prefix h\nprecision fp32 contains float\n",
                                   error);
        QVERIFY2(cat, error.c_str());
        QCOMPARE(int(cat->classify("implicit_convolve_sgemm<float>").family), int(F::Conv));
        QCOMPARE(int(cat->classify("hgemm").precision), int(P::FP16));
        QCOMPARE(int(cat->classify("xhgemm<float>").precision), int(P::FP32));
        QCOMPARE(int(cat->classify("hgemm").tensorCore), int(T::Yes)); // fp16 matmul
        QCOMPARE(int(cat->classify("sgemm<float>").tensorCore), int(T::No));
    }

    void precisionFromOperatorInputTypes() {
        QCOMPARE(int(precisionFromInputTypes(R"(["float", "float", "", "Scalar", "Scalar"])")),
                 int(P::FP32));
        QCOMPARE(int(precisionFromInputTypes(R"(["c10::Half", "c10::Half", "c10::Half"])")),
                 int(P::FP16));
        QCOMPARE(int(precisionFromInputTypes(R"(["", "c10::BFloat16"])")), int(P::BF16));
        QCOMPARE(int(precisionFromInputTypes(
                     R"(["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float"])")),
                 int(P::FP8));
        QCOMPARE(int(precisionFromInputTypes(R"(["long int", "Scalar"])")), int(P::Unknown));
        QCOMPARE(int(precisionFromInputTypes("")), int(P::Unknown));
    }
};

QTEST_GUILESS_MAIN(TestKernelCatalogue)
#include "test_kernel_catalogue.moc"
