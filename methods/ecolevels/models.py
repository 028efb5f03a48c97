"""EcoLevels' probe registry table (schema owned by ``migrations/versions/ecolevels_0001_probes.py``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from core.db.models import Base, utcnow


class EcoProbe(Base):
    __tablename__ = "ecolevels_probes"
    id: Mapped[str] = mapped_column(String(60), primary_key=True)
    name: Mapped[str] = mapped_column(String(120))
    record: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # the validated Probe as JSON
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
