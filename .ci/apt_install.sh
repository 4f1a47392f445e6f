#!/usr/bin/env bash
# apt_install.sh PACKAGE...: a CI stage's Debian packages, where this machine allows it (root, apt-get), quietly and
# bounded so that a slow mirror cannot hang CI; says so where it could not. The stage checks for what it needs.
[ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null \
    && timeout 300 bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "$@"' apt_install "$@" > /dev/null 2>&1 \
    || echo "could not install $*" >&2
