# decoder/frame.mk: the serial framing (decoder/ptd_frame.c, picked up by
# decoder.mk's wildcard for the host library, the app and the freestanding
# check), the app's serial dump, `ptboot serial`, and their tests.
UNIT_TESTS += test_ptd_frame
