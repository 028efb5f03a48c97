"""The ``paperworks`` command line."""
