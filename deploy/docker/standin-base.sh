#!/bin/sh
# Build a local stand-in for a base image where no image registry is reachable.
#
#   deploy/docker/standin-base.sh plain   -> cs336-standin:plain
#       Debian 12 (bookworm) with python3, python3-pip, python3-venv: a clean machine with apt
#       and PyPI reachable (stands in for Gradescope's Ubuntu base in the Gradescope test).
#   deploy/docker/standin-base.sh torch   -> cs336-standin:torch
#       plain + CPU torch 2.13.0 in the system Python, which stays externally managed (PEP 668)
#       and is also `python`: mimics pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime for the
#       Dockerfile's build (torch importable by the base's python, `pip install` refused there).
#
# The rootfs comes from mmdebstrap (installed with apt if missing) and is `docker import`ed; the
# torch layer is a `docker build --network host` on top. The CPU torch wheel is found through
# pip's own configuration on this machine (PIP_FIND_LINKS, pip.conf, or an index that carries
# +cpu wheels): `pip download` fetches it here, the build copies it in. Needs a running engine
# (deploy/docker/start-dockerd.sh). Prints the tag. Rebuilds only when the tag is missing
# (FORCE=1 to rebuild).
set -eu
flavour="${1:-torch}"
case "$flavour" in plain|torch) ;; *) echo "usage: $0 plain|torch" >&2; exit 2 ;; esac
tag="cs336-standin:$flavour"
if [ -z "${FORCE:-}" ] && docker image inspect "$tag" >/dev/null 2>&1; then
    echo "$tag"
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ "$flavour" = plain ]; then
    if ! command -v mmdebstrap >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
    fi
    # A machine behind a TLS-inspecting proxy trusts its CA through the bundle pip is told to use
    # (PIP_CERT / SSL_CERT_FILE): the stand-in gets that bundle, as a real mirror-less site would
    # simply trust PyPI. Debian's pip and apt read /etc/ssl/certs/ca-certificates.crt.
    set --
    bundle="${PIP_CERT:-${SSL_CERT_FILE:-}}"
    if [ -n "$bundle" ] && [ -f "$bundle" ]; then
        set -- "--customize-hook=upload $bundle /etc/ssl/certs/ca-certificates.crt"
    fi
    mmdebstrap --quiet --variant=apt --format=tar "$@" \
        --include=ca-certificates,python3,python3-pip,python3-venv \
        bookworm "$work/rootfs.tar" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2
    docker import --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' \
        "$work/rootfs.tar" "$tag" >/dev/null
    echo "$tag"
    exit 0
fi

# torch: on top of plain (built first if missing), at pyproject.toml's pin (the one place it is set).
torch_pin="$(python3 -c 'import sys, tomllib
deps = tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]
print(next(d for d in deps if d.startswith("torch==")))' "$(dirname "$0")/../../pyproject.toml")"
base="$("$0" plain)"
py="$(docker run --rm --network none "$base" python3 -c \
      'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')"
mkdir -p "$work/wheels"
# The host's pip with the host's configuration (find-links, index, mirrors) picks the wheel.
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work/wheels" \
    --python-version "$py" --platform manylinux_2_28_x86_64 \
    --extra-index-url https://download.pytorch.org/whl/cpu "$torch_pin+cpu" >&2
cat >"$work/Dockerfile" <<DOCKERFILE
FROM $base
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
COPY wheels /tmp/wheels
# Like the real image: torch in the base's Python, which `python` runs; the marker stays.
# hadolint ignore=DL3008
RUN apt-get update && apt-get install -y --no-install-recommends python-is-python3 \\
    && rm -rf /var/lib/apt/lists/* \\
    && python -m pip install --no-cache-dir --break-system-packages /tmp/wheels/torch-*.whl \\
    && rm -rf /tmp/wheels \\
    && python -c "import torch; print(torch.__version__)" \\
    && test -e "\$(python -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')/EXTERNALLY-MANAGED"
DOCKERFILE
# Pass an http(s) index from the host's pip environment along (a file:// one is not visible).
set --
for var in PIP_INDEX_URL PIP_EXTRA_INDEX_URL; do
    eval "val=\${$var:-}"
    case "$val" in http*) set -- "$@" --build-arg "$var=$val" ;; esac
done
docker build --quiet --network host "$@" -t "$tag" "$work" >&2
echo "$tag"
