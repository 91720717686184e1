#!/bin/sh
# Bring up a Docker engine on this machine (root, Debian/Ubuntu) if none answers: installs
# Debian's docker.io when dockerd is missing, starts dockerd in the background and waits for it.
# overlay2 storage (vfs works too but is 4-15x slower); no bridge and no iptables, because this
# kind of machine (a container or a CI VM) often cannot set them up: build and run with
# `--network host` or `--network none`.
set -eu
if docker info >/dev/null 2>&1; then
    echo "docker engine already answering"
    exit 0
fi
if ! command -v dockerd >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
log="${DOCKERD_LOG:-/var/log/dockerd.log}"
nohup dockerd --storage-driver=overlay2 --bridge=none --iptables=false >"$log" 2>&1 &
echo "started dockerd (pid $!), log in $log"
i=0
until docker info >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -ge 60 ]; then
        echo "dockerd did not answer within 60 s; last lines of $log:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    sleep 1
done
echo "docker engine up: $(docker info --format '{{.ServerVersion}} {{.Driver}}')"
