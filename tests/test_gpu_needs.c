/* What a variant needs of its GPU, against the limits of the GPUs students own: each
 * unmet need gives its one line, each met one none, and emulating a model imposes that
 * model's limits and peaks. No GPU is needed: the limits are plain numbers. */
#include <string.h>

#include "gpu_info.h"
#include "gpu_models.h"
#include "gpu_needs.h"
#include "unit.h"

/* A GPU as gpu_query would read it, and then as a model's limits make it. */
static struct gpu_info gpu_as(const char *key, int code_cc)
{
    struct gpu_info g = {.cc_major = 9, .smem_per_block = 232448, .code_cc = code_cc};
    strcpy(g.name, "NVIDIA H100 80GB HBM3");
    gpu_emulate(&g, gpu_model_find(key));
    return g;
}

static size_t delta_7x7_smem(const struct conv_shape *s)
{
    (void)s;
    return 106624;
}

static int no_sm90a_code(void)
{
    return 0;
}

static int sm90a_code(void)
{
    return 90;
}

static void unmet_needs_say_why(void)
{
    const struct conv_shape s = {.n = 1, .cin = 1, .cout = 1, .h = 8, .w = 8, .ksize = 7};
    char why[200];
    const struct gpu_info t4 = gpu_as("t4", 90), a100 = gpu_as("a100", 90),
                          rtx4090 = gpu_as("rtx4090", 90), h100 = gpu_as("h100", 90);
    const struct gpu_needs mma = {.cc = 80};
    CHECK(gpu_needs_unmet(&mma, &a100, &s, why, sizeof why) == NULL);
    CHECK(gpu_needs_unmet(&mma, &t4, &s, why, sizeof why) != NULL &&
          strcmp(why, "needs compute capability 8.0 (sm_80 code); this GPU is 7.5") == 0);

    const struct gpu_needs delta = {.smem_bytes = delta_7x7_smem};
    CHECK(gpu_needs_unmet(&delta, &a100, &s, why, sizeof why) == NULL);
    CHECK(gpu_needs_unmet(&delta, &rtx4090, &s, why, sizeof why) != NULL &&
          strcmp(why, "needs 106624 B of shared memory per block, this GPU allows 101376") == 0);
    CHECK(gpu_needs_unmet(&delta, &t4, &s, why, sizeof why) != NULL &&
          strstr(why, "this GPU allows 65536"));

    /* sm_90a code runs on 9.0 alone, and only where the build made it. */
    const struct gpu_needs wgmma = {.cc = 90, .arch_specific = true, .code_cc = sm90a_code};
    CHECK(gpu_needs_unmet(&wgmma, &h100, &s, why, sizeof why) == NULL);
    CHECK(gpu_needs_unmet(&wgmma, &a100, &s, why, sizeof why) != NULL &&
          strcmp(why, "needs compute capability 9.0 exactly (sm_90a code); this GPU is 8.0") == 0);
    const struct gpu_needs unbuilt = {.cc = 90, .arch_specific = true, .code_cc = no_sm90a_code};
    CHECK(gpu_needs_unmet(&unbuilt, &h100, &s, why, sizeof why) != NULL &&
          strcmp(why, "built without sm_90a code (CMAKE_CUDA_ARCHITECTURES)") == 0);
}

/* A build for 75-virtual runs sm_75 code on any GPU: a variant of sm_80 instructions
 * must not be launched there, although the GPU itself has them. */
static void code_built_for_an_older_gpu_is_caught(void)
{
    const struct conv_shape s = {.n = 1, .cin = 1, .cout = 1, .h = 8, .w = 8, .ksize = 3};
    char why[200];
    const struct gpu_info h100_ptx75 = gpu_as("h100", 75), h100_ptx80 = gpu_as("h100", 80);
    const struct gpu_needs mma = {.cc = 80};
    CHECK(gpu_needs_unmet(&mma, &h100_ptx80, &s, why, sizeof why) == NULL);
    CHECK(gpu_needs_unmet(&mma, &h100_ptx75, &s, why, sizeof why) != NULL &&
          strcmp(why, "built without sm_80 code: its code on this GPU is sm_75's "
                      "(CMAKE_CUDA_ARCHITECTURES)") == 0);
    const struct gpu_needs nothing = {0};
    CHECK(gpu_needs_unmet(&nothing, &h100_ptx75, &s, why, sizeof why) == NULL);
}

/* A split over several GPUs (lesson 12) runs only where the run has that many. */
static void a_split_needs_its_gpus(void)
{
    const struct conv_shape s = {.n = 1, .cin = 8, .cout = 8, .h = 8, .w = 8, .ksize = 3};
    char why[200];
    struct gpu_info one = gpu_as("h100", 90), two = one;
    one.gpus = 1;
    two.gpus = 2;
    const struct gpu_needs split = {.cc = 80, .gpus = 2}, single = {.cc = 80};
    CHECK(gpu_needs_unmet(&split, &two, &s, why, sizeof why) == NULL);
    CHECK(gpu_needs_unmet(&single, &one, &s, why, sizeof why) == NULL);
    CHECK(gpu_needs_unmet(&split, &one, &s, why, sizeof why) != NULL &&
          strcmp(why, "needs 2 GPUs, the run has 1 (--gpus, or the machine)") == 0);
}

/* Emulation imposes the model's limits and peaks, and says so in the name. */
static void emulation_imposes_the_model(void)
{
    const struct gpu_info t4 = gpu_as("t4", 90), rtx4090 = gpu_as("rtx4090", 90),
                          a100 = gpu_as("a100", 90);
    CHECK(t4.cc_major == 7 && t4.cc_minor == 5 && t4.sm_count == 40);
    CHECK(t4.smem_per_block == 65536 && t4.emulated == gpu_model_find("t4"));
    CHECK(strcmp(t4.name, "NVIDIA H100 80GB HBM3 as Tesla T4") == 0);
    CHECK(t4.peak_gflops[UNIT_TF32_TC] == 0); /* Turing has no TF32 */
    /* 128 SMs x 2.52 GHz x 512 (half rate): 165 fp16 TFLOP/s, not the 330 of fp16
     * accumulation; an A100 312. */
    CHECK(rtx4090.geforce && rtx4090.peak_gflops[UNIT_FP16_TC] > 164e3 &&
          rtx4090.peak_gflops[UNIT_FP16_TC] < 166e3);
    CHECK(a100.peak_gflops[UNIT_FP16_TC] > 311e3 && a100.peak_gflops[UNIT_FP16_TC] < 313e3);
    CHECK(gpu_model_find("v100") == NULL);
    CHECK(strcmp(gpu_model_keys(), "t4, a100, rtx3090, rtx4090, h100, h200") == 0);
}

static const struct unit_case cases[] = {
    {"unmet_needs_say_why", unmet_needs_say_why},
    {"code_built_for_an_older_gpu_is_caught", code_built_for_an_older_gpu_is_caught},
    {"a_split_needs_its_gpus", a_split_needs_its_gpus},
    {"emulation_imposes_the_model", emulation_imposes_the_model},
};
UNIT_MAIN(cases)
