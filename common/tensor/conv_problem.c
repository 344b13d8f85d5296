#include "conv_problem.h"

#include <stdint.h>
#include <string.h>

#define UNET_BATCH 4

static const struct conv_preset presets[] = {
    {"seed000", "the seed notebook's problem: one 1000x2000 image, 3x3 filter",
     {1, 1, 1, 1000, 2000, 3, false}},
    {"big3", "one 8192x8192 image, 3x3 filter (memory-bound)", {1, 1, 1, 8192, 8192, 3, false}},
    {"big5", "one 8192x8192 image, 5x5 filter", {1, 1, 1, 8192, 8192, 5, false}},
    {"big7", "one 8192x8192 image, 7x7 filter (near the ridge point)",
     {1, 1, 1, 8192, 8192, 7, false}},
    {"unet-3x64", "U-Net layer 1: 3->64 channels at 512x512, batch 4",
     {UNET_BATCH, 3, 64, 512, 512, 3, true}},
    {"unet-64x64", "U-Net layer 2: 64->64 at 512x512", {UNET_BATCH, 64, 64, 512, 512, 3, true}},
    {"unet-64x128", "U-Net layer 3: 64->128 at 256x256", {UNET_BATCH, 64, 128, 256, 256, 3, true}},
    {"unet-128x128", "U-Net layer 4: 128->128 at 256x256",
     {UNET_BATCH, 128, 128, 256, 256, 3, true}},
    {"unet-128x256", "U-Net layer 5: 128->256 at 128x128",
     {UNET_BATCH, 128, 256, 128, 128, 3, true}},
    {"unet-256x256", "U-Net layer 6: 256->256 at 128x128",
     {UNET_BATCH, 256, 256, 128, 128, 3, true}},
    {"unet-256x512", "U-Net layer 7: 256->512 at 64x64", {UNET_BATCH, 256, 512, 64, 64, 3, true}},
    {"unet-512x512", "U-Net layer 8: 512->512 at 64x64", {UNET_BATCH, 512, 512, 64, 64, 3, true}},
    {"unet-512x1024", "U-Net layer 9: 512->1024 at 32x32",
     {UNET_BATCH, 512, 1024, 32, 32, 3, true}},
    {"unet-1024x1024", "U-Net layer 10: 1024->1024 at 32x32",
     {UNET_BATCH, 1024, 1024, 32, 32, 3, true}},
    {"bnn-b16c256s28", "binary layer (lesson 09): batch 16, 256->256 at 28x28",
     {16, 256, 256, 28, 28, 3, true}},
    {"bnn-b64c512s14", "binary layer (lesson 09): batch 64, 512->512 at 14x14",
     {64, 512, 512, 14, 14, 3, true}},
    {"bnn-b1c1024s32", "binary layer (lesson 09): one image, 1024->1024 at 32x32",
     {1, 1024, 1024, 32, 32, 3, true}},
    {"bnn-b1c1024s16", "binary layer (lesson 09): APNN-TC's, one image, 1024->1024 at 16x16",
     {1, 1024, 1024, 16, 16, 3, true}},
    {"vtest-c64", "lesson 11's layer on one video frame: 64->64 at 576x768",
     {1, 64, 64, 576, 768, 3, true}},
    {"vtest-c128", "lesson 11's layer on one frame shrunk 2x: 128->128 at 288x384",
     {1, 128, 128, 288, 384, 3, true}},
    {"wide-8000x4096", "lesson 12's large layer: 64->64 on one 8000x4096 image (2.1e9 "
     "elements a tensor, under 32-bit indexing's 2^31)", {1, 64, 64, 8000, 4096, 3, true}},
};

#define PRESET_COUNT ((int)(sizeof presets / sizeof presets[0]))

const struct conv_preset *find_preset(const char *name)
{
    for (int i = 0; i < PRESET_COUNT; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

const struct conv_preset *preset_at(int i)
{
    return i >= 0 && i < PRESET_COUNT ? &presets[i] : NULL;
}

size_t input_count(const struct conv_shape *s)
{
    return (size_t)s->n * s->cin * s->h * s->w;
}

size_t output_count(const struct conv_shape *s)
{
    return (size_t)s->n * s->cout * s->h * s->w;
}

size_t weight_count(const struct conv_shape *s)
{
    return (size_t)s->cout * s->cin * s->ksize * s->ksize;
}

size_t bias_count(const struct conv_shape *s)
{
    return s->bias ? (size_t)s->cout : 0;
}

double conv_macs(const struct conv_shape *s)
{
    return (double)output_count(s) * s->cin * s->ksize * s->ksize;
}

double conv_flops(const struct conv_shape *s)
{
    return 2.0 * conv_macs(s);
}

double conv_min_bytes(const struct conv_shape *s)
{
    double elements = (double)input_count(s) + (double)weight_count(s) +
                      (double)bias_count(s) + (double)output_count(s);
    return elements * sizeof(float);
}

bool shape_overflows_int32(const struct conv_shape *s)
{
    /* Computed in double so the test itself cannot overflow. */
    double in = (double)s->n * s->cin * s->h * s->w;
    double out = (double)s->n * s->cout * s->h * s->w;
    double weights = (double)s->cout * s->cin * s->ksize * s->ksize;
    return in > INT32_MAX || out > INT32_MAX || weights > INT32_MAX;
}

const char *single_channel_only(const struct conv_shape *s)
{
    return s->cin == 1 && s->cout == 1 ? NULL : "single-channel only (cin = cout = 1)";
}
