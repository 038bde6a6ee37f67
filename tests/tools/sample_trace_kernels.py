"""Kernel templates of the synthetic sample trace (tests/tools/make_sample_trace.py): name,
block, registers per thread, static shared memory and occupancy cap of the kernels a
ResNet-style CNN launches on an A100 with PyTorch 2.x / cuDNN 8."""

# ---------------------------------------------------------------------------------------------
# Kernel templates: name, block, registers per thread, static shared memory, occupancy cap.
# Names and launch attributes are those real A100 / PyTorch 2.x / cuDNN 8 traces show.
# ---------------------------------------------------------------------------------------------


class K:
    def __init__(self, name, block, regs, smem, occ):
        self.name, self.block, self.regs, self.smem, self.occ = name, block, regs, smem, occ


def _ew(functor, arity):
    return ("void at::native::vectorized_elementwise_kernel<4, %s, at::detail::Array<char*, %d> >"
            "(int, %s, at::detail::Array<char*, %d>)" % (functor, arity, functor, arity))


_CLAMP = ("at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, "
          "c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
          "const::{lambda()#14}::operator()() const::{lambda(float)#1}")
_THRESHOLD = ("at::native::BinaryFunctor<float, float, float, at::native::(anonymous namespace)::"
              "threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::"
              "{lambda(float, float)#1}>")
_MULSCALAR = ("at::native::BUnaryFunctor<float, float, float, "
              "at::native::binary_internal::MulFunctor<float> >")
_SUM = ("at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<"
        "float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
        "unsigned int, float, 4>")
_MEAN = "at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>"


def _mta(meta, functor, op):
    return ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
            "(anonymous namespace)::TensorListMetadata<%d>, at::native::(anonymous namespace)::%s, "
            "%s, float>(at::native::(anonymous namespace)::TensorListMetadata<%d>, at::native::"
            "(anonymous namespace)::%s, %s, float)" % (meta, functor, op, meta, functor, op))


def _bn_fw(t):
    return ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, %d, true, 1, true>"
            "(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, "
            "float const*, float, float, float*, float*, float*, float*, float, float)" % t)


def _bn_bw(t):
    return ("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, %d, true, 1>(float, float, "
            "float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, "
            "cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, "
            "float)" % t)


KT = {
    "conv_stem": K("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", 128, 160, 16384, 19),
    "conv_fprop": K("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_"
                    "tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
                    128, 252, 67584, 0),
    "conv_fprop_small": K("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_"
                          "tilesize256x64x32_stage3_warpsize4x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
                          256, 193, 126976, 0),
    "gemm_nn": K("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>"
                 "(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)", 128, 226, 81920, 0),
    "gemm_tn": K("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>"
                 "(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)", 128, 90, 49152, 2),
    "gemm_nt": K("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4>"
                 "(cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4::Params)", 128, 222, 81920, 0),
    "reduce_wgrad": K("void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, "
                      "float, int, int)", 128, 32, 0, 59),
    "nchw2nhwc": K("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
                   "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, "
                   "float*)", 256, 32, 4224, 100),
    "nhwc2nchw": K("void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, "
                   "(cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, float const*, "
                   "float*)", 256, 32, 4224, 100),
    "dgrad": K("sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_"
               "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer", 128, 250, 65536, 0),
    "wgrad": K("sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_"
               "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train", 128, 234, 65536, 0),
    "wgrad_splitk": K("sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_"
                      "tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_split_k_kernel_cudnn_train",
                      128, 96, 17408, 8),
    "wgrad_stem": K("void cutlass_cudnn_train::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_"
                    "16x3_nhwc_align4>(cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_"
                    "align4::Params)", 256, 229, 73728, 0),
    "bn_fw_512": K(_bn_fw(512), 512, 40, 144, 15),
    "bn_fw_128": K(_bn_fw(128), 512, 40, 144, 30),
    "bn_fw_32": K(_bn_fw(32), 512, 40, 144, 30),
    "bn_fw_sr": K("void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>"
                  "(cudnn::bn_fw_tr_1C11_args<float>)", 512, 40, 26768, 75),
    "bn_bw_512": K(_bn_bw(512), 512, 40, 400, 15),
    "bn_bw_128": K(_bn_bw(128), 512, 40, 400, 30),
    "bn_bw_32": K(_bn_bw(32), 512, 40, 400, 75),
    "bn_bw_sr": K("void cudnn::bn_bw_1C11_singleread<float, 512, true, 1, 2, 0>"
                  "(cudnn::bn_bw_1C11_args<float>)", 512, 43, 16656, 50),
    "relu": K(_ew(_CLAMP, 2), 128, 18, 0, 100),
    "relu_bw": K(_ew(_THRESHOLD, 3), 128, 22, 0, 100),
    "add": K(_ew("at::native::CUDAFunctor_add<float>", 3), 128, 20, 0, 100),
    "fill": K(_ew("at::native::FillFunctor<float>", 1), 128, 16, 0, 100),
    "maxpool_fw": K("void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, "
                    "float const*, long, long, long, int, int, int, int, int, int, int, int, int, int, "
                    "float*, long*)", 256, 26, 0, 100),
    "maxpool_bw": K("void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>"
                    "(float const*, long const*, int, long, long, long, int, int, int, int, int, int, "
                    "int, int, int, int, float*)", 256, 32, 0, 100),
    "mean": K("void at::native::reduce_kernel<512, 1, %s >(%s)" % (_MEAN, _MEAN), (32, 16, 1), 32, 16, 100),
    "sum": K("void at::native::reduce_kernel<128, 4, %s >(%s)" % (_SUM, _SUM), (32, 4, 1), 48, 16, 0),
    "div_bw": K("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<%s >"
                "(at::TensorIteratorBase&, %s const&)::{lambda(int)#1}>(int, at::native::"
                "gpu_kernel_impl_nocast<%s >(at::TensorIteratorBase&, %s const&)::{lambda(int)#1})"
                % (_MULSCALAR, _MULSCALAR, _MULSCALAR, _MULSCALAR), 128, 16, 0, 100),
    "fc_fw": K("ampere_sgemm_32x32_sliced1x4_tn", 128, 86, 32768, 25),
    "fc_dgrad": K("ampere_sgemm_32x128_nt", 256, 57, 16384, 50),
    "fc_wgrad": K("void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>"
                  "(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)", 128, 94, 25600, 5),
    "logsoftmax_fw": K("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, "
                       "true, false>(float*, float const*, int, int, int, bool const*, int, bool)",
                       (32, 4, 1), 80, 0, 0),
    "logsoftmax_bw": K("void (anonymous namespace)::softmax_warp_backward<float, float, float, 10, "
                       "true, false>(float*, float const*, float const*, int, int, int, bool const*)",
                       (32, 4, 1), 106, 0, 0),
    "nll_fw": K("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, "
                "float, long>(float*, float*, float const*, long const*, float const*, bool, long, "
                "long, long, long)", 32, 30, 2048, 2),
    "nll_bw": K("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, "
                "long>(float*, float const*, long const*, float const*, float const*, bool, int, int, "
                "long, long)", 32, 24, 0, 2),
    "sgd_wd": K(_mta(3, "BinaryOpListAlphaFunctor<float, 3, 2, 2>", "std::plus<float>"), 512, 32, 0, 36),
    "sgd_mul": K(_mta(1, "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::multiplies<float>"), 512, 28, 0, 42),
    "sgd_add": K(_mta(2, "BinaryOpListAlphaFunctor<float, 2, 2, 0>", "std::plus<float>"), 512, 32, 0, 36),
}
