"""Training recipes written against torchpool.stream (``python -m torchpool train``)."""
