"""One settings object for the whole application.

Every default is embedded and local (SQLite file, Chroma directory, artifact
directory, the local SmolLM2 model, a broker stored in SQLite). Pointing a
setting at a real server is the only change needed to scale out::

    PAPERWORKS_DATABASE_URL=postgresql+psycopg://user@db/paperworks
    PAPERWORKS_BROKER_URL=redis://redis:6379/0
    PAPERWORKS_CHROMA_HOST=chroma
    PAPERWORKS_LLM_MODEL=openai/gpt-4o

GPU workers are declared, not discovered: ``PAPERWORKS_GPU_WORKERS=1`` on every service says
that some worker consumes the ``gpu`` queue (``paperworks worker --queues gpu`` on a machine
with CUDA), so submissions route ``device=cuda`` / ``device=auto`` jobs there
(:mod:`core.jobs.routing`, docs/GPU.md).

An agent's own knobs are a nested section (``settings.defame``), set with a double
underscore: ``PAPERWORKS_DEFAME__SERPER_API_KEY=...``.

Nothing else in the code base reads ``os.environ`` for its own configuration;
call :func:`get_settings`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.lazy import locked_cache

_REPO_ROOT = Path(__file__).resolve().parent.parent


def _default_home() -> Path:
    return Path.home() / ".paperworks"


def _default_data_dir() -> Path:
    # The benchmark slices shipped beside the repository (tests and reproduction
    # read them); the product itself runs without them.
    return (_REPO_ROOT.parent / "shared" / "data").resolve()


class DefameSettings(BaseModel):
    """DEFAME's optional external services: ``settings.defame`` (``PAPERWORKS_DEFAME__*``).

    The single-underscore names of earlier releases (``PAPERWORKS_DEFAME_SERPER_API_KEY``) are still read
    when the double-underscore one is not set.
    """

    search_backend: Literal["corpus", "serper", "searxng"] = Field(
        "corpus", description="Where web_search looks: the local Chroma corpus (default) or a web API."
    )
    searxng_url: str | None = Field(
        None, description="Base URL of a SearxNG instance with the JSON format enabled (e.g. http://searxng:8080)."
    )
    serper_api_key: SecretStr | None = Field(None, description="Serper.dev key (web and image search).")
    serper_url: str = Field("https://google.serper.dev", description="Serper endpoint (tests: a local server).")
    scrape_results: bool = Field(True, description="Fetch result pages (public hosts only) for their text.")
    vlm_model: str | None = Field(None, description="Vision model for geolocation without EXIF GPS.")
    face_model: str | None = Field(None, description="YuNet ONNX file for face detection (OpenCV FaceDetectorYN).")
    request_timeout_s: float = Field(15.0, description="Timeout of one outbound HTTP request.")


_LEGACY_SECTIONS: dict[str, type[BaseModel]] = {"defame": DefameSettings}


class Settings(BaseSettings):
    """Application settings, read from ``PAPERWORKS_*`` environment variables."""

    model_config = SettingsConfigDict(
        env_prefix="PAPERWORKS_", env_file=None, extra="ignore", env_nested_delimiter="__"
    )

    # --- where things live -------------------------------------------------
    home: Path = Field(default_factory=_default_home, description="Root for every embedded store.")
    data_dir: Path = Field(default_factory=_default_data_dir, description="Benchmark slices (optional).")
    artifact_dir: Path | None = Field(None, description="Report artifacts; default <home>/artifacts.")
    cache_dir: Path | None = Field(None, description="Converted models and other caches; default <home>/cache.")

    # --- database ----------------------------------------------------------
    database_url: str | None = Field(
        None,
        description="SQLAlchemy URL; default sqlite:///<home>/paperworks.db. "
        "PostgreSQL: postgresql+psycopg://user@host:5432/db",
    )

    # --- broker / worker ---------------------------------------------------
    broker_url: str | None = Field(
        None,
        description="Celery broker; default kombu's SQLAlchemy transport on <home>/broker.db. "
        "redis://host:6379/0 or amqp://guest:guest@host:5672// work unchanged.",
    )
    broker_visibility_timeout: float = Field(
        3600.0,
        description="Seconds before an unacknowledged message (Redis, the embedded broker) is redelivered; "
        "a job whose worker died is re-enqueued sooner by the reaper (job_stale_after_s).",
    )
    api_key_cache_s: float = Field(
        2.0,
        ge=0.0,
        le=60.0,
        description="Seconds the API trusts a verified API key without asking the database again (0: every "
        "request asks). A key revoked by another process (`paperworks keys revoke`) stops working within this time.",
    )
    job_heartbeat_s: float = Field(5.0, description="How often a running job refreshes its heartbeat.")
    job_stale_after_s: float = Field(
        30.0, description="A running job whose heartbeat is older than this is taken over on redelivery."
    )
    job_max_retries: int = Field(3, description="Retries for transient errors (connection loss).")
    job_async_commit: bool = Field(
        True,
        description="On PostgreSQL, the worker's own state changes (claim, progress, heartbeat, report + end "
        "state) commit without waiting for the WAL flush (synchronous_commit=off; submissions always wait). A "
        "database crash can lose the last fraction of a second of them; the reaper then re-runs those jobs.",
    )
    job_reap_interval_s: float = Field(
        10.0, gt=0, description="How often each worker looks for jobs whose worker died (and re-enqueues them)."
    )
    job_requeue_queued_after_s: float = Field(
        1800.0,
        gt=0,
        description="A job still queued this long after it was last sent to the broker is sent again "
        "(its message was lost with a dead worker or a broker restart); duplicates are harmless.",
    )
    worker_queues: str = Field(
        "cpu",
        description="Comma-separated queues this process consumes as a worker (`paperworks worker --queues`). "
        "The rule: a CPU worker consumes `cpu`, a GPU worker consumes `gpu` only (device=cuda and device=auto "
        "jobs; docs/GPU.md); one worker on a single machine with a GPU may consume `cpu,gpu`. A fan-out's "
        "`wait` runs a stalled sub-job here only if its queue is in this list.",
    )
    gpu_workers: bool = Field(
        False,
        description="This deployment runs at least one worker that consumes the `gpu` queue on a machine with "
        "CUDA. Read where jobs are submitted (API, fan-outs, MCP): true sends device=cuda and device=auto jobs "
        "to the `gpu` queue; false refuses device=cuda with a 422 and runs device=auto jobs on their method's "
        "queue (on the CPU). Set it on every service of the deployment (docs/GPU.md).",
    )

    # --- vector store ------------------------------------------------------
    chroma_path: Path | None = Field(None, description="Persistent Chroma directory; default <home>/chroma.")
    chroma_host: str | None = Field(None, description="Chroma server host; when set the HTTP client is used.")
    chroma_port: int = 8000

    # --- LLM gateway -------------------------------------------------------
    llm_model: str = Field("local/smollm2-135m-instruct", description="Any litellm model string.")
    llm_api_base: str | None = Field(None, description="API base for OpenAI-compatible or Ollama servers.")
    llm_api_key: SecretStr | None = Field(None, description="Key for a hosted model (never logged).")
    llm_allowed_models: str = Field(
        "",
        description="Comma-separated models a request may name (llm.complete's model, DEFAME's and PAE's "
        "model fields); empty = the registered local models plus llm_model. The API key is only ever "
        "sent to llm_model.",
    )
    llm_timeout_s: float = 600.0
    llm_max_retries: int = 2
    llm_max_tokens: int = 256
    local_backend: Literal["transformers", "llamacpp", "auto"] = Field(
        "auto", description="Text generation backend of the `local` provider."
    )
    local_threads: int = Field(0, ge=0, description="CPU threads for the local backend (0 = half the cores).")
    local_context: int = Field(2048, ge=64, description="Context length (tokens) of one local reply.")
    local_parallel: int = Field(
        4,
        ge=1,
        le=64,
        description="Replies the llama.cpp backend decodes together in one batch "
        "(KV-cache slots of local_context tokens each).",
    )
    local_gpu_layers: int = Field(
        0,
        ge=-1,
        description="Layers of the local GGUF model llama.cpp offloads to the GPU (-1: all; 0: none). Only "
        "effective when llama-cpp-python is built with CUDA (CMAKE_ARGS=-DGGML_CUDA=on); the default build "
        "(`make install`) is CPU-only and ignores it with a warning.",
    )
    embedding_model: str = Field("all-MiniLM-L6-v2", description="Sentence-transformers model name or path.")
    embedding_device: Literal["cpu", "auto", "cuda"] = Field(
        "cpu",
        description="Where sentence-transformers embeds (Chroma, retrieval): cpu, cuda, or auto (cuda when this "
        "process has it, else cpu). cuda without CUDA fails at the first embedding with a sentence saying so.",
    )

    # --- API / UI ----------------------------------------------------------
    api_host: str = "127.0.0.1"
    api_port: int = 8000
    ui_port: int = 8501
    api_url: str | None = Field(None, description="Base URL the UI and `--remote` use; default from host/port.")
    api_key: SecretStr | None = Field(None, description="Key the UI and CLI present to the API.")
    max_body_bytes: int = Field(2 * 1024 * 1024, description="Largest JSON request body accepted.")
    max_upload_bytes: int = Field(10 * 1024 * 1024, description="Largest uploaded file accepted.")
    max_image_pixels: int = Field(40_000_000, description="Largest decoded image accepted (pixels).")

    # --- outbound fetching (agents) -----------------------------------------
    allowed_hosts: str = Field(
        "",
        description="Comma-separated extra hosts agents may fetch even if they resolve to "
        "private or loopback addresses (the project's own test sites are always allowed).",
    )

    # --- agents ------------------------------------------------------------
    defame: DefameSettings = Field(default_factory=DefameSettings, description="DEFAME's external services.")

    @model_validator(mode="before")
    @classmethod
    def _legacy_section_names(cls, data: Any) -> Any:
        """``PAPERWORKS_DEFAME_X`` (one underscore, the old name) fills ``defame.x`` unless set otherwise."""
        if not isinstance(data, dict):
            return data
        env = {k.upper(): v for k, v in os.environ.items() if k.upper().startswith("PAPERWORKS_")}
        for section, model in _LEGACY_SECTIONS.items():
            legacy = {
                name: env[f"PAPERWORKS_{section.upper()}_{name.upper()}"]
                for name in model.model_fields
                if f"PAPERWORKS_{section.upper()}_{name.upper()}" in env
            }
            if not legacy:
                continue
            given = data.get(section)
            if isinstance(given, BaseModel):
                continue  # an explicit section object wins whole
            data[section] = {**legacy, **(given or {})}
        return data

    @field_validator("home", "data_dir", mode="after")
    @classmethod
    def _absolute(cls, v: Path) -> Path:
        return v.expanduser().resolve()

    @model_validator(mode="after")
    def _fill_paths(self) -> Settings:
        if self.artifact_dir is None:
            self.artifact_dir = self.home / "artifacts"
        if self.cache_dir is None:
            self.cache_dir = self.home / "cache"
        if self.chroma_path is None:
            self.chroma_path = self.home / "chroma"
        if self.database_url is None:
            self.database_url = f"sqlite:///{self.home / 'paperworks.db'}"
        if self.broker_url is None:
            self.broker_url = f"sqla+sqlite:///{self.home / 'broker.db'}"
        if self.api_url is None:
            self.api_url = f"http://{self.api_host}:{self.api_port}"
        return self

    # --- derived helpers ----------------------------------------------------
    @property
    def is_postgres(self) -> bool:
        return str(self.database_url).startswith("postgresql")

    @property
    def queues(self) -> list[str]:
        return [q.strip() for q in self.worker_queues.split(",") if q.strip()]

    @property
    def extra_allowed_hosts(self) -> set[str]:
        return {h.strip().lower() for h in self.allowed_hosts.split(",") if h.strip()}

    def ensure_dirs(self) -> None:
        """Create the embedded stores' directories (idempotent)."""
        for p in (self.home, self.artifact_dir, self.cache_dir, self.chroma_path):
            Path(p).mkdir(parents=True, exist_ok=True)


@locked_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (cached; call ``get_settings.cache_clear()`` in tests)."""
    s = Settings()
    s.ensure_dirs()
    return s
