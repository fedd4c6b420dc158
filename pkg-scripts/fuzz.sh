#!/usr/bin/env bash
# Fuzz the wire decoders, the record codec and the log loader with cargo-fuzz (libFuzzer).
# Not part of CI. Installs what it needs, idempotently: the nightly toolchain (rustup) and
# cargo-fuzz pinned from crates.io. Runs each target for FUZZ_SECONDS (default 60) from the
# checked-in seed corpus in fuzz/corpus/<target>/; new corpus entries go to a scratch directory,
# crashes to fuzz/artifacts/<target>/. A crash found here gets fixed and its input kept as a
# regression test in `cargo test`.
#
#   pkg-scripts/fuzz.sh                 # every target, 60 s each
#   FUZZ_SECONDS=600 pkg-scripts/fuzz.sh frame request
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

CARGO_FUZZ_VERSION=0.13.2
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(frame request records log_loader)
SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"

command -v rustup >/dev/null || { echo "fuzz.sh: rustup is required" >&2; exit 2; }
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    ./pkg-scripts/cargo-install.sh cargo-fuzz "$CARGO_FUZZ_VERSION" "$HOME/.cargo"
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
status=0
for t in "${TARGETS[@]}"; do
    mkdir -p "$scratch/$t"
    echo "== fuzz $t for ${SECONDS_PER_TARGET}s"
    # The new corpus first (written to), the checked-in seeds second (read only).
    if ! cargo +nightly fuzz run --fuzz-dir fuzz "$t" "$scratch/$t" "fuzz/corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -max_len=65536 -print_final_stats=1; then
        echo "fuzz.sh: $t found a crash (see fuzz/artifacts/$t/)" >&2
        status=1
    fi
done
exit $status
