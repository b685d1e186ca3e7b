"""kernel_tuner.integration: not provided by cutune; each function says so."""


def store_results(*args, **kwargs):
    raise NotImplementedError("cutune: kernel_tuner.integration.store_results is not provided by cutune "
                              "(results are in the cache file and `cutune export`)")


def create_device_targets(*args, **kwargs):
    raise NotImplementedError("cutune: kernel_tuner.integration.create_device_targets is not provided by cutune "
                              "(see `cutune export --format wisdom`)")


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.integration.{name} is not provided by cutune")
