# decoder/tracer.mk: (being written)
