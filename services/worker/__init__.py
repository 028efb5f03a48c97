"""The Celery worker entrypoint: ``celery -A services.worker.celery_app worker -Q cpu``."""
