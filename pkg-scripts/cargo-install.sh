#!/usr/bin/env bash
# cargo-install.sh CRATE VERSION [ROOT]: installs a pinned tool from crates.io, first with the
# tool's own Cargo.lock (--locked), then, if that fails, resolved against the registry index.
# Why the fallback: a tool's Cargo.lock can pin a dependency the index does not offer (seen on a
# fresh machine: wasm-bindgen-cli 0.2.130 and wasm-pack 0.15.1 lock webpki-roots 1.0.11, the index
# had 1.0.10), and a fresh machine has no other way to get the tool. The tool's own version stays
# pinned (=VERSION) either way.
set -euo pipefail
crate=$1 version=$2 root=${3:-${TOOLS:-$HOME/.cargo}}
args=(install "$crate" --version "=$version" --root "$root")
if ! cargo "${args[@]}" --locked; then
  echo "cargo-install.sh: $crate $version does not build with its own Cargo.lock here; resolving its dependencies against the registry index instead" >&2
  cargo "${args[@]}"
fi
