# decoder/summary.mk: (being written)
