#!/usr/bin/env bash
# Builds the wasm module, its JS glue, its TypeScript types and the npm package.json into www/pkg/.
# Idempotent: installs the wasm32 target and wasm-bindgen-cli (== the version in Cargo.lock) only
# when missing. Set WASM_OPT=0 to skip the optional binaryen (npm, v132) -Oz pass.
# Default (since the KIP-848 consumer simulation and the protocol comparison put every group type
# in the module): opt-level "z" for every crate of the wasm build and a small LLVM inlining budget
# (-inline-threshold=25, -inlinehint-threshold=100): 379,370 bytes gzip -9 on 2026-12-01, where
# opt-level 2 with a 60/175 budget gave 430,329 (over the 400 KB budget), "z" for the crate alone
# 417,968 and WASM_SIZE=1 436,316. The simulation runs 1.27-1.5x slower than at opt-level 2
# (www/bench-node.mjs, scale-out preset, 3 alternating runs: 79-100 ms against 62-67 ms; same
# state hash). History of the previous default, opt-level 2 with a 60/175 inlining budget:
# 776,544 bytes, 299,614 bytes gzip -9 (292.6 KB; 345,702 at the default budget) before classic
# groups (1,104,399 / 421,655 with them). That costs the simulation 5-10% in wasm, about what the
# wasm-only size-class allocator (src/wasm/allocator.rs) gains back; pkg-scripts/bench-wasm.sh
# ratio 2.1-2.4 (warm-up dominated, see README). A budget of 25/100 saves only ~5 KB gzip more.
# WASM_SIZE=1 compiles the crate itself at opt-level "s" (default inlining budget) instead:
# 302,751 bytes gzip, ~1.3x slower. The native build is not touched (the flags below are passed
# for the wasm32 target only).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
TOOLS="${TOOLS:-$HOME/.cargo}"
export PATH="$TOOLS/bin:$HOME/.cargo/bin:$PATH"

rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown \
  || rustup target add wasm32-unknown-unknown

WBG_VER=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WBG_VER" ]; then
  echo "installing wasm-bindgen-cli $WBG_VER" >&2
  ./pkg-scripts/cargo-install.sh wasm-bindgen-cli "$WBG_VER" "$TOOLS"
fi

# Fat LTO and one codegen unit for the wasm module (smaller than the native profile's thin LTO).
OPT=(--config 'profile.release.lto=true' --config 'profile.release.codegen-units=1')
if [ "${WASM_SIZE:-0}" = 1 ]; then
  OPT+=(--config 'profile.release.opt-level=3' --config 'profile.release.package.groupcoord.opt-level="s"')
else
  OPT+=(--config 'profile.release.opt-level="z"'
        --config 'target.wasm32-unknown-unknown.rustflags=["-Cllvm-args=-inline-threshold=25", "-Cllvm-args=-inlinehint-threshold=100"]')
fi
cargo build --locked --release --target wasm32-unknown-unknown --lib "${OPT[@]}"
rm -rf www/pkg
wasm-bindgen --target web --out-dir www/pkg --remove-producers-section \
  target/wasm32-unknown-unknown/release/groupcoord.wasm

if [ "${WASM_OPT:-1}" != 0 ]; then
  # binaryen 132 from npm. Never Debian's binaryen 108: it points the `__wbindgen_externrefs`
  # export at the funcref table, and the page then fails in `WebAssembly.Table.set()`.
  if [ ! -x www/node_modules/.bin/wasm-opt ]; then
    (cd www && npm ci --no-audit --no-fund >/dev/null)
  fi
  www/node_modules/.bin/wasm-opt -Oz --converge www/pkg/groupcoord_bg.wasm -o www/pkg/groupcoord_bg.wasm
fi

# www/pkg is an npm package: ES module + wasm + TypeScript types (the JSON shapes are typed in
# src/wasm/types.d.ts, which wasm-bindgen copies into groupcoord.d.ts).
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
cat > www/pkg/package.json <<JSON
{
  "name": "groupcoord",
  "version": "$VERSION",
  "description": "Kafka's streams group coordinator (KIP-1071) as a deterministic simulation, compiled to WebAssembly",
  "license": "Apache-2.0",
  "type": "module",
  "module": "groupcoord.js",
  "types": "groupcoord.d.ts",
  "exports": {
    ".": {
      "types": "./groupcoord.d.ts",
      "default": "./groupcoord.js"
    },
    "./groupcoord_bg.wasm": "./groupcoord_bg.wasm",
    "./package.json": "./package.json"
  },
  "files": [
    "groupcoord.js",
    "groupcoord.d.ts",
    "groupcoord_bg.wasm",
    "groupcoord_bg.wasm.d.ts",
    "LICENSE"
  ],
  "sideEffects": false
}
JSON
cp LICENSE www/pkg/LICENSE

raw=$(wc -c < www/pkg/groupcoord_bg.wasm)
gz=$(gzip -9c www/pkg/groupcoord_bg.wasm | wc -c)
echo "www/pkg/groupcoord_bg.wasm: $raw bytes, $gz bytes gzip -9"
