#!/usr/bin/env bash
# Builds every fuzz/fuzz_*.c with libFuzzer, ASan and UBSan and runs each for
# --seconds N (default 10), starting from fuzz/corpus/<name>/ (new inputs go
# to build/fuzz/corpus/<name>/). Exits non-zero if any harness finds a crash.
#   npm run fuzz -- --seconds 600 [--only request]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=10
only=
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) secs=$2; shift 2;;
    --only) only=$2; shift 2;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
lib=()
lib+=(src/*.c wasm/*.c)  # (the codec, and its wasm ABI built natively)
mkdir -p build/fuzz
status=0
for h in fuzz/fuzz_*.c; do
  name=$(basename "$h" .c); name=${name#fuzz_}
  [ -z "$only" ] || [ "$only" = "$name" ] || continue
  exe=build/fuzz/$name
  clang -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc -o "$exe" "$h" "${lib[@]}"
  work=build/fuzz/corpus/$name
  mkdir -p "$work" "fuzz/corpus/$name"
  seeds=("fuzz/corpus/$name")
  # (the bridge's harness reads responses as the response harness does)
  [ "$name" != bridge ] || seeds+=(fuzz/corpus/response)
  echo "== $name: ${secs}s"
  if ! "$exe" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="build/fuzz/$name-" "$work" "${seeds[@]}" 2>build/fuzz/$name.log; then
    status=1
    tail -40 "build/fuzz/$name.log"
  fi
  grep -E '^#[0-9]+ +DONE|^Done' "build/fuzz/$name.log" | tail -2 || true
done
exit $status
