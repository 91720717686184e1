#!/bin/sh
# Debian's chromium, for the class report's headless-browser test (tests/self/unit/test_classreport.py).
# Best effort: where it cannot be installed (no apt, no root, no network), say so and go on; the
# test then skips with that reason.
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium not installed (needs root and apt-get): the browser test will skip" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } \
        >/tmp/chromium-install.log 2>&1; then
    echo "chromium could not be installed (see /tmp/chromium-install.log): the browser test will skip" >&2
fi
exit 0
