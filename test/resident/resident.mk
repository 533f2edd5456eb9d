# test/resident/resident.mk: (being written)
