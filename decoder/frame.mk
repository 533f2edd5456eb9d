# decoder/frame.mk: (being written)
