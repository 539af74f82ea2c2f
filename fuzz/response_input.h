/* What the response harnesses (fuzz_response.c, fuzz_bridge.c) read from an
 * input: its first byte picks the parser's options, the rest is the stream,
 * and up to 8 cut points (sorted) come from both. */
#ifndef FUZZ_RESPONSE_INPUT_H
#define FUZZ_RESPONSE_INPUT_H

#include "../src/response.h"

static void fuzz_response_config(uint8_t o, nh_resp_config *cfg, size_t max_header_bytes)
{
    nh_resp_config_default(cfg);
    cfg->profile = o & 32 ? NH_PROFILE_HEAD : o & 1;
    cfg->body_allowed = !(o & 2);
    cfg->decode = (o & 4) != 0;
    cfg->skip_interim = (o & 8) != 0;
    cfg->strict = (o & 16) != 0;
    cfg->max_header_bytes = max_header_bytes;
    cfg->max_inflated_bytes = 1 << 22;
}

/* Writes up to 8 cut points into cuts (sorted); returns how many. */
static size_t fuzz_response_cuts(uint8_t o, size_t n, size_t cuts[8])
{
    size_t ncuts = 0;
    for (size_t i = 0; i < 8 && n > 0; i++)
        cuts[ncuts++] = (size_t)(((uint32_t)o * 2654435761u + i * 40503u) % (n + 1));
    for (size_t i = 1; i < ncuts; i++)
        for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
            size_t t = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = t;
        }
    return ncuts;
}

#endif
