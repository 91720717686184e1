# The TA's grading image: CUDA PyTorch from the base image, the grader on top.
#   docker build -t cs336-grader .
#   docker run --rm --gpus all --network none \
#       -v "$PWD/submission:/submission:ro" -v "$PWD/out:/out" \
#       cs336-grader grade /submission --out /out/results.json --gpu require
# The grader runs as root inside the container and drops each submission's worker to an
# unprivileged uid; --network none cuts the network even where namespaces are not allowed.
ARG BASE=pytorch/pytorch:2.13.0-cuda12.8-cudnn9-runtime
FROM ${BASE}

WORKDIR /grader
COPY pyproject.toml README.md ./
COPY grader ./grader
COPY reference ./reference
COPY student_stubs ./student_stubs
COPY tests ./tests
COPY assignment ./assignment

# torch comes from the base image (CUDA build): install our other pins without touching it.
RUN python -m pip install --no-cache-dir numpy==2.4.6 jaxtyping==0.3.11 beartype==0.23.1 \
        jsonschema==4.26.0 pytest==9.0.3 \
    && python -m pip install --no-cache-dir --no-deps -e . \
    && chmod -R go-rwx /grader/reference /grader/tests \
    && python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

ENTRYPOINT ["python", "-m", "grader"]
CMD ["grade", "/grader/reference", "--out", "/tmp/results.json"]
