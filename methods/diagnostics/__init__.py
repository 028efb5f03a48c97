"""Operational job types for checking a deployment (queues, workers, failure handling)."""
