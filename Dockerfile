# The TA's grading image: CUDA PyTorch from the base image, the grader on top.
#
#   docker build -t cs336-grader .
#   docker run --rm --gpus all --network none \
#       -v "$PWD/submission:/grading/submission:ro" -v "$PWD/out:/grading/out" \
#       cs336-grader grade /grading/submission --out /grading/out/results.json --gpu require
#
# (Without a GPU: drop `--gpus all` and use `--gpu skip`.) The grader runs as root in the
# container and drops each submission's worker to an unprivileged uid. Under Docker's default
# seccomp profile the sandbox cannot create namespaces: it restricts the worker with Landlock
# where the kernel has it, else to its uid's permissions (the report's "sandbox:" line says
# which); `--network none` cuts the network, which those modes cannot fully do themselves.
# /grader and /grading are root's alone (0700): mounted under /grading, the submissions and the
# reports are out of the worker's reach in every mode. No `--init` is needed (the image has its
# own, tini). results.json is written mode 0644.
#
# Base: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime (torch 2.13.0+cu130, Ubuntu 24.04,
# Python 3.12; a tag in use in public projects). CUDA 13.0 needs NVIDIA driver >= 580.65.06 on
# the host (branch R580); the NVIDIA Container Toolkit provides `--gpus`. There is no cu128 build
# of torch 2.13 (its published image tags are cuda13.0 and cuda13.2; cuda13.2 needs a newer
# driver). deploy/docker/check.sh builds this
# file on a local CPU stand-in (`--build-arg BASE=cs336-standin:torch`) and grades in it.
ARG BASE=pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
FROM ${BASE}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# bubblewrap: the sandbox's strongest mode where namespaces are allowed (e.g. --cap-add SYS_ADMIN
# or a runtime without the default seccomp profile). tini: PID 1 in the container, so that the
# processes a killed worker leaves behind are reaped (the grader as PID 1 would keep them as
# zombies, and they would count against the worker uid's process limit), with or without
# `docker run --init`. Versions float with the base's apt.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap tini \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /grader
COPY pyproject.toml README.md ./
COPY grader ./grader
COPY seam ./seam
COPY reference ./reference
COPY student_stubs ./student_stubs
COPY tests ./tests
COPY assignment ./assignment

# PEP 668: the base's Python may be externally managed, so the pins go into a venv. The venv
# sees the base's torch (CUDA build) through --system-site-packages plus a .pth naming the base
# interpreter's site directories (in case that interpreter is itself a venv or conda), and it
# uses the base's pip (--without-pip: the base need not carry ensurepip). `pip install -e .`
# installs exactly pyproject.toml's pins; the base's torch 2.13.0+cuXXX satisfies
# `torch==2.13.0` (a local version label matches a pin without one), and the check after it
# fails the build if pip brought a torch of its own instead. The venv lives outside /grader and
# stays world-readable: the worker's uid runs on it. /grader (the reference, the tests) and
# /grading (where submissions and reports are mounted) are root's alone.
ENV VIRTUAL_ENV=/opt/grader-venv
RUN python -m venv --without-pip --system-site-packages "$VIRTUAL_ENV" \
    && python -c 'import sys; print("\n".join(p for p in sys.path if p.endswith(("site-packages", "dist-packages"))))' \
        > "$("$VIRTUAL_ENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/base-python.pth" \
    && "$VIRTUAL_ENV/bin/python" -m pip install --no-cache-dir -e /grader \
    && "$VIRTUAL_ENV/bin/python" -c 'import sys, torch; assert not torch.__file__.startswith(sys.prefix), "pip installed a torch of its own: the base image has no torch 2.13.0"; print("torch", torch.__version__, "cuda", torch.version.cuda)' \
    && rm -rf /grader/build /grader/*.egg-info \
    && chmod 700 /grader \
    && mkdir -m 700 /grading
ENV PATH="/opt/grader-venv/bin:${PATH}"

ENTRYPOINT ["tini", "--", "python", "-m", "grader"]
CMD ["grade", "/grader/reference", "--out", "/tmp/results.json", "--gpu", "skip"]
