#!/usr/bin/env bash
# Builds the WebAssembly module twice from the same C and generates the JS
# modules that embed it.
#   wasm/nethttp.wasm       clang --target=wasm32-wasi (wasi-libc): the one the package ships
#   wasm/nethttp.emcc.wasm  Emscripten -sSTANDALONE_WASM: built and tested, not shipped
# Usage: bash build.sh [clang|emcc|all]   (default all)
set -euo pipefail
cd "$(dirname "$0")"
what=${1:-all}
# the codec (src/) and the module's edges: its exported ABI (wasm/*.c)
SRC=(src/buf.c src/rstring.c src/casemap.c src/header.c src/form.c src/uri.c src/request.c wasm/abi.c)
for f in src/*.c wasm/*.c; do
  case " ${SRC[*]} " in *" $f "*) ;; *) SRC+=("$f");; esac
done
# bulk memory: memcpy/memmove/memset are single instructions (memory.copy,
# memory.fill) instead of loops in the module (every current engine has them)
CFLAGS=(-std=c11 -O2 -Isrc -mbulk-memory -Wall -Wextra -Werror -fno-exceptions -ffile-prefix-map="$PWD"=.)
WASM_OPT=(-O2 --enable-bulk-memory --strip-debug --strip-producers --strip-target-features)
EXPORTS=(nh_alloc nh_free nh_ctx_new nh_ctx_free nh_ctx_input nh_ctx_trim)
for e in $(grep -ho 'EXPORT(nh_wasm_[a-z_0-9]*)' wasm/*.c | sed 's/EXPORT(\(.*\))/\1/' | sort -u); do EXPORTS+=("$e"); done
mkdir -p wasm build
# the constants every language shares (schema/ -> src/schema.h, js/schema.mjs, ...)
node tools/gen-schema.mjs

if [ "$what" = all ] || [ "$what" = clang ]; then
  # (not --strip-all: clang runs wasm-opt after linking when it finds it,
  # which must see the target-features section; the last wasm-opt strips)
  clang --target=wasm32-wasi "${CFLAGS[@]}" -mexec-model=reactor \
    -Wl,--gc-sections -Wl,-z,stack-size=131072 -Wl,--stack-first \
    -o build/nethttp.clang.wasm "${SRC[@]}"
  if command -v wasm-opt >/dev/null; then
    wasm-opt "${WASM_OPT[@]}" build/nethttp.clang.wasm -o wasm/nethttp.wasm
  else
    cp build/nethttp.clang.wasm wasm/nethttp.wasm
  fi
fi

if [ "$what" = all ] || [ "$what" = emcc ]; then
  list=$(printf '"_%s",' "${EXPORTS[@]}")
  emcc "${CFLAGS[@]}" -sSTANDALONE_WASM --no-entry \
    -sALLOW_MEMORY_GROWTH=1 -sTOTAL_STACK=131072 -sEXPORTED_FUNCTIONS="[${list%,}]" \
    -sERROR_ON_UNDEFINED_SYMBOLS=1 -o build/nethttp.emcc.wasm "${SRC[@]}"
  # Growing memory makes dlmalloc call an imported notification hook whose
  # only job is to tell JS glue (which we do not use) that views went stale;
  # removing it leaves a module with no imports.
  wasm-opt "${WASM_OPT[@]}" --remove-imports build/nethttp.emcc.wasm -o wasm/nethttp.emcc.wasm
fi

node tools/embed-wasm.mjs
