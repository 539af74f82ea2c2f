#include <stdio.h>
#include <string.h>
#include <time.h>
#include "../../src/internal.h"
static nh_buf rec;
static void u8(uint8_t v) { nh_buf_putc(&rec, v); }
static void u32(uint32_t v) { nh_put_u32(&rec, v); }
static void str(const char *s) { u32((uint32_t)strlen(s)); nh_buf_append(&rec, s, strlen(s)); }
int main(void) {
  u8(0); u8(1); str("POST"); u8(1); str("http://api.example.com/v1/submit"); u32(UINT32_MAX);
  u8(1); str("X-Request-Id"); u32(1); str("7f3c2a1e-5b4d-4e6f-8a9b-0c1d2e3f4a5b");
  u8(4); u32(3); str("name"); u8(1); str("Jane Doe"); str("email"); u8(1); str("jane@example.com"); str("comment"); u8(1); str("Hello, world & more"); u8(0);
  u8(6); str("1.1");
  nh_buf out = {0}; nh_error err; nh_req *st = nh_req_new();
  for (int k = 0; k < 3; k++) {
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    int n = 1000000;
    for (int i = 0; i < n; i++) { out.len = 0; nh_request_run(st, rec.data, rec.len, &out, &err); }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f ns\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
  }
  fwrite(out.data, 1, out.len, stdout);
}
