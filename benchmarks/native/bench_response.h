/* Response operations for the native benchmark column. */
#include "../../src/internal.h"

typedef struct bstr {
    const uint8_t *p;
    size_t n;
} bstr;

/* Returns the work function for `op` ("response", "incremental"), or NULL.
 * The work writes the canonical output (code, message, fields, body) to out. */
void (*bench_response_op(const char *op, const void *response, const void *big, size_t feed,
                         nh_buf *out))(void);
