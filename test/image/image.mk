# test/image/image.mk: (being written)
