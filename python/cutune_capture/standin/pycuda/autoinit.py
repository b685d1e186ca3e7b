from pycuda import driver as _driver

_driver.init()
device = _driver.Device(0)
context = device.make_context()
