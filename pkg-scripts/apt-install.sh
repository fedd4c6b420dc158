#!/usr/bin/env bash
# apt-install.sh PACKAGE...: installs Debian packages (as root, or through sudo), trying up to three
# times: a fresh machine's first `apt-get update` can meet a mirror that is briefly unavailable, and
# one transient answer should not fail a whole test suite. A package that does not exist still
# fails after the third try, with apt's own message.
set -euo pipefail
(($#)) || { echo "usage: apt-install.sh PACKAGE..." >&2; exit 2; }
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
for try in 1 2 3; do
  if $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
     && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; then
    exit 0
  fi
  [ "$try" = 3 ] && break
  echo "apt-install.sh: installing $* failed (try $try of 3); trying again in $((try * 10)) s" >&2
  sleep $((try * 10))
done
echo "apt-install.sh: could not install $*" >&2
exit 1
