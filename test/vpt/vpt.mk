# test/vpt: the virtual Intel PT trace unit, a QEMU TCG plugin.
