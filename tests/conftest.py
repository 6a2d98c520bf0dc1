import os

# Any accidental hub access fails at once instead of hanging on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def pytest_collection_modifyitems(config, items):
    """Fast tests first, the end-to-end ones (`slow`) last: a broken unit shows within the first
    minutes of `make test` instead of after the long runs (the order within each kind is kept)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is not None)
