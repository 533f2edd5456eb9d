# test/capture/capture.mk: (being written)
