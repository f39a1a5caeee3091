/* The named model shapes the layer, decode and training sweeps run
 * (layer.h): a small one for tests and the shapes, depths and
 * vocabularies of public models (their published configs). */
#include <string.h>

#include "layer.h"

static const cal_layer_preset_t presets[] = {
    {"tiny", "a small layer for tests", 128, 4, 2, 384, 32, 2, 1000},
    {"qwen2-0.5b", "Qwen2 0.5B shape (hidden 896, 14 heads, GQA 2)", 896, 14,
     2, 4864, 128, 24, 151936},
    {"qwen2.5-1.5b", "Qwen2.5 1.5B shape (hidden 1536, 12 heads, GQA 2)", 1536,
     12, 2, 8960, 128, 28, 151936},
    {"llama3.2-1b", "Llama 3.2 1B shape (hidden 2048, 32 heads, GQA 8)", 2048,
     32, 8, 8192, 128, 16, 128256},
    {"llama3-8b", "Llama 3 8B shape (hidden 4096, 32 heads, GQA 8)", 4096, 32,
     8, 14336, 128, 32, 128256},
    {"qwen2.5-3b", "Qwen2.5 3B shape (hidden 2048, 16 heads, GQA 2)", 2048, 16,
     2, 11008, 128, 36, 151936},
    {"llama3.2-3b", "Llama 3.2 3B shape (hidden 3072, 24 heads, GQA 8)", 3072,
     24, 8, 8192, 128, 28, 128256},
    {"mistral-7b", "Mistral 7B v0.1 shape (hidden 4096, 32 heads, GQA 8)", 4096,
     32, 8, 14336, 128, 32, 32000},
};

const cal_layer_preset_t *cal_layer_preset_at(size_t i) {
  return i < sizeof presets / sizeof presets[0] ? &presets[i] : NULL;
}

const cal_layer_preset_t *cal_layer_preset_find(const char *name) {
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
    if (strcmp(presets[i].name, name) == 0)
      return &presets[i];
  return NULL;
}
