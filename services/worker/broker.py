"""The embedded broker: kombu's SQLAlchemy transport, made to redeliver what a dead worker held.

kombu's stock transport marks a delivered message invisible and never looks at it again:
a worker SIGKILLed mid-job takes its message with it, and delivered rows pile up forever.
This channel

* deletes a message's row when it is acknowledged (or rejected);
* makes a delivered-but-unacknowledged message visible again once it has been out longer
  than ``broker_visibility_timeout`` (the same contract as Redis' visibility timeout);
  kombu stamps a row's ``timestamp`` on every update, so for an invisible row it is the
  delivery time.

A redelivered message is harmless: the job lifecycle runs a job to completion at most once
(:func:`core.jobs.execute.execute_job`), and the reaper
(:func:`core.jobs.reap.reap_stale`) is what re-enqueues a lost job promptly — this
transport only makes sure no message is lost for good.

:func:`install` points kombu's ``sqla``/``sqlalchemy`` URL schemes at this transport.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time

from kombu.transport import TRANSPORT_ALIASES
from kombu.transport.sqlalchemy import Channel as SqlaChannel
from kombu.transport.sqlalchemy import Transport as SqlaTransport
from sqlalchemy import text

log = logging.getLogger(__name__)


class Channel(SqlaChannel):
    """Deletes acknowledged rows; restores rows delivered longer than the visibility timeout ago."""

    restore_check_every_s = 5.0

    def __init__(self, connection, **kwargs) -> None:
        super().__init__(connection, **kwargs)
        opts = connection.client.transport_options
        self.visibility_timeout = float(opts.get("visibility_timeout", 3600.0))
        self._rows: dict[str, int] = {}  # delivery tag -> message row id
        self._rows_lock = threading.Lock()
        self._last_restore: dict[int, float] = {}

    def _engine_from_config(self):
        # our own option is not an argument of create_engine
        conninfo = self.connection.client
        saved = conninfo.transport_options
        conninfo.transport_options = {k: v for k, v in saved.items() if k != "visibility_timeout"}
        try:
            return super()._engine_from_config()
        finally:
            conninfo.transport_options = saved

    def restore_expired(self, queue_id: int) -> int:
        """Make this queue's messages delivered more than ``visibility_timeout`` ago visible again."""
        cutoff = dt.datetime.now() - dt.timedelta(seconds=self.visibility_timeout)  # kombu stores local time
        m = self.message_cls
        n = (
            self.session.query(m)
            .filter(m.queue_id == queue_id, m.visible == False, m.sent_at < cutoff)  # noqa: E712
            .update({m.visible: True}, synchronize_session=False)
        )
        self.session.commit()
        if n:
            log.warning(
                "embedded broker: %d unacknowledged message(s) redelivered after %.0f s", n, self.visibility_timeout
            )
        return n

    def _get(self, queue):
        obj = self._get_or_create(queue)
        now = time.monotonic()
        if now - self._last_restore.get(obj.id, 0.0) >= self.restore_check_every_s:
            self._last_restore[obj.id] = now
            self.restore_expired(obj.id)
        if self.session.bind.name == "sqlite":
            self.session.execute(text("BEGIN IMMEDIATE TRANSACTION"))
        try:
            msg = (
                self.session.query(self.message_cls)
                .with_for_update()
                .filter(self.message_cls.queue_id == obj.id)
                .filter(self.message_cls.visible != False)  # noqa: E712
                .order_by(self.message_cls.sent_at)
                .order_by(self.message_cls.id)
                .limit(1)
                .first()
            )
            if not msg:
                from queue import Empty

                raise Empty()
            msg.visible = False
            from kombu.utils.encoding import bytes_to_str
            from kombu.utils.json import loads

            payload = loads(bytes_to_str(msg.payload))
            tag = (payload.get("properties") or {}).get("delivery_tag")
            if tag is not None:
                with self._rows_lock:
                    self._rows[tag] = msg.id
            return payload
        finally:
            self.session.commit()

    def _forget(self, delivery_tag) -> None:
        with self._rows_lock:
            row_id = self._rows.pop(delivery_tag, None)
        if row_id is None:
            return
        m = self.message_cls
        try:
            self.session.query(m).filter(m.id == row_id).delete(synchronize_session=False)
            self.session.commit()
        except Exception:  # the row stays invisible; it is redelivered after the timeout (harmless)
            self.session.rollback()
            log.warning("embedded broker: could not delete acknowledged message %s", row_id, exc_info=True)

    def basic_ack(self, delivery_tag, multiple=False):
        super().basic_ack(delivery_tag, multiple=multiple)
        self._forget(delivery_tag)

    def basic_reject(self, delivery_tag, requeue=False):
        super().basic_reject(delivery_tag, requeue=requeue)  # requeue puts a fresh copy
        self._forget(delivery_tag)

    def _restore(self, message):
        super()._restore(message)  # a fresh visible copy (warm shutdown)
        self._forget(message.delivery_tag)


class Transport(SqlaTransport):
    Channel = Channel


def install() -> None:
    """Route ``sqla+...``/``sqlalchemy+...`` broker URLs to this transport (in this process)."""
    TRANSPORT_ALIASES["sqla"] = "services.worker.broker:Transport"
    TRANSPORT_ALIASES["sqlalchemy"] = "services.worker.broker:Transport"
