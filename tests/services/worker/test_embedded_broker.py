"""The embedded broker redelivers what a dead consumer held, and forgets what was acknowledged."""

import time

import pytest
from kombu import Connection
from sqlalchemy import create_engine, text

from services.worker.broker import install


def _rows(db) -> list[tuple[int, bool]]:
    eng = create_engine(f"sqlite:///{db}")
    with eng.connect() as c:
        rows = [(r[0], bool(r[1])) for r in c.execute(text("SELECT id, visible FROM kombu_message"))]
    eng.dispose()
    return rows


def test_unacked_message_of_a_dead_consumer_comes_back_and_ack_deletes_it(tmp_path):
    install()
    db = tmp_path / "broker.db"
    url = f"sqla+sqlite:///{db}"
    with Connection(url, transport_options={"visibility_timeout": 1.0}) as producer:
        producer.SimpleQueue("q").put({"job": "a"})

    dead = Connection(url, transport_options={"visibility_timeout": 1.0})
    q1 = dead.SimpleQueue("q")
    assert q1.get(timeout=2).payload == {"job": "a"}  # delivered, never acknowledged: the consumer "dies"
    q1.channel.qos.restore_at_shutdown = False  # a SIGKILL restores nothing
    assert _rows(db) and not _rows(db)[0][1]

    with Connection(url, transport_options={"visibility_timeout": 1.0}) as live:
        q2 = live.SimpleQueue("q")
        q2.channel.restore_check_every_s = 0.0
        with pytest.raises(q2.Empty):
            q2.get(timeout=0.3)  # still inside the visibility timeout: not redelivered yet
        time.sleep(1.2)
        msg = q2.get(timeout=2)
        assert msg.payload == {"job": "a"}
        msg.ack()
        assert _rows(db) == []  # acknowledged rows are deleted, not left invisible forever
        with pytest.raises(q2.Empty):
            q2.get(timeout=0.3)


def test_celery_app_uses_the_redelivering_transport(monkeypatch, tmp_path):
    from core.config import get_settings

    monkeypatch.setenv("PAPERWORKS_BROKER_URL", f"sqla+sqlite:///{tmp_path / 'b.db'}")
    get_settings.cache_clear()
    try:
        from services.worker.broker import Transport
        from services.worker.celery_app import make_celery

        app = make_celery()
        with app.connection_for_write() as conn:
            assert conn.transport_cls == "sqla"
            assert isinstance(conn.transport, Transport)
            assert conn.transport_options["visibility_timeout"] == get_settings().broker_visibility_timeout
    finally:
        get_settings.cache_clear()
